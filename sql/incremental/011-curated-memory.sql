-- Curated memory (0.3.0): what is true now, beside what was said. A memory is a typed claim of one
-- agent's (a fact, preference, rule, decision, skill, event, observation or task) with a status and the
-- period it holds; a newer version of the same key supersedes it and keeps the chain. Its words are a
-- turn of the agent's session 'remembered' (turn_key), so a memory is indexed, embedded and recalled as
-- turns are; evidence_turns are the turns it came from.
create table memory.memories (
    tenant_id text not null,
    memory_id bigint generated always as identity,
    agent_id text not null,
    kind text not null check (kind in (
        'fact', 'preference', 'rule', 'decision', 'skill', 'event', 'observation', 'task'
    )),
    content text not null check (btrim(content) <> ''),
    key text check (btrim(key) <> ''),
    subjects text[] not null default '{}',
    tags text[] not null default '{}',
    importance double precision not null default 0.5 check (importance between 0 and 1),
    confidence double precision not null default 1 check (confidence between 0 and 1),
    status text not null default 'active' check (
        status in ('active', 'ongoing', 'resolved', 'superseded', 'retracted')
    ),
    valid_from timestamptz not null default pg_catalog.now(),
    valid_to timestamptz check (valid_to >= valid_from),
    recorded_at timestamptz not null default pg_catalog.now(),
    recorded_by text not null default current_user,
    canonical bytea not null,
    turn_key bigint not null,
    evidence_turns bigint[] not null default '{}',
    supersedes bigint,
    primary key (tenant_id, memory_id),
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade,
    foreign key (tenant_id, supersedes) references memory.memories (tenant_id, memory_id) on delete set null (
        supersedes
    )
);
-- What holds now: at most one current memory per key of an agent, and one per claim under a key (or none).
create unique index memories_current_key on memory.memories (tenant_id, agent_id, key)
where key is not null and valid_to is null and status in ('active', 'ongoing');
create unique index memories_current_claim on memory.memories (tenant_id, agent_id, canonical, coalesce(key, ''))
where valid_to is null and status in ('active', 'ongoing');
create index memories_by_turn on memory.memories (tenant_id, turn_key);
create index memories_by_predecessor on memory.memories (tenant_id, supersedes);
create index memories_by_kind on memory.memories (tenant_id, agent_id, kind, status);
create index memories_by_subject on memory.memories using gin (subjects);
create index memories_by_tag on memory.memories using gin (tags);
select pg_catalog.pg_extension_config_dump('memory.memories', '');
select pg_catalog.pg_extension_config_dump('memory.memories_memory_id_seq', '');

-- remember returns the memory now (memory.memory_items' columns) with what remembering it did, and takes
-- its key, subjects, tags, importance and period.
create type memory.remembered as (
    memory_id bigint, agent_id text, kind text, content text, key text, subjects text [], tags text [],
    importance double precision, confidence double precision, status text, valid_from timestamptz,
    valid_to timestamptz,
    recorded_at timestamptz, recorded_by text, supersedes bigint, superseded_by bigint, turn_id bigint,
    evidence_turn_ids bigint [], outcome text
);
drop function if exists memory.remember(text, text, text, jsonb, text);
drop function if exists memory_internal._remember_turn(text, text, text, text, jsonb, text);
