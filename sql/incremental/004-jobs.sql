-- The durable enrichment queue (transactional outbox): commit enqueues in its own transaction,
-- workers claim with FOR UPDATE SKIP LOCKED and a lease, failures retry with backoff, then go dead.
create table memory.jobs (
    job_id bigint generated always as identity primary key,
    tenant_id text not null,
    kind text not null check (kind in ('enrich', 'embed')),
    session_key bigint,
    status text not null default 'queued' check (status in ('queued', 'running', 'done', 'dead')),
    attempts integer not null default 0,
    run_after timestamptz not null default pg_catalog.now(),
    leased_until timestamptz,
    leased_by text,
    last_error text,
    created_at timestamptz not null default pg_catalog.now(),
    finished_at timestamptz,
    foreign key (tenant_id, session_key) references memory.sessions (tenant_id, session_key) on delete cascade
);

create index jobs_claimable on memory.jobs (run_after) where status in ('queued', 'running');
create unique index jobs_one_queued_per_session on memory.jobs (tenant_id, kind, session_key)
where status = 'queued';

select pg_catalog.pg_extension_config_dump('memory.jobs', '');
