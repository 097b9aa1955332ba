-- The knowledge graph (0.3.0): entities of twelve types, their mentions in turns, co-occurrence edges
-- between entities mentioned in one turn, and each entity's state over time. Tenant-keyed (row-level
-- security comes with the tenant_id column) and scoped: an entity belongs to one agent's memory (scope =
-- agent_id), as the sessions it is mentioned in do.
create table memory.entities (
    tenant_id text not null,
    entity_key bigint generated always as identity,
    scope text not null,
    name text not null,
    normalized text not null check (normalized <> ''),
    type text not null check (type in (
        'person', 'project', 'concept', 'tool', 'metric', 'org', 'place', 'event',
        'doc', 'task', 'topic', 'other'
    )),
    aliases text[] not null default '{}',
    trigrams text[] not null default '{}',
    primary key (tenant_id, entity_key),
    unique (tenant_id, scope, normalized)
);
create index entities_aliases on memory.entities using gin (aliases);
create index entities_trigrams on memory.entities using gin (trigrams);
select pg_catalog.pg_extension_config_dump('memory.entities', '');
select pg_catalog.pg_extension_config_dump('memory.entities_entity_key_seq', '');

-- Which turns mention which entities, how often. Written by enrichment (and by callers who pass entities
-- with a message); removed with the turn.
create table memory.entity_mentions (
    tenant_id text not null,
    turn_key bigint not null,
    entity_key bigint not null,
    session_key bigint not null,
    mentions integer not null check (mentions > 0),
    primary key (tenant_id, turn_key, entity_key),
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade,
    foreign key (tenant_id, entity_key) references memory.entities (tenant_id, entity_key) on delete cascade
);
create index entity_mentions_by_entity on memory.entity_mentions (tenant_id, entity_key, session_key);
select pg_catalog.pg_extension_config_dump('memory.entity_mentions', '');

-- Undirected co-occurrence: one row per pair of entities mentioned in one turn (entity_a < entity_b),
-- counting the turns. Derived from the mentions by a trigger, so not dumped: restoring the mentions
-- rebuilds it.
create table memory.entity_edges (
    tenant_id text not null,
    entity_a bigint not null,
    entity_b bigint not null,
    turns bigint not null,
    last_seen timestamptz not null,
    primary key (tenant_id, entity_a, entity_b),
    check (entity_a < entity_b),
    foreign key (tenant_id, entity_a) references memory.entities (tenant_id, entity_key) on delete cascade,
    foreign key (tenant_id, entity_b) references memory.entities (tenant_id, entity_key) on delete cascade
);
create index entity_edges_by_b on memory.entity_edges (tenant_id, entity_b);
select pg_catalog.pg_extension_config_dump('memory.entity_edges', 'where false');

-- An entity's attributes over time: one row per value with the period it held (valid_to null: current).
-- At most one current value per entity and attribute, by constraint.
create table memory.entity_states (
    tenant_id text not null,
    state_key bigint generated always as identity,
    entity_key bigint not null,
    attribute text not null check (attribute <> ''),
    value jsonb not null,
    valid_from timestamptz not null,
    valid_to timestamptz check (valid_to > valid_from),
    recorded_at timestamptz not null default pg_catalog.now(),
    recorded_by text not null default current_user,
    primary key (tenant_id, state_key),
    foreign key (tenant_id, entity_key) references memory.entities (tenant_id, entity_key) on delete cascade
);
create unique index entity_states_one_current on memory.entity_states (tenant_id, entity_key, attribute)
where valid_to is null;
create index entity_states_history on memory.entity_states (tenant_id, entity_key, attribute, valid_from);
select pg_catalog.pg_extension_config_dump('memory.entity_states', '');
select pg_catalog.pg_extension_config_dump('memory.entity_states_state_key_seq', '');

-- The llm extractor: mentions are read from the model's answer for the session, or by the rules.
drop function if exists memory_internal._extract_mentions(jsonb, jsonb);
drop function if exists memory_internal._write_mentions(text, bigint, jsonb, jsonb);

-- Entity-aware recall: the prepared query carries the entities the recall is about (named in the query
-- or passed), their graph neighbours and, for entity_mode all, the sessions that mention every passed
-- one; a candidate carries how much of them its turn mentions. The regex filter over turn text goes.
create index entities_by_name on memory.entities (tenant_id, normalized);
alter type memory_internal._recall_query add attribute entity_keys bigint[];
alter type memory_internal._recall_query add attribute entity_groups integer[];
alter type memory_internal._recall_query add attribute entity_weights double precision[];
alter type memory_internal._recall_query add attribute entity_names text[];
alter type memory_internal._recall_query add attribute neighbor_keys bigint[];
alter type memory_internal._recall_query add attribute entity_sessions bigint[];
alter type memory.recall_candidate add attribute entities_mentioned double precision;
alter type memory.recall_candidate add attribute neighbor_mentioned boolean;
drop function if exists memory_internal._matches_entities(text, text, text[], text);
drop function if exists memory_internal._turn_filter(
    text, bigint, bigint, timestamptz, timestamptz, text, text[], text
);
drop function if exists memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, memory_internal._recall_query, vector, text
);
drop function if exists memory_internal._prepare_query(text, text, text, jsonb);
