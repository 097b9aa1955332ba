-- Maintenance (0.3.0): `call memory.maintain()` (by hand, or scheduled with pg_cron) cleans the queue and
-- retires the vectors of embedding models recall no longer uses; each run is recorded here. Not
-- tenant-keyed: maintenance serves every tenant and only memory_admin runs it or reads its record.
create table memory.maintenance_runs (
    run_id bigint generated always as identity primary key,
    started_at timestamptz not null default pg_catalog.clock_timestamp(),
    finished_at timestamptz,
    run_by text not null default current_user,
    status text not null check (status in ('done', 'skipped')),
    actions jsonb not null default '{}'
);
select pg_catalog.pg_extension_config_dump('memory.maintenance_runs', '');
select pg_catalog.pg_extension_config_dump('memory.maintenance_runs_run_id_seq', '');

-- When a model stopped being the one recall uses (its vectors are dropped a grace period later).
alter table memory.embedding_models add column retired_at timestamptz;
