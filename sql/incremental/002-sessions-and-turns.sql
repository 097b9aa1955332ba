-- Conversations as they were: one row per session, one per turn (every role), each under a tenant
-- and an agent. Event time (when it was said) is kept apart from record time (when it was stored).
create table memory.sessions (
    tenant_id text not null,
    session_key bigint generated always as identity,
    agent_id text not null,
    session_id text not null,
    source text,
    model text,
    started_at timestamptz not null,
    tokens_in bigint,
    tokens_out bigint,
    metadata jsonb not null default '{}',
    recorded_at timestamptz not null default pg_catalog.now(),
    updated_at timestamptz not null default pg_catalog.now(),
    primary key (tenant_id, session_key),
    unique (tenant_id, agent_id, session_id)
);

create table memory.turns (
    tenant_id text not null,
    turn_key bigint generated always as identity,
    session_key bigint not null,
    agent_id text not null,
    position integer not null,
    message_id text,
    role text not null check (role in ('user', 'assistant', 'system', 'tool')),
    name text,
    content text not null,
    content_sha256 bytea not null,
    tool_calls jsonb,
    tool_call_id text,
    tokens integer,
    client_embedding vector,
    trust real not null default 1 check (trust >= 0),
    access_count bigint not null default 0,
    last_accessed_at timestamptz,
    metadata jsonb not null default '{}',
    created_at timestamptz not null,
    recorded_at timestamptz not null default pg_catalog.now(),
    primary key (tenant_id, turn_key),
    unique (tenant_id, session_key, position),
    foreign key (tenant_id, session_key) references memory.sessions (tenant_id, session_key) on delete cascade
);

create unique index turns_message_id on memory.turns (tenant_id, session_key, message_id)
where message_id is not null;
create index turns_agent_time on memory.turns (tenant_id, agent_id, created_at);

-- The people and agents who speak in a scope (turns.name), for matching names in queries.
create table memory.speakers (
    tenant_id text not null,
    agent_id text not null,
    name text not null,
    primary key (tenant_id, agent_id, name)
);

select pg_catalog.pg_extension_config_dump('memory.sessions', '');
select pg_catalog.pg_extension_config_dump('memory.speakers', '');
select pg_catalog.pg_extension_config_dump('memory.turns', '');
