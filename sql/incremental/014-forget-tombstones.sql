-- Forgetting with a record (0.3.0). memory.forget leaves a tombstone: what was asked to be forgotten,
-- when, by whom and how much went, never the content. The sessions it removed are listed by a hash of
-- their id, so that a later commit or import of the same session does not bring it back unless the
-- caller says so (memory.commit(..., allow_forgotten => true)).
create table memory.tombstones (
    tenant_id text not null,
    tombstone_id bigint generated always as identity,
    selector jsonb not null,
    removed jsonb not null,
    forgotten_at timestamptz not null default pg_catalog.now(),
    forgotten_by text not null default current_user,
    primary key (tenant_id, tombstone_id)
);
select pg_catalog.pg_extension_config_dump('memory.tombstones', '');
select pg_catalog.pg_extension_config_dump('memory.tombstones_tombstone_id_seq', '');

create table memory.forgotten_sessions (
    tenant_id text not null,
    agent_id text not null,
    session_sha256 bytea not null,
    tombstone_id bigint not null,
    primary key (tenant_id, agent_id, session_sha256),
    foreign key (tenant_id, tombstone_id) references memory.tombstones (tenant_id, tombstone_id) on delete cascade
);
select pg_catalog.pg_extension_config_dump('memory.forgotten_sessions', '');

-- What memory.forget and memory.forget_agent removed, and their tombstone.
create type memory.forgotten as (
    sessions_removed integer,
    turns_removed integer,
    chunks_removed integer,
    memories_removed integer,
    tombstone_id bigint
);

-- forget returns memory.forgotten; commit gains allow_forgotten. Both are created again by the
-- idempotent files.
drop function if exists memory.forget(text, text);
drop function if exists memory.commit(text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text);
