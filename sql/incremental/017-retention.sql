-- Retention (0.3.0): policies that bound what a tenant keeps, per kind of data (sessions, curated
-- memories) by age, by count per agent and by tier. Maintenance writes what a policy selects to an
-- archive (gzipped JSON lines of export records, which `agent-memory import jsonl` reads back) and then
-- removes it; the archive row stays as the record of what went, even after its data is dropped.
create table memory.retention_policies (
    tenant_id text not null,
    policy_id bigint generated always as identity,
    data text not null check (data in ('sessions', 'memories')),
    agent_id text,
    max_age interval check (max_age > interval '0'),
    keep_last integer check (keep_last >= 0),
    tier text check (tier in ('hot', 'warm', 'cold')),
    statuses text[],
    created_at timestamptz not null default pg_catalog.now(),
    created_by text not null default current_user,
    primary key (tenant_id, policy_id),
    check (max_age is not null or keep_last is not null),
    check (statuses is null or data = 'memories')
);
select pg_catalog.pg_extension_config_dump('memory.retention_policies', '');
select pg_catalog.pg_extension_config_dump('memory.retention_policies_policy_id_seq', '');

create table memory.archives (
    tenant_id text not null,
    archive_id bigint generated always as identity,
    created_at timestamptz not null default pg_catalog.now(),
    created_by text not null default current_user,
    policies bigint[] not null,
    removed jsonb not null,
    records bigint not null,
    data bytea,
    sha256 bytea not null,
    dropped_at timestamptz,
    primary key (tenant_id, archive_id),
    check ((data is null) = (dropped_at is not null))
);
select pg_catalog.pg_extension_config_dump('memory.archives', '');
select pg_catalog.pg_extension_config_dump('memory.archives_archive_id_seq', '');
