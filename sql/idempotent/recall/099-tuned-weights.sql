-- Weights a tenant's feedback tunes: memory.tune_weights fits the signal weights of recall to the verdicts given
-- with a query (memory.give_feedback(..., query => ...)), per tenant or per agent, within bounds, after enough
-- evidence; a dry run shows what it would set; memory.reset_tuned_weights goes back. The fit itself is
-- agent_memory_db.weight_tuning (its docstring says how verdicts become pairs and what is minimized).

-- The fit over the queries recalled again (see memory.tune_weights), as agent_memory_db.weight_tuning.Fit.
create or replace function memory_internal._fit_weights(
    queries jsonb, weights jsonb, fusion_signals text[], max_factor double precision, min_helpful integer
) returns jsonb
language plpython3u
volatile
as $$
@load_python@
import json
from dataclasses import asdict
from agent_memory_db import weight_tuning
found = weight_tuning.queries_from(json.loads(queries), set(fusion_signals))
return json.dumps(asdict(weight_tuning.fit(found, json.loads(weights), max_factor, min_helpful)))
$$;

comment on function memory_internal._fit_weights(jsonb, jsonb, text[], double precision, integer) is
'Internal: recall''s weights fitted to the verdicts on recalled queries (agent_memory_db.weight_tuning.fit).';

-- Each query that verdicts were given with, recalled again as the agent whose turn was judged, with the given
-- per-call settings (the configured weights, untuned): every candidate's components in recall's order, and the
-- turns judged helpful and otherwise (the latest verdict on a turn or the memory it carries for that query,
-- whoever gave it).
create or replace function memory_internal._feedback_queries(tenant text, agent_id text, replay jsonb) returns jsonb
language sql
volatile
as $$
    with verdicts as (
        select distinct on (f.query, t.agent_id, t.turn_id) f.query, t.agent_id, t.turn_id, f.helpful
        from memory.feedback as f
        left join memory.memories as m on m.tenant_id = f.tenant_id and m.memory_id = f.memory_id
        inner join memory.turns as t on t.tenant_id = f.tenant_id and t.turn_id = coalesce(f.turn_id, m.turn_id)
        where f.tenant_id = tenant and f.query is not null and btrim(f.query) <> ''
            and (_feedback_queries.agent_id is null or t.agent_id = _feedback_queries.agent_id)
        order by f.query, t.agent_id, t.turn_id, f.feedback_id desc
    )

    select coalesce(jsonb_agg(jsonb_build_object(
        'candidates', (
            select coalesce(jsonb_agg(jsonb_build_object('turn', e.turn_id, 'components', e.components)
                                      order by e.rank), '[]')
            from memory.explain_recall(q.query, agent_id => q.agent_id, weights => replay) as e
        ),
        'helpful', q.helpful, 'unhelpful', q.unhelpful
    )), '[]')
    from (
        select v.query, v.agent_id, coalesce(jsonb_agg(v.turn_id) filter (where v.helpful), '[]') as helpful,
               coalesce(jsonb_agg(v.turn_id) filter (where not v.helpful), '[]') as unhelpful
        from verdicts as v
        group by v.query, v.agent_id
    ) as q
$$;

comment on function memory_internal._feedback_queries(text, text, jsonb) is
'Internal: the queries verdicts were given with, recalled again with the given settings, with the turns judged '
'helpful and not.';

create or replace function memory.tune_weights(agent_id text default null, dry_run boolean default false)
returns memory.weight_tuning
language plpgsql
volatile
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    -- The configuration's settings, never the session's: the fit is kept for every session of the tenant.
    v_settings jsonb := memory_internal._configured_settings(v_tenant);
    v_signals record;
    v_fit jsonb;
    v_weights jsonb;
    v_report memory.weight_tuning;
begin
    if dry_run is null then
        raise exception 'agent_memory: dry_run must be true or false' using errcode = 'null_value_not_allowed';
    end if;
    if agent_id = '' then
        raise exception 'agent_memory: agent_id must not be empty (null tunes the whole tenant)'
            using errcode = 'invalid_parameter_value';
    end if;
    if agent_id is not null and not exists (
        select from memory.sessions as s where s.tenant_id = v_tenant and s.agent_id = tune_weights.agent_id
    ) then
        raise exception 'agent_memory: no agent "%" in tenant "%"', agent_id, v_tenant using errcode = 'no_data_found';
    end if;
    if v_settings ->> 'fusion' <> 'zscore' then
        raise exception 'agent_memory: tune_weights fits z-score fusion, and this tenant''s fusion is %',
            v_settings ->> 'fusion' using errcode = 'feature_not_supported';
    end if;

    -- Trust is feedback itself (the verdicts being fitted set it): its weight is not fitted to them.
    select array_agg(r.name) filter (where r.stage = 'fusion' and r.name <> 'trust') as fusion,
           jsonb_object_agg(r.name, (v_settings ->> ('weight_' || r.name))::double precision)
               filter (where r.name <> 'trust') as weights,
           jsonb_object_agg('weight_' || r.name, v_settings -> ('weight_' || r.name))
               || '{"use_tuned_weights": false, "fusion": "zscore"}' as replay
    into v_signals
    from memory.signals as r;
    v_fit := memory_internal._fit_weights(
        memory_internal._feedback_queries(v_tenant, agent_id, v_signals.replay), v_signals.weights, v_signals.fusion,
        (v_settings ->> 'tune_max_factor')::double precision, (v_settings ->> 'tune_min_verdicts')::integer
    );

    -- The tuned weights as settings, within each weight setting's bounds.
    select jsonb_object_agg('weight_' || f.key, greatest(d.minimum, least(d.maximum, (v_fit -> 'weights' ->> f.key)::numeric))),
           jsonb_object_agg(f.key, jsonb_build_object(
               'before', (v_signals.weights ->> f.key)::double precision,
               'after', greatest(d.minimum, least(d.maximum, (v_fit -> 'weights' ->> f.key)::numeric))
           ))
    into v_weights, v_report.weights
    from jsonb_each(v_fit -> 'factors') as f
    inner join memory.setting_definitions() as d on d.key = 'weight_' || f.key;

    v_report.agent_id := agent_id;
    v_report.applied := (v_fit ->> 'enough')::boolean and not dry_run;
    v_report.reason := case when not (v_fit ->> 'enough')::boolean then v_fit ->> 'reason'
                            when dry_run then 'fitted; dry run, not kept' else 'fitted and kept' end;
    v_report.helpful_verdicts := v_fit ->> 'helpful_used';
    v_report.queries := v_fit ->> 'queries_used';
    v_report.pairs := v_fit ->> 'pairs';
    v_report.ordered_before := v_fit ->> 'ordered_before';
    v_report.ordered_after := v_fit ->> 'ordered_after';
    v_report.top_helpful_before := v_fit ->> 'top_helpful_before';
    v_report.top_helpful_after := v_fit ->> 'top_helpful_after';
    v_report.top_changed := v_fit ->> 'top_changed';
    if v_report.applied then
        insert into memory.tuned_weights as w (tenant_id, agent_id, weights, factors, helpful_verdicts, pairs,
                                               ordered_before, ordered_after, fitted_by)
        values (v_tenant, coalesce(tune_weights.agent_id, ''), v_weights, v_fit -> 'factors', v_report.helpful_verdicts,
                v_report.pairs, v_report.ordered_before, v_report.ordered_after, memory_internal._actor())
        on conflict (tenant_id, agent_id) do update
        set weights = excluded.weights, factors = excluded.factors, helpful_verdicts = excluded.helpful_verdicts,
            pairs = excluded.pairs, ordered_before = excluded.ordered_before, ordered_after = excluded.ordered_after,
            fitted_at = excluded.fitted_at, fitted_by = excluded.fitted_by;
    end if;
    return v_report;
end
$$;

comment on function memory.tune_weights(text, boolean) is
'Fits recall''s signal weights to this tenant''s feedback (verdicts given with their query; agent_id: that '
'agent''s turns only, else the whole tenant) and, unless dry_run, keeps them for recall (table '
'memory.tuned_weights; setting use_tuned_weights). Each query is recalled again untuned; a turn judged helpful '
'should rank above the candidates ahead of it and those judged unhelpful. Each weight moves by at most a '
'factor tune_max_factor; below tune_min_verdicts helpful verdicts nothing moves. Returns the weights before and '
'after, the share of verdict pairs ordered right before and after, and how many queries'' first hit was '
'helpful and changes.';

create or replace function memory.reset_tuned_weights(agent_id text default null) returns boolean
language plpgsql
volatile
as $$
declare
    v_tenant text := memory.current_tenant();
begin
    if agent_id = '' then
        raise exception 'agent_memory: agent_id must not be empty (null resets the whole tenant''s)'
            using errcode = 'invalid_parameter_value';
    end if;
    delete from memory.tuned_weights as w
    where w.tenant_id = v_tenant and w.agent_id = coalesce(reset_tuned_weights.agent_id, '');
    return found;
end
$$;

comment on function memory.reset_tuned_weights(text) is
'Removes the weights memory.tune_weights kept for this tenant (agent_id null) or one agent: recall goes back '
'to the weights in force without them. True if there were any.';

comment on type memory.weight_tuning is
'What memory.tune_weights reports: the agent (null: the tenant), whether the weights were kept and why not, the '
'helpful verdicts, queries and pairs used, each tuned signal''s weight before and after, the share of pairs '
'ordered right before and after, and the queries whose first candidate is helpful before and after, and changes.';
