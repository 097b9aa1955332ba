-- Recall's signal weights fitted to a tenant's feedback (0.4.0): memory.tune_weights writes a row per tenant
-- (agent_id '') or agent, recall reads it (setting use_tuned_weights), memory.reset_tuned_weights removes it.
create table memory.tuned_weights (
    tenant_id text not null,
    agent_id text not null check (length(agent_id) <= 200),
    weights jsonb not null check (jsonb_typeof(weights) = 'object'),
    factors jsonb not null check (jsonb_typeof(factors) = 'object'),
    helpful_verdicts integer not null check (helpful_verdicts > 0),
    pairs integer not null check (pairs > 0),
    ordered_before double precision not null,
    ordered_after double precision not null,
    fitted_at timestamptz not null default pg_catalog.now(),
    fitted_by text not null,
    primary key (tenant_id, agent_id)
);

select pg_catalog.pg_extension_config_dump('memory.tuned_weights', '');

-- What memory.tune_weights reports, fitted or not.
create type memory.weight_tuning as (
    agent_id text, applied boolean, reason text, helpful_verdicts integer, queries integer, pairs integer,
    weights jsonb, ordered_before double precision, ordered_after double precision, top_helpful_before integer,
    top_helpful_after integer, top_changed integer
);
