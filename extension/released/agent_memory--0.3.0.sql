-- agent_memory 0.3.0: assembled by extension/tools/assemble.py from sql/; do not edit.

\echo Use "CREATE EXTENSION agent_memory" to load this file. \quit

-- sql/head.sql
-- Runs first in every install and upgrade script: the schema of the extension's internals, the record
-- of incremental files, and the function that applies each of them exactly once.

-- Internals (functions a DBA is not asked to call, internal tables and types) live in memory_internal,
-- so that \df memory.* lists the public API. Before 0.3.0 they were memory._*: the record moves here, the
-- rest moves in incremental file 009.
create schema if not exists memory_internal;
comment on schema memory_internal is
'agent_memory''s internals: the functions, tables and types behind the public API of schema memory.';
do $move$
begin
    if pg_catalog.to_regclass('memory._migration') is not null then
        alter table memory._migration set schema memory_internal;
        drop function memory._apply_migration(text, text, text, text);
    end if;
end
$move$;

create table if not exists memory_internal._migration (
    name text primary key,
    sha256 text not null,
    applied_in_version text not null,
    applied_at timestamptz not null default pg_catalog.now()
);

comment on table memory_internal._migration is
'Incremental SQL files (sql/incremental) applied to this database, each once, with the hash it had.';

-- Applies one incremental file unless it was applied before; a recorded file whose text has changed
-- since is an error, because released incremental files are frozen. It runs the file under the
-- install script's search_path (the extension's schema, then pgvector's), so it sets none itself.
create or replace function memory_internal._apply_migration(
    p_name text, p_sha256 text, p_version text, p_body text
) returns void
language plpgsql
as $$
declare
    v_recorded text;
begin
    select m.sha256 into v_recorded from memory_internal._migration as m where m.name = p_name;
    if found then
        if v_recorded <> p_sha256 then
            raise exception 'agent_memory: incremental file % changed after it was applied', p_name
                using detail = format('recorded sha256 %s, now %s', v_recorded, p_sha256),
                hint = 'released incremental files must never change; add a new file instead';
        end if;
        return;
    end if;
    execute p_body;
    insert into memory_internal._migration (name, sha256, applied_in_version)
    values (p_name, p_sha256, p_version);
end
$$;

comment on function memory_internal._apply_migration(text, text, text, text) is
'Internal: runs an incremental SQL file once and records it in memory_internal._migration.';

-- The roles the extension's objects belong to (sql/tail.sql gives them what is theirs): memory_owner owns
-- every table, view and function, and the API runs as it; memory_observer owns the two functions that must
-- see every tenant's chunks whoever calls (it may read those tables past row-level security, and nothing
-- else). Roles are the cluster's: one that already exists must be what this makes (no login, no superuser, no
-- member and a member of no role, no right to make roles or databases; only memory_observer bypasses
-- row-level security); anything else is a role someone else controls, and the install stops.
do $owners$
declare
    v_role record;
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_owner') then
        create role memory_owner nologin;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_observer') then
        create role memory_observer nologin bypassrls;
    end if;
    for v_role in
        select r.rolname, r.rolcanlogin or r.rolsuper or r.rolcreaterole or r.rolcreatedb
                          or r.rolbypassrls <> (r.rolname = 'memory_observer') or exists (
                              select from pg_catalog.pg_auth_members as m where m.roleid = r.oid or m.member = r.oid
                          ) as controlled
        from pg_catalog.pg_roles as r where r.rolname in ('memory_owner', 'memory_observer')
    loop
        if v_role.controlled then
            raise exception 'agent_memory: role % exists and can log in, create roles or databases, bypasses '
                'row-level security where it should not, or has members or roles: it must be a bare role only the '
                'extension uses', v_role.rolname
                using hint = 'drop it (or revoke what it has) and install again';
        end if;
    end loop;
end
$owners$;

-- The objects of one catalog (pg_proc, pg_class) that belong to this extension: what sql/tail.sql pins to
-- a search_path, hands to memory_owner and makes run as it.
create or replace function memory_internal._extension_objects(catalog regclass) returns setof oid
language sql
stable
as $$
    select d.objid
    from pg_catalog.pg_depend as d
    inner join pg_catalog.pg_extension as e on d.refobjid = e.oid
    where d.classid = catalog and d.deptype = 'e' and e.extname = 'agent_memory'
$$;

comment on function memory_internal._extension_objects(regclass) is
'Internal: the objects of a catalog (pg_proc, pg_class) that belong to agent_memory.';

-- sql/incremental/001-config.sql
select memory_internal._apply_migration('001-config.sql', '1c21e7fb6d33ea53ff90b8a39501e6ed417e0b79605d790b4648ca102f18ab4b', '0.3.0', $migration_body$
-- Settings a DBA has changed from their defaults. The defaults themselves live in
-- memory.setting_definitions() so that upgrades can ship new ones.
create table memory.config (
    key text primary key,
    value jsonb not null,
    updated_at timestamptz not null default pg_catalog.now(),
    updated_by name not null default current_user
);

select pg_catalog.pg_extension_config_dump('memory.config', '');
$migration_body$);

-- sql/incremental/002-sessions-and-turns.sql
select memory_internal._apply_migration('002-sessions-and-turns.sql', '1de9b06c2fd3ddf34d14d29f6bbc775f6f3e9352fffdc1678ba2f9b06e26b555', '0.3.0', $migration_body$
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
$migration_body$);

-- sql/incremental/003-enrichment.sql
select memory_internal._apply_migration('003-enrichment.sql', 'b905e6b5c0737e68b00dcc08a9c01b0dc98a6c428f06dd796d116ffa8a049116', '0.3.0', $migration_body$
-- What enrichment writes: the text indexed for each turn (chunks, with full-text vectors), their
-- embeddings per model, session summaries and session embeddings per model.
create table memory.chunks (
    tenant_id text not null,
    turn_key bigint not null,
    chunk_no integer not null,
    session_key bigint not null,
    agent_id text not null,
    text text not null,
    text_sha256 bytea not null,
    tsv tsvector not null,
    length integer not null,
    primary key (tenant_id, turn_key, chunk_no),
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade
);

create index chunks_tsv on memory.chunks using gin (tsv);
create index chunks_session on memory.chunks (tenant_id, session_key);

-- Term statistics for BM25, per tenant and agent, kept current by triggers on memory.chunks.
create table memory.lexicon (
    tenant_id text not null,
    agent_id text not null,
    lexeme text not null,
    chunks integer not null,
    primary key (tenant_id, agent_id, lexeme)
);

create index lexicon_lexeme on memory.lexicon (tenant_id, lexeme);

create table memory.corpus (
    tenant_id text not null,
    agent_id text not null,
    chunks bigint not null,
    total_length bigint not null,
    primary key (tenant_id, agent_id)
);

-- Vectors of any dimension; each model gets its own partial HNSW index (memory._ensure_vector_index).
create table memory.chunk_embeddings (
    tenant_id text not null,
    turn_key bigint not null,
    chunk_no integer not null,
    model text not null,
    text_sha256 bytea not null,
    embedding vector not null,
    primary key (tenant_id, turn_key, chunk_no, model),
    foreign key (tenant_id, turn_key, chunk_no)
    references memory.chunks (tenant_id, turn_key, chunk_no) on delete cascade
);

create table memory.summaries (
    tenant_id text not null,
    session_key bigint not null,
    method text not null,
    summary text not null,
    decisions jsonb not null default '[]',
    open_loops jsonb not null default '[]',
    source_sha256 bytea,
    tsv tsvector not null,
    created_at timestamptz not null default pg_catalog.now(),
    primary key (tenant_id, session_key),
    foreign key (tenant_id, session_key) references memory.sessions (tenant_id, session_key) on delete cascade
);

create index summaries_tsv on memory.summaries using gin (tsv);

create table memory.session_embeddings (
    tenant_id text not null,
    session_key bigint not null,
    model text not null,
    text_sha256 bytea not null,
    embedding vector not null,
    primary key (tenant_id, session_key, model),
    foreign key (tenant_id, session_key) references memory.sessions (tenant_id, session_key) on delete cascade
);

-- Embedding models that have been used, and whether recall may use them yet.
create table memory.embedding_models (
    model text primary key,
    provider text not null,
    dimensions integer not null,
    state text not null default 'building' check (state in ('building', 'ready', 'retired')),
    created_at timestamptz not null default pg_catalog.now(),
    ready_at timestamptz
);

-- Secrets such as API keys: readable only by the extension's owner (PUBLIC has no grant).
create table memory._secrets (
    name text primary key,
    value text not null
);

revoke all on memory._secrets from public;

select pg_catalog.pg_extension_config_dump('memory.chunks', '');
select pg_catalog.pg_extension_config_dump('memory.lexicon', '');
select pg_catalog.pg_extension_config_dump('memory.corpus', '');
select pg_catalog.pg_extension_config_dump('memory.chunk_embeddings', '');
select pg_catalog.pg_extension_config_dump('memory.summaries', '');
select pg_catalog.pg_extension_config_dump('memory.session_embeddings', '');
select pg_catalog.pg_extension_config_dump('memory.embedding_models', '');
select pg_catalog.pg_extension_config_dump('memory._secrets', '');
$migration_body$);

-- sql/incremental/004-jobs.sql
select memory_internal._apply_migration('004-jobs.sql', '56e4f84549760fd87ca74813541c380986fe4933d23610d960aa8bd010252938', '0.3.0', $migration_body$
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
$migration_body$);

-- sql/incremental/005-feedback.sql
select memory_internal._apply_migration('005-feedback.sql', '1bbee7a43d319c99a00f4a0275413f79745437db52779e480d9967338f6a2470', '0.3.0', $migration_body$
-- Feedback on recalled turns: every helpful / unhelpful verdict, with the trust it moved (audit trail).
create table memory.feedback (
    tenant_id text not null,
    feedback_id bigint generated always as identity,
    turn_key bigint not null,
    helpful boolean not null,
    query text,
    note text,
    trust_before real not null,
    trust_after real not null,
    given_by text not null default current_user,
    created_at timestamptz not null default pg_catalog.now(),
    primary key (tenant_id, feedback_id),
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade
);

create index feedback_turn on memory.feedback (tenant_id, turn_key);

select pg_catalog.pg_extension_config_dump('memory.feedback', '');
$migration_body$);

-- sql/incremental/006-recall-signals.sql
select memory_internal._apply_migration('006-recall-signals.sql', '5141651e93992eadd4cdbd60b00226b8599699ff248e58097bbe1de7075c5521', '0.3.0', $migration_body$
-- Recall rebuilt as a registry of signals (0.3.0).

-- A chunk's text is the turn's own words; the preceding turn is its context, indexed in the same
-- tsvector under weight C (own words keep the default weight D) and, for vectors, referenced by key.
alter table memory.chunks add column context_turn_key bigint;
alter table memory.chunks add column context_length integer not null default 0;

-- The signals recall adds up: each a function of one candidate (memory.recall_candidate) and the
-- settings in force, with a weight setting of its own (weight_<name>). The function is kept as its
-- signature in text: pg_upgrade refuses tables with regprocedure columns.
create table memory.signals (
    name text primary key check (name ~ '^[a-z][a-z0-9_]*$'),
    stage text not null check (stage in ('fusion', 'boost')),
    function text not null,
    default_weight double precision not null check (default_weight >= 0 and default_weight <= 100),
    measures text not null,
    builtin boolean not null default false
);

select pg_catalog.pg_extension_config_dump('memory.signals', 'where not builtin');

-- What a signal function sees of a candidate. Fusion-stage signals see a chunk (its full-text and vector
-- scores); boost-stage signals see a turn with its best chunk's values and the fused score.
create type memory.recall_candidate as (
    turn_key bigint,
    session_key bigint,
    chunk_no integer,
    position integer,
    role text,
    speaker text,
    created_at timestamptz,
    age_days double precision,
    trust double precision,
    access_count bigint,
    bm25 double precision,
    cosine double precision,
    context_cosine double precision,
    context_similarity double precision,
    fused double precision,
    session_best double precision,
    previous_fused double precision,
    next_fused double precision,
    summary_z double precision,
    session_vector_z double precision,
    speaker_named boolean,
    holds_open_loop boolean,
    days_from_period double precision
);

-- A recall query prepared once: the text searched, the speakers it names, its lexemes with their
-- document frequencies and idf in scope, the scope's size, and the period of time it names.
create type memory._recall_query as (
    search_text text,
    speakers text [],
    lexemes text [],
    df bigint [],
    idf double precision [],
    tsquery tsquery,
    generating tsquery,
    chunks_in_scope double precision,
    avg_length double precision,
    period tstzrange
);

-- Functions whose arguments or results changed shape; the idempotent files create the new ones.
drop function if exists memory.commit(text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text);
drop function if exists memory._chunk_turns(jsonb, jsonb);
drop function if exists memory._bm25_term(
    double precision, integer, integer, double precision, double precision, double precision
);
drop function if exists memory._recall_candidates(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector
);
drop function if exists memory._components(double precision[], jsonb);
drop function if exists memory.explain_recall(text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector);

-- Indexing changed (own words apart from context): every session is indexed again by the queue.
insert into memory.jobs (tenant_id, kind, session_key)
select
    s.tenant_id,
    'enrich' as kind,
    s.session_key
from memory.sessions as s
on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing;
$migration_body$);

-- sql/incremental/007-roles-and-tenants.sql
select memory_internal._apply_migration('007-roles-and-tenants.sql', '7a02228d23901eb55c74b1a2f0fa23980f4ff01e53a6c30305095e40b7f63838', '0.3.0', $migration_body$
-- Roles and tenants (0.3.0): who may do what, and which tenant a role's rows belong to.

-- Cluster-wide group roles, created once: memory_tenant (the grants an application or agent of one
-- tenant needs; a member must be bound to a tenant in memory.tenant_roles), memory_app (a memory_tenant
-- that may choose its tenant with `set memory.tenant_id`), memory_admin (settings, secrets, tenants,
-- maintenance across tenants).
do $roles$
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_tenant') then
        create role memory_tenant nologin;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_app') then
        create role memory_app nologin;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_admin') then
        create role memory_admin nologin;
    end if;
end
$roles$;

-- Roles bound to one tenant: whatever they `set`, their tenant is this one.
create table memory.tenant_roles (
    role_name name primary key,
    tenant_id text not null check (tenant_id <> '' and length(tenant_id) <= 200),
    bound_at timestamptz not null default pg_catalog.now(),
    bound_by name not null default current_user
);

select pg_catalog.pg_extension_config_dump('memory.tenant_roles', '');

-- Settings per tenant: a row of memory.config with a tenant_id is that tenant's, over the row for every
-- tenant (tenant_id '').
alter table memory.config add column tenant_id text not null default '';
alter table memory.config drop constraint config_pkey;
alter table memory.config add primary key (tenant_id, key);

-- A secret is sent only to the origin (scheme://host[:port]) it was stored for.
alter table memory._secrets add column origin text;

-- Secrets stored before 0.3.0 were for the endpoint configured then (a secret without an origin is sent
-- nowhere until it is stored again with one).
update memory._secrets as s
set origin = coalesce(
    (
        select lower(substring(c.value #>> '{}' from '^(https?://[^/?#@]+)'))
        from memory.config as c
        where c.key = case s.name when 'rerank_api_key' then 'rerank_url' else 'openai_base_url' end
    ),
    case when s.name = 'openai_api_key' then 'https://api.openai.com' end
);

-- setting_definitions() gains who may set each setting; set_secret() the origin.
drop function if exists memory.setting_definitions() cascade;
drop function if exists memory.set_secret(text, text);
-- _register_model runs as the owner and now registers the model in force, not one its caller names.
drop function if exists memory._register_model(text, text, integer);
$migration_body$);

-- sql/incremental/008-dump-and-restore.sql
select memory_internal._apply_migration('008-dump-and-restore.sql', '6d21df2d470c1568d3cacd244cb84fd5c2fd0eb59c8bfaeeae2248bfc1ac0cac', '0.3.0', $migration_body$
-- Dump and restore (0.3.0). pg_dump dumps the data of the extension's tables, and pg_restore loads it
-- with the extension's triggers in place.

-- Tables derived by triggers from the rows they count (speakers from turns, the lexicon and the corpus
-- statistics from chunks) are not dumped: restoring turns and chunks rebuilds them. Dumped too, they
-- were counted twice and their COPY failed on duplicate keys.
select pg_catalog.pg_extension_config_dump('memory.speakers', 'where false');
select pg_catalog.pg_extension_config_dump('memory.lexicon', 'where false');
select pg_catalog.pg_extension_config_dump('memory.corpus', 'where false');

-- The identity sequences, with their positions: without them a restored database handed out keys
-- that were taken.
select pg_catalog.pg_extension_config_dump('memory.sessions_session_key_seq', '');
select pg_catalog.pg_extension_config_dump('memory.turns_turn_key_seq', '');
select pg_catalog.pg_extension_config_dump('memory.jobs_job_id_seq', '');
select pg_catalog.pg_extension_config_dump('memory.feedback_feedback_id_seq', '');

-- A vector belongs to a registered model (dropping a model drops its vectors). The reference also makes
-- pg_dump load the models before the vectors, whose triggers check them against their model.
alter table memory.chunk_embeddings
add constraint chunk_embeddings_model_fkey foreign key (model) references memory.embedding_models (model)
on delete cascade;
alter table memory.session_embeddings
add constraint session_embeddings_model_fkey foreign key (model) references memory.embedding_models (model)
on delete cascade;
$migration_body$);

-- sql/incremental/009-first-hour.sql
select memory_internal._apply_migration('009-first-hour.sql', '663315aed814a84505a560260645d5753ea25643f01febc686f34b02c0880c57', '0.3.0', $migration_body$
-- The extension's internals move from memory._* to schema memory_internal (created by head.sql), and the
-- built-in signal functions with them: \df memory.* then lists the public API only. Objects keep their
-- identity (triggers, policies, defaults and dependent objects follow them); the idempotent files that
-- run next replace the functions' bodies, which name memory_internal.
do $move$
declare
    v_statement text;
begin
    for v_statement in
        select format('alter %s %s set schema memory_internal',
                      case p.prokind when 'p' then 'procedure' else 'function' end, p.oid::regprocedure)
        from pg_catalog.pg_proc as p
        where p.pronamespace = 'memory'::regnamespace
            and (p.proname like '\_%' or p.proname like 'signal\_%' and p.proname <> 'signal_definitions')
            and exists (select from pg_catalog.pg_depend as d
                        where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
        union all
        select format('alter table %s set schema memory_internal', c.oid::regclass)
        from pg_catalog.pg_class as c
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'r' and c.relname like '\_%'
            and exists (select from pg_catalog.pg_depend as d
                        where d.classid = 'pg_catalog.pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')
        union all
        select format('alter type %s set schema memory_internal', t.oid::regtype)
        from pg_catalog.pg_type as t
        where t.typnamespace = 'memory'::regnamespace and t.typtype = 'c' and t.typrelid <> 0
            and t.typname like '\_%'
            and (select c.relkind from pg_catalog.pg_class as c where c.oid = t.typrelid) = 'c'
            and exists (select from pg_catalog.pg_depend as d
                        where d.classid = 'pg_catalog.pg_type'::regclass and d.objid = t.oid and d.deptype = 'e')
    loop
        execute v_statement;
    end loop;
    -- The registry names signal functions as text: name the moved ones where they are now.
    update memory.signals as s
    set function = replace(s.function, 'memory.signal_', 'memory_internal.signal_')
    where s.builtin and s.function like 'memory.signal\_%';
end
$move$;

-- remember gained an enrich argument (a remembered fact is recallable at once).
drop function if exists memory.remember(text, text, text, jsonb);

-- A session named without its agent (forget, enrich, reindex of whichever agent has it) is found by name.
create index sessions_by_name on memory.sessions (tenant_id, session_id);
$migration_body$);

-- sql/incremental/010-knowledge-graph.sql
select memory_internal._apply_migration('010-knowledge-graph.sql', '2b36878195037b6f02c467b4ab11a34c7abb6382f8d0934fbc2223fc366399ee', '0.3.0', $migration_body$
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
$migration_body$);

-- sql/incremental/011-curated-memory.sql
select memory_internal._apply_migration('011-curated-memory.sql', 'a73c9cccd58a99c9b05d7f0c6e349d5d8f756ebef27e6d897704ffb320f91533', '0.3.0', $migration_body$
-- Curated memory (0.3.0): what is true now, beside what was said. A memory is a typed claim of one
-- agent's (a fact, preference, rule, decision, skill, event, observation or task) with a status and the
-- period it holds; a newer version of the same key supersedes it and keeps the chain. Its words are a
-- turn of the agent's session 'remembered' (turn_key), so a memory is indexed, embedded and recalled as
-- turns are; evidence_turns are the turns it came from. origin says who proposed it: a caller
-- (remember) or enrichment's extractor (patterns or llm); status pending is a proposal awaiting review.
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
        status in ('active', 'ongoing', 'resolved', 'superseded', 'retracted', 'pending')
    ),
    origin text not null default 'remember' check (origin in ('remember', 'patterns', 'llm')),
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
create index memories_by_evidence on memory.memories using gin (evidence_turns);
select pg_catalog.pg_extension_config_dump('memory.memories', '');
select pg_catalog.pg_extension_config_dump('memory.memories_memory_id_seq', '');

-- Semantic dedup's log: each claim remembered that paraphrased a memory held (cosine at or above
-- memory_dedup_threshold, the same values), merged into it, or in shadow mode only recorded beside the
-- memory created instead.
create table memory.memory_merges (
    tenant_id text not null,
    merge_id bigint generated always as identity,
    memory_id bigint not null,
    agent_id text not null,
    kind text not null,
    content text not null,
    similarity double precision not null,
    merged boolean not null,
    created_memory_id bigint,
    recorded_at timestamptz not null default pg_catalog.now(),
    recorded_by text not null default current_user,
    primary key (tenant_id, merge_id),
    foreign key (tenant_id, memory_id) references memory.memories (tenant_id, memory_id) on delete cascade,
    foreign key (tenant_id, created_memory_id) references memory.memories (tenant_id, memory_id) on delete cascade,
    check (merged = (created_memory_id is null))
);
create index memory_merges_by_memory on memory.memory_merges (tenant_id, memory_id);
create index memory_merges_by_created on memory.memory_merges (tenant_id, created_memory_id);
select pg_catalog.pg_extension_config_dump('memory.memory_merges', '');
select pg_catalog.pg_extension_config_dump('memory.memory_merges_merge_id_seq', '');

-- remember returns the memory now (memory.memory_items' columns) with what remembering it did, and takes
-- its key, subjects, tags, importance and period.
create type memory.remembered as (
    memory_id bigint, agent_id text, kind text, content text, key text, subjects text [], tags text [],
    importance double precision, confidence double precision, status text, valid_from timestamptz,
    valid_to timestamptz,
    recorded_at timestamptz, recorded_by text, supersedes bigint, superseded_by bigint, turn_id bigint,
    evidence_turn_ids bigint [], origin text, outcome text
);
drop function if exists memory.remember(text, text, text, jsonb, text);
drop function if exists memory_internal._remember_turn(text, text, text, text, jsonb, text);

-- Recall answers with memories beside turns: a candidate knows the memory its words carry (kind,
-- importance, status) and whether its kind is what the question asks for; a query knows its intent.
alter type memory.recall_candidate add attribute memory_kind text;
alter type memory.recall_candidate add attribute memory_importance double precision;
alter type memory.recall_candidate add attribute memory_status text;
alter type memory.recall_candidate add attribute intended boolean;
alter type memory_internal._recall_query add attribute intent text;
alter type memory_internal._recall_query add attribute intent_kinds text[];
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector
);
drop function if exists memory.explain_recall(text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector);
drop function if exists memory_internal._recall_candidates(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector
);
drop function if exists memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text
);
drop function if exists memory_internal._prepare_query(text, text, text, jsonb, text[], text);

-- Feedback on memories and whole sessions as well as turns, with four verdicts: helpful, unhelpful,
-- incorrect and stale. judged_by is the agent (or role) that gave it: its repeat of the verdict it last
-- gave is kept but not counted. effect says what the verdict did.
alter table memory.feedback alter column turn_key drop not null;
alter table memory.feedback alter column trust_before drop not null;
alter table memory.feedback alter column trust_after drop not null;
alter table memory.feedback add column verdict text;
update memory.feedback set verdict = case when helpful then 'helpful' else 'unhelpful' end;
alter table memory.feedback alter column verdict set not null;
alter table memory.feedback add constraint feedback_verdict_check check (
    verdict in ('helpful', 'unhelpful', 'incorrect', 'stale') and helpful = (verdict = 'helpful')
);
alter table memory.feedback add column memory_id bigint;
alter table memory.feedback add column session_key bigint;
alter table memory.feedback add column judged_by text;
update memory.feedback set judged_by = given_by;
alter table memory.feedback alter column judged_by set not null;
alter table memory.feedback add column counted boolean not null default true;
alter table memory.feedback add column effect text;
alter table memory.feedback add constraint feedback_memory_fkey foreign key (tenant_id, memory_id)
references memory.memories (tenant_id, memory_id) on delete cascade;
alter table memory.feedback add constraint feedback_session_fkey foreign key (tenant_id, session_key)
references memory.sessions (tenant_id, session_key) on delete cascade;
alter table memory.feedback add constraint feedback_one_target check (
    num_nonnulls(turn_key, memory_id, session_key) = 1
);
create index feedback_memory on memory.feedback (tenant_id, memory_id);
create index feedback_session on memory.feedback (tenant_id, session_key);
drop function if exists memory.feedback(bigint, boolean, text, text);
create type memory.feedback_given as (
    feedback_id bigint, trust_before real, trust_after real, verdict text, counted boolean, effect text
);
$migration_body$);

-- sql/incremental/012-vector-graph.sql
select memory_internal._apply_migration('012-vector-graph.sql', '6cec59f50ba9f64afa67be3bcaed9f469084a27e596a8c2f31fa8b4ec92962de', '0.3.0', $migration_body$
-- Which vectors the HNSW graphs hold (0.3.0). A tenant's vectors join its model's graph only once the
-- tenant holds more chunks than exact search serves (setting exact_search_max_chunks): below that, recall
-- scans them exactly, and keeping a graph current for them cost enrichment about a millisecond a chunk
-- for nothing. A vector outside the graph is still found by approximate search, which scans those rows
-- exactly beside the graph (the *_outside_graph indexes find them).
do $drop$
declare
    v_index regclass;
begin
    -- memory_internal._ensure_vector_index makes them again, with the in_graph predicate.
    for v_index in
        select i.indexrelid::regclass
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_class as c on c.oid = i.indexrelid
        inner join pg_catalog.pg_am as a on a.oid = c.relam
        where i.indrelid in ('memory.chunk_embeddings'::regclass, 'memory.session_embeddings'::regclass)
            and a.amname = 'hnsw'
    loop
        execute format('drop index %s', v_index);
    end loop;
end
$drop$;

alter table memory.chunk_embeddings add column in_graph boolean not null default false;
alter table memory.session_embeddings add column in_graph boolean not null default false;

-- Tenants above the shipped threshold keep their vectors in the graph.
update memory.chunk_embeddings as e set in_graph = true
where e.tenant_id in (
    select k.tenant_id from memory.corpus as k
    group by k.tenant_id
    having sum(k.chunks) > 20000
);
update memory.session_embeddings as e set in_graph = true
where e.tenant_id in (
    select k.tenant_id from memory.corpus as k
    group by k.tenant_id
    having sum(k.chunks) > 20000
);

create index chunk_embeddings_outside_graph on memory.chunk_embeddings (tenant_id, model) where not in_graph;
create index session_embeddings_outside_graph on memory.session_embeddings (tenant_id, model) where not in_graph;
$migration_body$);

-- sql/incremental/013-maintenance.sql
select memory_internal._apply_migration('013-maintenance.sql', '9541085e9d0acb62bc1b1c2e0f1e88f6ea249a01cc93c5d2205fcd0172b1cc89', '0.3.0', $migration_body$
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
$migration_body$);

-- sql/incremental/014-forget-tombstones.sql
select memory_internal._apply_migration('014-forget-tombstones.sql', 'a03ea4189ba773dc89a5efcd7be456048ce41daf8bc5052920e65298ede66721', '0.3.0', $migration_body$
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
$migration_body$);

-- sql/incremental/015-tiers.sql
select memory_internal._apply_migration('015-tiers.sql', '9db5adb1df79f8014f05ad873f4f50d9131260f3c43139957e38c73588917161', '0.3.0', $migration_body$
-- Tiers (0.3.0): every session and curated memory is hot, warm or cold. Maintenance moves them down as
-- their importance decays and as an agent's tiers fill; recall and helpful feedback bring them back to
-- hot. Recall leaves cold ones out unless asked (tiers => ...).
alter table memory.sessions
add column tier text not null default 'hot' check (tier in ('hot', 'warm', 'cold')),
add column tier_since timestamptz not null default pg_catalog.now(),
add column used_at timestamptz;
alter table memory.memories
add column tier text not null default 'hot' check (tier in ('hot', 'warm', 'cold')),
add column tier_since timestamptz not null default pg_catalog.now(),
add column used_at timestamptz;

-- Whether a tenant has anything outside the tiers a recall searches, and each agent's tier in turn.
create index sessions_tier on memory.sessions (tenant_id, tier, agent_id);
create index memories_tier on memory.memories (tenant_id, tier, agent_id);

alter type memory.recall_candidate add attribute tier text;
alter type memory.recall_candidate add attribute decayed_importance double precision;

-- recall and explain_recall take tiers; the lists filter by them.
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text
);
drop function if exists memory.explain_recall(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text
);
drop function if exists memory_internal._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, bigint[]);
drop function if exists memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text, timestamptz, boolean
);
$migration_body$);

-- sql/incremental/016-metrics.sql
select memory_internal._apply_migration('016-metrics.sql', 'b4c188dab57ab23d5d3f7f90b3f2bd362f85c5b446ec14ca32dffe2e73f0a405', '0.3.0', $migration_body$
-- Metrics (0.3.0): what recall, commit, feedback and enrichment did, counted per tenant. Each backend adds
-- to rows of its own (backend: its process id), so counting never waits for another session; maintenance
-- folds the rows of backends that have ended into backend 0. Read memory.metrics.
create table memory.metric_counts (
    tenant_id text not null,
    metric text not null,
    label text not null default '',
    backend integer not null,
    value double precision not null default 0,
    primary key (tenant_id, metric, label, backend)
);
select pg_catalog.pg_extension_config_dump('memory.metric_counts', '');
$migration_body$);

-- sql/incremental/017-retention.sql
select memory_internal._apply_migration('017-retention.sql', 'b30ba790ac91f0100f6b90d5b5a1c19f1ee540cc9b88e176bb66a32668d813b8', '0.3.0', $migration_body$
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
$migration_body$);

-- sql/incremental/018-memory-evidence.sql
select memory_internal._apply_migration('018-memory-evidence.sql', '272a063205c48d92359a1f2c005fe7118fa7216aba9d9240fb9b1671d6fa9018', '0.3.0', $migration_body$
-- A memory's evidence (0.3.0) is a row per turn it came from, not an array in the memory's row. A claim
-- users repeat gains a turn each time they say it: as an array, every new turn rewrote the whole array
-- and put each of its turns into the GIN index again, so the cost of one more turn grew with the turns
-- before it (at 100,000 turns with one claim said 6,306 times, extraction took 7% of enrichment). A row
-- costs the same whatever the memory already has, and goes with its turn by foreign key.
create table memory.memory_evidence (
    tenant_id text not null,
    memory_id bigint not null,
    turn_key bigint not null,
    primary key (tenant_id, memory_id, turn_key),
    foreign key (tenant_id, memory_id) references memory.memories (tenant_id, memory_id) on delete cascade,
    foreign key (tenant_id, turn_key) references memory.turns (tenant_id, turn_key) on delete cascade
);
create index memory_evidence_by_turn on memory.memory_evidence (tenant_id, turn_key);
select pg_catalog.pg_extension_config_dump('memory.memory_evidence', '');

insert into memory.memory_evidence (tenant_id, memory_id, turn_key)
select distinct
    m.tenant_id,
    m.memory_id,
    e.turn_key
from memory.memories as m
cross join lateral unnest(m.evidence_turns) as e (turn_key)
inner join memory.turns as t on m.tenant_id = t.tenant_id and e.turn_key = t.turn_key;

-- The views over memories (sql/idempotent/211-memories.sql makes them again) read the column.
drop view if exists memory.memory_items cascade;
drop index memory.memories_by_evidence;
alter table memory.memories drop column evidence_turns;
$migration_body$);

-- sql/incremental/019-mentions-by-session.sql
select memory_internal._apply_migration('019-mentions-by-session.sql', 'b25e66a6d7c9dc769a0d3d8a0eed54ba2b263b968e35ed69eda36eb83525c47c', '0.3.0', $migration_body$
-- A session's entity mentions by its key (0.3.0). Enrichment compares a session's mentions with what
-- its turns mention now, and without this index read every mention of the tenant to find them: a cost
-- per session that grew with the tenant.
create index entity_mentions_by_session on memory.entity_mentions (tenant_id, session_key);
$migration_body$);

-- sql/incremental/020-half-precision-graph.sql
select memory_internal._apply_migration('020-half-precision-graph.sql', '62d24226dce7a994f69d5ddec2ffc67a106bebaf496954ee2a69f519b185720f', '0.3.0', $migration_body$
-- The HNSW graphs hold vectors at half precision (0.3.0): inserts cost 38% less on real turns' vectors,
-- for the same recall@10, in half the space. The full-precision indexes are dropped here, in one
-- statement; memory_internal._ensure_vector_index makes them again as halfvec, under the same names.
do $drop$
declare
    v_indexes text := (
        select string_agg(i.indexrelid::regclass::text, ', ')
        from pg_catalog.pg_index as i
        inner join pg_catalog.pg_opclass as o on o.oid = i.indclass[0]
        where i.indrelid in ('memory.chunk_embeddings'::regclass, 'memory.session_embeddings'::regclass)
            and o.opcname = 'vector_cosine_ops'
    );
begin
    if v_indexes is not null then
        execute 'drop index ' || v_indexes;
    end if;
end
$drop$;
$migration_body$);

-- sql/incremental/021-owner-writes.sql
select memory_internal._apply_migration('021-owner-writes.sql', 'bfad66c823e7eb095c6341abc8e932b9c4eb9927530e7e0a527de55870140e31', '0.3.0', $migration_body$
-- Tenants write only through the API (0.3.0): the API's functions run as memory_owner (sql/tail.sql), so
-- who did something is the session's login, not current_user (which is memory_owner inside them).
alter table memory.config alter column updated_by set default session_user;
alter table memory.feedback alter column given_by set default session_user;
alter table memory.tenant_roles alter column bound_by set default session_user;
alter table memory.entity_states alter column recorded_by set default session_user;
alter table memory.memories alter column recorded_by set default session_user;
alter table memory.memory_merges alter column recorded_by set default session_user;
alter table memory.maintenance_runs alter column run_by set default session_user;
alter table memory.tombstones alter column forgotten_by set default session_user;
alter table memory.retention_policies alter column created_by set default session_user;
alter table memory.archives alter column created_by set default session_user;

-- Locks only the owner can take: a row of this table, locked by the API's functions (nobody else may read
-- or lock it). Maintenance runs one at a time on the row ('', 'maintain'); the writers of one claim of a
-- tenant (remember with a key, or the same words) take turns on a row of that tenant
-- (memory_internal._lock_claim). An advisory lock, which any role may take on any key, let a stranger stop
-- maintenance and a tenant's remember.
create table memory_internal._locks (
    tenant_id text not null,
    name text not null,
    primary key (tenant_id, name)
);

insert into memory_internal._locks (tenant_id, name) values ('', 'maintain');

comment on table memory_internal._locks is
'Rows locked by the API''s functions to take turns (maintenance; writers of one claim of a tenant): locks no '
'other role can take.';
$migration_body$);

-- sql/incremental/022-recall-features.sql
select memory_internal._apply_migration('022-recall-features.sql', 'e0a5fadf809289ee62f2c79228ce02f2907aa05ee10c4a0537da3fa46fad6e57', '0.3.0', $migration_body$
-- Recall's features (0.3.0): what a signal reads of a candidate, each declared once in a registry with the
-- stage that computes it and its SQL expression; recall's scoring statement is built from them
-- (memory_internal._scoring_sql), and memory.recall_candidate has one attribute per feature.
create table memory.recall_features (
    name text primary key check (name ~ '^[a-z][a-z0-9_]*$'),
    stage text not null check (stage in ('chunk', 'fusion', 'turn', 'memory')),
    type text not null,
    expression text check ((stage = 'fusion') = (expression is null)),
    describes text not null,
    builtin boolean not null default false
);

select pg_catalog.pg_extension_config_dump('memory.recall_features', 'where not builtin');

-- Everything one recall's scoring statement is given, as one value (the statement's only parameter).
create type memory_internal._recall_context as (
    tenant text,
    turn_keys bigint [],
    chunk_nos integer [],
    query memory_internal._recall_query,
    query_text text,
    query_vector vector,
    model text,
    settings jsonb,
    fusion_weights double precision [],
    boost_weights double precision [],
    as_of timestamptz,
    include_ended boolean,
    context jsonb
);

-- A turn's tier and decayed importance are features now (sql/idempotent/118, 119).
drop function if exists memory_internal._turn_tier(text, bigint, bigint, jsonb);
-- Recall's scoring statement looks up each candidate turn's memory (once) and leaves out the words of memories
-- it does not show; the candidate lists no longer do.
drop function if exists memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text, timestamptz,
    boolean, text[]
);
drop function if exists memory_internal._turn_memory(text, bigint, timestamptz, boolean);
$migration_body$);

-- sql/incremental/023-one-vocabulary.sql
select memory_internal._apply_migration('023-one-vocabulary.sql', '41a4572999229d0fadb75dc71d11faa841ee2507dd9c8c7a4423c1048cc0220d', '0.3.0', $migration_body$
-- One vocabulary (0.3.0): a concept has one name in tables, types, the API, the client, the CLI and MCP
-- (docs/architecture.md, "Vocabulary"). The tables take the names the API already showed.
alter table memory.turns rename column turn_key to turn_id;
alter sequence memory.turns_turn_key_seq rename to turns_turn_id_seq;
alter table memory.turns rename column name to speaker;
alter table memory.speakers rename column name to speaker;
alter table memory.chunks rename column turn_key to turn_id;
alter table memory.chunks rename column context_turn_key to context_turn_id;
alter table memory.chunk_embeddings rename column turn_key to turn_id;
alter table memory.feedback rename column turn_key to turn_id;
alter table memory.memories rename column turn_key to turn_id;
alter table memory.memory_evidence rename column turn_key to turn_id;
alter table memory.entity_mentions rename column turn_key to turn_id;

alter table memory.entities rename column entity_key to entity_id;
alter sequence memory.entities_entity_key_seq rename to entities_entity_id_seq;
alter table memory.entities rename column scope to agent_id;
alter table memory.entities rename constraint entities_tenant_id_scope_normalized_key
to entities_tenant_id_agent_id_normalized_key;
alter table memory.entity_mentions rename column entity_key to entity_id;
alter table memory.entity_states rename column state_key to state_id;
alter sequence memory.entity_states_state_key_seq rename to entity_states_state_id_seq;
alter table memory.entity_states rename column entity_key to entity_id;

-- The foreign keys' names follow their columns.
alter table memory.chunks rename constraint chunks_tenant_id_turn_key_fkey to chunks_tenant_id_turn_id_fkey;
alter table memory.chunk_embeddings rename constraint chunk_embeddings_tenant_id_turn_key_chunk_no_fkey
to chunk_embeddings_tenant_id_turn_id_chunk_no_fkey;
alter table memory.feedback rename constraint feedback_tenant_id_turn_key_fkey to feedback_tenant_id_turn_id_fkey;
alter table memory.memories rename constraint memories_tenant_id_turn_key_fkey to memories_tenant_id_turn_id_fkey;
alter table memory.memory_evidence rename constraint memory_evidence_tenant_id_turn_key_fkey
to memory_evidence_tenant_id_turn_id_fkey;
alter table memory.entity_mentions rename constraint entity_mentions_tenant_id_turn_key_fkey
to entity_mentions_tenant_id_turn_id_fkey;
alter table memory.entity_mentions rename constraint entity_mentions_tenant_id_entity_key_fkey
to entity_mentions_tenant_id_entity_id_fkey;
alter table memory.entity_states rename constraint entity_states_tenant_id_entity_key_fkey
to entity_states_tenant_id_entity_id_fkey;

alter type memory.recall_candidate rename attribute turn_key to turn_id;
alter type memory_internal._recall_context rename attribute turn_keys to turn_ids;
alter type memory_internal._recall_query rename attribute entity_keys to entity_ids;
alter type memory_internal._recall_query rename attribute neighbor_keys to neighbor_ids;

-- What memory.recall returns: a named type, so that a hit's agent_id is a column beside the argument agent_id.
create type memory.recall_hit as (
    session_id text,
    agent_id text,
    turn_id bigint,
    message_id text,
    role text,
    speaker text,
    created_at timestamptz,
    content text,
    summary text,
    score double precision,
    components jsonb,
    kind text,
    memory_id bigint,
    evidence_turn_ids bigint []
);

-- Renamed, or their arguments or columns are (sql/idempotent creates them anew): a function is named apart
-- from every table (list_memories, list_entities, give_feedback, list_retention_policies, list_archives),
-- an entity is passed as entity, the agent is agent_id, the judge of feedback judged_by, a count of jobs or
-- chunks max_jobs or max_chunks, and the database's session number stays inside.
drop function if exists memory.archives();
drop function if exists memory.retention_policies();
drop function if exists memory.memories(text, text, text, text, text, text, timestamptz, integer);
drop function if exists memory.entities(text, text, text, integer);
drop function if exists memory.feedback(bigint, boolean, text, text, text, bigint, text, text);
drop function if exists memory.entity_history(text, text, text);
drop function if exists memory.entity_neighbors(text, integer, integer, text);
drop function if exists memory.entity_sessions(text, text, integer);
drop function if exists memory.entity_state(text, timestamptz, text, text);
drop function if exists memory.commit(text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text, boolean);
drop function if exists memory.enrich(text, text);
drop function if exists memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[]
);
drop function if exists memory.explain_recall(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text, text[]
);
drop function if exists memory_internal._entity_key(text, text, text, text);
drop function if exists memory_internal._entity_keys(text, text);
drop function if exists memory.reembed(integer);
drop view if exists memory.tier_items;
$migration_body$);

-- sql/incremental/024-declared-settings.sql
select memory_internal._apply_migration('024-declared-settings.sql', '0ff9367ac733ba00d5ec4289c52bbd8c35f7915fdaf12dd562385cbe19141ac7', '0.3.0', $migration_body$
-- Settings declared by the subsystem that reads them (0.3.0): each idempotent file declares its own with
-- memory_internal._declare_setting, and memory.setting_definitions() lists them with the signals' weights.
-- Every install and upgrade declares them all again (the settings file empties the table first), so the
-- table holds what this version knows, and a dump leaves it out.
create table memory_internal._declared_settings (
    key text primary key check (key ~ '^[a-z][a-z0-9_]*$' and key !~ '^weight_'),
    default_value jsonb not null,
    value_type text not null check (value_type in ('string', 'number', 'integer', 'boolean', 'array', 'object')),
    allowed jsonb,
    minimum numeric,
    maximum numeric,
    description text not null,
    set_by text not null check (set_by in ('session', 'admin')),
    checked_by text
);
$migration_body$);

-- sql/idempotent/operations/001-python.sql
-- Loads the in-database Python package (agent_memory_db) once per backend.
-- It lives in a versioned directory outside the system's site-packages; a package of another
-- release than this SQL is a clear error, never a silent mix.
create or replace function memory_internal._load_python() returns void
language plpython3u
as $$
version, python_dir = "0.3.0", "/usr/local/lib/agent_memory/0.3.0"
if GD.get("agent_memory_version") == version:
    return
import os, sys
if GD.get("agent_memory_version"):
    plpy.error("agent_memory: this connection loaded Python package %s; reconnect to use %s"
               % (GD["agent_memory_version"], version))
if not os.path.isdir(python_dir):
    plpy.error("agent_memory: Python package directory %s is missing" % python_dir,
               hint="run `make install` (it installs the package for /usr/bin/python3)")
if python_dir not in sys.path:
    sys.path.insert(0, python_dir)
import agent_memory_db
try:
    agent_memory_db.require_version(version, python_dir)
except agent_memory_db.VersionMismatch as exc:
    plpy.error(str(exc))
from agent_memory_db import openai_compat
# Waits between retries of an endpoint are the server's, so that a cancel or statement timeout ends them.
openai_compat.wait = lambda seconds: plpy.execute("select pg_catalog.pg_sleep(%f)" % seconds)
GD["agent_memory_version"] = version
$$;

comment on function memory_internal._load_python() is
'Internal: puts the versioned agent_memory_db package on sys.path and checks it matches this SQL.';

-- sql/idempotent/security/005-tenant.sql
-- Who is asking: whether the login administers agent_memory, the tenant a session reads and writes,
-- and roles bound to one tenant.

-- Whether the login of this session administers agent_memory (a superuser or a member of memory_admin:
-- pg_has_role counts a superuser a member of every role). It reads session_user, which `set role` does
-- not change and a security definer function does not either, so it means the same inside the API's
-- functions, which run as memory_owner. Row-level security policies say the same inline: a role reading
-- a table evaluates them, and may execute nothing internal.
create or replace function memory_internal._administers() returns boolean
language sql
stable parallel safe
as $$
    select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member')
$$;

comment on function memory_internal._administers() is
'Internal: whether the session''s login is a superuser or a member of memory_admin.';

-- The tenant of this session. A role bound to a tenant in memory.tenant_roles always has that one, whatever
-- it sets: the role taken with `set role` (the setting role, which PostgreSQL lets a session set only to
-- a role its login may become), else the login (session_user). Both read the same inside the API's
-- functions, which run as memory_owner, as outside them (current_user would not). Otherwise the tenant is
-- the setting memory.tenant_id ('default' when unset), which only logins that may switch tenants use:
-- memory_app and memory_admin members and superusers. Any other role, a memory_tenant member bound in no
-- tenant of this database among them, is refused. Row-level security on every tenant-keyed table compares
-- its rows with this, so it calls nothing internal.
create or replace function memory.current_tenant() returns text
language plpgsql
stable parallel safe
as $$
declare
    v_role text := nullif(pg_catalog.current_setting('role'), 'none');
    v_tenant text;
begin
    select r.tenant_id into v_tenant
    from memory.tenant_roles as r
    where r.role_name in (v_role, session_user)
    order by r.role_name = v_role desc nulls last
    limit 1;
    if found then
        return v_tenant;
    end if;
    if not pg_catalog.pg_has_role(session_user, 'memory_app', 'member') then
        raise exception 'agent_memory: role % has no tenant', coalesce(v_role, session_user)
            using hint = 'memory_admin binds it with memory.bind_tenant_role(role, tenant) (it needs '
                         'memory_tenant), or grants it memory_app to let it choose one with set memory.tenant_id';
    end if;
    return coalesce(nullif(pg_catalog.current_setting('memory.tenant_id', true), ''), 'default');
end
$$;

comment on function memory.current_tenant() is
'The tenant whose memory this session reads and writes: the one memory.tenant_roles binds the role taken with '
'set role, else the login, to; else set memory.tenant_id = ''...'' (memory_app, memory_admin), default '
'''default''.';

-- A binding as memory_admin writes it (memory.bind_tenant_role, or memory.tenant_roles itself): a tenant of 1
-- to 200 characters, and a role that is neither one of the extension's own (groups, and the owner: binding
-- one would bind whoever takes it up) nor one of PostgreSQL's predefined roles (pg_*).
create or replace function memory_internal._tenant_role_validate() returns trigger
language plpgsql
security definer
as $$
begin
    if new.tenant_id is null or new.tenant_id = '' or length(new.tenant_id) > 200 then
        raise exception 'agent_memory: tenant_id must be 1 to 200 characters, got %', coalesce(new.tenant_id, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    if new.role_name in ('memory_tenant', 'memory_app', 'memory_admin', 'memory_owner', 'memory_observer')
        or new.role_name like 'pg\_%' then
        raise exception 'agent_memory: % is one of agent_memory''s or PostgreSQL''s own roles; bind a login or a role '
            'of its own', new.role_name using errcode = 'invalid_parameter_value';
    end if;
    new.bound_at := pg_catalog.now();
    new.bound_by := session_user;
    return new;
end
$$;

comment on function memory_internal._tenant_role_validate() is
'Internal: trigger that refuses a binding of an empty or long tenant, or of the extension''s or PostgreSQL''s own '
'roles.';

drop trigger if exists tenant_roles_validate on memory.tenant_roles;
create trigger tenant_roles_validate before insert or update on memory.tenant_roles
for each row execute function memory_internal._tenant_role_validate();

-- Binds a role to a tenant (or moves it to another): from then on it sees and writes only that tenant.
create or replace function memory.bind_tenant_role(role_name regrole, tenant_id text) returns void
language plpgsql
as $$
begin
    -- The role's name as PostgreSQL spells it (regrole::text quotes names like "Acme-Agent").
    insert into memory.tenant_roles as r (role_name, tenant_id)
    values ((select g.rolname from pg_catalog.pg_roles as g where g.oid = bind_tenant_role.role_name),
            bind_tenant_role.tenant_id)
    on conflict on constraint tenant_roles_pkey do update set tenant_id = excluded.tenant_id;
end
$$;

comment on function memory.bind_tenant_role(regrole, text) is
'Binds a role to one tenant (memory_admin): select memory.bind_tenant_role(''acme_app'', ''acme''). The role '
'also needs the grants of memory_tenant: grant memory_tenant to acme_app.';

comment on table memory.tenant_roles is
'Roles bound to one tenant; only memory_admin writes it. A session sees the rows of its login and of the role '
'it took, memory_admin every row.';
comment on column memory.tenant_roles.role_name is 'The role (a login, or a role taken with set role).';
comment on column memory.tenant_roles.tenant_id is 'The tenant it reads and writes.';
comment on column memory.tenant_roles.bound_at is 'When it was bound.';
comment on column memory.tenant_roles.bound_by is 'Who bound it.';

-- The mapping itself: a session reads the bindings of its login and of the role it took (current_tenant
-- needs them), memory_admin all of them.
alter table memory.tenant_roles enable row level security;
alter table memory.tenant_roles force row level security;
drop policy if exists own_binding on memory.tenant_roles;
create policy own_binding on memory.tenant_roles
using (
    role_name in (session_user, pg_catalog.current_setting('role'))
    or pg_catalog.pg_has_role(session_user, 'memory_admin', 'member')
);

-- sql/idempotent/graph/008-entity-types.sql
-- The twelve types of the knowledge graph's entities, in one place for every check that names them (the
-- table memory.entities keeps its own CHECK, written once when the table was made).
create or replace function memory_internal._entity_types() returns text[]
language sql
immutable parallel safe
as $$
    select array['person', 'project', 'concept', 'tool', 'metric', 'org', 'place', 'event', 'doc', 'task', 'topic',
                 'other']
$$;

comment on function memory_internal._entity_types() is
'Internal: the twelve entity types (person, project, concept, tool, metric, org, place, event, doc, task, '
'topic, other).';

-- sql/idempotent/settings/010-settings.sql
-- Settings: a catalog of defaults, DBA overrides in memory.config, per-session overrides with
-- `set memory.<key> = ...`. Precedence, highest first: per-call argument (where a function takes
-- one), session setting, memory.config, default.

-- The declarations are made again below, each subsystem's in its folder's NNN-settings.toml (the assembler
-- makes each table of it a call of memory_internal._declare_setting): a setting this version no longer has
-- is gone.
delete from memory_internal._declared_settings;

-- Declares a setting: its key, default, JSON type, meaning, and what values it takes (allowed: the values,
-- or for an array the values its items may take; minimum and maximum: the range, or for an array how many
-- items it needs at least); set_by admin: only memory.config, or a session of memory_admin, may change it
-- (an endpoint, a model, a time bound, what maintenance deletes); checked_by: a function of the value that
-- raises an error naming the problem, for checks a type and range cannot say. Once every file has run, each
-- default is checked (memory_internal._check_setting_defaults, from tail.sql).
create or replace function memory_internal._declare_setting(
    key text, default_value jsonb, value_type text, description text,
    allowed jsonb default null, minimum numeric default null, maximum numeric default null,
    set_by text default 'session', checked_by text default null
) returns void
language plpgsql
as $$
begin
    insert into memory_internal._declared_settings (
        key, default_value, value_type, allowed, minimum, maximum, description, set_by, checked_by
    )
    values (key, default_value, value_type, allowed, minimum, maximum, description, set_by, checked_by);
end
$$;

comment on function memory_internal._declare_setting(text, jsonb, text, text, jsonb, numeric, numeric, text, text) is
'Internal: declares a setting (each subsystem its own, on every install).';

-- Every setting the extension knows: those declared, and the weight of each recall signal (weight_<name>,
-- from memory.signals). language sql, so the queries of the functions below inline it.
create or replace function memory_internal._setting_definitions()
returns table (
    key text, default_value jsonb, value_type text, allowed jsonb,
    minimum numeric, maximum numeric, description text, set_by text
)
language sql
stable parallel safe
as $$
    select d.key, d.default_value, d.value_type, d.allowed, d.minimum, d.maximum, d.description, d.set_by
    from memory_internal._declared_settings as d
    union all
    select 'weight_' || s.name, to_jsonb(s.default_weight), 'number', null, 0, 100,
           'Weight of recall signal ' || s.name || ' (' || s.stage || '): ' || s.measures, 'session'
    from memory.signals as s
$$;

comment on function memory_internal._setting_definitions() is
'Internal: every setting with its definition (memory.setting_definitions() for the caller).';

create or replace function memory.setting_definitions()
returns table (
    key text, default_value jsonb, value_type text, allowed jsonb,
    minimum numeric, maximum numeric, description text, set_by text
)
language sql
stable
as $$ select * from memory_internal._setting_definitions() order by 1 $$;

comment on function memory.setting_definitions() is
'Every setting with its default, type, accepted values, meaning, and who may set it (set_by: session = any '
'session or call, admin = memory.config, a session only of memory_admin). Change one with insert into '
'memory.config or, for one session, set memory.<key> = ...';

-- What the functions that run as the owner (to read a key) use as settings: the ones they are given
-- when the login administers, else the session's own, checked, whatever the caller passed them.
create or replace function memory_internal._trusted_settings(settings jsonb) returns jsonb
language sql
stable
as $$
    select case when memory_internal._administers() then settings else memory_internal._settings_json() end
$$;

comment on function memory_internal._trusted_settings(jsonb) is
'Internal: the given settings if the login administers, else the settings in force (checked), for owner-run '
'functions.';

-- A value of an administrator's setting from a session or a call: refused unless the login administers.
create or replace function memory_internal._check_set_by(p_key text, p_where text) returns void
language plpgsql
stable
as $$
begin
    if exists (select from memory_internal._setting_definitions() as s where s.key = p_key and s.set_by = 'admin')
        and not memory_internal._administers() then
        raise exception 'agent_memory: setting "%" is the administrator''s; % cannot change it', p_key, p_where
            using hint = 'memory_admin sets it in memory.config';
    end if;
end
$$;

comment on function memory_internal._check_set_by(text, text) is
'Internal: refuses a session''s or a call''s value of an administrator''s setting unless the login administers.';

-- The value checked against its definition; raises an error that names the key and the problem.
create or replace function memory_internal._validated_setting(p_key text, p_value jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    d record;
    v_wrong_type boolean;
    v_check regprocedure;
begin
    select * into d from memory_internal._setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    v_wrong_type := jsonb_typeof(p_value) is distinct from replace(d.value_type, 'integer', 'number');
    if not v_wrong_type and d.value_type = 'integer' then
        v_wrong_type := p_value::numeric <> trunc(p_value::numeric);
    end if;
    if v_wrong_type then
        raise exception 'agent_memory: setting "%" must be a JSON %, got %', p_key, d.value_type,
            coalesce(p_value::text, 'null');
    end if;
    if d.value_type = 'array' and d.allowed is not null and not d.allowed @> p_value then
        raise exception 'agent_memory: setting "%" must be a list of values among %, got %', p_key, d.allowed, p_value;
    end if;
    if d.value_type <> 'array' and d.allowed is not null and not d.allowed @> jsonb_build_array(p_value) then
        raise exception 'agent_memory: setting "%" must be one of %, got %', p_key, d.allowed, p_value;
    end if;
    -- A number a double precision cannot hold (1e-400, 1e400) would fail where it is used, not here.
    if d.value_type = 'number' then
        begin
            perform (p_value #>> '{}')::double precision;
        exception when numeric_value_out_of_range then
            raise exception 'agent_memory: setting "%" must be a number a double precision holds (0, or between '
                '1e-307 and 1e308 in size), got %', p_key, p_value;
        end;
    end if;
    select s.checked_by::regprocedure into v_check from memory_internal._declared_settings as s where s.key = p_key;
    if v_check is not null then
        execute format('select %s($1)', v_check::oid::regproc) using p_value;
    end if;
    -- A list's minimum is how many values it needs.
    if d.value_type = 'array' and jsonb_array_length(p_value) < d.minimum then
        raise exception 'agent_memory: setting "%" needs at least % of %, got %', p_key, d.minimum, d.allowed, p_value;
    end if;
    if d.value_type <> 'array' and (d.minimum is not null and p_value::numeric < d.minimum
        or d.maximum is not null and p_value::numeric > d.maximum) then
        raise exception 'agent_memory: setting "%" must be between % and %, got %',
            p_key, d.minimum, d.maximum, p_value;
    end if;
    if d.value_type = 'integer' then
        return to_jsonb(p_value::numeric::bigint);  -- 5.0 is 5: it is read as an integer
    end if;
    return p_value;
end
$$;

comment on function memory_internal._validated_setting(text, jsonb) is
'Internal: checks a setting value against memory.setting_definitions().';

-- Every declared default passes its setting's checks, or the install stops, naming the setting.
create or replace function memory_internal._check_setting_defaults() returns void
language plpgsql
stable
as $$
declare
    d record;
begin
    for d in select s.key, s.default_value from memory_internal._declared_settings as s order by s.key loop
        perform memory_internal._validated_setting(d.key, d.default_value);
    end loop;
end
$$;

comment on function memory_internal._check_setting_defaults() is
'Internal: an error unless every declared default passes its setting''s checks (run by every install).';

-- A trigger function of a table memory_admin writes itself: it runs as the owner, who may call the internal
-- checks (the administrator may not).
create or replace function memory_internal._config_validate() returns trigger
language plpgsql
security definer
as $$
begin
    new.value := memory_internal._validated_setting(new.key, new.value);
    if new.tenant_id is null or length(new.tenant_id) > 200 then
        raise exception 'agent_memory: memory.config tenant_id must be empty (every tenant) or at most 200 characters';
    end if;
    new.updated_at := pg_catalog.now();
    new.updated_by := session_user;
    if new.key in ('index_roles', 'index_context_turns', 'index_min_chars', 'chunk_chars', 'index_max_chunks',
                   'text_search_config')
        and (tg_op = 'INSERT' or old.value is distinct from new.value) then
        raise notice 'agent_memory: index setting % changed: sessions enriched before keep their old index', new.key
            using hint = 'select * from memory.reindex() queues them for re-indexing (agent-memory reindex)';
    end if;
    return new;
end
$$;

comment on function memory_internal._config_validate() is
'Internal: trigger that rejects unknown keys and ill-typed values in memory.config.';

drop trigger if exists config_validate on memory.config;
create trigger config_validate before insert or update on memory.config
for each row execute function memory_internal._config_validate();

-- The memory.* settings this session has given a value (C: PostgreSQL lists no placeholder settings).
create or replace function memory_internal._session_setting_names()
returns text[]
language c
stable strict
as '$libdir/agent_memory', 'agent_memory_session_setting_names';

comment on function memory_internal._session_setting_names() is
'Internal: the names (without "memory.") of the memory.* settings this session set, known or not.';

-- The known setting closest to a misspelt name, or null.
create or replace function memory_internal._closest_setting(name text) returns text
language plpython3u
volatile strict
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
from agent_memory_db.suggestions import closest
keys = [row["key"] for row in plpy.execute("select key from memory_internal._setting_definitions()")]
return closest(name, keys)
$$;

comment on function memory_internal._closest_setting(text) is
'Internal: the key of memory.setting_definitions() most like a misspelt one (for "did you mean").';

-- Every memory.* setting this session set is known and valid: `set memory.wieght_dense = 1` or `set
-- memory.weight_dense = 'abc'` is an error on the next call that reads settings (PostgreSQL accepts any
-- memory.* name at `set`, so that is the earliest a mistake can be seen).
create or replace function memory_internal._check_session_settings() returns void
language plpgsql
stable
as $$
declare
    v_name text;
    v_closest text;
begin
    -- PostgreSQL keeps a name as it was set and matches it in any case.
    foreach v_name in array memory_internal._session_setting_names() loop
        v_name := lower(v_name);
        continue when v_name = 'tenant_id';
        if not exists (select from memory_internal._setting_definitions() as s where s.key = v_name) then
            v_closest := memory_internal._closest_setting(v_name);
            raise exception using errcode = 'invalid_parameter_value',
                message = format('agent_memory: unknown setting memory.%s%s', v_name,
                                 case when v_closest is null then '' else format(' (did you mean memory.%s?)', v_closest) end),
                hint = format('reset memory.%s; select key, description from memory.setting_definitions() '
                              'lists the settings', v_name);
        end if;
        perform memory_internal._session_setting(v_name);
    end loop;
end
$$;

comment on function memory_internal._check_session_settings() is
'Internal: an error naming the first memory.* setting of this session that is unknown (with the closest '
'known one) or has a value of the wrong kind.';

-- A session setting (`set memory.<key> = '...'`) as JSON of the setting's type.
create or replace function memory_internal._session_setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_raw text := pg_catalog.current_setting('memory.' || p_key, true);
    v_type text;
begin
    if v_raw is null or v_raw = '' then
        return null;
    end if;
    perform memory_internal._check_set_by(p_key, 'a session (set memory.' || p_key || ')');
    select s.value_type into v_type from memory_internal._setting_definitions() as s where s.key = p_key;
    if v_type = 'string' then
        return memory_internal._validated_setting(p_key, to_jsonb(v_raw));
    end if;
    begin
        return memory_internal._validated_setting(p_key, v_raw::jsonb);
    exception when invalid_text_representation then
        raise exception 'agent_memory: setting memory.% must be a JSON %, got %', p_key, v_type, v_raw
            using errcode = 'invalid_parameter_value', hint = format('reset memory.%s, or set it to a %s', p_key, v_type);
    end;
end
$$;

comment on function memory_internal._session_setting(text) is
'Internal: the value of `set memory.<key>` in this session, validated, or null.';

-- The value in force for this session. Defaults are valid by construction and are not checked again.
create or replace function memory.setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_value jsonb;
begin
    perform memory_internal._check_session_settings();
    v_value := memory_internal._session_setting(p_key);
    if v_value is not null then
        return v_value;
    end if;
    select c.value into v_value from memory.config as c
    where c.key = p_key and c.tenant_id in ('', memory.current_tenant())
    order by c.tenant_id desc
    limit 1;
    if found then
        return v_value;
    end if;
    select s.default_value into v_value from memory_internal._setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    return v_value;
end
$$;

comment on function memory.setting(text) is
'The value of a setting in force for this session: session setting (set memory.<key>), then '
'memory.config for the tenant, then memory.config for every tenant, then the default. Unknown keys are an error.';

-- Each value as memory.setting() reads it (checked); its source from the session's own settings and the
-- configuration rows of this tenant and of every tenant.
create or replace view memory.settings as
select
    s.key,
    memory.setting(s.key) as value,
    case
        when pg_catalog.current_setting('memory.' || s.key, true) <> '' then 'session'
        when c.tenant_id <> '' then 'tenant'
        when c.key is not null then 'config'
        else 'default'
    end as source,
    s.default_value,
    s.description
from memory.setting_definitions() as s
-- memory.config read once: for each key, this tenant's row over the every-tenant one.
left join (
    select distinct on (c.key)
        c.key,
        c.tenant_id
    from memory.config as c
    where c.tenant_id in ('', (select memory.current_tenant()))
    order by c.key asc, c.tenant_id desc
) as c on s.key = c.key;

comment on view memory.settings is
'Every setting with the value in force for this session and where it comes from (session, tenant = '
'memory.config for this tenant, config = memory.config for every tenant, default).';
comment on table memory.config is
'Settings changed from their defaults, checked on write against memory.setting_definitions().';
comment on column memory.config.tenant_id is
'The tenant the value is for; '''' (the default) for every tenant. A tenant''s row wins over the every-tenant one.';
comment on column memory.config.key is 'The setting, one of memory.setting_definitions().key.';
comment on column memory.config.value is 'The value as JSON of the setting''s type.';
comment on column memory.config.updated_at is 'When the value was last written.';
comment on column memory.config.updated_by is 'The role that last wrote it.';

-- Every setting in force, as one JSON object (what the Python side reads).
-- plpgsql, not sql: its plan is kept for the session (a sql function called from plpgsql is planned again
-- on every call, which cost more than the query itself).
create or replace function memory_internal._settings_json() returns jsonb
language plpgsql
stable
as $$
begin
    perform memory_internal._check_session_settings();
    return (
        select jsonb_object_agg(s.key, coalesce(session_value.value, c.value, s.default_value))
        from memory_internal._setting_definitions() as s
        -- The memory.* settings this session set: only those are read and checked (a handful, not every key).
        cross join (
            select coalesce(pg_catalog.array_agg(pg_catalog.lower(n.name)), '{}') as names
            from pg_catalog.unnest(memory_internal._session_setting_names()) as n (name)
        ) as session_set
        -- memory.config read once: for each key, this tenant's row over the every-tenant one.
        left join (
            select distinct on (c.key) c.key, c.value
            from memory.config as c
            where c.tenant_id in ('', (select memory.current_tenant()))
            order by c.key asc, c.tenant_id desc
        ) as c on s.key = c.key
        cross join lateral (
            select case when s.key = any(session_set.names) then memory_internal._session_setting(s.key) end as value
        ) as session_value
    );
end
$$;

comment on function memory_internal._settings_json() is
'Internal: every setting in force as one JSON object (an error if the session set an unknown or bad one).';

-- A tenant's settings as memory.config stores them (its own rows, else those for every tenant, else the
-- defaults): what maintenance, which serves every tenant from one session, goes by. '' is every tenant.
create or replace function memory_internal._configured_settings(tenant text) returns jsonb
language sql
stable
as $$
    select jsonb_object_agg(d.key, coalesce(own.value, everyone.value, d.default_value))
    from memory_internal._setting_definitions() as d
    left join memory.config as everyone on everyone.tenant_id = '' and everyone.key = d.key
    left join memory.config as own on own.tenant_id = tenant and tenant <> '' and own.key = d.key
$$;

comment on function memory_internal._configured_settings(text) is
'Internal: a tenant''s settings as memory.config stores them (session settings left out).';

-- sql/idempotent/operations/011-settings.toml
select memory_internal._declare_setting('queue_max_attempts', '5', 'integer', 'Attempts of a job before it is dead-lettered (status dead, error kept).', minimum => 1, maximum => 100);
select memory_internal._declare_setting('queue_backoff_seconds', '10', 'number', 'Retry delay after the first failure; it doubles with each further failure.', minimum => 0, maximum => 86400);
select memory_internal._declare_setting('queue_lease_seconds', '300', 'number', 'How long a claimed job is leased to its worker; after that another worker may reclaim it.', minimum => 1, maximum => 86400);
select memory_internal._declare_setting('queue_keep_done_hours', '168', 'number', 'How long memory.maintain() keeps finished jobs (dead ones are kept until dealt with).', minimum => 0, maximum => 100000, set_by => 'admin');
select memory_internal._declare_setting('model_retire_grace_hours', '24', 'number', 'How long memory.maintain() keeps the vectors of an embedding model recall no longer uses.', minimum => 0, maximum => 100000, set_by => 'admin');

-- sql/idempotent/write/012-settings.toml
select memory_internal._declare_setting('embedder', '"local"', 'string', 'Which embedder writes and queries vectors: local (all-MiniLM-L6-v2 inside the database), openai (an OpenAI-compatible endpoint), client (callers pass vectors) or none (full-text only).', allowed => '["local", "openai", "client", "none"]', set_by => 'admin');
select memory_internal._declare_setting('openai_base_url', '"https://api.openai.com/v1"', 'string', 'Base URL of the OpenAI-compatible endpoint (…/v1) for the openai embedder and llm summarizer.', set_by => 'admin');
select memory_internal._declare_setting('openai_embedding_model', '"text-embedding-3-small"', 'string', 'The embedding model asked of the endpoint.', set_by => 'admin');
select memory_internal._declare_setting('openai_embedding_dimensions', '1536', 'integer', 'The dimensions that model returns (checked on every answer).', minimum => 1, maximum => 16000, set_by => 'admin');
select memory_internal._declare_setting('client_dimensions', '384', 'integer', 'Dimensions of vectors that callers pass with the client embedder.', minimum => 1, maximum => 16000, set_by => 'admin');
select memory_internal._declare_setting('http_timeout_seconds', '30', 'number', 'Timeout of one HTTP request to the endpoint.', minimum => 1, maximum => 600, set_by => 'admin');
select memory_internal._declare_setting('http_retries', '2', 'integer', 'Retries of a request that failed to connect or got 429 or 5xx, with exponential backoff.', minimum => 0, maximum => 10, set_by => 'admin');
select memory_internal._declare_setting('exact_search_max_chunks', '20000', 'integer', 'Up to this many chunks in scope, vector search is exact; above it, HNSW with iterative scan. A tenant''s vectors join the HNSW graph once it holds more chunks than this.', minimum => 0, maximum => 100000000);
select memory_internal._declare_setting('openai_chat_model', '"gpt-4o-mini"', 'string', 'The chat model that writes llm summaries.', set_by => 'admin');
select memory_internal._declare_setting('index_roles', '["user", "assistant", "tool"]', 'array', 'Roles whose turns are indexed for recall (a turn''s tool calls are indexed with it). After a change, memory.reindex() re-indexes what was enriched before.', allowed => '["user", "assistant", "system", "tool"]');
select memory_internal._declare_setting('index_context_turns', '1', 'integer', 'How many preceding indexed turns are indexed together with a turn, as its context.', minimum => 0, maximum => 10);
select memory_internal._declare_setting('index_min_chars', '12', 'integer', 'Turns shorter than this are not indexed (with slash commands, confirmations, heartbeats).', minimum => 0, maximum => 1000);
select memory_internal._declare_setting('chunk_chars', '1500', 'integer', 'Long turns are split at sentence ends into chunks of at most this many characters.', minimum => 100, maximum => 100000);
select memory_internal._declare_setting('index_max_chunks', '16', 'integer', 'Indexing reads the first index_max_chunks x chunk_chars characters of a turn; the rest is stored, not indexed.', minimum => 1, maximum => 100000);
select memory_internal._declare_setting('text_search_config', '"english"', 'string', 'The text search configuration for full-text vectors of chunks and summaries.', checked_by => 'memory_internal._check_text_search_config(jsonb)');
select memory_internal._declare_setting('summarizer', '"extractive"', 'string', 'How sessions are summarized: extractive (deterministic, in the database), llm, or none.', allowed => '["extractive", "llm", "none"]', set_by => 'admin');
select memory_internal._declare_setting('summary_sentences', '5', 'integer', 'How many sentences the extractive summary keeps.', minimum => 1, maximum => 50);
select memory_internal._declare_setting('entity_extractor', '"deterministic"', 'string', 'How enrichment finds the entities turns mention: deterministic (names, handles, tags, paths, URLs, code identifiers, quoted titles, gazetteer tools, speakers), llm (one call per session to the chat endpoint the llm summarizer uses, openai_chat_model), or none.', allowed => '["deterministic", "llm", "none"]', set_by => 'admin');
select memory_internal._declare_setting('memory_extractor', '"patterns"', 'string', 'How enrichment proposes curated memories from what users say, each with its turn as evidence: patterns (explicit statements: rules such as "always ..." or "from now on ...", "I prefer ...", "we decided ...", "remember that ...", "my X is Y"; never from a question or a supposition), llm (one call per session to the chat endpoint, openai_chat_model), or none.', allowed => '["patterns", "llm", "none"]', set_by => 'admin');
select memory_internal._declare_setting('enrich', '"queue"', 'string', 'What commit does about enrichment by default: queue a job, enrich now, or nothing.', allowed => '["queue", "now", "none"]');
select memory_internal._declare_setting('max_message_chars', '10000000', 'integer', 'The longest message commit accepts, in characters (indexing reads the first index_max_chunks chunks).', minimum => 1, maximum => 100000000);

-- sql/idempotent/graph/013-settings.toml
select memory_internal._declare_setting('entity_gazetteer', '{}', 'object', 'Names the extractor knows, with their type, on top of its own: {"acme cloud": "org", "fizzbuzz": "tool"}.', checked_by => 'memory_internal._check_entity_gazetteer(jsonb)');

-- sql/idempotent/curated/014-settings.toml
select memory_internal._declare_setting('memory_dedup', '"merge"', 'string', 'Semantic dedup of remembered claims: a claim whose vector is within memory_dedup_threshold of a memory the agent holds (same kind; same key when it has one) and that states the same numbers, names and polarity is merged into it (merge), only logged in memory.memory_merges beside the new memory (shadow), or not looked for (off).', allowed => '["merge", "shadow", "off"]');
select memory_internal._declare_setting('memory_dedup_threshold', '0.9', 'number', 'The cosine at or above which semantic dedup takes a claim for a paraphrase of a memory held.', minimum => 0, maximum => 1);
select memory_internal._declare_setting('extracted_memory_status', '"active"', 'string', 'How memories enrichment proposes are stored: active (recalled at once) or pending (kept for review: memory.approve or memory.retract).', allowed => '["active", "pending"]');
select memory_internal._declare_setting('trust_helpful_step', '0.1', 'number', 'What a helpful verdict adds to a turn''s trust (up to trust_max).', minimum => 0, maximum => 10);
select memory_internal._declare_setting('trust_unhelpful_factor', '0.5', 'number', 'What an unhelpful verdict multiplies a turn''s trust by (down to trust_min): one no outweighs one yes.', minimum => 0, maximum => 1);
select memory_internal._declare_setting('trust_min', '0.05', 'number', 'The lowest trust feedback can leave a turn with.', minimum => 1e-06, maximum => 1);
select memory_internal._declare_setting('trust_max', '2', 'number', 'The highest trust feedback can give a turn.', minimum => 1, maximum => 100);
select memory_internal._declare_setting('feedback_retract_after', '2', 'integer', 'How many agents must call a memory incorrect (memory.feedback verdict incorrect) for it to be retracted.', minimum => 1, maximum => 1000);
select memory_internal._declare_setting('feedback_stale_factor', '0.5', 'number', 'What a stale verdict multiplies a memory''s importance by.', minimum => 0, maximum => 1);

-- sql/idempotent/security/015-row-level-security.sql
-- Row-level security, enabled and forced on every table of the schema with a tenant_id column (a table
-- added later gets it by having one): a role sees and writes the rows of memory.current_tenant(), and
-- memory_admin every tenant's (the worker and maintenance serve them all). It holds for a role that reads
-- the tables and inside the API's functions alike: they run as memory_owner, whom it holds too, and it
-- reads the session's login and role, not current_user. The functions filter by tenant as well. A policy
-- calls nothing internal (a tenant role reading a table evaluates it); the subselects make each check run
-- once per statement, not once per row.
do $rls$
declare
    v_table regclass;
begin
    for v_table in
        select c.oid::regclass
        from pg_catalog.pg_class as c
        inner join pg_catalog.pg_attribute as a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
        where c.relnamespace = 'memory'::regnamespace and c.relkind in ('r', 'p')
            and c.oid not in ('memory.tenant_roles'::regclass, 'memory.config'::regclass)
    loop
        execute format('alter table %s enable row level security', v_table);
        execute format('alter table %s force row level security', v_table);
        execute format('drop policy if exists tenant_isolation on %s', v_table);
        execute format(
            'create policy tenant_isolation on %s '
            'using (tenant_id = (select memory.current_tenant()) '
            'or (select pg_catalog.pg_has_role(session_user, ''memory_admin'', ''member'')))',
            v_table
        );
    end loop;
end
$rls$;

-- Settings: a role reads the rows for every tenant and its own tenant's; memory_admin writes them all.
alter table memory.config enable row level security;
alter table memory.config force row level security;
drop policy if exists tenant_settings on memory.config;
create policy tenant_settings on memory.config
using (
    tenant_id in ('', (select memory.current_tenant()))
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
);

-- sql/idempotent/lifecycle/016-settings.toml
select memory_internal._declare_setting('recall_tiers', '["hot", "warm"]', 'array', 'The tiers of sessions and curated memories recall searches (recall''s tiers => ... for one call); cold ones are left out by default.', allowed => '["hot", "warm", "cold"]', minimum => 1);
select memory_internal._declare_setting('tier_promote_on_recall', 'true', 'boolean', 'Recall moves the sessions and memories it returns to hot and marks them used (a write, skipped in a read-only transaction and on a standby).');
select memory_internal._declare_setting('session_importance', '0.5', 'number', 'The importance of a session for decay and tier capacity (curated memories have their own).', minimum => 0, maximum => 1);
select memory_internal._declare_setting('tier_hot_half_life_days', '7', 'number', 'Days without use in which an item''s decayed importance halves while it is at least tier_warm_below.', minimum => 0.001, maximum => 36500);
select memory_internal._declare_setting('tier_warm_half_life_days', '30', 'number', 'Days without use in which an item''s decayed importance halves below tier_warm_below, down to tier_cold_below.', minimum => 0.001, maximum => 36500);
select memory_internal._declare_setting('tier_cold_half_life_days', '180', 'number', 'Days without use in which an item''s decayed importance halves below tier_cold_below.', minimum => 0.001, maximum => 36500);
select memory_internal._declare_setting('tier_warm_below', '0.25', 'number', 'Maintenance moves a hot session or memory to warm once its decayed importance is below this.', minimum => 0, maximum => 1);
select memory_internal._declare_setting('tier_cold_below', '0.05', 'number', 'Maintenance moves a warm (or hot) session or memory to cold once its decayed importance is below this.', minimum => 0, maximum => 1);
select memory_internal._declare_setting('tier_hot_capacity', '500', 'integer', 'The most sessions and memories an agent keeps hot; maintenance moves the rest to warm, least important first (least recently used first among equals).', minimum => 0, maximum => 1000000000);
select memory_internal._declare_setting('tier_warm_capacity', '5000', 'integer', 'The most sessions and memories an agent keeps warm; maintenance moves the rest to cold, least important first (least recently used first among equals).', minimum => 0, maximum => 1000000000);
select memory_internal._declare_setting('retention_batch', '1000', 'integer', 'How many sessions and memories one memory.maintain() run archives and removes per tenant (the rest go in the next runs).', minimum => 1, maximum => 1000000, set_by => 'admin');

-- sql/idempotent/recall/017-settings.toml
select memory_internal._declare_setting('recall_candidates', '50', 'integer', 'How many chunks each candidate list (full-text, vectors) contributes before fusion.', minimum => 5, maximum => 5000);
select memory_internal._declare_setting('session_candidates', '5', 'integer', 'How many sessions the summary full-text and session-vector lists contribute (two chunks each).', minimum => 0, maximum => 1000);
select memory_internal._declare_setting('lexical_max_df', '300', 'integer', 'A query term found in more chunks than this still scores, but brings no full-text candidates by itself.', minimum => 1, maximum => 1000000000);
select memory_internal._declare_setting('fusion', '"zscore"', 'string', 'How the lists are fused: zscore (weighted sum of normalized scores) or rrf (reciprocal rank fusion).', allowed => '["zscore", "rrf"]');
select memory_internal._declare_setting('rrf_k', '60', 'number', 'The k of reciprocal rank fusion: 1 / (rrf_k + rank).', minimum => 1, maximum => 1000);
select memory_internal._declare_setting('context_weight', '0.85', 'number', 'A turn is scored on its own words, or on them with the turn before it times this, whichever is higher.', minimum => 0, maximum => 1);
select memory_internal._declare_setting('strip_speaker_names', 'true', 'boolean', 'Leave speaker names the query mentions out of its text and vector search (they are matched as speakers).');
select memory_internal._declare_setting('recall_count_access', 'false', 'boolean', 'Count how often recall returns each turn (makes recall write; leave off on a read replica).');
select memory_internal._declare_setting('bm25_k1', '0.9', 'number', 'BM25 term-frequency saturation.', minimum => 0, maximum => 10);
select memory_internal._declare_setting('bm25_b', '0.4', 'number', 'BM25 length normalization.', minimum => 0, maximum => 1);
select memory_internal._declare_setting('rerank', '"none"', 'string', 'Rerank stage: none, or http (the top rerank_candidates turns sent to the rerank_url endpoint).', allowed => '["none", "http"]', set_by => 'admin');
select memory_internal._declare_setting('rerank_url', '""', 'string', 'URL of a rerank endpoint taking {model, query, documents, top_n} (Cohere, Jina, vLLM shape).', set_by => 'admin');
select memory_internal._declare_setting('rerank_model', '""', 'string', 'The model asked of the rerank endpoint (none sent if empty).', set_by => 'admin');
select memory_internal._declare_setting('rerank_candidates', '20', 'integer', 'How many of the best fused turns the rerank stage reorders.', minimum => 1, maximum => 1000);
select memory_internal._declare_setting('rerank_timeout_seconds', '2', 'number', 'Timeout of the rerank request; on timeout or error recall keeps the fused order and says so.', minimum => 0.1, maximum => 600, set_by => 'admin');
select memory_internal._declare_setting('bootstrap_max_chars', '4000', 'integer', 'The character budget of memory.bootstrap() when the call does not give one.', minimum => 100, maximum => 1000000);
select memory_internal._declare_setting('context_max_chars', '4000', 'integer', 'The character budget of memory.context_for_task() when the call does not give one.', minimum => 100, maximum => 1000000);

-- sql/idempotent/signals/018-settings.toml
select memory_internal._declare_setting('neighbor_previous_share', '0.5', 'number', 'The share of the turn before''s fused score the neighbor signal counts (the turn after counts whole).', minimum => 0, maximum => 1);
select memory_internal._declare_setting('recency_half_life_days', '30', 'number', 'Half-life of the recency boost.', minimum => 0.001, maximum => 100000);
select memory_internal._declare_setting('period_half_life_days', '7', 'number', 'Half-life of the period boost outside the period a query names (days before or after it).', minimum => 0.001, maximum => 100000);

-- sql/idempotent/operations/020-version.sql
create or replace function memory.version() returns text
language sql
immutable parallel safe
as $$ select '0.3.0'::text $$;

comment on function memory.version() is 'The version of the agent_memory SQL objects installed in this database.';

-- sql/idempotent/operations/025-metrics.sql
-- Metrics: counters of what recall, commit, feedback and enrichment did (memory.metric_counts), and
-- gauges read from the tables when asked (the queue, the index, the tiers), per tenant, in the view
-- memory.metrics. docs/prometheus-queries.yaml has postgres_exporter read it for Prometheus.

comment on table memory.metric_counts is
'Counters of memory.metrics, per tenant and backend (each backend adds to its own rows; maintenance folds '
'those of ended backends into backend 0). Read memory.metrics.';
comment on column memory.metric_counts.tenant_id is 'The tenant.';
comment on column memory.metric_counts.metric is 'The counter (memory.metric_definitions()).';
comment on column memory.metric_counts.label is 'The value of its label (a bucket''s bound, a verdict), or ''''.';
comment on column memory.metric_counts.backend is 'The process id of the backend that counted (0: ended ones).';
comment on column memory.metric_counts.value is 'How much it counted.';

-- Every metric: its kind, the name of its one label (if any) and what it counts.
create or replace function memory.metric_definitions()
returns table (metric text, kind text, label_name text, help text)
language sql
immutable
as $$
    values
        ('recalls', 'counter', null, 'Recalls answered (memory.recall; not counted in a read-only transaction).'),
        ('recalls_degraded', 'counter', null,
         'Recalls that had to do without something (vectors, the query embedding): components.degraded.'),
        ('recall_duration_seconds_bucket', 'counter', 'le',
         'Recalls that took at most le seconds (cumulative histogram buckets).'),
        ('recall_duration_seconds_sum', 'counter', null, 'Seconds spent in recall, in all.'),
        ('commits', 'counter', null, 'Calls of memory.commit.'),
        ('turns_committed', 'counter', null, 'Turns commit added.'),
        ('turns_indexed', 'counter', null, 'Turns enrichment indexed (again when a session is re-enriched).'),
        ('feedback', 'counter', 'verdict', 'Verdicts given (memory.feedback), by verdict.'),
        ('queue_jobs', 'gauge', 'status', 'Enrichment jobs by status: queued, running, done (kept a while), dead.'),
        ('queue_oldest_queued_seconds', 'gauge', null, 'Age of the oldest queued enrichment job.'),
        ('chunks_indexed', 'gauge', null, 'Chunks in the full-text index.'),
        ('sessions', 'gauge', 'tier', 'Sessions by tier.'),
        ('memories', 'gauge', 'tier', 'Curated memories by tier.')
$$;

comment on function memory.metric_definitions() is
'Every metric of memory.metrics: counter or gauge, the name of its one label (le, verdict, status, tier) '
'and what it counts.';

-- The upper bounds of recall's latency histogram, in seconds.
create or replace function memory.recall_duration_buckets() returns double precision[]
language sql
immutable parallel safe
as $$ select '{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, Infinity}'::double precision[] $$;

comment on function memory.recall_duration_buckets() is
'The upper bounds (seconds) of recall''s latency histogram buckets.';

-- Adds to counters of a tenant, in rows of this backend; nothing in a read-only transaction (a standby).
create or replace function memory_internal._count(
    tenant text, metrics text[], labels text[], amounts double precision[]
) returns void
language plpgsql
as $$
begin
    if pg_catalog.current_setting('transaction_read_only') = 'off' then
        insert into memory.metric_counts as c (tenant_id, metric, label, backend, value)
        select tenant, m.metric, m.label, pg_catalog.pg_backend_pid(), m.amount
        from unnest(metrics, labels, amounts) as m (metric, label, amount)
        where m.amount <> 0
        on conflict (tenant_id, metric, label, backend) do update set value = c.value + excluded.value;
    end if;
end
$$;

comment on function memory_internal._count(text, text[], text[], double precision[]) is
'Internal: adds amounts to a tenant''s counters (memory.metric_counts, this backend''s rows); nothing in a '
'read-only transaction.';

-- One recall counted: the recall, its latency bucket and time, and whether it was degraded.
create or replace function memory_internal._count_recall(tenant text, seconds double precision, degraded boolean)
returns void
language sql
as $$
    select memory_internal._count(
        tenant,
        array['recalls', 'recall_duration_seconds_sum', 'recall_duration_seconds_bucket', 'recalls_degraded'],
        array['', '', (
            select case when b.bound = 'Infinity' then '+Inf' else b.bound::text end
            from unnest(memory.recall_duration_buckets()) as b (bound)
            where b.bound >= seconds
            order by b.bound
            limit 1
        ), ''],
        array[1, seconds, 1, case when degraded then 1 else 0 end]
    )
$$;

comment on function memory_internal._count_recall(text, double precision, boolean) is
'Internal: counts one recall, its latency (histogram bucket and sum) and whether it was degraded.';

create or replace view memory.metrics as
with counted as (
    select
        c.tenant_id,
        c.metric,
        c.label,
        sum(c.value) as value
    from memory.metric_counts as c
    where
        c.tenant_id = (select memory.current_tenant())
        or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
    group by c.tenant_id, c.metric, c.label
)

select
    c.tenant_id,
    c.metric,
    c.label,
    c.value,
    'counter' as kind
from counted as c
where c.metric <> 'recall_duration_seconds_bucket'
union all
-- Buckets are counted one each; Prometheus wants each to hold those below it too, every bound present.
select
    r.tenant_id,
    'recall_duration_seconds_bucket' as metric,
    case when b.bound = 'Infinity' then '+Inf' else b.bound::text end as label,
    coalesce((
        select sum(c.value) from counted as c
        where
            c.tenant_id = r.tenant_id and c.metric = 'recall_duration_seconds_bucket'
            and replace(c.label, '+Inf', 'Infinity')::double precision <= b.bound
    ), 0) as value,
    'counter' as kind
from counted as r
cross join unnest(memory.recall_duration_buckets()) as b (bound)
where r.metric = 'recalls'
union all
select
    j.tenant_id,
    'queue_jobs' as metric,
    j.status as label,
    count(*) as value,
    'gauge' as kind
from memory.jobs as j
where
    j.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by j.tenant_id, j.status
union all
select
    j.tenant_id,
    'queue_oldest_queued_seconds' as metric,
    '' as label,
    extract(epoch from pg_catalog.now() - min(j.created_at)) as value,
    'gauge' as kind
from memory.jobs as j
where
    j.status = 'queued'
    and (
        j.tenant_id = (select memory.current_tenant())
        or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
    )
group by j.tenant_id
union all
select
    k.tenant_id,
    'chunks_indexed' as metric,
    '' as label,
    sum(k.chunks) as value,
    'gauge' as kind
from memory.corpus as k
where
    k.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by k.tenant_id
union all
select
    s.tenant_id,
    'sessions' as metric,
    s.tier as label,
    count(*) as value,
    'gauge' as kind
from memory.sessions as s
where
    s.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by s.tenant_id, s.tier
union all
select
    m.tenant_id,
    'memories' as metric,
    m.tier as label,
    count(*) as value,
    'gauge' as kind
from memory.memories as m
where
    m.tenant_id = (select memory.current_tenant())
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
group by m.tenant_id, m.tier;

comment on view memory.metrics is
'What the tenant''s memory did and holds, one row per metric and label value (every tenant''s for '
'memory_admin): counters since install (recalls, latency histogram, degraded recalls, commits, turns '
'committed and indexed, feedback by verdict) and gauges read now (the queue by status and its oldest job''s '
'age, chunks indexed, sessions and memories by tier). memory.metric_definitions() says what each is; '
'docs/prometheus-queries.yaml exports them.';
comment on column memory.metrics.tenant_id is 'The tenant.';
comment on column memory.metrics.metric is 'The metric (memory.metric_definitions()).';
comment on column memory.metrics.label is 'The value of its label (le, verdict, status or tier), or ''''.';
comment on column memory.metrics.value is 'The count (counters: since install) or the reading (gauges).';
comment on column memory.metrics.kind is 'counter or gauge.';

-- Maintenance: the counters of backends that have ended move to backend 0, so rows do not pile up.
create or replace function memory_internal._fold_metric_counts() returns bigint
language sql
as $$
    with ended as (
        delete from memory.metric_counts as c
        where c.backend <> 0 and not exists (select from pg_catalog.pg_stat_activity as a where a.pid = c.backend)
        returning c.tenant_id, c.metric, c.label, c.value
    ),
    folded as (
        insert into memory.metric_counts as c (tenant_id, metric, label, backend, value)
        select e.tenant_id, e.metric, e.label, 0, sum(e.value) from ended as e
        group by e.tenant_id, e.metric, e.label
        on conflict (tenant_id, metric, label, backend) do update set value = c.value + excluded.value
    )

    select count(*) from ended
$$;

comment on function memory_internal._fold_metric_counts() is
'Internal: moves the counters of ended backends into backend 0; how many rows it folded.';

-- sql/idempotent/operations/030-health.sql
-- What is installed and whether it works: the first thing to run after an install or upgrade.
create or replace function memory.health()
returns table (
    extension_version text,
    pgvector_version text,
    python_package_version text,
    python_version text,
    embedder text,
    embedder_loads boolean,
    embedder_dimensions integer,
    problem text
)
language plpython3u
as $$
import sys
extension_version = plpy.execute("select memory.version() as v")[0]["v"]
pgvector_version = plpy.execute(
    "select extversion from pg_catalog.pg_extension where extname = 'vector'")[0]["extversion"]
embedder = plpy.execute("select memory.setting('embedder') #>> '{}' as e")[0]["e"]
python = "%d.%d.%d" % sys.version_info[:3]
try:
    plpy.execute("select memory_internal._load_python()")
except plpy.SPIError as exc:
    return [(extension_version, pgvector_version, None, python, embedder, False, None, str(exc))]
import agent_memory_db
from agent_memory_db import embedder as local
if embedder != "local":
    return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
             None, None, None)]
try:
    if "local_embedder" not in GD:
        GD["local_embedder"] = local.LocalEmbedder()
    dims = len(GD["local_embedder"].embed(["health check"])[0])
except Exception as exc:
    return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
             False, None, str(exc))]
return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
         True, dims, None)]
$$;

comment on function memory.health() is
'Versions of the extension, pgvector, the in-database Python package and interpreter, the configured '
'embedder and whether it loads and embeds; problem says what is wrong, null when all is well.';

-- sql/idempotent/operations/035-data-comments.sql
-- What a DBA reads in \d+ for the tables of conversations and enrichment.
comment on table memory.sessions is 'One row per conversation session of an agent, under a tenant.';
comment on column memory.sessions.tenant_id is 'The tenant (memory.current_tenant() when written).';
comment on column memory.sessions.session_key is 'Internal key of the session.';
comment on column memory.sessions.agent_id is 'The agent the session belongs to.';
comment on column memory.sessions.session_id is 'The caller''s id for the session (unique per tenant and agent).';
comment on column memory.sessions.source is 'Where the conversation came from (an app, an importer).';
comment on column memory.sessions.model is 'The model that took part in the conversation.';
comment on column memory.sessions.started_at is 'When the session started (event time).';
comment on column memory.sessions.tokens_in is 'Tokens sent to the model in the session, when known.';
comment on column memory.sessions.tokens_out is 'Tokens the model produced in the session, when known.';
comment on column memory.sessions.metadata is 'Free metadata; later commits merge theirs into it.';
comment on column memory.sessions.recorded_at is 'When the session was first stored (record time).';
comment on column memory.sessions.updated_at is 'When a commit last touched the session.';

comment on table memory.turns is 'Every message of every session, in order, of every role.';
comment on column memory.turns.tenant_id is 'The tenant.';
comment on column memory.turns.turn_id is 'The turn''s id (turn_id in recall, feedback and evidence).';
comment on column memory.turns.session_key is 'The session (memory.sessions.session_key).';
comment on column memory.turns.agent_id is 'The agent (as on the session).';
comment on column memory.turns.position is 'Order of the turn in its session, from 0.';
comment on column memory.turns.message_id is 'The caller''s message id, when given (unique per session).';
comment on column memory.turns.role is 'user, assistant, system or tool.';
comment on column memory.turns.speaker is 'The speaker''s name, when given; kept as data, not indexed as text.';
comment on column memory.turns.content is 'The message text (text parts joined by newlines).';
comment on column memory.turns.content_sha256 is 'sha256 of content: identity of a message without id.';
comment on column memory.turns.tool_calls is 'Tool calls the message made, as given.';
comment on column memory.turns.tool_call_id is 'For a tool result, the call it answers.';
comment on column memory.turns.tokens is 'Tokens of the message, when given.';
comment on column memory.turns.client_embedding is 'A vector the caller passed (client embedder).';
comment on column memory.turns.metadata is 'Free metadata of the message.';
comment on column memory.turns.created_at is 'When the message was said (event time; the session start if not given).';
comment on column memory.turns.recorded_at is 'When the message was stored (record time).';

comment on table memory.chunks is
'The text indexed for recall: per turn, chunks of its own words; the first with the turn before as context.';
comment on column memory.chunks.tenant_id is 'The tenant.';
comment on column memory.chunks.turn_id is 'The turn the chunk indexes.';
comment on column memory.chunks.chunk_no is 'Chunk number within the turn, from 0.';
comment on column memory.chunks.session_key is 'The turn''s session.';
comment on column memory.chunks.agent_id is 'The turn''s agent.';
comment on column memory.chunks.text is 'The turn''s own words in this chunk (what is embedded).';
comment on column memory.chunks.text_sha256 is 'sha256 of text: an unchanged chunk is never re-embedded.';
comment on column memory.chunks.tsv is
'Full-text vector (setting text_search_config): own words under weight D, the context under weight C.';
comment on column memory.chunks.context_turn_id is 'The turn just before, whose words are this chunk''s context.';
comment on column memory.chunks.context_length is 'Lexeme occurrences of the context: its length for BM25.';

comment on table memory.chunk_embeddings is 'Vectors of chunks, one per chunk and embedding model.';
comment on column memory.chunk_embeddings.tenant_id is 'The tenant.';
comment on column memory.chunk_embeddings.turn_id is 'The chunk''s turn.';
comment on column memory.chunk_embeddings.chunk_no is 'The chunk.';
comment on column memory.chunk_embeddings.model is 'The embedding model (memory.embedding_models).';
comment on column memory.chunk_embeddings.text_sha256 is 'sha256 of the text that was embedded.';
comment on column memory.chunk_embeddings.embedding is 'The vector (unit length for the local model).';
comment on column memory.chunk_embeddings.in_graph is
'Whether the model''s HNSW graph holds the vector: once its tenant has more chunks than exact_search_max_chunks.';

comment on table memory.summaries is 'One summary per session, with decisions and open loops.';
comment on column memory.summaries.tenant_id is 'The tenant.';
comment on column memory.summaries.session_key is 'The session.';
comment on column memory.summaries.method is 'extractive, llm, or caller (memory.set_summary; never overwritten).';
comment on column memory.summaries.summary is 'The summary text.';
comment on column memory.summaries.decisions is 'Decisions taken in the session (JSON array of strings).';
comment on column memory.summaries.open_loops is 'Questions and tasks left open (JSON array of strings).';
comment on column memory.summaries.source_sha256 is
'Hash of the turns summarized: unchanged turns are not summarized again.';
comment on column memory.summaries.tsv is 'Full-text vector of the summary.';
comment on column memory.summaries.created_at is 'When the summary was written.';

comment on table memory.session_embeddings is
'One vector per session and model: the normalized mean of its chunks'' vectors.';
comment on column memory.session_embeddings.tenant_id is 'The tenant.';
comment on column memory.session_embeddings.session_key is 'The session.';
comment on column memory.session_embeddings.model is 'The embedding model.';
comment on column memory.session_embeddings.text_sha256 is 'sha256 of the chunk hashes it was computed from.';
comment on column memory.session_embeddings.embedding is 'The vector.';
comment on column memory.session_embeddings.in_graph is
'Whether the model''s HNSW graph holds the vector: once its tenant has more chunks than exact_search_max_chunks.';

comment on table memory.embedding_models is
'Embedding models used so far; recall uses a model once it is ready (every chunk has its vector).';
comment on column memory.embedding_models.model is 'The model name.';
comment on column memory.embedding_models.provider is 'local, openai or client.';
comment on column memory.embedding_models.dimensions is 'Dimensions of its vectors.';
comment on column memory.embedding_models.state is
'building (backfill running), ready, or retired (recall no longer uses it; memory.maintain sets it).';
comment on column memory.embedding_models.created_at is 'When the model was first used.';
comment on column memory.embedding_models.ready_at is 'When its vectors became complete.';
comment on column memory.embedding_models.retired_at is
'When recall stopped using it (memory.maintain drops its vectors model_retire_grace_hours later).';

comment on table memory.maintenance_runs is 'Each run of memory.maintain(): when, by whom, and what it did.';
comment on column memory.maintenance_runs.run_id is 'The run.';
comment on column memory.maintenance_runs.started_at is 'When it started.';
comment on column memory.maintenance_runs.finished_at is 'When it finished.';
comment on column memory.maintenance_runs.run_by is 'The role that ran it.';
comment on column memory.maintenance_runs.status is 'done, or skipped (another run was in progress).';
comment on column memory.maintenance_runs.actions is
'What it did: jobs_deleted, models_retired, vectors_dropped (per model: chunk_vectors, session_vectors).';
comment on column memory.turns.trust is
'Multiplies the turn''s recall score (1 = neutral); feedback and DBAs may change it.';
comment on column memory.turns.access_count is
'How often recall returned the turn (counted only when recall_count_access is on).';
comment on column memory.turns.last_accessed_at is 'When recall last returned the turn (with recall_count_access).';
comment on column memory.chunks.length is 'Lexeme occurrences of the own words: the chunk''s length for BM25.';

comment on table memory.speakers is
'Names that speak in each tenant and agent (turns.speaker), matched against queries.';
comment on column memory.speakers.tenant_id is 'The tenant.';
comment on column memory.speakers.agent_id is 'The agent.';
comment on column memory.speakers.speaker is 'A speaker''s name as given on messages.';

comment on table memory.lexicon is
'BM25 document frequencies: in how many chunks of a tenant and agent each lexeme occurs.';
comment on column memory.lexicon.tenant_id is 'The tenant.';
comment on column memory.lexicon.agent_id is 'The agent.';
comment on column memory.lexicon.lexeme is 'A lexeme of the chunks'' tsvectors.';
comment on column memory.lexicon.chunks is 'How many chunks contain it in their own words.';

comment on table memory.corpus is 'BM25 collection statistics per tenant and agent.';
comment on column memory.corpus.tenant_id is 'The tenant.';
comment on column memory.corpus.agent_id is 'The agent.';
comment on column memory.corpus.chunks is 'How many chunks are indexed.';
comment on column memory.corpus.total_length is 'Their total length (lexeme occurrences), for the average length.';

comment on table memory.feedback is
'Every verdict (helpful, unhelpful, incorrect, stale) on a turn, a memory or a session, who gave it and what it '
'did (audit trail).';
comment on column memory.feedback.tenant_id is 'The tenant.';
comment on column memory.feedback.feedback_id is 'Internal key of the verdict.';
comment on column memory.feedback.turn_id is
'The turn judged (memory.turns.turn_id, the turn_id recall returns); null when a memory or session was.';
comment on column memory.feedback.helpful is 'True for verdict helpful, false for the others.';
comment on column memory.feedback.verdict is 'helpful, unhelpful, incorrect or stale.';
comment on column memory.feedback.memory_id is 'The curated memory judged; null when a turn or session was.';
comment on column memory.feedback.session_key is 'The session judged as a whole; null when a turn or memory was.';
comment on column memory.feedback.judged_by is
'The agent that gave the verdict (memory.feedback''s agent_id), or the role when it named none.';
comment on column memory.feedback.counted is
'False for a judge''s repeat of the verdict it last gave the same target: kept, but it moved nothing.';
comment on column memory.feedback.effect is 'What the verdict did: trust moved, importance lowered, retracted.';
comment on column memory.feedback.query is 'The query the turn was recalled for, when given.';
comment on column memory.feedback.note is 'Free text from whoever gave the verdict.';
comment on column memory.feedback.trust_before is
'The trust of the turn judged (or carrying the memory''s words) before this verdict; null for a session.';
comment on column memory.feedback.trust_after is 'That trust after it.';
comment on column memory.feedback.given_by is 'The database role that gave it.';
comment on column memory.feedback.created_at is 'When it was given.';

comment on table memory.entities is
'Entities of the knowledge graph: one per tenant, agent and normalized name, with its type and aliases.';
comment on column memory.entities.tenant_id is 'The tenant.';
comment on column memory.entities.entity_id is 'The entity''s id.';
comment on column memory.entities.agent_id is 'The agent whose memory the entity belongs to.';
comment on column memory.entities.name is 'The name as first written.';
comment on column memory.entities.normalized is 'The key it is found under: memory.normalize_entity(name).';
comment on column memory.entities.type is
'One of person, project, concept, tool, metric, org, place, event, doc, task, topic, other.';
comment on column memory.entities.aliases is 'Other normalized names that stand for it (merged entities).';
comment on column memory.entities.trigrams is 'Trigrams of the normalized name and aliases, for fuzzy search.';

comment on table memory.entity_mentions is 'Which turns mention which entities, and how often.';
comment on column memory.entity_mentions.tenant_id is 'The tenant.';
comment on column memory.entity_mentions.turn_id is 'The turn that mentions the entity.';
comment on column memory.entity_mentions.entity_id is 'The entity mentioned.';
comment on column memory.entity_mentions.session_key is 'The turn''s session.';
comment on column memory.entity_mentions.mentions is 'How often the turn mentions it.';

comment on table memory.entity_edges is
'Co-occurrence: one row per pair of entities mentioned in one turn (derived from the mentions; not dumped).';
comment on column memory.entity_edges.tenant_id is 'The tenant.';
comment on column memory.entity_edges.entity_a is 'The pair''s entity with the smaller key.';
comment on column memory.entity_edges.entity_b is 'The pair''s entity with the larger key.';
comment on column memory.entity_edges.turns is 'How many turns mention both.';
comment on column memory.entity_edges.last_seen is 'When the latest such turn was said.';

comment on table memory.entity_states is
'Entity attributes over time: each value with the period it held; at most one current value per attribute.';
comment on column memory.entity_states.tenant_id is 'The tenant.';
comment on column memory.entity_states.state_id is 'The recorded value''s id.';
comment on column memory.entity_states.entity_id is 'The entity.';
comment on column memory.entity_states.attribute is 'The attribute, e.g. database or owner.';
comment on column memory.entity_states.value is 'Its value, as JSON.';
comment on column memory.entity_states.valid_from is 'When the value began to hold.';
comment on column memory.entity_states.valid_to is 'When the next value began to hold; null while it is current.';
comment on column memory.entity_states.recorded_at is 'When it was written.';
comment on column memory.entity_states.recorded_by is 'The role that wrote it.';

comment on table memory.memories is
'Curated memories: typed claims of an agent with a status and the period they hold, one row per version '
'(a newer version under the same key supersedes the one before, which is kept). Written by memory.remember.';
comment on column memory.memories.tenant_id is 'The tenant.';
comment on column memory.memories.memory_id is 'The memory''s id.';
comment on column memory.memories.agent_id is 'The agent whose memory it is.';
comment on column memory.memories.kind is
'fact, preference, rule, decision, skill, event, observation or task.';
comment on column memory.memories.content is 'The claim, in words.';
comment on column memory.memories.key is 'A stable key the caller stores, updates and gets it by; null: none.';
comment on column memory.memories.subjects is 'The entities it is about, normalized as entity names.';
comment on column memory.memories.tags is 'The caller''s tags.';
comment on column memory.memories.importance is 'How much it matters, 0 to 1.';
comment on column memory.memories.confidence is 'How sure its source is of it, 0 to 1.';
comment on column memory.memories.status is
'active, ongoing (work in progress), resolved, superseded (a newer version holds), retracted (never true) or '
'pending (proposed by enrichment, awaiting memory.approve or memory.retract).';
comment on column memory.memories.origin is
'Who proposed it: remember (a caller), or patterns or llm (enrichment''s extractor, setting memory_extractor).';
comment on column memory.memories.valid_from is 'When it began to hold.';
comment on column memory.memories.valid_to is
'When it stopped holding (superseded, resolved or retracted); null: it holds.';
comment on column memory.memories.recorded_at is 'When it was written.';
comment on column memory.memories.recorded_by is 'The role that wrote it.';
comment on column memory.memories.canonical is
'The hash of its kind, subjects and normalized words: the same claim is the same memory.';
comment on column memory.memories.turn_id is 'The turn of session ''remembered'' that carries its words in recall.';
comment on column memory.memories.supersedes is 'The version of the same key it replaced; null: the first.';

comment on table memory.memory_evidence is
'A memory''s evidence: a row per turn it came from (memory_items.evidence_turn_ids lists them). It goes '
'with its memory, and with its turn when the turn is forgotten.';
comment on column memory.memory_evidence.tenant_id is 'The tenant.';
comment on column memory.memory_evidence.memory_id is 'The memory.';
comment on column memory.memory_evidence.turn_id is 'A turn the memory came from.';

comment on table memory.memory_merges is
'Semantic dedup''s log: each remembered claim that paraphrased a memory held (memory_id, similarity), '
'merged into it (merged true) or, in shadow mode, only recorded beside the memory created instead '
'(created_memory_id).';
comment on column memory.memory_merges.tenant_id is 'The tenant.';
comment on column memory.memory_merges.merge_id is 'The log entry''s id.';
comment on column memory.memory_merges.agent_id is 'The agent that remembered the claim.';
comment on column memory.memory_merges.kind is 'The claim''s kind.';
comment on column memory.memory_merges.recorded_at is 'When the claim was remembered.';
comment on column memory.memory_merges.recorded_by is 'The role that remembered it.';
comment on column memory.memory_merges.memory_id is 'The memory held that the claim paraphrased.';
comment on column memory.memory_merges.content is 'The claim remembered.';
comment on column memory.memory_merges.similarity is 'Cosine of the claim''s vector to the memory''s words.';
comment on column memory.memory_merges.merged is 'true: merged (no new memory); false: shadow mode, recorded only.';
comment on column memory.memory_merges.created_memory_id is 'Shadow mode: the memory created instead of the merge.';

comment on table memory.tombstones is
'What memory.forget removed: the selector asked for, when, by whom, and counts (never the content).';
comment on column memory.tombstones.tenant_id is 'The tenant.';
comment on column memory.tombstones.tombstone_id is 'The tombstone.';
comment on column memory.tombstones.selector is 'What was asked to be forgotten: {agent_id, session_id?}.';
comment on column memory.tombstones.removed is 'How much went: {sessions, turns, chunks, memories}.';
comment on column memory.tombstones.forgotten_at is 'When.';
comment on column memory.tombstones.forgotten_by is 'The role that called memory.forget.';

comment on table memory.forgotten_sessions is
'Sessions memory.forget removed, by a hash of their id: memory.commit refuses them unless allow_forgotten.';
comment on column memory.forgotten_sessions.tenant_id is 'The tenant.';
comment on column memory.forgotten_sessions.agent_id is 'The agent whose session it was.';
comment on column memory.forgotten_sessions.session_sha256 is 'sha256 of the session id.';
comment on column memory.forgotten_sessions.tombstone_id is 'The tombstone of the forget that removed it.';

-- sql/idempotent/write/040-embedding.sql
-- Embedding: the model the settings choose, one call that embeds texts with it, secrets for
-- endpoints, and a partial HNSW index per model.

-- Stores a secret (such as openai_api_key) where only the extension's owner can read it, for one origin
-- (scheme://host[:port]): it is sent to no other, nor over another scheme. The origin is the one of
-- `url` (a bare host means https), or by default that of the endpoint configured for it now
-- (rerank_url for rerank_api_key, openai_base_url otherwise).
create or replace function memory.set_secret(name text, value text, url text default null) returns void
language plpgsql
as $$
declare
    v_url text := coalesce(
        url,
        memory.setting(case when name = 'rerank_api_key' then 'rerank_url' else 'openai_base_url' end) #>> '{}'
    );
    v_origin text := lower(substring(
        case when v_url ~ '^[A-Za-z][A-Za-z0-9+.-]*://' then v_url else 'https://' || v_url end
        from '^([Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9.:\[\]-]+)(?:[/?#]|$)'
    ));
begin
    if name is null or name !~ '^[a-z][a-z0-9_]{0,62}$' then
        raise exception 'agent_memory: secret name must be lower-case letters, digits and _, got %', name;
    end if;
    if value is null or value = '' then
        raise exception 'agent_memory: secret % needs a value', name;
    end if;
    if v_origin is null then
        raise exception 'agent_memory: secret % needs the http or https URL it is for, got %', name,
            coalesce(v_url, 'none')
            using hint = 'pass it: memory.set_secret(name, value, ''https://api.example.com'')';
    end if;
    insert into memory_internal._secrets as s (name, value, origin) values (set_secret.name, set_secret.value, v_origin)
    on conflict on constraint _secrets_pkey do update set value = excluded.value, origin = excluded.origin;
end
$$;

comment on function memory.set_secret(text, text, text) is
'Stores a secret for one origin (memory_admin), e.g. select memory.set_secret(''openai_api_key'', ''sk-...'', '
'''https://api.openai.com''); without a URL, the origin of the endpoint configured now. It is sent to no '
'other scheme, host or port, and readable by no role but the owner.';

comment on column memory_internal._secrets.origin is 'The only origin (scheme://host[:port]) the secret is sent to.';

-- The embedding model that settings (as from memory_internal._settings_json()) choose; no row for embedder = none.
-- The local model is the one whose files the in-database package loads: its name and dimensions are written
-- there alone (agent_memory_db/embedder.py), and the build puts them here.
create or replace function memory_internal._embedding_model(settings jsonb)
returns table (provider text, model text, dimensions integer)
language sql
immutable
as $$
    select settings ->> 'embedder',
           case settings ->> 'embedder'
               when 'local' then 'all-MiniLM-L6-v2'
               when 'openai' then settings ->> 'openai_embedding_model'
               else 'client'
           end,
           case settings ->> 'embedder'
               when 'local' then 384
               when 'openai' then (settings ->> 'openai_embedding_dimensions')::integer
               else (settings ->> 'client_dimensions')::integer
           end
    where settings ->> 'embedder' <> 'none'
$$;

comment on function memory_internal._embedding_model(jsonb) is
'Internal: the embedding model that the given settings choose.';

create or replace function memory.embedding_model()
returns table (provider text, model text, dimensions integer)
language sql
stable
as $$ select * from memory_internal._embedding_model(memory_internal._settings_json()) $$;

comment on function memory.embedding_model() is
'The embedding model the settings choose (provider, model, dimensions); no row when embedder = none.';

-- Writes a line to the server log and never to the client, whatever its client_min_messages: the whole
-- story of an endpoint's failure, which may hold what the endpoint wrote (a provider's 401 may echo the key,
-- masked), is for the administrators who read the log. Tenants get the summary (the status and a fixed
-- message).
create or replace function memory_internal._server_log(message text) returns void
language plpgsql
set client_min_messages = error
as $$
begin
    raise log 'agent_memory: %', message;
end
$$;

comment on function memory_internal._server_log(text) is
'Internal: writes a line to the server log only (never sent to the client).';

-- Runs as the owner so the endpoint's key can be read; it returns only vectors. The key goes only to the
-- origin it was stored for, and which endpoint and model are used is the administrator's choice (settings
-- set_by admin: a session's value of one counts only for memory_admin, see memory_internal._check_set_by).
create or replace function memory_internal._embed_texts(texts text[], settings jsonb) returns vector[]
language plpython3u
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db import embedding, openai_compat, secrets
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
try:
    key = None
    if config["embedder"] == "openai":
        rows = plpy.execute("select value, origin from memory_internal._secrets where name = 'openai_api_key'")
        stored = (rows[0]["value"], rows[0]["origin"]) if rows else None
        key = secrets.key_for("openai_api_key", config["openai_base_url"], stored)
    # Vectors kept ahead (memory_internal._keep_vectors_ahead) are handed out to their tenant and model only.
    model = embedding.model_of(config)
    owner = None
    if embedding.AHEAD in GD and model is not None:
        owner = (plpy.execute("select memory.current_tenant() as t")[0]["t"], model.name)
    # Between batches a cancel or statement timeout takes effect (pg_sleep checks for interrupts).
    return embedding.embed_text_form(config, texts or [], key, GD, owner,
                                     lambda: plpy.execute("select pg_catalog.pg_sleep(0)"))
except plpy.SPIError:
    raise
except Exception as exc:
    if isinstance(exc, openai_compat.ProviderError):
        plpy.execute(plpy.prepare("select memory_internal._server_log($1)", ["text"]), ["embedding failed: " + exc.detail])
    plpy.error("agent_memory: embedding failed: %s" % exc)
$$;

comment on function memory_internal._embed_texts(text[], jsonb) is
'Internal: embeds texts with the embedder the given settings choose (those kept ahead for this tenant and '
'model by memory_internal._keep_vectors_ahead are not embedded again).';

-- Keeps vectors made ahead of the enrichment jobs that will ask for them (memory.work embeds the chunks
-- of several sessions in one call: the model runs batches sorted across them), for this tenant and one
-- model, replacing any kept before.
create or replace function memory_internal._keep_vectors_ahead(model text, texts text[], vectors vector[])
returns void
language plpython3u
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
from agent_memory_db import embedding
embedding.keep_ahead(GD, (plpy.execute("select memory.current_tenant() as t")[0]["t"], model), texts or [],
                     vectors or [])
$$;

comment on function memory_internal._keep_vectors_ahead(text, text[], vector[]) is
'Internal: keeps vectors of texts for memory_internal._embed_texts to hand out in this backend (this tenant '
'and model only; one batch at a time).';

-- Stable, although an endpoint embedder is a call out: within one statement the same texts get the same
-- vectors (the model does not change mid-statement), and stable lets a query compare a column with
-- memory.embed('...')[1] through an index, which volatile would forbid.
create or replace function memory.embed(texts text[]) returns vector[]
language sql
stable
as $$ select memory_internal._embed_texts(texts, memory_internal._settings_json()) $$;

comment on function memory.embed(text[]) is
'Vectors for texts with the configured embedder (the local model by default), in the same order.';

-- A partial HNSW index for one model's vectors (each model has its own dimensions), over the vectors of
-- tenants large enough to search approximately (memory_internal._in_graph). The graph holds them at half
-- precision: on 32,000 real turns' vectors an insert took 38% less time than at full precision, for the
-- same recall@10 (0.993 against exact search), in half the space; search reranks by the exact distance
-- (memory_internal._nearest_sql).
create or replace function memory_internal._ensure_vector_index(model text, dimensions integer) returns void
language plpgsql
as $$
declare
    v_suffix text := left(md5(model), 10);
begin
    if to_regclass('memory.chunk_embeddings_hnsw_' || v_suffix) is not null then
        return;
    end if;
    execute format(
        'create index if not exists %I on memory.chunk_embeddings using hnsw ((embedding::halfvec(%s)) halfvec_cosine_ops) where model = %L and in_graph',
        'chunk_embeddings_hnsw_' || v_suffix, dimensions, model
    );
    execute format(
        'create index if not exists %I on memory.session_embeddings using hnsw ((embedding::halfvec(%s)) halfvec_cosine_ops) where model = %L and in_graph',
        'session_embeddings_hnsw_' || v_suffix, dimensions, model
    );
end
$$;

comment on function memory_internal._ensure_vector_index(text, integer) is
'Internal: creates the partial HNSW indexes (chunks and sessions) for one embedding model.';

-- The default model's indexes ship with the extension; those of models used before are made again
-- (an upgrade to 0.3.0 drops them for the in_graph predicate).
select memory_internal._ensure_vector_index(m.model, m.dimensions)
from (
    select
        m.model,
        m.dimensions
    from memory_internal._embedding_model('{"embedder": "local"}') as m
    union
    select
        m.model,
        m.dimensions
    from memory.embedding_models as m
    where m.provider <> 'client' and m.state <> 'retired'
) as m;

-- Whether a tenant's vectors belong in the HNSW graphs: once it holds more chunks than exact search
-- serves. Below that recall scans them exactly, and a graph kept current for them would cost each
-- chunk enrichment writes about a millisecond for nothing. plpgsql, so its plan is kept (see
-- memory_internal._settings_json).
create or replace function memory_internal._in_graph(tenant text) returns boolean
language plpgsql
stable
as $$
begin
    return (
        select coalesce(sum(k.chunks), 0) > (memory.setting('exact_search_max_chunks'))::bigint
        from memory.corpus as k
        where k.tenant_id = tenant
    );
end
$$;

comment on function memory_internal._in_graph(text) is
'Internal: whether a tenant''s vectors belong in the HNSW graphs (more chunks than exact_search_max_chunks).';

-- Puts a tenant's vectors that are still outside the graphs into them, once it has grown past the
-- threshold (a step of memory.maintain). Rows another transaction holds are skipped: the next run takes
-- them, and until then approximate search scans them exactly. Those are at most the threshold's worth,
-- since enrichment puts a large tenant's new vectors in the graph itself.
create or replace function memory_internal._join_graph(tenant text) returns void
language sql
as $$
    update memory.chunk_embeddings as e set in_graph = true
    where (e.tenant_id, e.turn_id, e.chunk_no, e.model) in (
        select o.tenant_id, o.turn_id, o.chunk_no, o.model from memory.chunk_embeddings as o
        where o.tenant_id = tenant and not o.in_graph
        for update skip locked
    );
    update memory.session_embeddings as e set in_graph = true
    where (e.tenant_id, e.session_key, e.model) in (
        select o.tenant_id, o.session_key, o.model from memory.session_embeddings as o
        where o.tenant_id = tenant and not o.in_graph
        for update skip locked
    );
$$;

comment on function memory_internal._join_graph(text) is
'Internal: adds the tenant''s vectors still outside the HNSW graphs to them (rows locked elsewhere wait '
'for the next memory.maintain).';

-- sql/idempotent/write/042-lexicon.sql
-- Term statistics for BM25 (memory.lexicon, memory.corpus) and the speakers of each scope
-- (memory.speakers), kept current by triggers so recall reads them instead of counting.

-- How many lexeme occurrences a tsvector holds: a chunk's length for BM25.
create or replace function memory_internal._tsv_length(tsv tsvector) returns integer
language sql
immutable strict parallel safe
as $$ select coalesce(sum(coalesce(cardinality(u.positions), 1)), 0)::integer from unnest(tsv) as u $$;

comment on function memory_internal._tsv_length(tsvector) is
'Internal: the number of lexeme occurrences in a tsvector.';

-- Adds (sign 1) or removes (sign -1) chunks from the statistics. Rows are touched in key order so
-- that concurrent enrichments lock them in the same order. plpgsql, so its plans are kept (see
-- memory_internal._settings_json).
create or replace function memory_internal._count_chunks(
    tenants text[], agents text[], lengths integer[], tsvs tsvector[], sign integer
) returns void
language plpgsql
as $$
begin
    insert into memory.corpus as k (tenant_id, agent_id, chunks, total_length)
    select c.tenant_id, c.agent_id, sign * count(*), sign * sum(c.length)
    from unnest(tenants, agents, lengths) as c (tenant_id, agent_id, length)
    group by c.tenant_id, c.agent_id
    order by c.tenant_id, c.agent_id
    on conflict (tenant_id, agent_id) do update
    set chunks = k.chunks + excluded.chunks, total_length = k.total_length + excluded.total_length;

    insert into memory.lexicon as l (tenant_id, agent_id, lexeme, chunks)
    select c.tenant_id, c.agent_id, u.lexeme, sign * count(*)
    from unnest(tenants, agents, tsvs) as c (tenant_id, agent_id, tsv)
    cross join lateral unnest(c.tsv) as u
    -- Document frequency counts a chunk's own words (weight D), not its context (weight C).
    where u.weights is null or 'D' = any(u.weights)
    group by c.tenant_id, c.agent_id, u.lexeme
    order by c.tenant_id, c.agent_id, u.lexeme
    on conflict (tenant_id, agent_id, lexeme) do update
    set chunks = l.chunks + excluded.chunks;

    delete from memory.lexicon as l
    where sign < 0 and l.chunks <= 0 and l.tenant_id = any(tenants) and l.agent_id = any(agents);
end
$$;

comment on function memory_internal._count_chunks(text[], text[], integer[], tsvector[], integer) is
'Internal: adds or removes chunks from the BM25 statistics (memory.lexicon, memory.corpus).';

create or replace function memory_internal._chunks_changed() returns trigger
language plpgsql
as $$
begin
    if tg_op in ('DELETE', 'UPDATE') then
        perform memory_internal._count_chunks(array_agg(o.tenant_id), array_agg(o.agent_id), array_agg(o.length),
                                     array_agg(o.tsv), -1)
        from old_chunks as o having count(*) > 0;
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        perform memory_internal._count_chunks(array_agg(n.tenant_id), array_agg(n.agent_id), array_agg(n.length),
                                     array_agg(n.tsv), 1)
        from new_chunks as n having count(*) > 0;
    end if;
    return null;
end
$$;

comment on function memory_internal._chunks_changed() is 'Internal: trigger that keeps the BM25 statistics current.';

drop trigger if exists chunks_counted_insert on memory.chunks;
create trigger chunks_counted_insert after insert on memory.chunks
referencing new table as new_chunks
for each statement execute function memory_internal._chunks_changed();

drop trigger if exists chunks_counted_update on memory.chunks;
create trigger chunks_counted_update after update on memory.chunks
referencing old table as old_chunks new table as new_chunks
for each statement execute function memory_internal._chunks_changed();

drop trigger if exists chunks_counted_delete on memory.chunks;
create trigger chunks_counted_delete after delete on memory.chunks
referencing old table as old_chunks
for each statement execute function memory_internal._chunks_changed();

create or replace function memory_internal._turns_added() returns trigger
language plpgsql
as $$
begin
    insert into memory.speakers (tenant_id, agent_id, speaker)
    select distinct n.tenant_id, n.agent_id, n.speaker from new_turns as n where n.speaker is not null
    order by 1, 2, 3
    on conflict do nothing;
    return null;
end
$$;

comment on function memory_internal._turns_added() is 'Internal: trigger that records the speakers of new turns.';

drop trigger if exists turns_speakers on memory.turns;
create trigger turns_speakers after insert on memory.turns
referencing new table as new_turns
for each statement execute function memory_internal._turns_added();

-- sql/idempotent/write/044-llm-chat.sql
-- The chat endpoint (openai_base_url, openai_chat_model, secret openai_api_key) as enrichment uses it:
-- for an llm summary of a session, the llm entity extractor and the llm memory extractor. One function
-- holds the key.

-- The endpoint's answer to the request of one purpose (agent_memory_db.chat_requests: 'summary',
-- 'entities' or 'memories') built from a session's turns. Runs as the owner to read the key; the endpoint,
-- model, timeouts and whether the purpose's setting chose llm at all come from the configuration (the
-- caller's settings only when the login administers), so a caller cannot send text, or the key, anywhere
-- else.
create or replace function memory_internal._llm_chat(purpose text, turns jsonb, settings jsonb) returns text
language plpython3u
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db import embedding, openai_compat, secrets
from agent_memory_db.chat_requests import PURPOSES
if purpose not in PURPOSES:
    plpy.error("agent_memory: no chat request for purpose %r" % purpose)
chosen = PURPOSES[purpose]
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
if config[chosen.setting] != "llm":
    plpy.error("agent_memory: %s is not configured: setting %s is %r" % (chosen.label, chosen.setting, config[chosen.setting]))
rows = plpy.execute("select value, origin from memory_internal._secrets where name = 'openai_api_key'")
stored = (rows[0]["value"], rows[0]["origin"]) if rows else None
try:
    key = secrets.key_for("openai_api_key", config["openai_base_url"], stored)
    return openai_compat.chat(embedding.endpoint(config, key), config["openai_chat_model"], chosen.messages(json.loads(turns)))
except openai_compat.ProviderError as exc:
    plpy.execute(plpy.prepare("select memory_internal._server_log($1)", ["text"]), ["%s failed: %s" % (chosen.label, exc.detail)])
    plpy.error("agent_memory: %s failed: %s" % (chosen.label, exc))
$$;

comment on function memory_internal._llm_chat(text, jsonb, jsonb) is
'Internal: the chat endpoint''s answer to a session''s llm summary, llm entity or llm memory request '
'(owner-run: reads the key; endpoint and model from the configuration).';

-- sql/idempotent/write/046-models.sql
-- Changing the embedding model without downtime: vectors of a new model are written in the background
-- (jobs of kind embed) while recall keeps using the last model whose vectors are complete.

-- Whether any tenant has chunks, and whether any chunk of any tenant lacks a model's vector: what recording a
-- model and finishing one must know of every tenant, whoever calls the API (row-level security shows
-- memory_owner one tenant). They run as memory_observer, a role that may read every tenant's chunks and
-- vectors and nothing else, and they answer only yes or no.
create or replace function memory_internal._any_chunks() returns boolean
language sql
stable
security definer
as $$
    select exists (select from memory.chunks)
$$;

comment on function memory_internal._any_chunks() is
'Internal: whether any tenant has chunks (runs as memory_observer).';

create or replace function memory_internal._chunks_lacking(model text) returns boolean
language sql
stable
security definer
as $$
    select exists (
        select from memory.chunks as c
        where not exists (
            select from memory.chunk_embeddings as e
            where e.tenant_id = c.tenant_id and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no
                and e.model = _chunks_lacking.model
        )
    )
$$;

comment on function memory_internal._chunks_lacking(text) is
'Internal: whether a chunk of any tenant lacks a vector of the model (runs as memory_observer).';

-- Records the model in force the first time it is used; a model that arrives while chunks exist (of any
-- tenant) starts as building and gets a background job that embeds them. It takes no arguments: it registers
-- the model the settings choose (the administrator's), never one a caller names. Until the transaction that
-- records a model ends, others that would record it wait; at most five seconds, then they fail (the queue
-- tries again later).
create or replace function memory_internal._register_model() returns void
language plpgsql
set lock_timeout = '5s'
as $$
declare
    v_model record;
    v_state text;
    v_written boolean;
begin
    select * into v_model from memory.embedding_model();
    if v_model is null then
        return;
    end if;
    select m.state into v_state from memory.embedding_models as m where m.model = v_model.model;
    if v_state is distinct from 'retired' and v_state is not null then
        return;
    end if;
    -- A retired model chosen again is built again (maintenance may have dropped its vectors); the row
    -- lock this takes waits for a maintenance run dropping them, so the index is made after it.
    begin
        insert into memory.embedding_models as m (model, provider, dimensions, state, ready_at)
        select v_model.model, v_model.provider, v_model.dimensions,
               case when memory_internal._any_chunks() then 'building' else 'ready' end,
               case when memory_internal._any_chunks() then null else pg_catalog.now() end
        on conflict (model) do update
        set state = excluded.state, ready_at = excluded.ready_at, retired_at = null
        where m.state = 'retired';
        v_written := found;
    exception when lock_not_available then
        raise exception 'agent_memory: embedding model % is being recorded by another transaction; try again',
            v_model.model using errcode = 'lock_not_available';
    end;
    if v_model.provider <> 'client' then
        perform memory_internal._ensure_vector_index(v_model.model, v_model.dimensions);
    end if;
    if v_written and memory_internal._any_chunks() then
        insert into memory.jobs (tenant_id, kind) values (memory.current_tenant(), 'embed');
    end if;
end
$$;

comment on function memory_internal._register_model() is
'Internal: records the embedding model in force on first use (or when chosen again after it was retired); '
'with existing chunks it starts as building.';

-- Embeds up to max_chunks chunks that lack a vector of the configured model; when none are left the model
-- becomes ready and recall switches to it. Returns how many chunks it embedded.
create or replace function memory.reembed(max_chunks integer default 500) returns integer
language plpgsql
as $$
declare
    v_settings jsonb := memory_internal._settings_json();
    v_model record;
    v_keys bigint [];
    v_nos integer [];
    v_tenants text [];
    v_texts text [];
    v_sessions bigint [];
    v_vectors vector [];
    v_count integer;
begin
    select * into v_model from memory.embedding_model();
    if v_model is null or v_model.provider = 'client' then
        return 0;
    end if;
    perform memory_internal._register_model();
    select array_agg(c.tenant_id), array_agg(c.turn_id), array_agg(c.chunk_no), array_agg(c.text),
           array_agg(distinct c.session_key)
    into v_tenants, v_keys, v_nos, v_texts, v_sessions
    from (
        select c.tenant_id, c.turn_id, c.chunk_no, c.text, c.session_key from memory.chunks as c
        where not exists (
            select from memory.chunk_embeddings as e
            where e.tenant_id = c.tenant_id and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no
                and e.model = v_model.model
        )
        limit reembed.max_chunks
    ) as c;
    v_count := coalesce(cardinality(v_texts), 0);
    if v_count > 0 then
        v_vectors := memory_internal._embed_texts(v_texts, v_settings);
        -- The lock order of commit, forget and workers: the sessions first (in key order), then their
        -- rows. Chunks forgotten while they were embedded are left out.
        perform from memory.sessions as s where s.session_key = any (v_sessions) order by s.session_key
        for key share;
        insert into memory.chunk_embeddings (tenant_id, turn_id, chunk_no, model, text_sha256, embedding, in_graph)
        select k.tenant_id, k.turn_id, k.chunk_no, v_model.model, sha256(convert_to(k.text, 'UTF8')), k.embedding,
               memory_internal._in_graph(k.tenant_id)
        from unnest(v_tenants, v_keys, v_nos, v_texts, v_vectors) as k (tenant_id, turn_id, chunk_no, text, embedding)
        where exists (
            select from memory.chunks as c
            where c.tenant_id = k.tenant_id and c.turn_id = k.turn_id and c.chunk_no = k.chunk_no
        )
        on conflict do nothing;
    end if;
    if v_count < reembed.max_chunks then
        perform memory_internal._mark_ready_if_complete(v_model.model);
    end if;
    return v_count;
end
$$;

comment on function memory.reembed(integer) is
'Embeds up to max_chunks chunks lacking a vector of the configured model (all tenants; memory_admin, and the '
'queue''s embed jobs); marks the model ready '
'when none are left, and recall then switches to it. Queued automatically when the model changes.';

-- Marks a building model ready once every chunk (of every tenant) has its vector (checked only while it is
-- building).
create or replace function memory_internal._mark_ready_if_complete(model text) returns void
language plpgsql
as $$
begin
    if not exists (
        select from memory.embedding_models as m
        where m.model = _mark_ready_if_complete.model and m.state = 'building'
    ) then
        return;
    end if;
    update memory.embedding_models as m set state = 'ready', ready_at = pg_catalog.now()
    where m.model = _mark_ready_if_complete.model and m.state = 'building'
        and not memory_internal._chunks_lacking(_mark_ready_if_complete.model);
end
$$;

comment on function memory_internal._mark_ready_if_complete(text) is
'Internal: a building embedding model becomes ready when no chunk lacks its vector.';

-- The model recall uses: the configured one once its vectors are complete, else the last ready one.
create or replace function memory_internal._recall_model(configured text) returns text
language plpgsql
stable
as $$
begin
    return (
        select m.model from memory.embedding_models as m
        where m.state = 'ready'
        order by (m.model = configured) is true desc, m.ready_at desc
        limit 1
    );
end
$$;

comment on function memory_internal._recall_model(text) is
'Internal: the model recall uses when the settings configure the given one (null: none configured).';

create or replace function memory.recall_model() returns text
language sql
stable
as $$ select memory_internal._recall_model((select e.model from memory.embedding_model() as e)) $$;

comment on function memory.recall_model() is
'The embedding model recall uses: the configured one once all chunks have its vectors, else the most '
'recently completed one; null when there are no vectors.';

-- Every stored vector has its model's dimensions (that it belongs to a registered model is a foreign key):
-- a vector of another length, written by a role that may insert its tenant's rows, would make the
-- model's shared HNSW index, built for every tenant, fail to build.
create or replace function memory_internal._vectors_match_their_model() returns trigger
language plpgsql
as $$
declare
    v_bad record;
begin
    select n.model, vector_dims(n.embedding) as dims, m.dimensions into v_bad
    from new_rows as n
    inner join memory.embedding_models as m on n.model = m.model
    where vector_dims(n.embedding) <> m.dimensions
    limit 1;
    if found then
        raise exception 'agent_memory: a vector of model % has % dimensions; the model has %', v_bad.model,
            v_bad.dims, v_bad.dimensions
            using errcode = 'invalid_parameter_value';
    end if;
    return null;
end
$$;

comment on function memory_internal._vectors_match_their_model() is
'Internal: trigger that refuses vectors whose dimensions are not their model''s.';

-- On insert and on update of both vector tables (a trigger with a transition table has one event).
do $triggers$
declare
    v_table text;
    v_event text;
begin
    foreach v_table in array array['chunk_embeddings', 'session_embeddings'] loop
        foreach v_event in array array['insert', 'update'] loop
            execute format('drop trigger if exists %I on memory.%I', v_table || '_dimensions_on_' || v_event, v_table);
            execute format(
                'create trigger %I after %s on memory.%I referencing new table as new_rows '
                'for each statement execute function memory_internal._vectors_match_their_model()',
                v_table || '_dimensions_on_' || v_event, v_event, v_table
            );
        end loop;
    end loop;
end
$triggers$;

-- sql/idempotent/graph/050-entities.sql
-- The knowledge graph's entities: names normalized in the database, found by name or alias, and the
-- co-occurrence edges kept current from the mentions.

-- The key an entity is stored under: NFKC, case folded, look-alike letters, dashes, dots and quotes mapped,
-- invisible characters dropped, white space collapsed, edge punctuation stripped, then a known alias
-- mapped to its canonical name (postgres -> postgresql).
create or replace function memory.normalize_entity(name text) returns text
language plpython3u
immutable strict parallel safe
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
from agent_memory_db.entities import normalized_key
return normalized_key(name)
$$;

comment on function memory.normalize_entity(text) is
'The key an entity name is stored and found under: NFKC, Unicode case folding, look-alike letters '
'(fullwidth, Cyrillic and Greek homoglyphs), dash, dot, bracket and quote variants mapped, invisible '
'characters dropped, white space collapsed, edge punctuation stripped, known aliases mapped (postgres -> '
'postgresql). '''' when nothing is left.';

-- entity_gazetteer maps names to entity types.
create or replace function memory_internal._check_entity_gazetteer(value jsonb) returns void
language plpgsql
stable
as $$
begin
    if exists (
        select from jsonb_each(value) as g
        where jsonb_typeof(g.value) <> 'string' or not (g.value #>> '{}') = any(memory_internal._entity_types())
            or memory.normalize_entity(g.key) = ''
    ) then
        raise exception 'agent_memory: setting "entity_gazetteer" maps names to entity types (%), got %',
            array_to_string(memory_internal._entity_types(), ', '), value;
    end if;
end
$$;

comment on function memory_internal._check_entity_gazetteer(jsonb) is
'Internal: an error unless the value maps names to entity types.';

-- The entities of this tenant a name stands for: its normalized form as an entity's key or among its
-- aliases, in one agent's scope or (agent_id null) in every agent's.
create or replace function memory_internal._entity_ids(name text, agent_id text) returns bigint[]
language sql
stable
as $$
    select coalesce(array_agg(e.entity_id order by e.entity_id), '{}')
    from (select memory.normalize_entity(name) as normalized) as n
    inner join memory.entities as e
        on e.tenant_id = (select memory.current_tenant())
        and (e.normalized = n.normalized or e.aliases @> array[n.normalized])
    where _entity_ids.agent_id is null or e.agent_id = _entity_ids.agent_id
$$;

comment on function memory_internal._entity_ids(text, text) is
'Internal: the ids of the entities a name stands for (by normalized name or alias), in one agent''s entities or all.';

-- One entity of an agent's, by name: its id, created (of the given type) if there is none.
create or replace function memory_internal._entity_id(tenant text, name text, agent_id text, type text) returns bigint
language plpgsql
as $$
declare
    v_normalized text := memory.normalize_entity(name);
    v_key bigint;
begin
    if v_normalized is null or v_normalized = '' then
        raise exception 'agent_memory: entity name % has nothing left once normalized', coalesce(quote_literal(name), 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    select e.entity_id into v_key from memory.entities as e
    where e.tenant_id = tenant and e.agent_id = _entity_id.agent_id
        and (e.normalized = v_normalized or e.aliases @> array[v_normalized])
    order by e.normalized = v_normalized desc, e.entity_id
    limit 1;
    if v_key is null then
        insert into memory.entities as e (tenant_id, agent_id, name, normalized, type)
        values (tenant, _entity_id.agent_id, btrim(name), v_normalized, coalesce(_entity_id.type, 'other'))
        on conflict on constraint entities_tenant_id_agent_id_normalized_key do update
        set type = case when e.type = 'other' then excluded.type else e.type end
        returning e.entity_id into v_key;
    end if;
    return v_key;
end
$$;

comment on function memory_internal._entity_id(text, text, text, text) is
'Internal: the id of the entity a name stands for in an agent''s entities, created with the given type if new.';

-- The trigrams of a text (as pg_trgm forms them: words padded with two spaces before and one after),
-- for fuzzy search over entity names and aliases without another extension.
create or replace function memory_internal._trigrams(words text) returns text[]
language sql
immutable strict parallel safe
as $$
    select coalesce(array_agg(distinct substr(w.padded, i, 3)), '{}')
    from (select '  ' || word || ' ' as padded from regexp_split_to_table(words, '\s+') as word where word <> '') as w
    cross join lateral generate_series(1, length(w.padded) - 2) as i
$$;

comment on function memory_internal._trigrams(text) is
'Internal: the set of three-character pieces of each word of a text (for fuzzy entity search).';

-- An entity's trigrams cover its key and its aliases.
create or replace function memory_internal._entity_trigrams() returns trigger
language plpgsql
as $$
begin
    new.trigrams := memory_internal._trigrams(new.normalized || ' ' || array_to_string(new.aliases, ' '));
    return new;
end
$$;

comment on function memory_internal._entity_trigrams() is
'Internal: trigger that keeps an entity''s trigrams (its key and aliases) current.';

drop trigger if exists entities_trigrams on memory.entities;
create trigger entities_trigrams before insert or update of normalized, aliases on memory.entities
for each row execute function memory_internal._entity_trigrams();

-- Co-occurrence edges follow the mentions: a turn's mentions are written and removed together (by
-- enrichment, forget, merge), so the pairs of one statement's rows per turn are the pairs to add or
-- take away. Counted straight from the transition tables (a restore's single COPY may hold millions of
-- rows); rows are touched in key order so that concurrent writers lock them in the same order.
create or replace function memory_internal._mentions_changed() returns trigger
language plpgsql
as $$
begin
    if tg_op in ('DELETE', 'UPDATE') then
        with pairs as (
            select a.tenant_id, a.entity_id as entity_a, b.entity_id as entity_b, count(*) as turns
            from old_mentions as a
            inner join old_mentions as b
                on a.tenant_id = b.tenant_id and a.turn_id = b.turn_id and a.entity_id < b.entity_id
            group by a.tenant_id, a.entity_id, b.entity_id
        ),
        counted as (
            select e.tenant_id, e.entity_a, e.entity_b, p.turns
            from pairs as p
            inner join memory.entity_edges as e
                on e.tenant_id = p.tenant_id and e.entity_a = p.entity_a and e.entity_b = p.entity_b
            order by e.tenant_id, e.entity_a, e.entity_b
            for update of e
        )
        update memory.entity_edges as e set turns = e.turns - c.turns
        from counted as c
        where e.tenant_id = c.tenant_id and e.entity_a = c.entity_a and e.entity_b = c.entity_b;
        delete from memory.entity_edges as e
        where e.turns <= 0 and (e.tenant_id, e.entity_a) in (select o.tenant_id, o.entity_id from old_mentions as o);
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        insert into memory.entity_edges as e (tenant_id, entity_a, entity_b, turns, last_seen)
        select a.tenant_id, a.entity_id, b.entity_id, count(*), coalesce(max(t.created_at), pg_catalog.now())
        from new_mentions as a
        inner join new_mentions as b
            on a.tenant_id = b.tenant_id and a.turn_id = b.turn_id and a.entity_id < b.entity_id
        left join memory.turns as t on t.tenant_id = a.tenant_id and t.turn_id = a.turn_id
        group by a.tenant_id, a.entity_id, b.entity_id
        order by a.tenant_id, a.entity_id, b.entity_id
        on conflict (tenant_id, entity_a, entity_b) do update
        set turns = e.turns + excluded.turns, last_seen = greatest(e.last_seen, excluded.last_seen);
    end if;
    return null;
end
$$;

comment on function memory_internal._mentions_changed() is
'Internal: trigger that keeps the co-occurrence edges (memory.entity_edges) current from the mentions.';

drop trigger if exists entity_mentions_counted_insert on memory.entity_mentions;
create trigger entity_mentions_counted_insert after insert on memory.entity_mentions
referencing new table as new_mentions
for each statement execute function memory_internal._mentions_changed();

drop trigger if exists entity_mentions_counted_update on memory.entity_mentions;
create trigger entity_mentions_counted_update after update on memory.entity_mentions
referencing old table as old_mentions new table as new_mentions
for each statement execute function memory_internal._mentions_changed();

drop trigger if exists entity_mentions_counted_delete on memory.entity_mentions;
create trigger entity_mentions_counted_delete after delete on memory.entity_mentions
referencing old table as old_mentions
for each statement execute function memory_internal._mentions_changed();

-- The entities each turn of a session mentions, found by the deterministic extractor in what is indexed
-- of the turn (its words and tool calls) and its speaker, or (named: the llm extractor's answer for the
-- session) where the names the model gave appear in it, plus those the caller passed with the message
-- (metadata.entities): (turn_id, name as written, key, type, mentions).
create or replace function memory_internal._extract_mentions(turns jsonb, settings jsonb, named text)
returns table (turn_id bigint, name text, normalized text, type text, mentions integer)
language plpython3u
stable
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db import mentions
from agent_memory_db.entities.llm import parse_llm_entities
found = None
if named is not None:
    try:
        found = parse_llm_entities(named)
    except ValueError as exc:
        plpy.error("agent_memory: llm entity extraction failed: %s" % exc)
return mentions.session_mentions(json.loads(turns), json.loads(settings)["entity_gazetteer"], found)
$$;

comment on function memory_internal._extract_mentions(jsonb, jsonb, text) is
'Internal: the entities each turn of a session mentions (extracted by rules or named by the llm, and '
'passed by the caller).';

-- A session's mentions written again where they changed: entities new to the session's agent's scope are
-- created (in key order, so concurrent enrichments take their locks in the same order), every mention is
-- keyed by its entity (found by key or alias), and the session's mention rows are replaced, which moves
-- the co-occurrence edges with them. Set-based: a statement per step, not per mention. named: the llm
-- extractor's answer for the session (null: the rules), asked before any write.
create or replace function memory_internal._write_mentions(
    tenant text, session bigint, turns jsonb, settings jsonb, named text
)
returns void
language plpgsql
as $$
declare
    v_agent_id text := (select s.agent_id from memory.sessions as s where s.tenant_id = tenant and s.session_key = session);
    v_found_turns bigint [];
    v_found_keys text [];
    v_found_names text [];
    v_found_types text [];
    v_found_counts integer [];
    v_turns bigint [];
    v_entities bigint [];
    v_counts integer [];
    v_changed bigint [];
begin
    select coalesce(array_agg(f.turn_id order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.normalized order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.name order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.type order by f.normalized, f.turn_id), '{}'),
           coalesce(array_agg(f.mentions order by f.normalized, f.turn_id), '{}')
    into v_found_turns, v_found_keys, v_found_names, v_found_types, v_found_counts
    from (
        select m.turn_id, m.normalized, min(m.name) as name,
               coalesce(min(m.type) filter (where m.type <> 'other'), 'other') as type, sum(m.mentions)::integer as mentions
        from memory_internal._extract_mentions(turns, settings, named) as m
        group by m.turn_id, m.normalized
    ) as f;

    -- Entities the scope does not know yet, by key or alias.
    insert into memory.entities as e (tenant_id, agent_id, name, normalized, type)
    select tenant, v_agent_id, (array_agg(f.name order by f.turn_id))[1], f.normalized,
           coalesce(min(f.type) filter (where f.type <> 'other'), 'other')
    from unnest(v_found_turns, v_found_keys, v_found_names, v_found_types) as f (turn_id, normalized, name, type)
    where not exists (
        select from memory.entities as x
        where x.tenant_id = tenant and x.agent_id = v_agent_id
            and (x.normalized = f.normalized or x.aliases @> array[f.normalized])
    )
    group by f.normalized
    order by f.normalized
    on conflict on constraint entities_tenant_id_agent_id_normalized_key do nothing;

    select coalesce(array_agg(f.turn_id order by f.turn_id, f.entity_id), '{}'),
           coalesce(array_agg(f.entity_id order by f.turn_id, f.entity_id), '{}'),
           coalesce(array_agg(f.mentions order by f.turn_id, f.entity_id), '{}')
    into v_turns, v_entities, v_counts
    from (
        select f.turn_id, k.entity_id, sum(f.mentions)::integer as mentions
        from unnest(v_found_turns, v_found_keys, v_found_counts) as f (turn_id, normalized, mentions)
        cross join lateral (
            select x.entity_id from memory.entities as x
            where x.tenant_id = tenant and x.agent_id = v_agent_id
                and (x.normalized = f.normalized or x.aliases @> array[f.normalized])
            order by x.normalized = f.normalized desc, x.entity_id
            limit 1
        ) as k
        group by f.turn_id, k.entity_id
    ) as f;

    -- Only the turns whose mentions changed are written again, each with all its mentions (as the edge
    -- trigger counts them): a session that grows rewrites its new turns, not the ones before.
    select array_agg(distinct coalesce(n.t, o.turn_id)) into v_changed
    from unnest(v_turns, v_entities, v_counts) as n (t, e, c)
    full join (
        select m.turn_id, m.entity_id, m.mentions from memory.entity_mentions as m
        where m.tenant_id = tenant and m.session_key = session
    ) as o on n.t = o.turn_id and n.e = o.entity_id
    where n.c is distinct from o.mentions;
    if v_changed is null then
        return;
    end if;
    delete from memory.entity_mentions as m
    where m.tenant_id = tenant and m.session_key = session and m.turn_id = any(v_changed);
    insert into memory.entity_mentions (tenant_id, turn_id, entity_id, session_key, mentions)
    select tenant, u.t, u.e, session, u.n
    from unnest(v_turns, v_entities, v_counts) as u (t, e, n)
    where u.t = any(v_changed);
end
$$;

comment on function memory_internal._write_mentions(text, bigint, jsonb, jsonb, text) is
'Internal: replaces a session''s entity mentions when what its turns mention changed.';

-- sql/idempotent/graph/052-entity-queries.sql
-- Reading the knowledge graph: entities by name (fuzzy, over names and aliases), an entity's neighbours
-- to a depth, the sessions that mention it; and merging two entities an operator finds to be one.

-- The arguments of the graph queries checked: an error naming the problem, else nothing.
create or replace function memory_internal._check_graph_query(type text, depth integer, k integer) returns boolean
language plpgsql
immutable
as $$
begin
    if type is not null and not type = any(memory_internal._entity_types()) then
        raise exception 'agent_memory: entity type must be one of %; got %',
            array_to_string(memory_internal._entity_types(), ', '), type using errcode = 'invalid_parameter_value';
    end if;
    if depth is null or depth < 1 or depth > 5 then
        raise exception 'agent_memory: depth must be between 1 and 5, got %', depth using errcode = 'invalid_parameter_value';
    end if;
    if k is null or k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k using errcode = 'invalid_parameter_value';
    end if;
    return true;
end
$$;

comment on function memory_internal._check_graph_query(text, integer, integer) is
'Internal: true, or an error unless the type is one of the twelve (or null), depth is 1-5 and k at least 1.';

-- The entities a name stands for, or an error naming it when there are none.
create or replace function memory_internal._named_entities(name text, agent_id text) returns bigint[]
language plpgsql
stable
as $$
declare
    v_keys bigint [] := memory_internal._entity_ids(name, agent_id);
begin
    if cardinality(v_keys) = 0 then
        raise exception 'agent_memory: no entity "%"%', name,
            case when agent_id is null then '' else format(' for agent "%s"', agent_id) end
            using errcode = 'no_data_found', hint = 'select * from memory.list_entities(''...'') finds entities by name';
    end if;
    return v_keys;
end
$$;

comment on function memory_internal._named_entities(text, text) is
'Internal: the ids of the entities a name stands for; an error naming it when there are none.';

create or replace function memory.list_entities(
    search text default null, type text default null, agent_id text default null, k integer default 50
) returns table (
    entity_id bigint, agent_id text, name text, type text, aliases text[], mentions bigint, sessions bigint,
    last_mentioned_at timestamptz, similarity double precision
)
language sql
stable
as $$
    with wanted as (select memory_internal._trigrams(memory.normalize_entity(list_entities.search)) as trigrams),
    found as (
        select e.*,
               case when list_entities.search is null then 1.0::double precision
                    else cardinality(array(select unnest(e.trigrams) intersect select unnest(w.trigrams)))::double precision
                         / nullif(cardinality(array(select unnest(e.trigrams) union select unnest(w.trigrams))), 0)
               end as similarity
        from memory.entities as e
        cross join wanted as w
        where e.tenant_id = (select memory.current_tenant())
            and (list_entities.search is null or e.trigrams && w.trigrams)
            and (list_entities.type is null or e.type = list_entities.type)
            and (list_entities.agent_id is null or e.agent_id = list_entities.agent_id)
    )
    select f.entity_id, f.agent_id, f.name, f.type, f.aliases, coalesce(m.mentions, 0)::bigint,
           coalesce(m.sessions, 0)::bigint, m.last_mentioned_at, round(f.similarity::numeric, 3)::double precision
    from found as f
    left join lateral (
        select sum(x.mentions) as mentions, count(distinct x.session_key) as sessions,
               max(t.created_at) as last_mentioned_at
        from memory.entity_mentions as x
        inner join memory.turns as t on t.tenant_id = x.tenant_id and t.turn_id = x.turn_id
        where x.tenant_id = f.tenant_id and x.entity_id = f.entity_id
    ) as m on true
    where f.similarity >= 0.3
    order by f.similarity desc, coalesce(m.mentions, 0) desc, f.entity_id
    -- The arguments are checked where they are always read, whatever the table holds.
    limit case when memory_internal._check_graph_query(list_entities.type, 1, list_entities.k) then list_entities.k end
$$;

comment on function memory.list_entities(text, text, text, integer) is
'Entities of this tenant: those whose name or an alias is like search (trigram similarity of the '
'normalized names, at least 0.3; all when search is null), of one type, in one agent''s scope; with how '
'often and in how many sessions they are mentioned, and when last. Best match first.';

-- Breadth-first from the start entities, one level at a time, each entity reached once (at its shortest
-- distance, through the neighbour that shares the most turns with it): cost grows with the entities
-- reached, not with the paths between them, and cycles end.
create or replace function memory_internal._entity_walk(tenant text, starts bigint[], depth integer)
returns table (entity_id bigint, distance integer, turns bigint, path bigint[])
language plpgsql
stable
as $$
declare
    v_seen bigint [] := starts;
    v_frontier bigint [] := starts;
    v_paths jsonb := (select jsonb_object_agg(s.key::text, jsonb_build_array(s.key)) from unnest(starts) as s (key));
    v_level integer := 0;
    v_next record;
begin
    while v_level < depth and cardinality(v_frontier) > 0 loop
        v_level := v_level + 1;
        v_frontier := '{}';
        for v_next in
            select distinct on (n.other) n.other, n.turns, n.via
            from unnest(v_seen) as w (key)
            cross join lateral (
                select case when e.entity_a = w.key then e.entity_b else e.entity_a end as other, e.turns, w.key as via
                from memory.entity_edges as e
                where e.tenant_id = tenant and (e.entity_a = w.key or e.entity_b = w.key)
            ) as n
            where (v_paths -> w.key::text) is not null and jsonb_array_length(v_paths -> w.key::text) = v_level
                and not n.other = any(v_seen)
            order by n.other, n.turns desc, n.via
        loop
            v_frontier := v_frontier || v_next.other;
            v_paths := v_paths || jsonb_build_object(v_next.other::text, (v_paths -> v_next.via::text) || to_jsonb(v_next.other));
            entity_id := v_next.other;
            distance := v_level;
            turns := v_next.turns;
            path := array(select jsonb_array_elements_text(v_paths -> v_next.other::text)::bigint);
            return next;
        end loop;
        v_seen := v_seen || v_frontier;
    end loop;
end
$$;

comment on function memory_internal._entity_walk(text, bigint[], integer) is
'Internal: the entities within depth edges of the start ones, each once at its shortest distance, with a path.';

create or replace function memory.entity_neighbors(
    entity text, depth integer default 1, k integer default 20, agent_id text default null
) returns table (entity_id bigint, agent_id text, name text, type text, distance integer, turns bigint, path text[])
language sql
stable
as $$
    select e.entity_id, e.agent_id, e.name, e.type, w.distance, w.turns,
           array(select x.name from unnest(w.path) with ordinality as p (key, i)
                 inner join memory.entities as x on x.tenant_id = e.tenant_id and x.entity_id = p.key order by p.i)
    from memory_internal._entity_walk(
        (select memory.current_tenant()),
        memory_internal._named_entities(entity_neighbors.entity, entity_neighbors.agent_id),
        least(entity_neighbors.depth, 5)
    ) as w
    inner join memory.entities as e on e.tenant_id = (select memory.current_tenant()) and e.entity_id = w.entity_id
    order by w.distance, w.turns desc, e.entity_id
    -- The arguments are checked where they are always read (a limit of 0 would run nothing).
    limit case when memory_internal._check_graph_query(null, entity_neighbors.depth, entity_neighbors.k)
              then entity_neighbors.k end
$$;

comment on function memory.entity_neighbors(text, integer, integer, text) is
'The entities within depth (1-5) co-occurrence edges of an entity (by name or alias; one agent''s entities '
'or every agent''s), nearest first, then by how many turns mention both; each with the path that reaches it. '
'Cycles end: a path never visits an entity twice.';

create or replace function memory.entity_sessions(entity text, agent_id text default null, k integer default 20)
returns table (session_id text, agent_id text, mentions bigint, first_at timestamptz, last_at timestamptz, summary text)
language sql
stable
as $$
    select s.session_id, s.agent_id, sum(m.mentions)::bigint, min(t.created_at), max(t.created_at), sm.summary
    from memory.entity_mentions as m
    inner join memory.turns as t on t.tenant_id = m.tenant_id and t.turn_id = m.turn_id
    inner join memory.sessions as s on s.tenant_id = m.tenant_id and s.session_key = m.session_key
    left join memory.summaries as sm on sm.tenant_id = m.tenant_id and sm.session_key = m.session_key
    where m.tenant_id = (select memory.current_tenant())
        and m.entity_id = any(memory_internal._entity_ids(entity_sessions.entity, entity_sessions.agent_id))
    group by s.session_key, s.session_id, s.agent_id, sm.summary
    order by max(t.created_at) desc, s.session_key
    limit greatest(entity_sessions.k, 1)
$$;

comment on function memory.entity_sessions(text, text, integer) is
'The sessions that mention an entity (by name or alias), most recent first, with how often, when, and '
'their summaries.';

-- Two entities of one scope that are one: the second's name and aliases become the first's aliases, its
-- mentions and states move to the first, and it is removed. Edges follow the mentions.
create or replace function memory.merge_entities(keep text, merge text, agent_id text default 'default')
returns table (entity_id bigint, name text, aliases text[], mentions_moved bigint, states_moved bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_keep bigint;
    v_merge bigint;
    v_mentions bigint;
    v_states bigint;
begin
    if merge_entities.agent_id is null then
        raise exception 'agent_memory: merge_entities needs the agent_id whose entities are one'
            using errcode = 'invalid_parameter_value';
    end if;
    v_keep := (memory_internal._named_entities(merge_entities.keep, merge_entities.agent_id))[1];
    v_merge := (memory_internal._named_entities(merge_entities.merge, merge_entities.agent_id))[1];
    if v_keep = v_merge then
        raise exception 'agent_memory: "%" and "%" are already one entity', merge_entities.keep, merge_entities.merge
            using errcode = 'invalid_parameter_value';
    end if;
    perform from memory.entities as e where e.tenant_id = v_tenant and e.entity_id in (v_keep, v_merge)
    order by e.entity_id for update;

    -- Mentions: the merged entity's become the kept one's (added up where a turn mentions both).
    with moved as (
        delete from memory.entity_mentions as m where m.tenant_id = v_tenant and m.entity_id = v_merge
        returning m.turn_id, m.session_key, m.mentions
    ),
    added as (
        insert into memory.entity_mentions as m (tenant_id, turn_id, entity_id, session_key, mentions)
        select v_tenant, mv.turn_id, v_keep, mv.session_key, mv.mentions from moved as mv
        on conflict (tenant_id, turn_id, entity_id) do update set mentions = m.mentions + excluded.mentions
        returning 1
    )
    select count(*) into v_mentions from added;
    -- The kept entity's edges, counted again from its mentions now (the merged one's go with it).
    delete from memory.entity_edges as e
    where e.tenant_id = v_tenant and (e.entity_a in (v_keep, v_merge) or e.entity_b in (v_keep, v_merge));
    insert into memory.entity_edges (tenant_id, entity_a, entity_b, turns, last_seen)
    select v_tenant, least(v_keep, o.entity_id), greatest(v_keep, o.entity_id), count(*), max(t.created_at)
    from memory.entity_mentions as k
    inner join memory.entity_mentions as o
        on o.tenant_id = k.tenant_id and o.turn_id = k.turn_id and o.entity_id not in (v_keep, v_merge)
    inner join memory.turns as t on t.tenant_id = k.tenant_id and t.turn_id = k.turn_id
    where k.tenant_id = v_tenant and k.entity_id = v_keep
    group by o.entity_id
    order by o.entity_id;

    update memory.entity_states as s set entity_id = v_keep
    where s.tenant_id = v_tenant and s.entity_id = v_merge
        and not exists (
            select from memory.entity_states as k
            where k.tenant_id = v_tenant and k.entity_id = v_keep and k.attribute = s.attribute
        );
    get diagnostics v_states = row_count;

    update memory.entities as e
    set aliases = array(
        select distinct a from unnest(e.aliases || m.aliases || m.normalized) as a where a <> e.normalized order by a
    )
    from memory.entities as m
    where e.tenant_id = v_tenant and e.entity_id = v_keep and m.tenant_id = v_tenant and m.entity_id = v_merge;
    delete from memory.entities as e where e.tenant_id = v_tenant and e.entity_id = v_merge;

    return query
    select e.entity_id, e.name, e.aliases, v_mentions, v_states
    from memory.entities as e where e.tenant_id = v_tenant and e.entity_id = v_keep;
end
$$;

comment on function memory.merge_entities(text, text, text) is
'Merges two entities of an agent''s scope that are one: merge''s name and aliases become keep''s aliases, '
'its mentions (and the co-occurrence edges they make) and its attribute histories (where keep has none '
'for that attribute) move to keep, and it is removed. Later mentions of either name find keep.';

-- sql/idempotent/graph/054-entity-state.sql
-- Entity state over time: an attribute's value holds from valid_from until the next value's valid_from.
-- A write places its value in the history by valid_from, so a backdated write closes the value before it
-- and is itself closed by the value after it; at most one value per attribute is current (valid_to null).

-- Writes one value into the history; the row written.
create or replace function memory_internal._set_entity_state(
    entity text, attribute text, value jsonb, valid_from timestamptz, agent_id text, type text
) returns setof memory.entity_states
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_entity bigint;
    v_next timestamptz;
    v_state bigint;
begin
    if _set_entity_state.attribute is null or btrim(_set_entity_state.attribute) = '' then
        raise exception 'agent_memory: set_entity_state needs an attribute' using errcode = 'invalid_parameter_value';
    end if;
    if _set_entity_state.agent_id is null then
        raise exception 'agent_memory: set_entity_state needs an agent_id (the scope of the entity)'
            using errcode = 'invalid_parameter_value';
    end if;
    if _set_entity_state.value is null or _set_entity_state.valid_from is null then
        raise exception 'agent_memory: set_entity_state needs a value and valid_from (use jsonb ''null'' for none)'
            using errcode = 'invalid_parameter_value';
    end if;
    perform memory_internal._check_graph_query(_set_entity_state.type, 1, 1);
    v_entity := memory_internal._entity_id(v_tenant, _set_entity_state.entity, _set_entity_state.agent_id,
                                            _set_entity_state.type);
    -- Writers of one entity's state take turns.
    perform from memory.entities as e where e.tenant_id = v_tenant and e.entity_id = v_entity for update;

    -- A value at the same instant is a correction of it.
    update memory.entity_states as s set value = _set_entity_state.value, recorded_at = pg_catalog.now(),
        recorded_by = session_user
    where s.tenant_id = v_tenant and s.entity_id = v_entity and s.attribute = _set_entity_state.attribute
        and s.valid_from = _set_entity_state.valid_from
    returning s.state_id into v_state;
    if v_state is null then
        select min(s.valid_from) into v_next from memory.entity_states as s
        where s.tenant_id = v_tenant and s.entity_id = v_entity and s.attribute = _set_entity_state.attribute
            and s.valid_from > _set_entity_state.valid_from;
        update memory.entity_states as s set valid_to = _set_entity_state.valid_from
        where s.tenant_id = v_tenant and s.entity_id = v_entity and s.attribute = _set_entity_state.attribute
            and s.valid_from < _set_entity_state.valid_from
            and (s.valid_to is null or s.valid_to > _set_entity_state.valid_from);
        insert into memory.entity_states (tenant_id, entity_id, attribute, value, valid_from, valid_to)
        values (v_tenant, v_entity, _set_entity_state.attribute, _set_entity_state.value, _set_entity_state.valid_from,
                v_next)
        returning state_id into v_state;
    end if;
    return query select s.* from memory.entity_states as s where s.tenant_id = v_tenant and s.state_id = v_state;
end
$$;

comment on function memory_internal._set_entity_state(text, text, jsonb, timestamptz, text, text) is
'Internal: writes one value of an entity''s attribute into its history; the row written.';

create or replace function memory.set_entity_state(
    entity text, attribute text, value jsonb, valid_from timestamptz default pg_catalog.now(),
    agent_id text default 'default', type text default 'other'
) returns table (
    state_id bigint, entity_id bigint, attribute text, value jsonb, valid_from timestamptz, valid_to timestamptz
)
language sql
as $$
    select s.state_id, s.entity_id, s.attribute, s.value, s.valid_from, s.valid_to
    from memory_internal._set_entity_state(entity, attribute, value, valid_from, agent_id, type) as s
$$;

comment on function memory.set_entity_state(text, text, jsonb, timestamptz, text, text) is
'Records that an entity''s attribute has a value from valid_from (default now) on, in the agent''s scope '
'(the entity is created, of the given type, if new). The value before it ends there; a backdated write '
'ends where the next value begins; a write at the same valid_from corrects that value. At most one value '
'per attribute is current (valid_to null). Returns the value as written, with the period it holds.';

create or replace function memory.entity_state(
    entity text, as_of timestamptz default null, attribute text default null, agent_id text default null
) returns table (
    entity_id bigint, agent_id text, attribute text, value jsonb, valid_from timestamptz, valid_to timestamptz,
    recorded_at timestamptz
)
language sql
stable
as $$
    select s.entity_id, e.agent_id, s.attribute, s.value, s.valid_from, s.valid_to, s.recorded_at
    from memory.entity_states as s
    inner join memory.entities as e on e.tenant_id = s.tenant_id and e.entity_id = s.entity_id
    where s.tenant_id = (select memory.current_tenant())
        and s.entity_id = any(memory_internal._entity_ids(entity_state.entity, entity_state.agent_id))
        and (entity_state.attribute is null or s.attribute = entity_state.attribute)
        and s.valid_from <= coalesce(entity_state.as_of, pg_catalog.now())
        and (s.valid_to is null or s.valid_to > coalesce(entity_state.as_of, pg_catalog.now()))
    order by s.attribute, e.agent_id
$$;

comment on function memory.entity_state(text, timestamptz, text, text) is
'An entity''s attribute values that hold now (a value set for later is not yet current), or those that held '
'at as_of; one attribute or all; one '
'agent''s scope or (agent_id null) every agent''s.';

create or replace function memory.entity_history(entity text, attribute text, agent_id text default null)
returns table (
    entity_id bigint, agent_id text, value jsonb, valid_from timestamptz, valid_to timestamptz,
    recorded_at timestamptz, recorded_by text
)
language sql
stable
as $$
    select s.entity_id, e.agent_id, s.value, s.valid_from, s.valid_to, s.recorded_at, s.recorded_by
    from memory.entity_states as s
    inner join memory.entities as e on e.tenant_id = s.tenant_id and e.entity_id = s.entity_id
    where s.tenant_id = (select memory.current_tenant())
        and s.entity_id = any(memory_internal._entity_ids(entity_history.entity, entity_history.agent_id))
        and s.attribute = entity_history.attribute
    order by e.agent_id, s.valid_from
$$;

comment on function memory.entity_history(text, text, text) is
'Every value an entity''s attribute has had, oldest first, with the period it held and who recorded it.';

-- sql/idempotent/curated/056-memories.sql
-- Curated memories read and moved through their statuses: by key, by filters, at a point in time,
-- resolved and retracted, and the views an operator asks first (rules and preferences, open tasks,
-- decisions).

-- The kinds of memory.
create or replace function memory_internal._memory_kinds() returns text[]
language sql
immutable parallel safe
as $$ select array['fact', 'preference', 'rule', 'decision', 'skill', 'event', 'observation', 'task'] $$;

comment on function memory_internal._memory_kinds() is 'Internal: the kinds a memory can have.';

-- A memory's evidence turns, in order.
create or replace function memory_internal._memory_evidence(tenant text, memory_id bigint) returns bigint[]
language sql
stable
as $$
    select coalesce(array_agg(e.turn_id order by e.turn_id), '{}')
    from memory.memory_evidence as e
    where e.tenant_id = tenant and e.memory_id = _memory_evidence.memory_id
$$;

comment on function memory_internal._memory_evidence(text, bigint) is
'Internal: the turns a memory came from (memory.memory_evidence), in order.';

-- A memory as the functions return it: its words, kind, key and period, the version it supersedes and the
-- one that superseded it, the turn that carries its words and the turns it came from.
create or replace view memory.memory_items as
select
    m.memory_id,
    m.agent_id,
    m.kind,
    m.content,
    m.key,
    m.subjects,
    m.tags,
    m.importance,
    m.confidence,
    m.status,
    m.valid_from,
    m.valid_to,
    m.recorded_at,
    m.recorded_by,
    m.supersedes,
    (
        select n.memory_id from memory.memories as n
        where n.tenant_id = m.tenant_id and n.supersedes = m.memory_id and n.status <> 'retracted'
        order by n.valid_from, n.memory_id limit 1
    ) as superseded_by,
    m.turn_id,
    (
        select coalesce(array_agg(e.turn_id order by e.turn_id), '{}') from memory.memory_evidence as e
        where e.tenant_id = m.tenant_id and e.memory_id = m.memory_id
    ) as evidence_turn_ids,
    m.origin
from memory.memories as m
where m.tenant_id = (select memory.current_tenant());

comment on view memory.memory_items is
'This tenant''s memories, one row per version: kind, words, key, subjects, tags, importance, confidence, '
'status, the period it holds (valid_to null: still), when and by whom it was recorded, the version it '
'supersedes and the one that superseded it, the turn that carries its words, its evidence turns and its '
'origin (remember: a caller; patterns or llm: proposed by enrichment''s extractor).';

-- Whether a memory held at an instant (null: holds now): its period covers it and it was not retracted.
create or replace function memory.memory_holds(
    status text, valid_from timestamptz, valid_to timestamptz, as_of timestamptz
) returns boolean
language sql
stable
as $$
    select case
        when as_of is null then status in ('active', 'ongoing') and valid_to is null and valid_from <= pg_catalog.now()
        else status not in ('retracted', 'pending') and valid_from <= as_of and (valid_to is null or valid_to > as_of)
    end
$$;

comment on function memory.memory_holds(text, timestamptz, timestamptz, timestamptz) is
'Whether a memory of this status and period holds now (as_of null: current and active or ongoing) or held at '
'as_of (its period covers it and it was neither retracted nor left pending).';

-- The memory whose words a turn carries, as recall shows it: by default any but superseded, retracted and
-- pending ones (a resolved memory is shown, and signal status ranks it lower); at as_of, the one that held
-- then; with include_ended, any but pending. The one that holds now first when several share the words.
-- No row: the turn carries no memory recall shows. With its tier and when it was last recorded or used.
-- Recall's scoring statement inlines it (it has no SET clause, see tail.sql): one index probe per candidate.
create or replace function memory_internal._turn_memory(
    tenant text, turn bigint, as_of timestamptz, include_ended boolean
) returns table (
    memory_id bigint, kind text, importance double precision, status text, evidence_turns bigint[], tier text,
    last_used timestamptz
)
language sql
stable
rows 1
as $$
    -- At as_of, a memory that held then is shown as it was then: active (what ended it came later).
    select m.memory_id, m.kind, m.importance,
           case when as_of is not null and m.status in ('superseded', 'resolved') then 'active' else m.status end,
           memory_internal._memory_evidence(m.tenant_id, m.memory_id), m.tier, greatest(m.recorded_at, m.used_at)
    from memory.memories as m
    where m.tenant_id = tenant and m.turn_id = turn and m.status <> 'pending'
        and case
            when as_of is not null then memory.memory_holds(m.status, m.valid_from, m.valid_to, as_of)
            when include_ended then true
            else m.status not in ('superseded', 'retracted')
        end
    order by m.status in ('active', 'ongoing') desc, m.valid_from desc, m.memory_id desc
    limit 1
$$;

comment on function memory_internal._turn_memory(text, bigint, timestamptz, boolean) is
'Internal: the memory a turn carries as recall shows it (none if superseded, retracted or pending, or not '
'holding at as_of; include_ended shows ended ones), with its tier and when it was last recorded or used.';

create or replace function memory.get(key text, agent_id text default null, as_of timestamptz default null)
returns setof memory.memory_items
language sql
stable
as $$
    select i.* from memory.memory_items as i
    where i.key = get.key and (get.agent_id is null or i.agent_id = get.agent_id)
        and memory.memory_holds(i.status, i.valid_from, i.valid_to, get.as_of)
    order by i.agent_id
$$;

comment on function memory.get(text, text, timestamptz) is
'The memory held under a key: the current version, or (as_of) the one that held then; one agent''s or '
'(agent_id null) each agent''s. No row: nothing holds under that key.';

create or replace function memory.list_memories(
    kind text default null, agent_id text default null, subject text default null, tag text default null,
    search text default null, status text default null, as_of timestamptz default null, k integer default 100
) returns setof memory.memory_items
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    if list_memories.kind is not null and not list_memories.kind = any (memory_internal._memory_kinds()) then
        raise exception 'agent_memory: memory kind must be one of %, got %',
            array_to_string(memory_internal._memory_kinds(), ', '), list_memories.kind using errcode = 'invalid_parameter_value';
    end if;
    if list_memories.status is not null
        and list_memories.status not in ('active', 'ongoing', 'resolved', 'superseded', 'retracted', 'pending') then
        raise exception
            'agent_memory: memory status must be active, ongoing, resolved, superseded, retracted or pending, got %',
            list_memories.status using errcode = 'invalid_parameter_value';
    end if;
    if list_memories.status is not null and list_memories.as_of is not null then
        raise exception 'agent_memory: give status or as_of, not both'
            using errcode = 'invalid_parameter_value', hint = 'as_of lists what held then, whatever its status now';
    end if;
    if list_memories.k is null or list_memories.k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', coalesce(list_memories.k::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    return query
    select i.* from memory.memory_items as i
    where (list_memories.kind is null or i.kind = list_memories.kind)
        and (list_memories.agent_id is null or i.agent_id = list_memories.agent_id)
        and (list_memories.subject is null or i.subjects @> array[memory.normalize_entity(list_memories.subject)])
        and (list_memories.tag is null or i.tags @> array[list_memories.tag])
        and (list_memories.search is null or strpos(lower(i.content), lower(list_memories.search)) > 0)
        and case when list_memories.status is null then memory.memory_holds(i.status, i.valid_from, i.valid_to,
                                                                                 list_memories.as_of)
                 else i.status = list_memories.status end
    order by i.importance desc, i.valid_from desc, i.memory_id desc
    limit list_memories.k;
end
$$;

comment on function memory.list_memories(text, text, text, text, text, text, timestamptz, integer) is
'This tenant''s memories, most important then newest first, at most k (default 100): those that hold now '
'(active or ongoing, not superseded), or those that held at as_of, or those of one status. Filters: kind, '
'agent_id, subject (normalized as entity names), tag, search (words in the content, any case).';

-- Moves a current memory to a final status; the row after the move.
create or replace function memory_internal._end_memory(memory_id bigint, status text, verb text)
returns setof memory.memory_items
language plpgsql
as $$
declare
    v_now text;
begin
    update memory.memories as m
    set status = _end_memory.status, valid_to = coalesce(m.valid_to, greatest(pg_catalog.now(), m.valid_from))
    where m.tenant_id = memory.current_tenant() and m.memory_id = _end_memory.memory_id
        and (m.status in ('active', 'ongoing') or _end_memory.status = 'retracted' and m.status <> 'retracted');
    if not found then
        select m.status into v_now from memory.memories as m
        where m.tenant_id = memory.current_tenant() and m.memory_id = _end_memory.memory_id;
        if v_now is null then
            raise exception 'agent_memory: no memory % in tenant "%"', _end_memory.memory_id, memory.current_tenant()
                using errcode = 'no_data_found';
        end if;
        raise exception 'agent_memory: memory % is % and cannot be %', _end_memory.memory_id, v_now, _end_memory.verb
            using errcode = 'invalid_parameter_value';
    end if;
    return query select i.* from memory.memory_items as i where i.memory_id = _end_memory.memory_id;
end
$$;

comment on function memory_internal._end_memory(bigint, text, text) is
'Internal: ends a memory with status resolved or retracted (its period ends now); an error names why not.';

create or replace function memory.resolve(memory_id bigint) returns setof memory.memory_items
language sql
as $$ select * from memory_internal._end_memory(resolve.memory_id, 'resolved', 'resolved') $$;

comment on function memory.resolve(bigint) is
'Marks a current memory (a task done, a question settled) resolved: it stops holding now and is kept in '
'the history. Returns it.';

create or replace function memory.retract(memory_id bigint) returns setof memory.memory_items
language sql
as $$ select * from memory_internal._end_memory(retract.memory_id, 'retracted', 'retracted') $$;

comment on function memory.retract(bigint) is
'Marks a memory retracted (it was never true): recall and as_of leave it out; the row is kept. The version '
'it superseded stays superseded. Returns it.';

-- A proposal (status pending) approved: it holds from now on, as if remembered now.
create or replace function memory.approve(memory_id bigint) returns setof memory.memory_items
language plpgsql
as $$
declare
    v_status text;
    v_held bigint;
begin
    select m.status into v_status from memory.memories as m
    where m.tenant_id = memory.current_tenant() and m.memory_id = approve.memory_id
    for update;
    if v_status is null then
        raise exception 'agent_memory: no memory % in tenant "%"', approve.memory_id, memory.current_tenant()
            using errcode = 'no_data_found';
    elsif v_status <> 'pending' then
        raise exception 'agent_memory: memory % is % and cannot be approved (only pending ones are)',
            approve.memory_id, v_status using errcode = 'invalid_parameter_value';
    end if;
    select h.memory_id into v_held from memory.memories as p
    inner join memory.memories as h
        on h.tenant_id = p.tenant_id and h.agent_id = p.agent_id and h.canonical = p.canonical and h.key is null
        and h.valid_to is null and h.status in ('active', 'ongoing')
    where p.tenant_id = memory.current_tenant() and p.memory_id = approve.memory_id;
    if v_held is not null then
        raise exception 'agent_memory: memory % states what memory % already holds', approve.memory_id, v_held
            using errcode = 'unique_violation', hint = 'retract the proposal instead';
    end if;
    update memory.memories as m set status = 'active', valid_from = greatest(m.valid_from, pg_catalog.now())
    where m.tenant_id = memory.current_tenant() and m.memory_id = approve.memory_id;
    return query select i.* from memory.memory_items as i where i.memory_id = approve.memory_id;
end
$$;

comment on function memory.approve(bigint) is
'Approves a proposed memory (status pending, as enrichment stores them when extracted_memory_status is '
'pending): it is active from now on and recalled. Reject a proposal with memory.retract. Returns it.';

create or replace view memory.rules_and_preferences as
select i.* from memory.memory_items as i
where i.kind in ('rule', 'preference') and memory.memory_holds(i.status, i.valid_from, i.valid_to, null)
order by i.kind asc, i.importance desc, i.valid_from desc;

comment on view memory.rules_and_preferences is
'The rules and preferences that hold now, rules first, most important first.';

create or replace view memory.open_tasks as
select i.* from memory.memory_items as i
where i.kind = 'task' and memory.memory_holds(i.status, i.valid_from, i.valid_to, null)
order by i.importance desc, i.valid_from asc;

comment on view memory.open_tasks is 'Tasks neither resolved nor retracted, most important then oldest first.';

create or replace view memory.recent_decisions as
select i.* from memory.memory_items as i
where i.kind = 'decision' and memory.memory_holds(i.status, i.valid_from, i.valid_to, null)
order by i.valid_from desc;

comment on view memory.recent_decisions is 'The decisions in force, newest first.';

-- sql/idempotent/curated/058-memory-dedup.sql
-- Semantic dedup of remembered claims (setting memory_dedup: merge, shadow or off). A claim that is not
-- the same claim by its canonical form may still be a paraphrase of a memory the agent holds: its vector
-- is within memory_dedup_threshold of that memory's words, and it states the same values
-- (agent_memory_db.paraphrase: numbers, names, polarity), which tells a paraphrase from a changed value.

-- Whether two claims state the same numbers, names and polarity.
create or replace function memory_internal._same_values(first text, second text) returns boolean
language plpython3u
immutable parallel safe
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
from agent_memory_db.paraphrase import same_values
return same_values(first, second)
$$;

comment on function memory_internal._same_values(text, text) is
'Internal: whether two claims state the same numbers, names and polarity (a paraphrase, not a changed value).';

-- The memory an agent holds now (of the claim's kind; under its key when it has one) that the claim
-- paraphrases: the closest by cosine of the claim's vector to the memory's words, at or above the
-- threshold, stating the same values. None without an embedder that embeds in the database, or when
-- embedding fails (a notice says so). Memories whose words are not embedded yet are not compared.
create or replace function memory_internal._paraphrased_memory(
    tenant text, agent text, kind text, key text, content text, settings jsonb
) returns table (memory_id bigint, similarity double precision)
language plpgsql
volatile
as $$
declare
    v_model record;
    v_vector vector;
begin
    select * into v_model from memory_internal._embedding_model(settings);
    if v_model is null or v_model.provider = 'client' then
        return;
    end if;
    begin
        v_vector := (memory_internal._embed_texts(array[_paraphrased_memory.content], settings))[1];
    exception when others then
        raise notice 'agent_memory: semantic dedup skipped: embedding the claim failed (%)', sqlerrm;
        return;
    end;
    return query
    select c.memory_id, c.similarity
    from (
        select m.memory_id, m.content, 1 - (e.embedding <=> v_vector) as similarity
        from memory.memories as m
        inner join memory.chunk_embeddings as e
            on m.tenant_id = e.tenant_id and m.turn_id = e.turn_id and e.chunk_no = 0 and e.model = v_model.model
        where m.tenant_id = tenant and m.agent_id = agent and m.kind = _paraphrased_memory.kind
            and m.valid_to is null and m.status in ('active', 'ongoing')
            and (_paraphrased_memory.key is null or m.key = _paraphrased_memory.key)
        order by e.embedding <=> v_vector, m.memory_id
        limit 5
    ) as c
    where c.similarity >= (settings ->> 'memory_dedup_threshold')::double precision
        and memory_internal._same_values(c.content, _paraphrased_memory.content)
    order by c.similarity desc, c.memory_id
    limit 1;
end
$$;

comment on function memory_internal._paraphrased_memory(text, text, text, text, text, jsonb) is
'Internal: the memory an agent holds that a claim paraphrases (cosine at or above memory_dedup_threshold, '
'same values), with the similarity; none without an in-database embedder.';

-- sql/idempotent/lifecycle/060-tiers.sql
-- Tiers: every session and curated memory is hot, warm or cold. Its importance (a memory's own, a
-- session's the setting session_importance) decays with the days since it was last used (written,
-- returned by recall, judged helpful): at the hot half-life while it is at least tier_warm_below, then at
-- the warm one while at least tier_cold_below, then at the cold one. Maintenance moves items down a tier
-- once their decayed importance falls below tier_warm_below or tier_cold_below, and when an agent has
-- more than tier_hot_capacity hot or tier_warm_capacity warm items (the least important go first, the
-- least recently used first among equals). Recall and helpful feedback move items back to hot. Recall
-- leaves cold items out unless its tiers say otherwise; tier and decayed importance are recall signals.

comment on column memory.sessions.tier is
'hot, warm or cold: maintenance moves the session down as it goes unused, recall and helpful feedback bring '
'it back to hot; recall leaves cold sessions out by default (setting recall_tiers).';
comment on column memory.sessions.tier_since is 'When the session entered its tier.';
comment on column memory.sessions.used_at is
'When recall last returned one of its turns or feedback judged it helpful (to the hour; null: never).';
comment on column memory.memories.tier is
'hot, warm or cold: maintenance moves the memory down as it goes unused, recall and helpful feedback bring it '
'back to hot; recall leaves cold memories out by default (setting recall_tiers).';
comment on column memory.memories.tier_since is 'When the memory entered its tier.';
comment on column memory.memories.used_at is
'When recall last returned the memory or feedback judged it helpful (to the hour; null: never).';

-- Importance halved every tier_hot_half_life_days without use down to tier_warm_below, then every
-- tier_warm_half_life_days down to tier_cold_below, then every tier_cold_half_life_days: one curve, so the
-- tier it puts an item in depends on how long it has gone unused, not on how often maintenance ran. The
-- exponent is capped where the value is 0 in all but name (0.5 ^ 1000): a float underflow is an error.
create or replace function memory.decayed_importance(
    importance double precision, last_used timestamptz, at timestamptz, settings jsonb
) returns double precision
language plpgsql
immutable parallel safe
as $$
declare
    v_days double precision := greatest(0, extract(epoch from at - last_used) / 86400.0);
    v_hot_half_life double precision := (settings ->> 'tier_hot_half_life_days')::double precision;
    v_warm_half_life double precision := (settings ->> 'tier_warm_half_life_days')::double precision;
    v_cold_half_life double precision := (settings ->> 'tier_cold_half_life_days')::double precision;
    v_warm_below double precision := (settings ->> 'tier_warm_below')::double precision;
    v_cold_below double precision := (settings ->> 'tier_cold_below')::double precision;
    -- How long each stretch lasts, and the value it leaves off at.
    v_hot_left double precision := least(importance, v_warm_below);
    v_warm_left double precision := least(v_hot_left, v_cold_below);
    v_hot_days double precision := case when importance <= v_warm_below then 0
                                        when v_warm_below <= 0 then 'infinity'
                                        else v_hot_half_life * pg_catalog.ln(importance / v_warm_below) / pg_catalog.ln(2) end;
    v_warm_days double precision := case when v_hot_left <= v_cold_below then 0
                                         when v_cold_below <= 0 then 'infinity'
                                         else v_warm_half_life * pg_catalog.ln(v_hot_left / v_cold_below) / pg_catalog.ln(2) end;
begin
    return case
        when v_days <= v_hot_days
            then importance * pg_catalog.power(0.5, least(1000, v_days / v_hot_half_life))
        when v_days <= v_hot_days + v_warm_days
            then v_hot_left * pg_catalog.power(0.5, least(1000, (v_days - v_hot_days) / v_warm_half_life))
        else v_warm_left
             * pg_catalog.power(0.5, least(1000, (v_days - v_hot_days - v_warm_days) / v_cold_half_life))
    end;
end
$$;

comment on function memory.decayed_importance(double precision, timestamptz, timestamptz, jsonb) is
'The importance left after the days from last_used to at without use: halved every tier_hot_half_life_days '
'down to tier_warm_below, then every tier_warm_half_life_days down to tier_cold_below, then every '
'tier_cold_half_life_days.';

-- A session or memory as tiers see it: its tier, importance and when it was last used. The session
-- that holds an agent's memories' words ('remembered') is not an item: each memory is.
create or replace view memory.tier_items as
select
    'session' as item,
    s.agent_id,
    s.session_id,
    null::bigint as memory_id,
    s.tier,
    s.tier_since,
    (memory.setting('session_importance') #>> '{}')::double precision as importance,
    greatest(s.updated_at, s.used_at) as last_used,
    memory.decayed_importance(
        (memory.setting('session_importance') #>> '{}')::double precision, greatest(s.updated_at, s.used_at),
        pg_catalog.now(), (select pg_catalog.jsonb_object_agg(x.key, x.value) from memory.settings as x)
    ) as decayed_importance
from memory.sessions as s
where s.tenant_id = (select memory.current_tenant()) and s.session_id <> 'remembered'
union all
select
    'memory' as item,
    m.agent_id,
    null as session_id,
    m.memory_id,
    m.tier,
    m.tier_since,
    m.importance,
    greatest(m.recorded_at, m.used_at) as last_used,
    memory.decayed_importance(
        m.importance, greatest(m.recorded_at, m.used_at), pg_catalog.now(),
        (select pg_catalog.jsonb_object_agg(x.key, x.value) from memory.settings as x)
    ) as decayed_importance
from memory.memories as m
where m.tenant_id = (select memory.current_tenant());

comment on view memory.tier_items is
'Every session and curated memory of the tenant with its tier, importance, when it was last used and its '
'importance decayed since then (settings in force): what maintenance ranks to move items between tiers.';
comment on column memory.tier_items.item is 'session or memory.';
comment on column memory.tier_items.agent_id is 'The agent it belongs to (tier capacities are per agent).';
comment on column memory.tier_items.session_id is 'The session''s id (a session).';
comment on column memory.tier_items.memory_id is 'The memory''s id (a memory).';
comment on column memory.tier_items.tier is 'hot, warm or cold.';
comment on column memory.tier_items.tier_since is 'When it entered its tier.';
comment on column memory.tier_items.importance is 'A memory''s importance; for a session, session_importance.';
comment on column memory.tier_items.last_used is 'When it was last written, returned by recall or judged helpful.';
comment on column memory.tier_items.decayed_importance is
'importance decayed since last_used (halved every tier_hot_half_life_days down to tier_warm_below, then every '
'tier_warm_half_life_days down to tier_cold_below, then every tier_cold_half_life_days).';

-- The items tiers and retention rank: each session but an agent's session 'remembered' (whose memories
-- are items each), of importance session_importance, and each memory, with its tier, status and last use.
create or replace function memory_internal._lifecycle_items(tenant text, session_importance double precision)
returns table (
    item text, agent_id text, session_key bigint, memory_id bigint, tier text, importance double precision,
    status text, last_used timestamptz
)
language sql
stable
as $$
    select 'session', s.agent_id, s.session_key, null::bigint, s.tier, session_importance, null::text,
           greatest(s.updated_at, s.used_at)
    from memory.sessions as s
    where s.tenant_id = tenant and s.session_id <> 'remembered'
    union all
    select 'memory', m.agent_id, null, m.memory_id, m.tier, m.importance, m.status, greatest(m.recorded_at, m.used_at)
    from memory.memories as m
    where m.tenant_id = tenant
$$;

comment on function memory_internal._lifecycle_items(text, double precision) is
'Internal: a tenant''s sessions (but ''remembered'') and memories with tier, importance, status and last use, '
'as tiers and retention rank them.';

-- The moves maintenance would make in a tenant's tiers at a time, with these settings: down by decay
-- first, then down by each agent's capacity, most decayed (then least recently used) first. Never up:
-- use moves items up. last_used and tier are as read, so that applying a move can check nothing changed.
create or replace function memory_internal._tier_moves(tenant text, at timestamptz, settings jsonb)
returns table (
    item text, agent_id text, session_key bigint, memory_id bigint, tier text, new_tier text,
    decayed_importance double precision, last_used timestamptz, reason text
)
language sql
stable
as $$
    with items as (
        select * from memory_internal._lifecycle_items(tenant, (settings ->> 'session_importance')::double precision)
    ),
    decayed as (
        select i.*, memory.decayed_importance(i.importance, i.last_used, at, settings) as decayed,
               array_position(array['hot', 'warm', 'cold'], i.tier) as level
        from items as i
    ),
    -- By decay: below tier_cold_below is cold, below tier_warm_below warm.
    by_decay as (
        select d.*, greatest(d.level, case
            when d.decayed < (settings ->> 'tier_cold_below')::double precision then 3
            when d.decayed < (settings ->> 'tier_warm_below')::double precision then 2
            else 1
        end) as decay_level
        from decayed as d
    ),
    -- By capacity, each agent's items from the most important (then most recently used) down ...
    ranked as (
        select b.*, row_number() over (
            partition by b.agent_id
            order by b.decayed desc, b.last_used desc, b.item, coalesce(b.session_key, b.memory_id)
        ) as place
        from by_decay as b
    ),
    -- ... the hot ones past tier_hot_capacity go warm ...
    hot_placed as (
        select r.*, case when r.decay_level = 1 and count(*) filter (where r.decay_level = 1) over w
                              > (settings ->> 'tier_hot_capacity')::bigint then 2 else r.decay_level end as hot_level
        from ranked as r
        window w as (partition by r.agent_id order by r.place)
    ),
    -- ... and the warm ones past tier_warm_capacity go cold.
    warm_placed as (
        select h.*, case when h.hot_level = 2 and count(*) filter (where h.hot_level = 2) over w
                              > (settings ->> 'tier_warm_capacity')::bigint then 3 else h.hot_level end as new_level
        from hot_placed as h
        window w as (partition by h.agent_id order by h.place)
    )

    select w.item, w.agent_id, w.session_key, w.memory_id, w.tier, (array['hot', 'warm', 'cold'])[w.new_level],
           w.decayed, w.last_used,
           case
               when w.new_level = w.decay_level and w.decay_level = 3 then 'decayed below tier_cold_below'
               when w.new_level = w.decay_level then 'decayed below tier_warm_below'
               when w.new_level = 2 then 'over tier_hot_capacity'
               else 'over tier_warm_capacity'
           end
    from warm_placed as w
    where w.new_level > w.level
$$;

comment on function memory_internal._tier_moves(text, timestamptz, jsonb) is
'Internal: the tier moves maintenance would make in a tenant at a time with these settings (down by decay, '
'then by each agent''s capacity), with the reason for each.';

create or replace function memory.tier_moves(at timestamptz default pg_catalog.now())
returns table (
    item text, agent_id text, session_id text, memory_id bigint, tier text, new_tier text,
    decayed_importance double precision, last_used timestamptz, reason text
)
language sql
stable
as $$
    select m.item, m.agent_id, s.session_id, m.memory_id, m.tier, m.new_tier, m.decayed_importance, m.last_used,
           m.reason
    from memory_internal._tier_moves(
        memory.current_tenant(), tier_moves.at, memory_internal._configured_settings(memory.current_tenant())
    ) as m
    left join memory.sessions as s on s.tenant_id = memory.current_tenant() and s.session_key = m.session_key
    order by m.agent_id, m.item, m.decayed_importance
$$;

comment on function memory.tier_moves(timestamptz) is
'The sessions and memories of the tenant the next maintenance would move down a tier (at: as if it ran then, '
'to see what time does), with their decayed importance and the reason: decayed below tier_warm_below or '
'tier_cold_below, or over an agent''s tier_hot_capacity or tier_warm_capacity (settings as memory.config '
'stores them).';

-- Applies a tenant's tier moves at a time: an item used or moved since it was read stays where it is, and
-- so does one another transaction holds (it is in use), so that maintenance never waits for a tenant's rows.
-- Returns how many items went to warm and to cold.
create or replace function memory_internal._move_tiers(tenant text, at timestamptz) returns jsonb
language sql
as $$
    with moves as (
        select * from memory_internal._tier_moves(tenant, at, memory_internal._configured_settings(tenant))
    ),
    sessions_moved as (
        update memory.sessions as s set tier = m.new_tier, tier_since = at
        from moves as m
        where m.item = 'session' and s.tenant_id = tenant and s.session_key = m.session_key and s.tier = m.tier
            and greatest(s.updated_at, s.used_at) = m.last_used
            and s.session_key in (
                select x.session_key from memory.sessions as x
                inner join moves as n on n.item = 'session' and x.session_key = n.session_key
                where x.tenant_id = tenant
                for update of x skip locked
            )
        returning s.tier
    ),
    memories_moved as (
        update memory.memories as x set tier = m.new_tier, tier_since = at
        from moves as m
        where m.item = 'memory' and x.tenant_id = tenant and x.memory_id = m.memory_id and x.tier = m.tier
            and greatest(x.recorded_at, x.used_at) = m.last_used
            and x.memory_id in (
                select y.memory_id from memory.memories as y
                inner join moves as n on n.item = 'memory' and y.memory_id = n.memory_id
                where y.tenant_id = tenant
                for update of y skip locked
            )
        returning x.tier
    )

    select jsonb_build_object('to_warm', count(*) filter (where a.tier = 'warm'),
                              'to_cold', count(*) filter (where a.tier = 'cold'))
    from (select * from sessions_moved union all select * from memories_moved) as a
$$;

comment on function memory_internal._move_tiers(text, timestamptz) is
'Internal: makes a tenant''s tier moves (memory_internal._tier_moves) at a time, leaving items used, moved or locked '
'meanwhile; how many went to warm and to cold.';

-- Use brings items back to hot: the sessions given, and the memories whose words are the turns given.
-- At most once an hour per item (decay counts in days), never waiting for a row another transaction holds.
create or replace function memory_internal._mark_used(tenant text, sessions bigint[], turns bigint[]) returns void
language sql
as $$
    update memory.sessions as s
    set tier = 'hot', tier_since = case when s.tier = 'hot' then s.tier_since else pg_catalog.now() end,
        used_at = pg_catalog.now()
    where s.tenant_id = tenant and s.session_key in (
        select x.session_key from memory.sessions as x
        where x.tenant_id = tenant and x.session_key = any(sessions)
            and (x.tier <> 'hot' or x.used_at is null or x.used_at < pg_catalog.now() - interval '1 hour')
        for update skip locked
    );
    update memory.memories as m
    set tier = 'hot', tier_since = case when m.tier = 'hot' then m.tier_since else pg_catalog.now() end,
        used_at = pg_catalog.now()
    where m.tenant_id = tenant and m.memory_id in (
        select x.memory_id from memory.memories as x
        where x.tenant_id = tenant and x.turn_id = any(turns)
            and (x.tier <> 'hot' or x.used_at is null or x.used_at < pg_catalog.now() - interval '1 hour')
        for update skip locked
    );
$$;

comment on function memory_internal._mark_used(text, bigint[], bigint[]) is
'Internal: marks sessions, and the memories carried by turns, used now and moves them to hot (once an hour '
'at most, skipping rows other transactions hold).';

-- sql/idempotent/write/062-enrich.sql
-- Enrichment of one session: index chunks (with full-text vectors), their embeddings, the summary and
-- the session embedding. Work already done for unchanged text is never repeated.

-- The text search configuration a name stands for, or null when it names none (an unknown name, an unknown
-- schema, or not a name at all).
create or replace function memory_internal._regconfig_or_null(name text) returns regconfig
language plpgsql
stable
as $$
begin
    return name::regconfig;
exception when undefined_object or invalid_name or syntax_error or invalid_schema_name
    or invalid_text_representation then
    return null;
end
$$;

comment on function memory_internal._regconfig_or_null(text) is
'Internal: the text search configuration a name stands for, or null if it names none.';

-- text_search_config names a configuration of this database; a name, not a number (regconfig reads digits as
-- an object id, which it does not check).
create or replace function memory_internal._check_text_search_config(value jsonb) returns void
language plpgsql
stable
as $$
begin
    if not exists (
        select from pg_catalog.pg_ts_config as c
        where (value #>> '{}') !~ '^\s*[0-9]+\s*$' and c.oid = memory_internal._regconfig_or_null(value #>> '{}')
    ) then
        raise exception 'agent_memory: setting "text_search_config" must name a text search configuration '
            'of this database (see pg_ts_config), got %', value;
    end if;
end
$$;

comment on function memory_internal._check_text_search_config(jsonb) is
'Internal: an error unless the value names a text search configuration of this database.';

-- The chunks the indexing settings produce for a session's turns: each chunk's own text, and for a
-- turn's first chunk the preceding turns' text as context with the key of the turn just before it.
create or replace function memory_internal._chunk_turns(turns jsonb, settings jsonb)
returns table (turn_id bigint, chunk_no integer, text text, context text, context_turn_id bigint)
language plpython3u
volatile
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db import indexing
chunks = indexing.index_chunks(json.loads(turns), indexing.policy_from_settings(json.loads(settings)))
return [(c.turn_id, c.chunk_no, c.text, c.context, c.context_turn_id) for c in chunks]
$$;

comment on function memory_internal._chunk_turns(jsonb, jsonb) is
'Internal: the chunks to index for a session''s turns (noise filtered, long turns split, context beside).';

create or replace function memory_internal._summarize_turns(turns jsonb, settings jsonb)
returns table (method text, summary text, decisions jsonb, open_loops jsonb)
language plpython3u
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db import summarize
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
if config["summarizer"] == "llm":
    answer = plpy.execute(plpy.prepare("select memory_internal._llm_chat('summary', $1, $2) as a", ["jsonb", "jsonb"]),
                          [turns, settings])[0]["a"]
    try:
        result = summarize.parse_llm_summary(answer)
    except ValueError as exc:
        plpy.error("agent_memory: llm summary failed: %s" % exc)
else:
    result = summarize.extractive(json.loads(turns), int(config["summary_sentences"]))
return [(result.method, result.text, json.dumps(result.decisions), json.dumps(result.open_loops))]
$$;

comment on function memory_internal._summarize_turns(jsonb, jsonb) is
'Internal: a session summary with decisions and open loops, extractive or from the llm endpoint.';

-- What a session's summary is made from: a hash of its turns' contents in order. A summary made from the
-- same turns is not made again.
create or replace function memory_internal._session_source_sha256(tenant text, session bigint) returns bytea
language sql
stable
as $$
    select sha256(convert_to(coalesce(string_agg(encode(t.content_sha256, 'hex'), ',' order by t.position), ''), 'UTF8'))
    from memory.turns as t where t.tenant_id = tenant and t.session_key = session
$$;

comment on function memory_internal._session_source_sha256(text, bigint) is
'Internal: the hash of a session''s turns that its summary records (summaries.source_sha256).';

-- A session's turns as the Python side reads them (chunking, summary, extraction), in order.
create or replace function memory_internal._session_turns(tenant text, session bigint) returns jsonb
language plpgsql
stable
as $$
begin
    return (
        select coalesce(jsonb_agg(jsonb_build_object(
                    'turn_id', t.turn_id, 'role', t.role, 'name', t.speaker, 'content', t.content,
                    'tool_calls', t.tool_calls, 'entities', t.metadata -> 'entities')
                    order by t.position), '[]')
        from memory.turns as t where t.tenant_id = tenant and t.session_key = session
    );
end
$$;

comment on function memory_internal._session_turns(text, bigint) is
'Internal: a session''s turns as JSON, in order, as chunking, summaries and extraction read them.';

-- Of a session's chunks, those without a vector of the model for their text as it is now. Each is looked
-- up by its key (a lateral subquery the limit keeps from being flattened): the plan is kept for the
-- backend, and an anti join planned while the table was small would scan every vector of the tenant.
create or replace function memory_internal._chunks_to_embed(
    tenant text, turn_ids bigint[], chunk_nos integer[], texts text[], model text
)
returns table (turn_id bigint, chunk_no integer, text text)
language plpgsql
stable
as $$
begin
    return query
    select n.turn_id, n.chunk_no, n.text
    from unnest(turn_ids, chunk_nos, texts) as n (turn_id, chunk_no, text)
    left join lateral (
        select true as embedded from memory.chunk_embeddings as e
        where e.tenant_id = tenant and e.turn_id = n.turn_id and e.chunk_no = n.chunk_no
            and e.model = _chunks_to_embed.model and e.text_sha256 = sha256(convert_to(n.text, 'UTF8'))
        limit 1
    ) as e on true
    where e.embedded is null;
end
$$;

comment on function memory_internal._chunks_to_embed(text, bigint[], integer[], text[], text) is
'Internal: the chunks (of those given) that have no vector of the model for their current text.';

-- Embeds what the enrichment of several sessions of this tenant will embed, in one call, and keeps the
-- vectors for those enrichments (memory_internal._keep_vectors_ahead): sorted by length across the
-- sessions, the model's batches waste less on padding and on per-batch work than a session at a time.
-- Nothing is written; a session that changes meanwhile embeds what it lacks itself.
create or replace function memory_internal._embed_sessions_ahead(tenant text, sessions bigint[]) returns void
language plpgsql
as $$
declare
    v_settings jsonb := memory_internal._settings_json();
    v_model record;
    v_texts text [];
begin
    select * into v_model from memory_internal._embedding_model(v_settings);
    if v_model is null or v_model.provider = 'client' then
        return;
    end if;
    select array_agg(distinct e.text) into v_texts
    from unnest(sessions) as s (session_key)
    cross join lateral (
        select array_agg(n.turn_id) as keys, array_agg(n.chunk_no) as nos, array_agg(n.text) as texts
        from memory_internal._chunk_turns(memory_internal._session_turns(tenant, s.session_key), v_settings) as n
    ) as c
    cross join lateral memory_internal._chunks_to_embed(tenant, c.keys, c.nos, c.texts, v_model.model) as e;
    if v_texts is not null then
        perform memory_internal._keep_vectors_ahead(v_model.model, v_texts,
                                                    memory_internal._embed_texts(v_texts, v_settings));
    end if;
end
$$;

comment on function memory_internal._embed_sessions_ahead(text, bigint[]) is
'Internal: embeds in one call the chunks the enrichment of these sessions will need, kept for it.';

-- A session's chunks as the settings now make them: unchanged ones kept, changed ones replaced, those the
-- settings no longer produce dropped.
create or replace function memory_internal._write_chunks(
    tenant text, session bigint, config regconfig, turn_ids bigint[], chunk_nos integer[], texts text[],
    contexts text[], context_turn_ids bigint[]
) returns void
language plpgsql
as $$
begin
    delete from memory.chunks as c
    where c.tenant_id = tenant and c.session_key = session
        and not exists (
            select from unnest(turn_ids, chunk_nos) as n (turn_id, chunk_no)
            where n.turn_id = c.turn_id and n.chunk_no = c.chunk_no
        );
    -- The own words keep tsvector weight D (the default), the context is weight C: memory_internal._chunk_bm25
    -- weighs them apart. Only chunks whose text, context or full-text vector changed are written.
    insert into memory.chunks as c (tenant_id, turn_id, chunk_no, session_key, agent_id, text, text_sha256, tsv,
                                    length, context_turn_id, context_length)
    select tenant, n.turn_id, n.chunk_no, session, t.agent_id, n.text, sha256(convert_to(n.text, 'UTF8')),
           v.own || setweight(v.context, 'C'), memory_internal._tsv_length(v.own), n.context_turn_id,
           memory_internal._tsv_length(v.context)
    from unnest(turn_ids, chunk_nos, texts, contexts, context_turn_ids)
        as n (turn_id, chunk_no, text, context, context_turn_id)
    inner join memory.turns as t on t.tenant_id = tenant and n.turn_id = t.turn_id
    cross join lateral (select to_tsvector(config, n.text) as own, to_tsvector(config, n.context) as context) as v
    order by n.turn_id, n.chunk_no
    on conflict (tenant_id, turn_id, chunk_no) do update
    set text = excluded.text, text_sha256 = excluded.text_sha256, tsv = excluded.tsv, length = excluded.length,
        context_turn_id = excluded.context_turn_id, context_length = excluded.context_length
    where c.text_sha256 <> excluded.text_sha256 or c.tsv <> excluded.tsv
        or c.context_turn_id is distinct from excluded.context_turn_id;
end
$$;

comment on function memory_internal._write_chunks(
    text, bigint, regconfig, bigint[], integer[], text[], text[], bigint[]
) is
'Internal: writes a session''s chunks as the settings now make them (unchanged ones kept, stale ones dropped).';

-- A session's chunk vectors: those of changed text dropped, the new ones (or the caller's vectors) written,
-- in the HNSW graph once the tenant is large enough to be searched approximately (memory.maintain adds the
-- vectors it wrote before).
create or replace function memory_internal._write_chunk_vectors(
    tenant text, session bigint, provider text, embedding_model text, turn_ids bigint[], chunk_nos integer[],
    texts text[], vectors vector[]
) returns void
language plpgsql
as $$
declare
    v_in_graph boolean := memory_internal._in_graph(tenant);
begin
    delete from memory.chunk_embeddings as e
    using memory.chunks as c
    where c.tenant_id = tenant and c.session_key = session and e.tenant_id = c.tenant_id
        and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no and e.text_sha256 <> c.text_sha256;
    if provider = 'client' then
        insert into memory.chunk_embeddings (tenant_id, turn_id, chunk_no, model, text_sha256, embedding, in_graph)
        select c.tenant_id, c.turn_id, c.chunk_no, 'client', c.text_sha256, t.client_embedding, v_in_graph
        from memory.chunks as c
        inner join memory.turns as t on c.tenant_id = t.tenant_id and c.turn_id = t.turn_id
        where c.tenant_id = tenant and c.session_key = session and t.client_embedding is not null
        on conflict do nothing;
    elsif texts is not null then
        insert into memory.chunk_embeddings (tenant_id, turn_id, chunk_no, model, text_sha256, embedding, in_graph)
        select tenant, k.turn_id, k.chunk_no, embedding_model, sha256(convert_to(k.text, 'UTF8')), k.embedding,
               v_in_graph
        from unnest(turn_ids, chunk_nos, texts, vectors) as k (turn_id, chunk_no, text, embedding)
        on conflict (tenant_id, turn_id, chunk_no, model) do update
        set text_sha256 = excluded.text_sha256, embedding = excluded.embedding, in_graph = excluded.in_graph;
    end if;
    perform memory_internal._mark_ready_if_complete(embedding_model);
end
$$;

comment on function memory_internal._write_chunk_vectors(
    text, bigint, text, text, bigint[], integer[], text[], vector[]
) is 'Internal: writes the vectors of a session''s chunks (or the caller''s), dropping those of changed text.';

create or replace function memory_internal._enrich_session(tenant text, session bigint) returns void
language plpgsql
as $$
declare
    v_settings jsonb := memory_internal._settings_json();
    v_config regconfig := (v_settings ->> 'text_search_config')::regconfig;
    v_model record;
    v_turns jsonb;
    v_source bytea;
    v_source_kind text := (select s.source from memory.sessions as s where s.tenant_id = tenant and s.session_key = session);
    v_summary record;
    v_summarized boolean := false;
    v_named text;
    v_chunk_keys bigint [];
    v_chunk_nos integer [];
    v_chunk_texts text [];
    v_chunk_contexts text [];
    v_chunk_context_keys bigint [];
    v_texts text [];
    v_keys bigint [];
    v_chunks integer [];
    v_vectors vector [];
    v_proposed text;
begin
    v_turns := memory_internal._session_turns(tenant, session);
    v_source := memory_internal._session_source_sha256(tenant, session);

    select * into v_model from memory_internal._embedding_model(v_settings);
    -- A model recorded already (and not retired) needs no registering: the common case, read cheaply.
    if v_model is not null and not exists (
        select from memory.embedding_models as m where m.model = v_model.model and m.state <> 'retired'
    ) then
        perform memory_internal._register_model();
    end if;

    -- The model, the summarizer and the llm extractor run first, so that the writes below (whose BM25
    -- statistics rows other workers also update) hold their locks only for the end of the transaction.
    select coalesce(array_agg(n.turn_id), '{}'), coalesce(array_agg(n.chunk_no), '{}'), coalesce(array_agg(n.text), '{}'),
           coalesce(array_agg(n.context), '{}'), coalesce(array_agg(n.context_turn_id), '{}')
    into v_chunk_keys, v_chunk_nos, v_chunk_texts, v_chunk_contexts, v_chunk_context_keys
    from memory_internal._chunk_turns(v_turns, v_settings) as n;
    if v_model is not null and v_model.provider <> 'client' then
        select array_agg(n.text), array_agg(n.turn_id), array_agg(n.chunk_no) into v_texts, v_keys, v_chunks
        from memory_internal._chunks_to_embed(tenant, v_chunk_keys, v_chunk_nos, v_chunk_texts, v_model.model) as n;
        if v_texts is not null then
            v_vectors := memory_internal._embed_texts(v_texts, v_settings);
        end if;
    end if;
    -- Remembered facts are listed one by one wherever they are used; their session is not summarized.
    if v_settings ->> 'summarizer' <> 'none' and v_source_kind is distinct from 'remember' and not exists (
        select from memory.summaries as s
        where s.tenant_id = tenant and s.session_key = session
            and (s.method = 'caller' or s.source_sha256 = v_source)
    ) then
        select * into v_summary from memory_internal._summarize_turns(v_turns, v_settings);
        v_summarized := true;
    end if;
    if v_settings ->> 'entity_extractor' = 'llm' then
        v_named := memory_internal._llm_chat('entities', v_turns, v_settings);
    end if;
    if v_settings ->> 'memory_extractor' = 'llm' and v_source_kind is distinct from 'remember' then
        v_proposed := memory_internal._llm_chat('memories', v_turns, v_settings);
    end if;

    -- Curated memories the session's users state (a remembered fact is one already), before the writes
    -- below: remembering embeds each claim to look for a paraphrase.
    if v_settings ->> 'memory_extractor' <> 'none' and v_source_kind is distinct from 'remember' then
        perform memory_internal._extract_memories(tenant, session, v_turns, v_settings, v_proposed);
    end if;

    perform memory_internal._count(tenant, array['turns_indexed'], array[''], array[(
        select count(distinct k.turn_id) from unnest(v_chunk_keys) as k (turn_id)
    )]);

    perform memory_internal._write_chunks(tenant, session, v_config, v_chunk_keys, v_chunk_nos, v_chunk_texts,
                                          v_chunk_contexts, v_chunk_context_keys);
    if v_model is not null then
        perform memory_internal._write_chunk_vectors(tenant, session, v_model.provider, v_model.model, v_keys,
                                                     v_chunks, v_texts, v_vectors);
    end if;

    if v_settings ->> 'entity_extractor' <> 'none' then
        perform memory_internal._write_mentions(tenant, session, v_turns, v_settings, v_named);
    end if;

    if v_summarized then
        insert into memory.summaries as s (tenant_id, session_key, method, summary, decisions, open_loops,
                                           source_sha256, tsv)
        values (tenant, session, v_summary.method, v_summary.summary, v_summary.decisions, v_summary.open_loops,
                v_source, to_tsvector(v_config, v_summary.summary))
        on conflict (tenant_id, session_key) do update
        set method = excluded.method, summary = excluded.summary, decisions = excluded.decisions,
            open_loops = excluded.open_loops, source_sha256 = excluded.source_sha256, tsv = excluded.tsv,
            created_at = pg_catalog.now();
    end if;

    if v_model is not null then
        perform memory_internal._embed_session(tenant, session, v_model.model);
    end if;

end
$$;

comment on function memory_internal._enrich_session(text, bigint) is
'Internal: enriches one session (chunks, embeddings, summary, session embedding, entity mentions, curated '
'memories its users state), skipping unchanged work.';

-- The session's vector: the normalized mean of its chunks' vectors under one model (no model call).
-- Each chunk's vector is looked up by its whole key (a lateral subquery the limit keeps from being
-- flattened): a join planned on a tenant's first, unanalyzed rows scanned all its vectors per chunk.
-- plpgsql, not sql, for the same reason as memory_internal._settings_json: its plan is kept.
create or replace function memory_internal._embed_session(tenant text, session bigint, model text) returns void
language plpgsql
as $$
begin
    insert into memory.session_embeddings as e (tenant_id, session_key, model, text_sha256, embedding, in_graph)
    select tenant, session, _embed_session.model,
           sha256(string_agg(c.text_sha256, '' order by c.turn_id, c.chunk_no)),
           l2_normalize(avg(ce.embedding)), memory_internal._in_graph(tenant)
    from memory.chunks as c
    cross join lateral (
        select e.embedding from memory.chunk_embeddings as e
        where e.tenant_id = c.tenant_id and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no
            and e.model = _embed_session.model
        limit 1
    ) as ce
    where c.tenant_id = tenant and c.session_key = session
    having count(*) > 0
    on conflict on constraint session_embeddings_pkey do update
    set text_sha256 = excluded.text_sha256, embedding = excluded.embedding, in_graph = excluded.in_graph
    where e.text_sha256 <> excluded.text_sha256;
end
$$;

comment on function memory_internal._embed_session(text, bigint, text) is
'Internal: a session''s vector under one model, the normalized mean of its chunks'' vectors.';

-- The key of this tenant's session named session_id: of agent_id, or, when agent_id is null, of whichever
-- agent has it (an error if several do). An unknown one is an error that says where the session is.
-- Every call that addresses an existing session follows this rule; calls that create one default to
-- agent 'default'.
create or replace function memory_internal._session_key(session_id text, agent_id text) returns bigint
language plpgsql
stable
as $$
declare
    v_keys bigint [];
    v_agents text [];
    v_where text;
begin
    select array_agg(s.session_key order by s.agent_id), array_agg(s.agent_id order by s.agent_id)
    into v_keys, v_agents
    from memory.sessions as s
    where s.tenant_id = memory.current_tenant() and s.session_id = _session_key.session_id;
    if _session_key.agent_id is null and cardinality(v_agents) = 1 then
        return v_keys[1];
    elsif _session_key.agent_id is null and cardinality(v_agents) > 1 then
        raise exception 'agent_memory: session "%" exists for agents %: say which with agent_id',
            _session_key.session_id, (select string_agg(format('"%s"', a), ', ') from unnest(v_agents) as a)
            using errcode = 'invalid_parameter_value';
    elsif _session_key.agent_id = any (v_agents) then
        return v_keys[array_position(v_agents, _session_key.agent_id)];
    end if;
    v_where := case when _session_key.agent_id is null then '' else format(' for agent "%s"', _session_key.agent_id) end;
    if v_agents is not null then
        raise exception 'agent_memory: no session "%"%; it exists for agent %', _session_key.session_id, v_where,
            (select string_agg(format('"%s"', a), ', ') from unnest(v_agents) as a)
            using errcode = 'no_data_found', hint = 'pass that agent_id, or leave agent_id out';
    end if;
    raise exception 'agent_memory: no session "%"% in tenant "%"', _session_key.session_id, v_where,
        memory.current_tenant() using errcode = 'no_data_found';
end
$$;

comment on function memory_internal._session_key(text, text) is
'Internal: the key of a session of this tenant (of any agent when agent_id is null, if only one has it), '
'or an error naming the session and the agents that have it.';

create or replace function memory.enrich(session_id text, agent_id text default null)
returns table (chunks integer, embedded integer, summary text)
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint := memory_internal._session_key(enrich.session_id, enrich.agent_id);
begin
    perform memory_internal._enrich_session(v_tenant, v_session);
    return query
    select (select count(*)::integer from memory.chunks as c where c.tenant_id = v_tenant and c.session_key = v_session),
           (select count(*)::integer from memory.chunk_embeddings as e
            inner join memory.chunks as c using (tenant_id, turn_id, chunk_no)
            where c.tenant_id = v_tenant and c.session_key = v_session),
           (select s.summary from memory.summaries as s where s.tenant_id = v_tenant and s.session_key = v_session);
end
$$;

comment on function memory.enrich(text, text) is
'Enriches one session now: index chunks, embeddings, summary and session embedding. Returns the counts. '
'Without agent_id, the session of whichever agent has it.';

-- After index settings change (roles, chunk size, context, text search configuration), sessions enriched
-- before keep their old index: reindex queues them for enrichment again, which rewrites what the settings
-- now produce and re-embeds only chunks whose text changed.
create or replace function memory.reindex(agent_id text default null, session_id text default null)
returns table (sessions bigint, jobs bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_session bigint;
begin
    if reindex.session_id is not null then
        v_session := memory_internal._session_key(reindex.session_id, reindex.agent_id);
    end if;
    return query
    with in_scope as (
        select s.session_key from memory.sessions as s
        where s.tenant_id = v_tenant
            and (reindex.agent_id is null or s.agent_id = reindex.agent_id)
            and (v_session is null or s.session_key = v_session)
    ),
    queued as (
        insert into memory.jobs (tenant_id, kind, session_key)
        select v_tenant, 'enrich', i.session_key from in_scope as i
        on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing
        returning 1
    )
    select (select count(*) from in_scope), (select count(*) from queued);
end
$$;

comment on function memory.reindex(text, text) is
'Queues every session in scope (this tenant, optionally one agent or one session) for enrichment again, '
'after index settings changed; unchanged chunks keep their vectors. Returns the sessions in scope and the '
'jobs queued (a session already queued is not queued twice). Run the queue with call memory.work() or '
'agent-memory work.';

create or replace function memory.set_summary(
    session_id text, summary text, decisions jsonb default '[]', open_loops jsonb default '[]',
    agent_id text default null
) returns void
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint;
begin
    if jsonb_typeof(decisions) <> 'array' or jsonb_typeof(open_loops) <> 'array' then
        raise exception 'agent_memory: decisions and open_loops must be JSON arrays';
    end if;
    v_session := memory_internal._session_key(set_summary.session_id, set_summary.agent_id);
    insert into memory.summaries as s (tenant_id, session_key, method, summary, decisions, open_loops, tsv)
    values (v_tenant, v_session, 'caller', set_summary.summary, set_summary.decisions, set_summary.open_loops,
            to_tsvector((memory.setting('text_search_config') #>> '{}')::regconfig, set_summary.summary))
    on conflict (tenant_id, session_key) do update
    set method = 'caller', summary = excluded.summary, decisions = excluded.decisions,
        open_loops = excluded.open_loops, source_sha256 = null, tsv = excluded.tsv, created_at = pg_catalog.now();
end
$$;

comment on function memory.set_summary(text, text, jsonb, jsonb, text) is
'Stores the caller''s own summary of a session (of agent_id, or of whichever agent has it); enrichment then '
'leaves it as it is.';

-- sql/idempotent/lifecycle/064-forget.sql
-- Forgetting sessions. forget() removes a session, forget_agent() all of an agent's, and
-- forget_range() what was said in a time range, with everything
-- derived from them (turns, chunks, vectors, summaries, jobs, feedback, the memories extracted from them
-- alone; full-text statistics, speakers and entities follow) in one transaction, and leaves a tombstone:
-- what was forgotten, when, by whom and how much, never the content. A forgotten session is not stored
-- again by a later commit or import unless the caller says so (commit's allow_forgotten).

-- The memories enrichment's extractor proposed from these turns alone (every evidence turn among them):
-- what goes when the turns go.
create or replace function memory_internal._extracted_from(tenant text, turns bigint[]) returns setof bigint
language sql
stable
as $$
    select m.memory_id from memory.memories as m
    where m.tenant_id = tenant and m.origin <> 'remember'
        and m.memory_id in (
            select e.memory_id from memory.memory_evidence as e where e.tenant_id = tenant and e.turn_id = any(turns)
        )
        and not exists (
            select from memory.memory_evidence as e
            where e.tenant_id = tenant and e.memory_id = m.memory_id and e.turn_id <> all(turns)
        )
$$;

comment on function memory_internal._extracted_from(text, bigint[]) is
'Internal: the memories extracted from the given turns alone (they are removed with the turns).';

-- Turns and everything derived from them; the caller holds their sessions' row locks. Memories extracted
-- from these turns alone go with them, and so do the turns that carry their words (unless another memory
-- has the same words); memories whose words are among them go too. Chunks, vectors, feedback, mentions
-- and other memories' evidence in these turns follow by foreign key, full-text statistics
-- by the chunk triggers; speakers and entities nothing else has are removed. A session that keeps other
-- turns loses, in the same transaction, what was derived from the whole of it (summary, session vector)
-- and the context its later turns were indexed with (the index_context_turns turns before one may hold a
-- removed one's words: every later turn is indexed on its own words until then), and is queued to be
-- enriched again from what is left.
create or replace function memory_internal._forget_turns(tenant text, turns bigint[])
returns table (turns_removed integer, chunks_removed integer, memories_removed integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_said bigint [] := array(select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.turn_id = any(turns));
    v_turns integer := cardinality(v_said);
    v_chunks integer := (select count(*) from memory.chunks as c where c.tenant_id = tenant and c.turn_id = any(v_said));
    v_memories integer := (select count(*) from memory.memories as m where m.tenant_id = tenant and m.turn_id = any(v_said));
    v_words bigint [];
    v_gone bigint [];
    v_speakers text [];
    v_entities bigint [];
    v_sessions bigint [];
    v_firsts integer [];
    v_config regconfig := (memory.setting('text_search_config') #>> '{}')::regconfig;
begin
    with derived as (
        delete from memory.memories as m
        where m.tenant_id = tenant and m.memory_id in (select memory_internal._extracted_from(tenant, v_said))
        returning m.turn_id
    )

    select coalesce(array_agg(d.turn_id), '{}') into v_words from derived as d;
    v_memories := v_memories + cardinality(v_words);
    -- The turns that go: those said, and the words of the memories that went that no other memory carries.
    v_gone := v_said || array(
        select t.turn_id from memory.turns as t
        where t.tenant_id = tenant and t.turn_id = any(v_words) and not t.turn_id = any(v_said)
            and not exists (select from memory.memories as o where o.tenant_id = tenant and o.turn_id = t.turn_id)
    );
    v_speakers := array(
        select distinct t.agent_id || chr(31) || t.speaker from memory.turns as t
        where t.tenant_id = tenant and t.turn_id = any(v_gone) and t.speaker is not null
    );
    v_entities := array(
        select distinct m.entity_id from memory.entity_mentions as m where m.tenant_id = tenant and m.turn_id = any(v_gone)
    );
    -- Per session, the position of its first turn that goes: its later turns may hold it as context.
    select coalesce(array_agg(g.session_key), '{}'), coalesce(array_agg(g.first), '{}') into v_sessions, v_firsts
    from (
        select t.session_key, min(t.position) as first from memory.turns as t
        where t.tenant_id = tenant and t.turn_id = any(v_gone)
        group by t.session_key
    ) as g;
    delete from memory.turns as t where t.tenant_id = tenant and t.turn_id = any(v_gone);

    -- What the sessions that keep turns derived from the removed ones.
    update memory.chunks as c
    set tsv = to_tsvector(v_config, c.text), context_turn_id = null, context_length = 0
    from unnest(v_sessions, v_firsts) as g (session_key, first)
    inner join memory.turns as t on t.tenant_id = tenant and t.session_key = g.session_key and t.position > g.first
    where c.tenant_id = tenant and c.turn_id = t.turn_id and c.context_length > 0;
    delete from memory.summaries as m
    where m.tenant_id = tenant and m.session_key = any(v_sessions) and m.method <> 'caller';
    delete from memory.session_embeddings as e where e.tenant_id = tenant and e.session_key = any(v_sessions);
    insert into memory.jobs (tenant_id, kind, session_key)
    select tenant, 'enrich', s.session_key from memory.sessions as s
    where s.tenant_id = tenant and s.session_key = any(v_sessions)
        and exists (select from memory.turns as t where t.tenant_id = tenant and t.session_key = s.session_key)
    on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing;

    delete from memory.speakers as p
    where p.tenant_id = tenant and p.agent_id || chr(31) || p.speaker = any(v_speakers)
        and not exists (
            select from memory.turns as t
            where t.tenant_id = tenant and t.agent_id = p.agent_id and t.speaker = p.speaker
        );
    -- Entities only these turns mentioned, and that no recorded state keeps, go with them.
    delete from memory.entities as e
    where e.tenant_id = tenant and e.entity_id = any(v_entities)
        and not exists (select from memory.entity_mentions as m where m.tenant_id = tenant and m.entity_id = e.entity_id)
        and not exists (select from memory.entity_states as s where s.tenant_id = tenant and s.entity_id = e.entity_id);
    return query select v_turns, v_chunks, v_memories;
end
$$;

comment on function memory_internal._forget_turns(text, bigint[]) is
'Internal: removes turns and everything derived from them (see memory.forget_range).';

-- One session and everything derived from it; the caller holds the session's row lock.
create or replace function memory_internal._forget_session(tenant text, session bigint)
returns table (turns_removed integer, chunks_removed integer, memories_removed integer)
language plpgsql
as $$
begin
    return query
    select * from memory_internal._forget_turns(
        tenant,
        array(select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.session_key = session)
    );
    -- The summary, session vector and jobs go with the session (foreign keys cascade).
    delete from memory.sessions as s where s.tenant_id = tenant and s.session_key = session;
end
$$;

comment on function memory_internal._forget_session(text, bigint) is
'Internal: removes one session and everything derived from it (see memory.forget).';

comment on type memory.forgotten is
'What memory.forget, forget_agent or forget_range removed (sessions, turns, chunks, memories) and its tombstone.';

-- The tombstone of a forget, and the sessions it removed (by a hash of their id). Only the API writes
-- them (as memory_owner), so none can be forged or taken back; the tenant is the caller's.
create or replace function memory_internal._bury(selector jsonb, removed jsonb, agents text[], session_ids text[])
returns bigint
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_tombstone bigint;
begin
    insert into memory.tombstones as t (tenant_id, selector, removed, forgotten_by)
    values (v_tenant, selector, removed, session_user)
    returning t.tombstone_id into v_tombstone;
    insert into memory.forgotten_sessions as f (tenant_id, agent_id, session_sha256, tombstone_id)
    select v_tenant, r.agent_id, sha256(convert_to(r.session_id, 'UTF8')), v_tombstone
    from unnest(agents, session_ids) as r (agent_id, session_id)
    on conflict on constraint forgotten_sessions_pkey do update set tombstone_id = excluded.tombstone_id;
    return v_tombstone;
end
$$;

comment on function memory_internal._bury(jsonb, jsonb, text[], text[]) is
'Internal: writes the tombstone of a forget and the sessions it removed (for memory.forget).';

-- Whether a session of this tenant was forgotten: its tombstone, or none. With allow it is forgotten no
-- more (memory.commit storing it again).
create or replace function memory_internal._forgotten(agent_id text, session_id text, allow boolean)
returns table (tombstone_id bigint, forgotten_at timestamptz)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_hash bytea := sha256(convert_to(session_id, 'UTF8'));
begin
    return query
    select f.tombstone_id, t.forgotten_at
    from memory.forgotten_sessions as f
    inner join memory.tombstones as t on f.tenant_id = t.tenant_id and f.tombstone_id = t.tombstone_id
    where f.tenant_id = v_tenant and f.agent_id = _forgotten.agent_id and f.session_sha256 = v_hash;
    if coalesce(allow, false) then
        delete from memory.forgotten_sessions as f
        where f.tenant_id = v_tenant and f.agent_id = _forgotten.agent_id and f.session_sha256 = v_hash;
    end if;
end
$$;

comment on function memory_internal._forgotten(text, text, boolean) is
'Internal: the tombstone of a forgotten session, if any; with allow, the session is no longer forgotten.';

-- Locks sessions for a forget, in key order with each agent's session of remembered words last (a worker
-- enriching one of an agent's sessions writes that one after its own), and returns those that still exist.
create or replace function memory_internal._lock_sessions(tenant text, sessions bigint[]) returns bigint[]
language plpgsql
as $$
declare
    v_session bigint;
    v_locked bigint [] := '{}';
begin
    for v_session in
        select s.session_key from memory.sessions as s
        where s.tenant_id = tenant and s.session_key = any(sessions)
        order by s.session_id = 'remembered', s.session_key
    loop
        perform from memory.sessions as s where s.tenant_id = tenant and s.session_key = v_session for update;
        if found then
            v_locked := v_locked || v_session;
        end if;
    end loop;
    return v_locked;
end
$$;

comment on function memory_internal._lock_sessions(text, bigint[]) is
'Internal: locks sessions in the order forgets take them (remembered words last); those that still exist.';

-- Removes the given sessions and the given loose turns of other sessions, with everything derived from
-- them, under one tombstone with the selector and the counts, plus the counts in also (what the caller
-- removed besides). Sessions gone meanwhile (a concurrent forget) are not counted; when nothing is left to
-- remove, nothing is written and null is returned.
create or replace function memory_internal._forget_sessions(
    tenant text, sessions bigint[], selector jsonb, turns bigint[] default '{}', also jsonb default '{}'
)
returns memory.forgotten
language plpgsql
as $$
declare
    v_locked bigint [] := memory_internal._lock_sessions(tenant, sessions);
    v_session bigint;
    v_agents text [];
    v_ids text [];
    v_removed record;
    v_result memory.forgotten;
begin
    v_result := row(0, 0, 0, 0, null)::memory.forgotten;
    select array_agg(s.agent_id order by s.session_key), array_agg(s.session_id order by s.session_key)
    into v_agents, v_ids
    from memory.sessions as s where s.tenant_id = tenant and s.session_key = any(v_locked);
    foreach v_session in array v_locked loop
        select * into v_removed from memory_internal._forget_session(tenant, v_session);
        v_result.turns_removed := v_result.turns_removed + v_removed.turns_removed;
        v_result.chunks_removed := v_result.chunks_removed + v_removed.chunks_removed;
        v_result.memories_removed := v_result.memories_removed + v_removed.memories_removed;
    end loop;
    if cardinality(turns) > 0 then
        select * into v_removed from memory_internal._forget_turns(tenant, turns);
        v_result.turns_removed := v_result.turns_removed + v_removed.turns_removed;
        v_result.chunks_removed := v_result.chunks_removed + v_removed.chunks_removed;
        v_result.memories_removed := v_result.memories_removed + v_removed.memories_removed;
    end if;
    if v_result.turns_removed = 0 and cardinality(v_locked) = 0 and also = '{}' then
        return null;
    end if;
    v_result.sessions_removed := cardinality(v_locked);
    v_result.tombstone_id := memory_internal._bury(
        selector,
        jsonb_build_object('sessions', v_result.sessions_removed, 'turns', v_result.turns_removed,
                           'chunks', v_result.chunks_removed, 'memories', v_result.memories_removed) || also,
        coalesce(v_agents, '{}'), coalesce(v_ids, '{}')
    );
    return v_result;
end
$$;

comment on function memory_internal._forget_sessions(text, bigint[], jsonb, bigint[], jsonb) is
'Internal: removes sessions and loose turns and what derives from them under one tombstone (every forget).';

-- Of locked sessions, removes the turns given: a session all of whose turns are given as a session (it
-- stays forgotten), of the others those turns alone.
create or replace function memory_internal._forget_said(
    tenant text, sessions bigint[], turns bigint[], selector jsonb, also jsonb default '{}'
) returns memory.forgotten
language plpgsql
as $$
declare
    v_whole bigint [] := array(
        select s.session_key from memory.sessions as s
        where s.tenant_id = tenant and s.session_key = any(sessions)
            and not exists (
                select from memory.turns as t
                where t.tenant_id = tenant and t.session_key = s.session_key and not t.turn_id = any(turns)
            )
        order by s.session_id = 'remembered', s.session_key
    );
begin
    return memory_internal._forget_sessions(
        tenant, v_whole, selector,
        array(
            select t.turn_id from memory.turns as t
            where t.tenant_id = tenant and t.turn_id = any(turns) and not t.session_key = any(v_whole)
        ),
        also
    );
end
$$;

comment on function memory_internal._forget_said(text, bigint[], bigint[], jsonb, jsonb) is
'Internal: removes turns of locked sessions, whole sessions as sessions, under one tombstone.';

create or replace function memory.forget(session_id text, agent_id text default null)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint := memory_internal._session_key(forget.session_id, forget.agent_id);
    v_agent text := (select s.agent_id from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session);
    v_result memory.forgotten;
begin
    v_result := memory_internal._forget_sessions(
        v_tenant, array[v_session], jsonb_build_object('agent_id', v_agent, 'session_id', forget.session_id)
    );
    if v_result is null then
        raise exception 'agent_memory: session % of agent % was forgotten meanwhile', forget.session_id, v_agent
            using errcode = 'no_data_found';
    end if;
    return next v_result;
end
$$;

comment on function memory.forget(text, text) is
'Removes a session (of agent_id, or of whichever agent has it) and everything derived from it (turns, '
'chunks, vectors, summary, jobs, feedback, full-text statistics, speakers and entities no other turn has, '
'the memories extracted from its turns alone; other memories lose its turns from their evidence), in one '
'transaction. Leaves a tombstone (memory.tombstones: what, when, by whom, counts; not the content), and a '
'later commit of the session is refused unless allow_forgotten. Returns what was removed and the tombstone.';

create or replace function memory.forget_agent(agent_id text)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_result memory.forgotten;
    v_entities integer;
begin
    if forget_agent.agent_id is null then
        raise exception 'agent_memory: forget_agent needs an agent_id' using errcode = 'invalid_parameter_value';
    end if;
    -- Sessions in key order, the agent's session of remembered words last: a worker enriching one of its
    -- sessions writes that one after its own.
    v_result := memory_internal._forget_sessions(
        v_tenant,
        array(
            select s.session_key from memory.sessions as s
            where s.tenant_id = v_tenant and s.agent_id = forget_agent.agent_id
            order by s.session_id = 'remembered', s.session_key
        ),
        jsonb_build_object('agent_id', forget_agent.agent_id)
    );
    -- What outlives the sessions: entities no remaining turn mentions (with their states and edges), and
    -- full-text statistics left at zero.
    delete from memory.entities as e
    where e.tenant_id = v_tenant and e.agent_id = forget_agent.agent_id
        and not exists (select from memory.entity_mentions as m where m.tenant_id = v_tenant and m.entity_id = e.entity_id);
    get diagnostics v_entities = row_count;
    delete from memory.lexicon as x where x.tenant_id = v_tenant and x.agent_id = forget_agent.agent_id and x.chunks <= 0;
    delete from memory.corpus as k where k.tenant_id = v_tenant and k.agent_id = forget_agent.agent_id and k.chunks <= 0;
    if v_result is null and v_entities = 0 then
        raise exception 'agent_memory: agent % has nothing to forget in this tenant', forget_agent.agent_id
            using errcode = 'no_data_found';
    elsif v_result is null then
        v_result := row(0, 0, 0, 0, null)::memory.forgotten;
        v_result.tombstone_id := memory_internal._bury(
            jsonb_build_object('agent_id', forget_agent.agent_id),
            jsonb_build_object('sessions', 0, 'turns', 0, 'chunks', 0, 'memories', 0, 'entities', v_entities),
            '{}', '{}'
        );
    end if;
    return next v_result;
end
$$;

comment on function memory.forget_agent(text) is
'Removes all of an agent''s memory in this tenant: every session as memory.forget removes one, its '
'remembered and extracted memories, its entities (with their states and edges) and statistics, in one '
'transaction, under one tombstone; a later commit of any of its sessions is refused unless '
'allow_forgotten. Returns what was removed and the tombstone.';

create or replace function memory.forget_range(since timestamptz, until timestamptz, agent_id text default null)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_locked bigint [];
    v_result memory.forgotten;
begin
    if forget_range.since is null or forget_range.until is null or forget_range.since >= forget_range.until then
        raise exception 'agent_memory: forget_range needs since before until, got % and %', forget_range.since,
            forget_range.until using errcode = 'invalid_parameter_value';
    end if;
    -- The sessions with a turn in the range, locked; what is in the range is read again under the locks.
    v_locked := memory_internal._lock_sessions(v_tenant, array(
        select t.session_key from memory.turns as t
        where t.tenant_id = v_tenant and (forget_range.agent_id is null or t.agent_id = forget_range.agent_id)
            and t.created_at >= forget_range.since and t.created_at < forget_range.until
    ));
    v_result := memory_internal._forget_said(
        v_tenant, v_locked,
        array(
            select t.turn_id from memory.turns as t
            where t.tenant_id = v_tenant and t.session_key = any(v_locked)
                and t.created_at >= forget_range.since and t.created_at < forget_range.until
        ),
        jsonb_strip_nulls(jsonb_build_object('since', forget_range.since, 'until', forget_range.until,
                                             'agent_id', forget_range.agent_id))
    );
    if v_result is null then
        raise exception 'agent_memory: nothing in this tenant was said between % and %', forget_range.since,
            forget_range.until using errcode = 'no_data_found';
    end if;
    return next v_result;
end
$$;

comment on function memory.forget_range(timestamptz, timestamptz, text) is
'Removes everything said in [since, until) in this tenant (or by one agent), in one transaction: sessions '
'said wholly within it as memory.forget removes one (a later commit of one is refused unless '
'allow_forgotten), and of the others the turns in the range with what derives from them; those sessions '
'are queued to be summarized and indexed again from what is left. Leaves one tombstone. Returns what was '
'removed (sessions_removed: the whole sessions) and the tombstone.';

-- Everything about an entity: the turns that mention it (a session that is nothing else as a session),
-- the memories about it (their subjects name it), and the entity with its aliases, states and edges.
create or replace function memory.forget_entity(entity text, agent_id text default null)
returns setof memory.forgotten
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_keys bigint [] := memory_internal._named_entities(forget_entity.entity, forget_entity.agent_id);
    v_names text [] := array(
        select n.name from memory.entities as e
        cross join lateral unnest(e.normalized || e.aliases) as n (name)
        where e.tenant_id = v_tenant and e.entity_id = any(v_keys)
    );
    v_locked bigint [];
    v_turns bigint [];
    v_entities integer;
begin
    -- The turns about it (mentions of it, the words of memories about it), read again under the locks of
    -- their sessions.
    v_locked := memory_internal._lock_sessions(v_tenant, array(
        select t.session_key from memory_internal._turns_about(v_tenant, v_keys, v_names, null) as a
        inner join memory.turns as t on t.tenant_id = v_tenant and t.turn_id = a.turn_id
    ));
    v_turns := array(select a.turn_id from memory_internal._turns_about(v_tenant, v_keys, v_names, v_locked) as a);
    delete from memory.entities as e where e.tenant_id = v_tenant and e.entity_id = any(v_keys);
    get diagnostics v_entities = row_count;
    return next memory_internal._forget_said(
        v_tenant, v_locked, v_turns,
        jsonb_strip_nulls(jsonb_build_object('entity', forget_entity.entity, 'agent_id', forget_entity.agent_id)),
        jsonb_build_object('entities', v_entities)
    );
end
$$;

comment on function memory.forget_entity(text, text) is
'Removes everything about an entity (by name or alias; of one agent, or of every agent that has one of '
'that name) in this tenant, in one transaction: every turn that mentions it with what derives from it (a '
'session that is nothing else as memory.forget removes one: a later commit is refused unless '
'allow_forgotten; the others are summarized and indexed again from what is left), the memories whose '
'subjects name it, and the entity with its aliases, states and edges. Leaves one tombstone (counts '
'entities too). Returns what was removed and the tombstone; an unknown entity is an error.';

-- The turns about entities: those that mention one, and the words of memories whose subjects name one
-- (of the sessions given, or of all).
create or replace function memory_internal._turns_about(tenant text, keys bigint[], names text[], sessions bigint[])
returns table (turn_id bigint)
language sql
stable
as $$
    select m.turn_id from memory.entity_mentions as m
    inner join memory.turns as t on t.tenant_id = m.tenant_id and t.turn_id = m.turn_id
    where m.tenant_id = tenant and m.entity_id = any(keys) and (sessions is null or t.session_key = any(sessions))
    union
    select m.turn_id from memory.memories as m
    inner join memory.turns as t on t.tenant_id = m.tenant_id and t.turn_id = m.turn_id
    where m.tenant_id = tenant and m.subjects && names and (sessions is null or t.session_key = any(sessions))
$$;

comment on function memory_internal._turns_about(text, bigint[], text[], bigint[]) is
'Internal: the turns that mention the entities or carry the words of memories about them (of the sessions '
'given, or of all).';

-- sql/idempotent/write/066-commit.sql
-- memory.commit: store a session's messages. Idempotent: a message already stored (same caller id,
-- or without id the same content at the same position) is skipped, so re-committing a growing
-- session appends only its new turns. Bad input raises an error naming the message and stores nothing.

-- The first problem with one message (a JSON object, as jsonb), or null when it is acceptable.
create or replace function memory_internal._message_problem(message jsonb, max_chars integer, dimensions integer)
returns text
language sql
immutable parallel safe
as $$
    select case
        when message -> 'role' is null or jsonb_typeof(message -> 'role') = 'null' then 'has no role'
        when jsonb_typeof(message -> 'role') <> 'string'
            or message ->> 'role' not in ('user', 'assistant', 'system', 'tool')
            then format('has unknown role %s (expected user, assistant, system or tool)', message -> 'role')
        when (message -> 'content' is null or jsonb_typeof(message -> 'content') = 'null')
            and coalesce(jsonb_typeof(message -> 'tool_calls'), 'null') <> 'array'
            then 'has no content'
        when jsonb_typeof(message -> 'content') not in ('string', 'array', 'null')
            then 'has content that is neither a string nor a list of text parts'
        when jsonb_typeof(message -> 'content') = 'array' and exists (
            select from jsonb_array_elements(message -> 'content') as part
            where jsonb_typeof(part) <> 'string'
                and (jsonb_typeof(part) <> 'object' or jsonb_typeof(part -> 'text') is distinct from 'string')
        ) then 'has a content part that is not text (a string or an object with "text")'
        when length(message::text) > max_chars and length(memory_internal._message_text(message)) > max_chars
            then format('is %s characters long, over the limit of %s (setting max_message_chars)',
                        length(memory_internal._message_text(message)), max_chars)
        when message -> 'id' is not null and jsonb_typeof(message -> 'id') not in ('string', 'number')
            then 'has an id that is neither a string nor a number'
        when length(message ->> 'id') > 1000 then 'has an id over 1000 characters'
        when length(message ->> 'name') > 1000 then 'has a name over 1000 characters'
        when message -> 'created_at' is not null
            and (jsonb_typeof(message -> 'created_at') <> 'string'
                 or message ->> 'created_at' !~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*(Z|z|[+-]\d{2}(:?\d{2})?)?$')
            then format('has created_at %s, which is not an ISO 8601 timestamp', message -> 'created_at')
        -- (A later branch is evaluated only when the ones before it are false: tokens is a number there.)
        when jsonb_typeof(message -> 'tokens') not in ('number', 'null')
            then format('has tokens %s, which is not a whole number from 0 to 2147483647', message -> 'tokens')
        when not ((message ->> 'tokens')::numeric between 0 and 2147483647
                  and (message ->> 'tokens')::numeric = trunc((message ->> 'tokens')::numeric))
            then format('has tokens %s, which is not a whole number from 0 to 2147483647', message -> 'tokens')
        when message -> 'metadata' is not null and jsonb_typeof(message -> 'metadata') <> 'object'
            then 'has metadata that is not a JSON object'
        when message -> 'name' is not null and jsonb_typeof(message -> 'name') not in ('string', 'null')
            then 'has a name that is not a string'
        when coalesce(message -> 'entities', message -> 'metadata' -> 'entities') is not null and (
            jsonb_typeof(coalesce(message -> 'entities', message -> 'metadata' -> 'entities')) <> 'array'
            or exists (
                select from jsonb_array_elements(coalesce(message -> 'entities', message -> 'metadata' -> 'entities')) as e
                where not (jsonb_typeof(e) = 'string'
                           or jsonb_typeof(e) = 'object' and jsonb_typeof(e -> 'name') = 'string'
                           and coalesce(e ->> 'type', 'other') = any(memory_internal._entity_types()))
            )
        ) then 'has entities that are not a list of names or {"name", "type"} objects (type: '
               || array_to_string(memory_internal._entity_types(), ', ') || ')'
        when message -> 'embedding' is not null and (
            jsonb_typeof(message -> 'embedding') <> 'array'
            or jsonb_array_length(message -> 'embedding') <> dimensions
            or exists (select from jsonb_array_elements(message -> 'embedding') as x where jsonb_typeof(x) <> 'number')
        ) then format('has an embedding that is not a list of %s numbers (setting client_dimensions)', dimensions)
        when message -> 'embedding' is not null
            and not exists (select from jsonb_array_elements(message -> 'embedding') as x where x <> '0')
            then 'has an embedding that is all zeros'
    end
$$;

comment on function memory_internal._message_problem(jsonb, integer, integer) is
'Internal: what is wrong with one message given to memory.commit, or null.';

-- A message's text: the content string, or its text parts joined by newlines.
create or replace function memory_internal._message_text(message jsonb) returns text
language sql
immutable parallel safe
as $$
    select case jsonb_typeof(message -> 'content')
        when 'string' then message ->> 'content'
        when 'array' then (
            select coalesce(string_agg(coalesce(part ->> 'text', part #>> '{}'), e'\n' order by n), '')
            from jsonb_array_elements(message -> 'content') with ordinality as p (part, n)
        )
        else ''
    end
$$;

comment on function memory_internal._message_text(jsonb) is
'Internal: the text of a message''s content (a string, or text parts joined by newlines).';

-- Identifiers (session and agent ids, sources, models, kinds) are keys of btree indexes: at most 1,000
-- characters, refused by name beyond that.
create or replace function memory_internal._check_identifier(field text, value text) returns void
language plpgsql
immutable
as $$
begin
    if length(value) > 1000 then
        raise exception 'agent_memory: % is % characters long, over the limit of 1000', field, length(value)
            using errcode = 'invalid_parameter_value';
    end if;
end
$$;

comment on function memory_internal._check_identifier(text, text) is
'Internal: refuses an identifier (session_id, agent_id, ...) over 1,000 characters, naming it.';

-- Why a JSON value does not convert to jsonb, or null when it does: it holds the escape of a NUL character
-- (\u0000), or of half a surrogate pair (\ud800), which json accepts and jsonb does not.
create or replace function memory_internal._jsonb_problem(value json) returns text
language plpgsql
immutable
as $$
begin
    perform value::jsonb;
    return null;
exception
    when untranslatable_character then
        return 'contains a NUL character (\u0000)';
    when invalid_text_representation then
        return 'contains a \u escape that is not a character (half of a surrogate pair, such as \ud800)';
end
$$;

comment on function memory_internal._jsonb_problem(json) is
'Internal: why a JSON value does not convert to jsonb (a NUL character, half a surrogate pair), or null.';

-- A commit's messages as jsonb, or an error naming the first message that is not acceptable: one jsonb
-- cannot hold, one that breaks a rule of memory_internal._message_problem, an id an earlier message has,
-- or a created_at that is not a real time.
create or replace function memory_internal._checked_messages(
    messages json, max_chars integer, dimensions integer
) returns jsonb
language plpgsql
stable
as $$
declare
    v_messages jsonb;
    v_problem record;
    v_bad_time record;
begin
    -- jsonb cannot hold a NUL character (the JSON escape \u0000; the six characters of a C escape in a
    -- code snippet are "\\u0000" in JSON and are fine) or half a surrogate pair (\ud800): find the message
    -- that has one, then use the array parsed once as jsonb for every further step.
    begin
        v_messages := messages::jsonb;
    exception when untranslatable_character or invalid_text_representation then
        select p.index, p.problem into v_problem
        from (
            select m.n - 1 as index, memory_internal._jsonb_problem(m.message) as problem
            from json_array_elements(messages) with ordinality as m (message, n)
        ) as p
        where p.problem is not null
        order by p.index
        limit 1;
        raise exception 'agent_memory: message % %', v_problem.index, v_problem.problem
            using errcode = 'invalid_parameter_value';
    end;

    select p.index, p.problem into v_problem
    from (
        select m.n - 1 as index,
               case
                   when jsonb_typeof(m.message) is distinct from 'object' then 'is not a JSON object'
                   else memory_internal._message_problem(m.message, max_chars, dimensions)
               end as problem
        from jsonb_array_elements(v_messages) with ordinality as m (message, n)
    ) as p
    where p.problem is not null
    order by p.index
    limit 1;
    if found then
        raise exception 'agent_memory: message % %', v_problem.index, v_problem.problem
            using errcode = 'invalid_parameter_value';
    end if;

    select d.index, d.id into v_problem
    from (
        select m.n - 1 as index, m.message ->> 'id' as id,
               pg_catalog.row_number() over (partition by m.message ->> 'id' order by m.n) as copy
        from jsonb_array_elements(v_messages) with ordinality as m (message, n)
        where m.message ->> 'id' is not null
    ) as d
    where d.copy > 1
    order by d.index
    limit 1;
    if found then
        raise exception 'agent_memory: message % repeats id % of an earlier message', v_problem.index, v_problem.id
            using errcode = 'invalid_parameter_value';
    end if;

    -- Timestamps that match the pattern but are not real dates (2024-02-30) fail the cast: find which.
    begin
        perform (m.message ->> 'created_at')::timestamptz from jsonb_array_elements(v_messages) as m (message);
    exception when datetime_field_overflow or invalid_datetime_format or invalid_time_zone_displacement_value then
        for v_bad_time in
            select m.n - 1 as index, m.message ->> 'created_at' as created_at
            from jsonb_array_elements(v_messages) with ordinality as m (message, n)
            where m.message ->> 'created_at' is not null order by m.n
        loop
            begin
                perform v_bad_time.created_at::timestamptz;
            exception when datetime_field_overflow or invalid_datetime_format
                or invalid_time_zone_displacement_value then
                raise exception 'agent_memory: message % has created_at "%", which is not a valid time',
                    v_bad_time.index, v_bad_time.created_at using errcode = 'invalid_parameter_value';
            end;
        end loop;
    end;
    return v_messages;
end
$$;

comment on function memory_internal._checked_messages(json, integer, integer) is
'Internal: a commit''s messages as jsonb, or an error naming the first message that is not acceptable.';

-- The messages of a commit that its session does not hold yet, stored as turns after its last one: how many,
-- and how many are longer than indexing reads (index_max_chunks x chunk_chars: stored whole, indexed in part).
create or replace function memory_internal._add_turns(
    tenant text, session bigint, agent text, messages jsonb, index_roles jsonb, index_chars bigint,
    out added integer, out partial integer
)
language plpgsql
as $$
begin
    with parsed as (
        select m.n - 1 as index, m.message
        from jsonb_array_elements(messages) with ordinality as m (message, n)
    ),
    texts as (
        select p.index, p.message, p.message ->> 'id' as message_id, memory_internal._message_text(p.message) as content
        from parsed as p
    ),
    incoming as (
        select x.*, sha256(convert_to(x.content, 'UTF8')) as content_sha256 from texts as x
    ),
    fresh as (
        select i.* from incoming as i
        where not exists (
            select from memory.turns as t
            where t.tenant_id = tenant and t.session_key = session
                and (
                    t.message_id = i.message_id
                    or i.message_id is null and t.message_id is null and t.position = i.index
                    and t.content_sha256 = i.content_sha256
                )
        )
    ),
    last_position as (
        select coalesce(max(t.position), -1) as p from memory.turns as t
        where t.tenant_id = tenant and t.session_key = session
    ),
    stored as (
        insert into memory.turns (tenant_id, session_key, agent_id, position, message_id, role, speaker, content,
                                  content_sha256, tool_calls, tool_call_id, tokens, client_embedding, metadata, created_at)
        select tenant, session, agent,
               lp.p + row_number() over (order by f.index),
               f.message_id, f.message ->> 'role', f.message ->> 'name', f.content, f.content_sha256,
               f.message -> 'tool_calls', f.message ->> 'tool_call_id',
               (f.message ->> 'tokens')::integer,
               (f.message ->> 'embedding')::vector,
               coalesce(f.message -> 'metadata', '{}')
               || jsonb_strip_nulls(jsonb_build_object('entities', f.message -> 'entities')),
               coalesce((f.message ->> 'created_at')::timestamptz,
                        (select s.started_at from memory.sessions as s
                         where s.tenant_id = tenant and s.session_key = session))
        from fresh as f cross join last_position as lp
        order by f.index
        returning turns.role, turns.content
    )
    -- Turns longer than indexing reads (index_max_chunks x chunk_chars) are stored whole, indexed in part.
    select count(*), count(*) filter (where index_roles ? a.role and length(a.content) > index_chars)
    into added, partial
    from stored as a;
end
$$;

comment on function memory_internal._add_turns(text, bigint, text, jsonb, jsonb, bigint) is
'Internal: stores the messages a session does not hold yet as its next turns; how many, and how many are '
'indexed in part.';

create or replace function memory.commit(
    session_id text,
    messages json,
    agent_id text default 'default',
    source text default null,
    started_at timestamptz default null,
    model text default null,
    tokens_in bigint default null,
    tokens_out bigint default null,
    metadata jsonb default '{}',
    enrich text default null,
    allow_forgotten boolean default false
) returns table (
    created boolean, turns_added integer, job_id bigint, turns_indexed_in_part integer
)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_max_chars integer := (memory.setting('max_message_chars'))::integer;
    v_dimensions integer := (memory.setting('client_dimensions'))::integer;
    v_enrich text := coalesce(commit.enrich, memory.setting('enrich') #>> '{}');
    v_index_roles jsonb := memory.setting('index_roles');
    v_index_chars bigint := (memory.setting('index_max_chunks'))::bigint * (memory.setting('chunk_chars'))::bigint;
    v_partial integer;
    v_session bigint;
    v_created boolean;
    v_added integer;
    v_job bigint;
    v_messages jsonb;
    v_forgotten record;
begin
    if commit.session_id is null or btrim(commit.session_id) = '' then
        raise exception 'agent_memory: commit needs a session_id';
    end if;
    if commit.agent_id is null or btrim(commit.agent_id) = '' then
        raise exception 'agent_memory: commit needs an agent_id';
    end if;
    if v_enrich not in ('queue', 'now', 'none') then
        raise exception 'agent_memory: enrich must be queue, now or none, got %', v_enrich;
    end if;
    if commit.metadata is null or jsonb_typeof(commit.metadata) <> 'object' then
        raise exception 'agent_memory: commit metadata must be a JSON object';
    end if;
    if commit.messages is null or json_typeof(commit.messages) <> 'array' then
        raise exception 'agent_memory: messages must be a JSON array of messages, got %',
            coalesce(json_typeof(commit.messages), 'null');
    end if;

    perform memory_internal._check_identifier('session_id', commit.session_id);
    perform memory_internal._check_identifier('agent_id', commit.agent_id);
    perform memory_internal._check_identifier('source', commit.source);
    perform memory_internal._check_identifier('model', commit.model);
    if commit.tokens_in < 0 or commit.tokens_out < 0 then
        raise exception 'agent_memory: commit''s tokens_in and tokens_out must not be negative'
            using errcode = 'invalid_parameter_value';
    end if;
    v_messages := memory_internal._checked_messages(commit.messages, v_max_chars, v_dimensions);

    insert into memory.sessions as s (tenant_id, agent_id, session_id, source, model, started_at,
                                      tokens_in, tokens_out, metadata)
    values (
        v_tenant, commit.agent_id, commit.session_id, commit.source, commit.model,
        coalesce(
            commit.started_at,
            (select min((m.message ->> 'created_at')::timestamptz) from jsonb_array_elements(v_messages) as m (message)),
            pg_catalog.now()
        ),
        commit.tokens_in, commit.tokens_out, commit.metadata
    )
    on conflict (tenant_id, agent_id, session_id) do update
    set source = coalesce(excluded.source, s.source),
        model = coalesce(excluded.model, s.model),
        started_at = case when commit.started_at is null then s.started_at else excluded.started_at end,
        tokens_in = coalesce(excluded.tokens_in, s.tokens_in),
        tokens_out = coalesce(excluded.tokens_out, s.tokens_out),
        metadata = s.metadata || excluded.metadata,
        updated_at = pg_catalog.now(),
        -- A session written to is in use again.
        tier = 'hot',
        tier_since = case when s.tier = 'hot' then s.tier_since else pg_catalog.now() end
    returning s.session_key, (s.xmax = 0) into v_session, v_created;

    -- A session memory.forget removed comes back only when the caller says so. Checked once the session
    -- row is ours: a commit that waited for a forget of the same session sees its tombstone.
    if v_created then
        select * into v_forgotten from memory_internal._forgotten(commit.agent_id, commit.session_id, commit.allow_forgotten);
        if v_forgotten.tombstone_id is not null and not coalesce(commit.allow_forgotten, false) then
            raise exception 'agent_memory: session % of agent % was forgotten on % (tombstone %)', commit.session_id,
                commit.agent_id, v_forgotten.forgotten_at, v_forgotten.tombstone_id
                using errcode = 'object_not_in_prerequisite_state',
                      hint = 'commit it with allow_forgotten => true to store it again';
        end if;
    end if;

    select a.added, a.partial into v_added, v_partial
    from memory_internal._add_turns(v_tenant, v_session, commit.agent_id, v_messages, v_index_roles, v_index_chars) as a;

    if v_added > 0 and v_enrich = 'queue' then
        insert into memory.jobs (tenant_id, kind, session_key)
        values (v_tenant, 'enrich', v_session)
        on conflict (tenant_id, kind, session_key) where status = 'queued' do nothing
        returning jobs.job_id into v_job;
        if v_job is null then
            select j.job_id into v_job from memory.jobs as j
            where j.tenant_id = v_tenant and j.kind = 'enrich' and j.session_key = v_session and j.status = 'queued';
        end if;
    elsif v_added > 0 and v_enrich = 'now' then
        perform memory_internal._enrich_session(v_tenant, v_session);
    end if;

    perform memory_internal._count(v_tenant, array['commits', 'turns_committed'], array['', ''], array[1, v_added]);
    return query select v_created, v_added, v_job, v_partial;
end
$$;

comment on function memory.commit(text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text, boolean) is
'Stores a session''s messages (a JSON array of {role, content, id?, created_at?, name?, tool_calls?, '
'tool_call_id?, tokens?, metadata?, embedding? (client embedder)}) under this tenant and agent_id. '
'Idempotent: only new turns are added. '
'enrich: queue (default, a job for memory.work), now, or none. Returns whether the '
'session is new, how many turns were added, the queued job, and how many added turns are longer than '
'indexing reads (index_max_chunks x chunk_chars characters: stored whole, indexed in part). '
'A session memory.forget removed is refused unless allow_forgotten. '
'Pass jsonb as messages::json.';

-- sql/idempotent/curated/068-remember.sql
-- Remembering: curated memories created and updated. A memory's words are a turn of the agent's session
-- 'remembered' (one turn per distinct text), enriched as it is remembered (enrich => 'now'), so the next
-- recall, even in the same transaction, finds it. The same claim remembered again is the same memory; a
-- new claim under a key the agent already holds supersedes the one before it, which keeps its period.

comment on type memory.remembered is
'What memory.remember returns: the memory (the columns of memory.memory_items) and outcome: created, '
'updated (it superseded a version of its key), unchanged (the same claim was already held) or merged (a '
'paraphrase of a memory held, which gained its evidence).';

-- Subject names as stored: normalized like entity names, empty ones dropped, each once, sorted.
create or replace function memory_internal._memory_subjects(subjects text[]) returns text[]
language sql
immutable parallel safe
as $$
    select coalesce(array_agg(distinct n.normalized order by n.normalized), '{}')
    from unnest(subjects) as s (name)
    cross join lateral (select memory.normalize_entity(s.name) as normalized) as n
    where n.normalized <> ''
$$;

comment on function memory_internal._memory_subjects(text[]) is
'Internal: subject names normalized as entity names are (empty ones dropped), distinct and sorted.';

-- The canonical form of a claim: its kind, its subjects and its words normalized as entity names are
-- (case, look-alikes, white space, edge punctuation), hashed. Equal claims are one memory.
create or replace function memory_internal._memory_canonical(kind text, subjects text[], content text) returns bytea
language sql
immutable parallel safe
as $$
    select sha256(convert_to(
        kind || chr(31) || array_to_string(subjects, chr(30)) || chr(31) || memory.normalize_entity(content), 'UTF8'
    ))
$$;

comment on function memory_internal._memory_canonical(text, text[], text) is
'Internal: the hash that makes a repeated claim (same kind, subjects and normalized words) one memory.';

-- The turn of an agent's session 'remembered' with this message id, or null.
create or replace function memory_internal._remembered_turn(agent_id text, message_id text) returns bigint
language sql
stable
as $$
    select t.turn_id
    from memory.turns as t
    inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
    where s.tenant_id = memory.current_tenant() and s.agent_id = _remembered_turn.agent_id
        and s.session_id = 'remembered' and t.message_id = _remembered_turn.message_id
$$;

comment on function memory_internal._remembered_turn(text, text) is
'Internal: the turn of an agent''s session ''remembered'' with a message id, or null.';

-- The turn that carries a memory's words: committed to the agent's session 'remembered', its id the hash
-- of the text (the same text is one turn). A failed enrichment (an endpoint down) leaves the turn queued.
create or replace function memory_internal._memory_turn(
    content text, kind text, agent_id text, metadata jsonb, enrich text
)
returns bigint
language plpgsql
as $$
declare
    v_id text := 'remembered:' || encode(sha256(convert_to(content, 'UTF8')), 'hex');
    v_messages jsonb := jsonb_build_array(jsonb_build_object(
        'role', 'user', 'content', content, 'id', v_id, 'metadata', metadata || jsonb_build_object('kind', kind)
    ));
    v_turn bigint;
begin
    -- Words remembered before are that turn, and the session is left as it is.
    v_turn := memory_internal._remembered_turn(agent_id, v_id);
    if v_turn is not null then
        return v_turn;
    end if;
    begin
        -- Remembering is the caller saying so: the session comes back even after a forget.
        perform from memory.commit('remembered', v_messages::json, agent_id => agent_id, source => 'remember',
                                   enrich => enrich, allow_forgotten => true);
    exception when others then
        if enrich is distinct from 'now' then
            raise;
        end if;
        raise notice 'agent_memory: remembered, but enriching it failed (%); it is queued instead', sqlerrm;
        perform from memory.commit('remembered', v_messages::json, agent_id => agent_id, source => 'remember',
                                   enrich => 'queue', allow_forgotten => true);
    end;
    return memory_internal._remembered_turn(agent_id, v_id);
end
$$;

comment on function memory_internal._memory_turn(text, text, text, jsonb, text) is
'Internal: the key of the turn of session ''remembered'' that carries a memory''s words (committed if new).';

-- The turn ids a caller gave as evidence, checked: every one must be a turn of this tenant.
create or replace function memory_internal._evidence_turns(turn_ids bigint[]) returns bigint[]
language plpgsql
stable
as $$
declare
    v_missing bigint;
begin
    select e.id into v_missing
    from unnest(coalesce(turn_ids, '{}')) as e (id)
    where e.id is null or not exists (
        select from memory.turns as t where t.tenant_id = memory.current_tenant() and t.turn_id = e.id
    )
    limit 1;
    if found then
        raise exception 'agent_memory: evidence turn % does not exist', coalesce(v_missing::text, 'null')
            using errcode = 'foreign_key_violation';
    end if;
    return (select coalesce(array_agg(distinct e.id order by e.id), '{}') from unnest(coalesce(turn_ids, '{}')) as e (id));
end
$$;

comment on function memory_internal._evidence_turns(bigint[]) is
'Internal: the distinct turn ids given as a memory''s evidence, each checked to be a turn of the tenant.';

-- Turns added to a memory's evidence (those it has already are left as they are).
create or replace function memory_internal._add_evidence(tenant text, memory_id bigint, turns bigint[]) returns void
language sql
as $$
    insert into memory.memory_evidence (tenant_id, memory_id, turn_id)
    select tenant, _add_evidence.memory_id, e.turn_id from unnest(turns) as e (turn_id)
    order by e.turn_id
    on conflict do nothing
$$;

comment on function memory_internal._add_evidence(text, bigint, bigint[]) is
'Internal: adds turns to a memory''s evidence (memory.memory_evidence).';

-- Takes the turn of the writers of one claim of a tenant, held to the end of the transaction: a row of
-- memory_internal._locks (one of 1,024 per tenant, by a hash of the claim), which no other role can lock,
-- and which only the tenant's own transactions share.
create or replace function memory_internal._lock_claim(tenant text, claim text) returns void
language plpgsql
as $$
declare
    v_name text := 'claim ' || (pg_catalog.hashtextextended(claim, 0) & 1023);
begin
    perform from memory_internal._locks as l where l.tenant_id = tenant and l.name = v_name for update;
    if not found then
        insert into memory_internal._locks as l (tenant_id, name) values (tenant, v_name) on conflict do nothing;
        perform from memory_internal._locks as l where l.tenant_id = tenant and l.name = v_name for update;
    end if;
end
$$;

comment on function memory_internal._lock_claim(text, text) is
'Internal: waits for, then holds to the end of the transaction, the turn of the writers of one claim of a tenant.';

-- The memory an agent holds for a claim: current (under the key, when there is one), or awaiting review
-- when the claim is a proposal (pending). Writers of one key (or, without a key, of one claim) of an agent
-- take turns: this takes the lock they share, held to the end of the transaction.
create or replace function memory_internal._held_claim(
    tenant text, agent_id text, canonical bytea, key text, pending boolean
) returns bigint
language plpgsql
as $$
#variable_conflict use_column
begin
    perform memory_internal._lock_claim(
        tenant, concat_ws(chr(31), _held_claim.agent_id, coalesce(_held_claim.key, encode(_held_claim.canonical, 'hex')))
    );
    return (
        select m.memory_id from memory.memories as m
        where m.tenant_id = tenant and m.agent_id = _held_claim.agent_id and m.canonical = _held_claim.canonical
            and m.valid_to is null and (_held_claim.key is null or m.key = _held_claim.key)
            and (m.status in ('active', 'ongoing') or pending and m.status = 'pending')
        order by m.status = 'pending', m.memory_id
        limit 1
    );
end
$$;

comment on function memory_internal._held_claim(text, text, bytea, text, boolean) is
'Internal: the memory an agent holds for a claim (current, or pending for a proposal), after taking the '
'lock writers of the claim share.';

create or replace function memory.remember(
    content text, kind text default 'fact', agent_id text default 'default', metadata jsonb default '{}',
    enrich text default 'now', key text default null, subjects text[] default '{}', tags text[] default '{}',
    importance double precision default 0.5, confidence double precision default 1, valid_from timestamptz default null,
    evidence bigint[] default '{}', status text default 'active'
) returns setof memory.remembered
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_text text := btrim(remember.content);
    v_key text := nullif(btrim(remember.key), '');
    v_from timestamptz := coalesce(remember.valid_from, pg_catalog.now());
    v_subjects text [];
    v_canonical bytea;
    v_evidence bigint [];
    v_same bigint;
    v_before bigint;
    v_next timestamptz;
    v_turn bigint;
    v_id bigint;
    v_outcome text;
    v_settings jsonb := memory_internal._settings_json();
    v_paraphrased record;
begin
    if v_text is null or v_text = '' then
        raise exception 'agent_memory: remember needs some content' using errcode = 'invalid_parameter_value';
    end if;
    if remember.kind is null or not remember.kind = any (memory_internal._memory_kinds()) then
        raise exception 'agent_memory: remember kind must be one of %, got %',
            array_to_string(memory_internal._memory_kinds(), ', '), coalesce(remember.kind, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    if remember.status is null or remember.status not in ('active', 'ongoing', 'pending') then
        raise exception 'agent_memory: remember status must be active, ongoing or pending, got %',
            coalesce(remember.status, 'null') using errcode = 'invalid_parameter_value';
    end if;
    if remember.status = 'pending' and remember.key is not null then
        raise exception 'agent_memory: a pending memory cannot have a key'
            using errcode = 'invalid_parameter_value',
                  hint = 'remember it active under its key, or pending without one and approve it';
    end if;
    if remember.agent_id is null then
        raise exception 'agent_memory: remember needs an agent_id' using errcode = 'invalid_parameter_value';
    end if;
    if remember.metadata is null or jsonb_typeof(remember.metadata) <> 'object' then
        raise exception 'agent_memory: remember metadata must be a JSON object' using errcode = 'invalid_parameter_value';
    end if;
    if remember.importance is null or remember.importance not between 0 and 1
        or remember.confidence is null or remember.confidence not between 0 and 1 then
        raise exception 'agent_memory: importance and confidence must be between 0 and 1, got % and %',
            coalesce(remember.importance::text, 'null'), coalesce(remember.confidence::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    if remember.key is not null and v_key is null then
        raise exception 'agent_memory: a memory key cannot be blank' using errcode = 'invalid_parameter_value';
    end if;
    v_subjects := memory_internal._memory_subjects(coalesce(remember.subjects, '{}'));
    v_canonical := memory_internal._memory_canonical(remember.kind, v_subjects, v_text);
    v_evidence := memory_internal._evidence_turns(remember.evidence);
    -- The same claim, current (or, for a proposal, awaiting review), is the same memory: nothing changes.
    v_same := memory_internal._held_claim(v_tenant, remember.agent_id, v_canonical, v_key, remember.status = 'pending');
    select null::bigint as memory_id, null::double precision as similarity into v_paraphrased;
    if v_same is null and v_settings ->> 'memory_dedup' <> 'off' then
        select * into v_paraphrased
        from memory_internal._paraphrased_memory(v_tenant, remember.agent_id, remember.kind, v_key, v_text, v_settings);
    end if;
    if v_same is not null then
        v_id := v_same;
        v_outcome := 'unchanged';
    elsif v_paraphrased.memory_id is not null and v_settings ->> 'memory_dedup' = 'merge' then
        -- A paraphrase of a memory held is that memory, with the claim's evidence added.
        perform memory_internal._add_evidence(v_tenant, v_paraphrased.memory_id, v_evidence);
        insert into memory.memory_merges (tenant_id, memory_id, agent_id, kind, content, similarity, merged)
        values (v_tenant, v_paraphrased.memory_id, remember.agent_id, remember.kind, v_text, v_paraphrased.similarity,
                true);
        v_id := v_paraphrased.memory_id;
        v_outcome := 'merged';
    else
        v_turn := memory_internal._memory_turn(v_text, remember.kind, remember.agent_id, remember.metadata, remember.enrich);
        -- Under a key, the new claim is placed in the key's history by valid_from: the version before it
        -- ends where it begins, and a backdated one ends where the next begins.
        if v_key is not null then
            select m.memory_id into v_before from memory.memories as m
            where m.tenant_id = v_tenant and m.agent_id = remember.agent_id and m.key = v_key
                and m.status <> 'retracted' and m.valid_from <= v_from
            order by m.valid_from desc, m.memory_id desc
            limit 1;
            select min(m.valid_from) into v_next from memory.memories as m
            where m.tenant_id = v_tenant and m.agent_id = remember.agent_id and m.key = v_key
                and m.status <> 'retracted' and m.valid_from > v_from;
            update memory.memories as m
            set valid_to = v_from, status = case when m.status in ('active', 'ongoing') then 'superseded' else m.status end
            where m.tenant_id = v_tenant and m.memory_id = v_before and (m.valid_to is null or m.valid_to > v_from);
        end if;
        insert into memory.memories (tenant_id, agent_id, kind, content, key, subjects, tags, importance, confidence,
                                     status, valid_from, valid_to, canonical, turn_id, supersedes)
        values (v_tenant, remember.agent_id, remember.kind, v_text, v_key, v_subjects,
                coalesce(remember.tags, '{}'), remember.importance, remember.confidence,
                case when v_next is null then remember.status else 'superseded' end, v_from, v_next, v_canonical,
                v_turn, v_before)
        returning memory.memories.memory_id into v_id;
        perform memory_internal._add_evidence(v_tenant, v_id, v_evidence);
        -- The version after a backdated one now follows it.
        update memory.memories as m set supersedes = v_id
        where v_next is not null and m.tenant_id = v_tenant and m.agent_id = remember.agent_id and m.key = v_key
            and m.status <> 'retracted' and m.valid_from = v_next;
        v_outcome := case when v_before is null and v_next is null then 'created' else 'updated' end;
        -- Shadow mode: the merge it would have made, recorded only.
        if v_paraphrased.memory_id is not null then
            insert into memory.memory_merges (tenant_id, memory_id, agent_id, kind, content, similarity, merged,
                                              created_memory_id)
            values (v_tenant, v_paraphrased.memory_id, remember.agent_id, remember.kind, v_text,
                    v_paraphrased.similarity, false, v_id);
        end if;
    end if;
    return query select i.*, v_outcome from memory.memory_items as i where i.memory_id = v_id;
end
$$;

comment on function memory.remember(
    text, text, text, jsonb, text, text, text[], text[], double precision, double precision, timestamptz, bigint[], text
) is
'Keeps a memory of an agent: a fact, preference, rule, decision, skill, event, observation or task, with '
'optional key, subjects (normalized as entity names), tags, importance and confidence (0-1), valid_from '
'(default now), evidence (turn ids it came from) and status (active; ongoing for work in progress; pending '
'for a proposal awaiting review, without a key, which recall leaves out until memory.approve). The '
'same claim (kind, subjects and normalized words) remembered again is the same memory (outcome '
'unchanged). A different claim under a key the agent holds supersedes the current one, which ends at '
'valid_from (outcome updated); a backdated one takes its place in the key''s history. Its words are a turn '
'of session ''remembered'', enriched now by default (enrich: now, queue or none) and recalled like any '
'turn. A paraphrase of a memory the agent holds (setting memory_dedup: vectors within '
'memory_dedup_threshold, the same numbers, names and polarity) is merged into it (outcome merged, logged in '
'memory.memory_merges). Returns the memory and the outcome: created, updated, unchanged or merged.';

-- Facts remembered before memories had a table of their own (0.2.0) become memories, once.
with remembered as (
    select
        t.tenant_id,
        s.agent_id,
        t.turn_id,
        t.created_at,
        btrim(t.content) as content,
        coalesce((
            select k.kind from unnest(memory_internal._memory_kinds()) as k (kind)
            where k.kind = t.metadata ->> 'kind'
        ), 'fact') as kind
    from memory.turns as t
    inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
    where
        s.source = 'remember' and btrim(t.content) <> ''
        and not exists (
            select from memory.memories as m
            where m.tenant_id = t.tenant_id and m.turn_id = t.turn_id
        )
)

insert into memory.memories (tenant_id, agent_id, kind, content, canonical, turn_id, valid_from, recorded_at)
select
    r.tenant_id,
    r.agent_id,
    r.kind,
    r.content,
    memory_internal._memory_canonical(r.kind, '{}', r.content) as canonical,
    r.turn_id,
    r.created_at as valid_from,
    r.created_at as recorded_at
from remembered as r
on conflict do nothing;

-- sql/idempotent/curated/070-memory-extraction.sql
-- Extraction: enrichment proposes curated memories from what a session's users state (setting
-- memory_extractor: patterns, llm or none), each with its turn as evidence, stored with the status the
-- setting extracted_memory_status gives (active, or pending for review) and origin patterns or llm.

-- The proposals for a session's turns: by the patterns (answer null), or read from the llm's answer.
create or replace function memory_internal._propose_memories(turns jsonb, answer text)
returns table (turn_id bigint, kind text, content text)
language plpython3u
stable
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db import memory_extraction
said = json.loads(turns)
if answer is None:
    proposals = memory_extraction.propose(said)
else:
    try:
        proposals, problems = memory_extraction.parse_llm_memories(answer, said)
    except ValueError as exc:
        plpy.error("agent_memory: llm memory extraction failed: %s" % exc)
    for problem in problems:
        plpy.notice("agent_memory: llm memory extraction: %s; left out" % problem)
return [(p.turn_id, p.kind, p.content) for p in proposals]
$$;

comment on function memory_internal._propose_memories(jsonb, text) is
'Internal: the memories a session''s user turns state (kind, words, evidence turn), by the patterns or '
'from the llm extractor''s answer (an item that names no user turn or misquotes it is left out with a notice).';

-- A session's proposals remembered as the session's agent. A claim already held (or paraphrased) gains the
-- turn as evidence; what was proposed from a turn once, kept or merged, is not proposed again (a retracted
-- proposal stays retracted).
create or replace function memory_internal._extract_memories(
    tenant text, session bigint, turns jsonb, settings jsonb, answer text
) returns void
language plpgsql
as $$
declare
    v_agent text := (select s.agent_id from memory.sessions as s where s.tenant_id = tenant and s.session_key = session);
    v_proposal record;
    v_memory memory.remembered;
    v_held bigint;
begin
    if memory.current_tenant() is distinct from tenant then
        raise exception 'agent_memory: extracting memories of tenant "%" as tenant "%"', tenant,
            memory.current_tenant();
    end if;
    for v_proposal in
        select p.turn_id, p.kind, p.content
        from memory_internal._propose_memories(turns, answer) as p
        where not exists (
            select from memory.memory_evidence as e
            inner join memory.memories as m on e.tenant_id = m.tenant_id and e.memory_id = m.memory_id
            where e.tenant_id = tenant and e.turn_id = p.turn_id and m.agent_id = v_agent
                and (
                    m.canonical = memory_internal._memory_canonical(p.kind, '{}', btrim(p.content))
                    or exists (
                        select from memory.memory_merges as g
                        where g.tenant_id = tenant and g.memory_id = m.memory_id and g.content = btrim(p.content)
                    )
                )
        )
        -- One order of the claims' locks for every worker.
        order by memory_internal._memory_canonical(p.kind, '{}', btrim(p.content)), p.turn_id
    loop
        -- A claim held already gains the turn; remember() would find it the same way and change nothing.
        v_held := memory_internal._held_claim(
            tenant, v_agent, memory_internal._memory_canonical(v_proposal.kind, '{}', btrim(v_proposal.content)), null,
            settings ->> 'extracted_memory_status' = 'pending'
        );
        if v_held is not null then
            perform memory_internal._add_evidence(tenant, v_held, array[v_proposal.turn_id]);
            continue;
        end if;
        -- A new claim, or a paraphrase of one held: remember stores the turn as its evidence.
        select r.* into v_memory
        from memory.remember(v_proposal.content, v_proposal.kind, agent_id => v_agent, enrich => 'queue',
                             evidence => array[v_proposal.turn_id],
                             status => settings ->> 'extracted_memory_status') as r;
        if v_memory.outcome = 'created' then
            update memory.memories as m set origin = settings ->> 'memory_extractor'
            where m.tenant_id = tenant and m.memory_id = v_memory.memory_id;
        end if;
    end loop;
end
$$;

comment on function memory_internal._extract_memories(text, bigint, jsonb, jsonb, text) is
'Internal: remembers the memories a session''s users state (origin patterns or llm, status from '
'extracted_memory_status); a claim already held gains the turn as evidence.';

-- sql/idempotent/recall/089-query-intent.sql
-- Intent routing: a question about rules, preferences or decisions is answered from curated memory
-- first. Its intent is the memory kind its words ask for, found without any model: rule (rules, policies,
-- guidelines, instructions, constraints, conventions, what is allowed or required), preference (prefer,
-- preference, favourite), decision (decide, decision, agreed, settled on, going with, chose). Recall gives
-- memories of that kind that are more relevant than the candidates' mean the signal kind (weight_kind),
-- which by default puts them above the hybrid.
create or replace function memory.query_intent(query text) returns text
language sql
immutable parallel safe
as $$
    select case
        when query ~* '\m(rules?|polic(y|ies)|guidelines?|instructions?|constraints?|conventions?|allowed|supposed to|required to|must (i|we))\M'
            then 'rule'
        when query ~* '\m(prefers?|preferred|preferences?|favou?rites?)\M' then 'preference'
        when query ~* '\m(decide|decided|decisions?|agreed|settled on|going with|go with|chose|chosen)\M' then 'decision'
    end
$$;

comment on function memory.query_intent(text) is
'The memory kind a question asks for, from its words (no model): rule (rules, policies, guidelines, '
'instructions, constraints, conventions, allowed, required), preference (prefer, preference, favourite) '
'or decision (decide, decision, agreed, settled on, going with, chose); null for any other '
'question. recall(intent => ...) overrides it.';

-- sql/idempotent/recall/090-recall-query.sql
-- Recall, step 1: the query prepared once — settings in force, speakers it names, the text searched,
-- its lexemes with document frequencies and idf in the scope (tenant, and agent when given), the
-- entities it is about.

-- The recall settings in force, with per-call weights (keys of memory.setting_definitions()) on top.
create or replace function memory_internal._recall_settings(weights jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    v_key text;
    v_settings jsonb;
begin
    if weights is null then
        return memory_internal._settings_json();
    end if;
    if jsonb_typeof(weights) <> 'object' then
        raise exception 'agent_memory: weights must be a JSON object of settings, got %', jsonb_typeof(weights);
    end if;
    v_settings := memory_internal._settings_json();
    for v_key in select jsonb_object_keys(weights) loop
        perform memory_internal._check_set_by(v_key, 'a call''s weights');
        v_settings := v_settings || jsonb_build_object(v_key, memory_internal._validated_setting(v_key, weights -> v_key));
    end loop;
    return v_settings;
end
$$;

comment on function memory_internal._recall_settings(jsonb) is
'Internal: the settings in force for one recall, per-call weights taking precedence.';

-- The speakers of the scope whose names the query mentions (whole words, any case).
-- plpgsql for the plan it keeps across calls (see memory_internal._settings_json).
create or replace function memory_internal._query_speakers(query text, tenant text, agent text) returns text[]
language plpgsql
stable
as $$
begin
    return (
        select coalesce(array_agg(distinct s.speaker), '{}')
        from memory.speakers as s
        where s.tenant_id = tenant and (agent is null or s.agent_id = agent)
            and query ~* ('\m' || regexp_replace(s.speaker, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
    );
end
$$;

comment on function memory_internal._query_speakers(text, text, text) is
'Internal: speakers of the scope named in the query.';

create or replace function memory_internal._without_names(query text, names text[]) returns text
language sql
immutable
as $$
    select coalesce((
        select regexp_replace(query, '\m(' || string_agg(regexp_replace(n, '([.*+?^${}()|\[\]\\])', '\\\1', 'g'), '|')
                                     || ')(''s)?\M', ' ', 'gi')
        from unnest(names) as n
    ), query)
$$;

comment on function memory_internal._without_names(text, text[]) is
'Internal: the query with the given names taken out.';

-- The days a query names ("in March 2024", "on 3 May", "last week"), relative to today, or null;
-- English expressions (agent_memory_db.periods).
create or replace function memory_internal._named_period(query text, today date) returns daterange
language plpython3u
immutable strict parallel safe
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import datetime
from agent_memory_db.periods import named_period
period = named_period(query, datetime.date.fromisoformat(today))
return None if period is None else "[%s,%s)" % period
$$;

comment on function memory_internal._named_period(text, date) is
'Internal: the days a query names (first day, day after the last), relative to today; null if none.';

-- The keys of the runs of one to four words of a query written as a name (capitalized, with a digit or
-- a symbol inside, or a name of the gazetteer that is not a common word): the names it mentions
-- entities by (agent_memory_db.entities.query).
create or replace function memory_internal._query_entity_names(query text, gazetteer jsonb) returns text[]
language plpython3u
immutable strict parallel safe
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db.entities.query import query_names
return query_names(query, json.loads(gazetteer))
$$;

comment on function memory_internal._query_entity_names(text, jsonb) is
'Internal: the normalized keys of the runs of one to four words of a query written as a name (the names '
'of entities it may mention).';

-- The entities a recall is about, in the scope: those the caller passed and those the query names (a run
-- of its words written as a name that is an entity's key or alias; speaker names, matched by signal
-- speaker, are taken out of the searched text first). Each name is a group of the keys it stands for (one
-- per scope when no agent is given), weighted by how specific it is in the scope: ln(1 + N / n) / ln(1 + N)
-- for n turns mentioning it among N chunks, 1 for a name said once, near 0 for one said everywhere.
-- Their neighbours: the entities most often mentioned with them, by edge count. With entity_mode all, the
-- sessions that mention every passed entity (none when one is unknown).
create or replace function memory_internal._query_entities(
    inout q memory_internal._recall_query, tenant text, agent text, entities text[], entity_mode text,
    gazetteer jsonb
)
language plpgsql
stable
as $$
declare
    v_passed text [];
    v_names text [];
begin
    if exists (select from unnest(entities) as e where coalesce(memory.normalize_entity(e), '') = '') then
        raise exception 'agent_memory: entities must be names; these have nothing left once normalized: %',
            (select string_agg(coalesce(quote_literal(e), 'null'), ', ') from unnest(entities) as e
             where coalesce(memory.normalize_entity(e), '') = '');
    end if;
    v_passed := array(select distinct memory.normalize_entity(e) from unnest(entities) as e);
    v_names := v_passed || memory_internal._query_entity_names(q.search_text, gazetteer);
    -- Each entity found is grouped under the name that found it: its key, else the alias asked for.
    select coalesce(array_agg(f.entity_id order by f.entity_id), '{}'),
           coalesce(array_agg(f.name_group order by f.entity_id), '{}'),
           coalesce(array_agg(distinct f.name), '{}')
    into q.entity_ids, q.entity_groups, q.entity_names
    from (
        select e.entity_id, e.name,
               dense_rank() over (order by case when e.normalized = any(v_names) then e.normalized else (
                   select min(a) from unnest(e.aliases) as a where a = any(v_names)
               ) end)::integer as name_group
        from memory.entities as e
        where e.tenant_id = tenant and (agent is null or e.agent_id = agent)
            and (e.normalized = any(v_names) or e.aliases && v_names)
            -- An entity no turn mentions (one kept for its state alone) lifts nothing.
            and exists (select from memory.entity_mentions as m where m.tenant_id = tenant and m.entity_id = e.entity_id)
    ) as f;
    if cardinality(q.entity_ids) > 0 then
        select array_agg(w.weight order by k.entity_id) into q.entity_weights
        from unnest(q.entity_ids, q.entity_groups) as k (entity_id, name_group)
        inner join (
            select g.name_group,
                   ln(1 + greatest(q.chunks_in_scope, 1) / greatest(count(distinct m.turn_id), 1))
                   / ln(1 + greatest(q.chunks_in_scope, 1)) as weight
            from unnest(q.entity_ids, q.entity_groups) as g (entity_id, name_group)
            left join memory.entity_mentions as m on m.tenant_id = tenant and m.entity_id = g.entity_id
            group by g.name_group
        ) as w on w.name_group = k.name_group;
        select coalesce(array_agg(x.neighbor order by x.turns desc, x.neighbor), '{}') into q.neighbor_ids
        from (
            select case when g.entity_a = any(q.entity_ids) then g.entity_b else g.entity_a end as neighbor,
                   sum(g.turns) as turns
            from memory.entity_edges as g
            where g.tenant_id = tenant and (g.entity_a = any(q.entity_ids) or g.entity_b = any(q.entity_ids))
            group by 1
            order by 2 desc, 1
            limit 10 + cardinality(q.entity_ids)
        ) as x
        where x.neighbor <> all(q.entity_ids);
        q.neighbor_ids := q.neighbor_ids[1:10];
    end if;
    if entity_mode = 'all' and cardinality(v_passed) > 0 then
        select coalesce(array_agg(s.session_key), '{}') into q.entity_sessions
        from (
            select m.session_key
            from unnest(v_passed) as p (key)
            cross join lateral unnest(memory_internal._entity_ids(p.key, agent)) as e (entity_id)
            inner join memory.entity_mentions as m on m.tenant_id = tenant and m.entity_id = e.entity_id
            group by m.session_key
            having count(distinct p.key) = cardinality(v_passed)
        ) as s;
    end if;
end
$$;

comment on function memory_internal._query_entities(
    memory_internal._recall_query, text, text, text[], text, jsonb
) is
'Internal: the entities a recall is about (passed, or named in the query) with how specific each is in '
'the scope, their graph neighbours, and for entity_mode all the sessions mentioning every passed one.';

-- The query prepared for the candidate lists and the full-text score.
create or replace function memory_internal._prepare_query(
    query text, tenant text, agent text, settings jsonb, entities text[], entity_mode text, intent text
)
returns memory_internal._recall_query
language plpgsql
stable
as $$
declare
    v_tsconfig regconfig := (settings ->> 'text_search_config')::regconfig;
    q memory_internal._recall_query;
begin
    q.speakers := memory_internal._query_speakers(query, tenant, agent);
    q.search_text := query;
    -- Speaker names the query mentions are matched as speakers (signal speaker), so by default they are
    -- left out of what is searched as text and as a vector: indexed text holds no speaker names.
    if (settings ->> 'strip_speaker_names')::boolean and cardinality(q.speakers) > 0 then
        q.search_text := memory_internal._without_names(query, q.speakers);
        if btrim(regexp_replace(q.search_text, '\W', '', 'g')) = '' then
            q.search_text := query;
        end if;
    end if;
    q.lexemes := tsvector_to_array(to_tsvector(v_tsconfig, q.search_text));
    q.period := (
        select tstzrange(lower(p)::timestamptz, upper(p)::timestamptz)
        from memory_internal._named_period(query, current_date) as p
        where p is not null
    );
    select coalesce(sum(k.chunks), 0), coalesce(sum(k.total_length), 0) / greatest(coalesce(sum(k.chunks), 0), 1)
    into q.chunks_in_scope, q.avg_length
    from memory.corpus as k
    where k.tenant_id = tenant and (agent is null or k.agent_id = agent);
    select array_agg(coalesce(d.df, 0) order by l.n),
           array_agg(ln(1 + (q.chunks_in_scope - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) order by l.n)
    into q.df, q.idf
    from unnest(q.lexemes) with ordinality as l (lexeme, n)
    left join lateral (
        select sum(x.chunks) as df from memory.lexicon as x
        where x.tenant_id = tenant and x.lexeme = l.lexeme and (agent is null or x.agent_id = agent)
    ) as d on true;
    if cardinality(q.lexemes) > 0 then
        q.tsquery := array_to_string(array(select quote_literal(l) from unnest(q.lexemes) as l), ' | ')::tsquery;
        -- Terms in more than lexical_max_df chunks of the scope still count in every score, but do not
        -- bring candidates by themselves (the rarest term always does): a word in most chunks would make
        -- the list score nearly every chunk while adding little to any.
        q.generating := array_to_string(array(
            select quote_literal(g.lexeme) from unnest(q.lexemes, q.df) as g (lexeme, df)
            where g.df <= (settings ->> 'lexical_max_df')::bigint or g.df = (select min(m) from unnest(q.df) as m)
        ), ' | ')::tsquery;
    end if;
    q := memory_internal._query_entities(q, tenant, agent, entities, entity_mode, settings -> 'entity_gazetteer');
    -- The kind of memory the question asks for (the caller's intent, else the one its words name).
    q.intent := case when intent is null then memory.query_intent(query) when intent <> 'none' then intent end;
    q.intent_kinds := case when q.intent is not null then array[q.intent] end;
    return q;
end
$$;

comment on function memory_internal._prepare_query(text, text, text, jsonb, text[], text, text) is
'Internal: a recall query prepared once (text searched, speakers and entities named, lexemes with df '
'and idf in scope, the period it names, the kind of memory it asks for).';

-- sql/idempotent/recall/091-recall-bm25.sql
-- Recall, the full-text score of a chunk: BM25 over the turn's own words (tsvector weight D, the default),
-- or over its own words together with its context (weight C: the turn before it) discounted by
-- context_weight, whichever is higher. Context fills in for a turn that does not say what the question
-- asks ("Yes, we did!"); it never adds to a turn whose own words match, so a reply cannot win on the
-- words of the question it answers.

-- One query term's BM25 contribution to a chunk: idf, the term's (weighted) frequency in the chunk, the
-- chunk's (weighted) length.
create or replace function memory_internal._bm25_term(
    idf double precision, frequency double precision, length double precision,
    k1 double precision, b double precision, avg_length double precision
) returns double precision
language sql
immutable parallel safe
as $$
    select idf * (frequency * (k1 + 1)) / (frequency + k1 * (1 - b + b * length / greatest(avg_length, 1)))
$$;

comment on function memory_internal._bm25_term(
    double precision, double precision, double precision, double precision, double precision,
    double precision
) is
'Internal: one query term''s BM25 contribution to a chunk (inlined into memory_internal._chunk_bm25).';

-- A chunk's BM25 score for the query's lexemes and their idf: the one place the sum is written. A set
-- function of one row so that the planner inlines it where it is joined laterally. An own occurrence is
-- a position of weight D; a lexeme stored without positions counts once, as an own word.
create or replace function memory_internal._chunk_bm25(
    tsv tsvector, length integer, context_length integer, lexemes text[], idf double precision[],
    k1 double precision, b double precision, avg_length double precision, context_weight double precision
) returns table (bm25 double precision)
language sql
immutable parallel safe
as $$
    select greatest(
        coalesce(sum(memory_internal._bm25_term(q.idf, o.own, length, k1, b, avg_length)) filter (where o.own > 0), 0),
        context_weight * coalesce(sum(memory_internal._bm25_term(
            q.idf, coalesce(cardinality(u.positions), 1), length + context_length, k1, b, avg_length
        )), 0)
    )
    from unnest(tsv) as u
    inner join unnest(lexemes, idf) as q (lexeme, idf) on u.lexeme = q.lexeme
    cross join lateral (select coalesce(cardinality(array_positions(u.weights, 'D')), 1) as own) as o
$$;

comment on function memory_internal._chunk_bm25(
    tsvector, integer, integer, text[], double precision[], double precision, double precision,
    double precision, double precision
) is
'Internal: a chunk''s BM25 score: own words, or own words with context times context_weight if higher.';

-- sql/idempotent/recall/092-recall-lists.sql
-- Recall, step 2: candidate lists. The top recall_candidates chunks by BM25, the top recall_candidates
-- chunks by cosine similarity to the query vector (exact for small scopes, HNSW with iterative scan for
-- large ones), and the best chunks of the top session_candidates sessions by summary full text and by
-- session vector. Every candidate is then scored on every signal, whichever list brought it.

-- One row when a turn passes recall's filters on event time, source, sessions (entity_mode all: the
-- sessions that mention every entity) and tiers (its session's, or the memory's it carries), none
-- otherwise. Used as `cross join lateral
-- memory_internal._turn_filter(...)`: the planner inlines it, a filter not given folds away, and with it the
-- lookup it needs (a scalar function with subqueries could not be inlined).
create or replace function memory_internal._turn_filter(
    tenant text, turn bigint, session bigint, since timestamptz, until timestamptz, source text, sessions bigint[],
    tiers text[]
) returns setof boolean
language sql
stable
as $$
    select true
    where (sessions is null or session = any(sessions))
        and (since is null and until is null or exists (
                select from memory.turns as t
                where t.tenant_id = tenant and t.turn_id = turn
                    and (since is null or t.created_at >= since) and (until is null or t.created_at <= until)
            ))
        and (source is null or exists (
                select from memory.sessions as s
                where s.tenant_id = tenant and s.session_key = session and s.source = _turn_filter.source
            ))
        -- The words of a memory are in the memory's tier, other turns in their session's.
        and (tiers is null or coalesce(
                (select bool_or(m.tier = any(tiers)) from memory.memories as m
                 where m.tenant_id = tenant and m.turn_id = turn),
                exists (
                    select from memory.sessions as s
                    where s.tenant_id = tenant and s.session_key = session and s.tier = any(tiers)
                )
            ))
$$;

comment on function memory_internal._turn_filter(
    text, bigint, bigint, timestamptz, timestamptz, text, bigint[], text[]
) is
'Internal: one row when a turn passes recall''s time, source, session and tier filters (null filters pass).';

-- The statement of a nearest-vector list over chunk_embeddings or session_embeddings ("e"): the query
-- vector is $1, the tenant $2, the list's length $8 (other filters' parameters as
-- memory_internal._candidate_chunks passes them). Exact search sorts every distance ("+ 0" keeps the HNSW
-- index out). Approximate search takes the nearest from the model's HNSW graph (at half precision, with
-- iterative scan, so filters do not starve the list) and from the tenant's vectors not yet in the graph
-- (memory_internal._in_graph), scanned exactly, and keeps the nearest of both by their exact distance.
create or replace function memory_internal._nearest_sql(
    relation text, keys text[], model text, dimensions integer, exact boolean, filter text
) returns text
language plpgsql
immutable
as $$
declare
    v_keys text := (select string_agg(format('e.%I', k), ', ') from unnest(keys) as k);
    v_distance text := format('e.embedding::vector(%s) <=> $1', dimensions);
    v_graph_distance text := format('e.embedding::halfvec(%1$s) <=> $1::halfvec(%1$s)', dimensions);
    v_rows text := format('from memory.%I as e where e.model = %L and e.tenant_id = $2 %s', relation, model,
                          coalesce(filter, ''));
begin
    return format(
        'select %s from (%s) as n',
        (select string_agg(format('array_agg(n.%I)', k), ', ') from unnest(keys) as k),
        case when exact then
            format('select %s %s order by (%s) + 0 limit $8', v_keys, v_rows, v_distance)
        else
            format('select u.* from ('
                   '(select %1$s, %2$s as distance %3$s and e.in_graph order by %4$s limit $8) '
                   'union all '
                   '(select %1$s, (%2$s) + 0 as distance %3$s and not e.in_graph order by (%2$s) + 0 limit $8)'
                   ') as u order by u.distance limit $8',
                   v_keys, v_distance, v_rows, v_graph_distance)
        end
    );
end
$$;

comment on function memory_internal._nearest_sql(text, text[], text, integer, boolean, text) is
'Internal: the statement of a nearest-vector candidate list (exact, or the HNSW graph with the vectors '
'outside it) for memory_internal._candidate_chunks.';

-- The full-text lists. The chunk list: the top recall_candidates chunks of the tenant by BM25 among those that
-- match the query's generating terms and pass recall's filters. It runs as memory_observer, which reads chunks,
-- summaries, turns, sessions and memories past row-level security, and keeps to the tenant it is given
-- (memory_owner's code passes its caller's, and only memory_owner may run it). Under a policy, PostgreSQL tests a
-- condition that is not leakproof only on rows the policy has passed, and tsvector @@ tsquery is not: run as
-- memory_owner, the match could not use the GIN index and read every chunk of the tenant (61 of 66 ms of this list
-- at 100k turns).
create or replace function memory_internal._full_text_candidates(
    tenant text, agent_id text, since timestamptz, until timestamptz, source text, q memory_internal._recall_query,
    settings jsonb, tiers text[]
) returns table (turn_id bigint, chunk_no integer)
language plpgsql
stable
security definer
-- Plans made for each call's values, as memory_internal._candidate_chunks's.
set plan_cache_mode = force_custom_plan
as $$
declare
    v_k1 double precision := (settings ->> 'bm25_k1')::double precision;
    v_b double precision := (settings ->> 'bm25_b')::double precision;
    v_context_weight double precision := (settings ->> 'context_weight')::double precision;
begin
    return query
    select c.turn_id, c.chunk_no
    from memory.chunks as c
    cross join lateral memory_internal._turn_filter(c.tenant_id, c.turn_id, c.session_key, since, until,
                                                    _full_text_candidates.source, q.entity_sessions, tiers)
    cross join lateral memory_internal._chunk_bm25(c.tsv, c.length, c.context_length, q.lexemes, q.idf, v_k1, v_b,
                                                   q.avg_length, v_context_weight) as s
    where c.tenant_id = tenant and c.tsv @@ q.generating
        and (_full_text_candidates.agent_id is null or c.agent_id = _full_text_candidates.agent_id)
    order by s.bm25 desc, c.turn_id
    limit (settings ->> 'recall_candidates')::integer;
end
$$;

comment on function memory_internal._full_text_candidates(
    text, text, timestamptz, timestamptz, text, memory_internal._recall_query, jsonb, text[]
) is
'Internal: the full-text candidate list of a recall in one tenant (runs as memory_observer, so the match uses '
'the GIN index).';

-- The session list by summary: the top session_candidates sessions of the tenant whose summary matches the
-- query's words, by ts_rank_cd, among those that pass recall's filters. As memory_observer, for the reason
-- above (under a policy, 10 ms of a recall at 100k turns, 5,000 summaries read; 1-3 ms by the index).
create or replace function memory_internal._summary_candidates(
    tenant text, agent_id text, source text, q memory_internal._recall_query, settings jsonb, tiers text[]
) returns setof bigint
language plpgsql
stable
security definer
-- A few rows (session_candidates): planned as the default 1,000, the sessions' chunks were read by a scan of
-- every chunk (75 ms a recall at 10k turns, against 36 ms).
rows 5
set plan_cache_mode = force_custom_plan
as $$
begin
    return query
    select m.session_key from memory.summaries as m
    where m.tenant_id = tenant and q.tsquery is not null and m.tsv @@ q.tsquery
        and (q.entity_sessions is null or m.session_key = any(q.entity_sessions))
        and (coalesce(_summary_candidates.agent_id, _summary_candidates.source) is null and tiers is null
            or exists (
                select from memory.sessions as s
                where s.tenant_id = m.tenant_id and s.session_key = m.session_key
                    and (_summary_candidates.agent_id is null or s.agent_id = _summary_candidates.agent_id)
                    and (_summary_candidates.source is null or s.source = _summary_candidates.source)
                    and (tiers is null or s.tier = any(tiers))
            ))
    order by ts_rank_cd(m.tsv, q.tsquery) desc, m.session_key
    limit (settings ->> 'session_candidates')::integer;
end
$$;

comment on function memory_internal._summary_candidates(
    text, text, text, memory_internal._recall_query, jsonb, text[]
) is
'Internal: the sessions of one tenant whose summary best matches a recall''s words (runs as memory_observer, '
'so the match uses the GIN index).';

-- Every candidate chunk of a recall: the union of the full-text, vector and session lists.
create or replace function memory_internal._candidate_chunks(
    tenant text, agent_id text, since timestamptz, until timestamptz, source text, settings jsonb,
    q memory_internal._recall_query, query_vector vector, recall_model text, tiers text[]
) returns table (turn_id bigint, chunk_no integer)
language plpgsql
volatile
-- Plans made for each call's values: a cached generic plan cannot tell one agent's filter from another's.
set plan_cache_mode = force_custom_plan
as $$
declare
    v_candidates integer := (settings ->> 'recall_candidates')::integer;
    v_lex_keys bigint [];
    v_lex_chunks integer [];
    v_dense_keys bigint [];
    v_dense_chunks integer [];
    v_vector_sessions bigint [];
    v_exact boolean;
begin
    if q.generating is not null then
        select array_agg(l.turn_id), array_agg(l.chunk_no) into v_lex_keys, v_lex_chunks
        from memory_internal._full_text_candidates(
            tenant, _candidate_chunks.agent_id, since, until, _candidate_chunks.source, q, settings, tiers
        ) as l;
    end if;

    if query_vector is not null then
        v_exact := q.chunks_in_scope <= (settings ->> 'exact_search_max_chunks')::bigint;
        if not v_exact then
            perform set_config('hnsw.iterative_scan', 'relaxed_order', true);
            perform set_config('hnsw.ef_search', greatest(40, least(1000, v_candidates))::text, true);
        end if;
        -- The filters' tables are read only when a filter is given: unfiltered, a search reads vectors alone.
        execute memory_internal._nearest_sql(
            'chunk_embeddings', array['turn_id', 'chunk_no'], recall_model, vector_dims(query_vector), v_exact,
            case when coalesce(_candidate_chunks.agent_id, _candidate_chunks.source) is not null
                      or since is not null or until is not null or q.entity_sessions is not null
                      or tiers is not null then $filter$
                and exists (
                    select from memory.chunks as c
                    cross join lateral memory_internal._turn_filter(c.tenant_id, c.turn_id, c.session_key, $4, $5, $6, $7,
                                                                    $9)
                    where c.tenant_id = e.tenant_id and c.turn_id = e.turn_id and c.chunk_no = e.chunk_no
                        and ($3 is null or c.agent_id = $3)
                )$filter$
            end
        ) into v_dense_keys, v_dense_chunks
        using query_vector, tenant, _candidate_chunks.agent_id, since, until, _candidate_chunks.source,
              q.entity_sessions, v_candidates, tiers;
        execute memory_internal._nearest_sql(
            'session_embeddings', array['session_key'], recall_model, vector_dims(query_vector), v_exact,
            case when coalesce(_candidate_chunks.agent_id, _candidate_chunks.source) is not null
                      or q.entity_sessions is not null or tiers is not null then $filter$
                and ($7 is null or e.session_key = any($7))
                and exists (
                    select from memory.sessions as s
                    where s.tenant_id = e.tenant_id and s.session_key = e.session_key
                        and ($3 is null or s.agent_id = $3) and ($6 is null or s.source = $6)
                        and ($9 is null or s.tier = any($9))
                )$filter$
            end
        ) into v_vector_sessions
        using query_vector, tenant, _candidate_chunks.agent_id, since, until, _candidate_chunks.source,
              q.entity_sessions, (settings ->> 'session_candidates')::integer, tiers;
    end if;

    -- A memory stands for the turns it came from, so it is a candidate whenever one of them is. (Recall's
    -- scoring statement leaves out the words of memories it does not show, looking each turn's memory up once.)
    return query
    with found as (
        select u.turn_id, u.chunk_no
        from unnest(coalesce(v_lex_keys, '{}') || coalesce(v_dense_keys, '{}'),
                    coalesce(v_lex_chunks, '{}') || coalesce(v_dense_chunks, '{}')) as u (turn_id, chunk_no)
        union
        -- Session lists: the sessions whose summary best matches the query's words and those whose vector is
        -- closest to it; each brings its two chunks closest to the query, so a session found by its summary
        -- or its overall subject takes part even when none of its turns made the lists above.
        select best.turn_id, best.chunk_no
        from (
            select m.session_key
            from memory_internal._summary_candidates(
                tenant, _candidate_chunks.agent_id, _candidate_chunks.source, q, settings, tiers
            ) as m (session_key)
            union
            select v.session_key from unnest(v_vector_sessions) as v (session_key)
        ) as found
        cross join lateral (
            select c.turn_id, c.chunk_no from memory.chunks as c
            cross join lateral memory_internal._turn_filter(c.tenant_id, c.turn_id, c.session_key, since, until, null,
                                                            q.entity_sessions, tiers)
            left join memory.chunk_embeddings as e
                on c.tenant_id = e.tenant_id and c.turn_id = e.turn_id and c.chunk_no = e.chunk_no and e.model = recall_model
            where c.tenant_id = tenant and c.session_key = found.session_key
            -- Full-text rank only decides among chunks without a vector (computed for those alone).
            order by e.embedding <=> query_vector nulls last,
                case when e.embedding is null then ts_rank_cd(c.tsv, q.tsquery) end desc nulls last, c.turn_id
            limit 2
        ) as best
    )

    select f.turn_id, f.chunk_no
    from found as f
    union
    select c.turn_id, c.chunk_no
    from memory.memories as m
    inner join memory.chunks as c on m.tenant_id = c.tenant_id and m.turn_id = c.turn_id and c.chunk_no = 0
    cross join lateral memory_internal._turn_filter(c.tenant_id, c.turn_id, c.session_key, since, until,
                                                    _candidate_chunks.source, q.entity_sessions, tiers)
    where m.tenant_id = tenant
        and m.memory_id in (
            select e.memory_id from memory.memory_evidence as e
            where e.tenant_id = tenant and e.turn_id in (select f.turn_id from found as f)
        )
        and (_candidate_chunks.agent_id is null or m.agent_id = _candidate_chunks.agent_id);
end
$$;

comment on function memory_internal._candidate_chunks(
    text, text, timestamptz, timestamptz, text, jsonb, memory_internal._recall_query, vector, text, text[]
) is
'Internal: every candidate chunk of a recall (full-text, vector and session lists) in the tiers given (null: '
'all), plus the memories whose evidence turns are candidates.';

-- sql/idempotent/recall/093-signal-registry.sql
-- The registry of recall signals (memory.signals) and of the features they read (memory.recall_features).
-- A signal is a function of one candidate (memory.recall_candidate) and the settings in force (jsonb),
-- returning a number, plus one registry row: its name, its stage, its default weight and what it measures.
-- Its weight is the setting weight_<name>. Fusion-stage signals score chunks and are fused (z-score weighted
-- sum, or reciprocal rank fusion); boost-stage signals add weight x value to a turn's fused score. Recall,
-- explain_recall, their components, the client's formatting and the docs all read this registry. A feature
-- is one attribute of memory.recall_candidate: its name, the stage that computes it and its SQL expression;
-- recall's scoring statement is built from them (memory_internal._scoring_sql).

-- What makes a schema one where roles other than superusers could put code the owner would run (null:
-- nothing): its owner is not a superuser, or it lets another role create objects (memory_owner, which makes
-- the HNSW indexes of new embedding models in schema memory, is the extension itself). pg_database_owner (who
-- owns schema public) stands for the owner of this database. Signals' functions must live in such a schema, and so
-- must pgvector, whose schema is on the search_path of every function of the API (sql/tail.sql).
create or replace function memory_internal._schema_problem(schema oid) returns text
language plpgsql
stable
as $$
-- plpgsql, not sql: recall asks this for every signal, and a plpgsql function keeps its plans.
declare
    v_superusers oid [] := array(
        select r.oid from pg_catalog.pg_roles as r
        where r.rolsuper or r.rolname = 'pg_database_owner' and (
            select o.rolsuper from pg_catalog.pg_database as d
            inner join pg_catalog.pg_roles as o on d.datdba = o.oid
            where d.datname = pg_catalog.current_database()
        )
    );
begin
    return (
        select case
            when not n.nspowner = any(v_superusers)
                then format('schema %s is owned by %s, not a superuser', n.nspname, n.nspowner::regrole)
            when exists (
                select from pg_catalog.aclexplode(n.nspacl) as a
                where a.privilege_type = 'CREATE' and not a.grantee = any(v_superusers)
                    and a.grantee <> 'memory_owner'::regrole
            ) then format('schema %s lets roles other than superusers create objects', n.nspname)
        end
        from pg_catalog.pg_namespace as n
        where n.oid = schema
    );
end
$$;

comment on function memory_internal._schema_problem(oid) is
'Internal: why roles other than superusers could put code in a schema (its owner, a grant of create), or null.';

-- The function a signal names (its signature as text), or null if there is none. A schema memory_owner may not
-- use (yet: a restore loads the registry before it grants) is looked up in the catalog, for a function of the
-- signal's signature (memory.recall_candidate, jsonb).
create or replace function memory_internal._signal_function(function text) returns oid
language plpgsql
stable
as $$
declare
    v_name text [] := pg_catalog.parse_ident(pg_catalog.split_part(function, '(', 1));
    v_schema oid := case when cardinality(v_name) = 2 then pg_catalog.to_regnamespace(pg_catalog.quote_ident(v_name[1])) end;
begin
    if v_schema is null or pg_catalog.has_schema_privilege(v_schema, 'usage') then
        return pg_catalog.to_regprocedure(function);
    end if;
    return (
        select p.oid from pg_catalog.pg_proc as p
        where p.pronamespace = v_schema and p.proname = v_name[2]
            and p.pronargs = 2 and p.proargtypes[0] = 'memory.recall_candidate'::regtype
            and p.proargtypes[1] = 'pg_catalog.jsonb'::regtype
    );
end
$$;

comment on function memory_internal._signal_function(text) is
'Internal: the function a signal names, found even in a schema memory_owner may not use, or null.';

-- Recall runs a signal's function as the owner, in every tenant's recall: only code a superuser put where
-- only a superuser can change it may be one. What is wrong with a signal's function (null: nothing): it
-- must exist; be owned by a superuser (or memory_owner, the extension's own); live in a schema with no
-- problem (memory_internal._schema_problem), never a temporary one; and, outside the extension's schemas, be
-- callable by memory_owner (with callable false, that is not asked: a restore loads signals before it grants).
-- It finds the function without the privileges a name lookup needs. Recall skips a signal with a problem
-- and says so in components.degraded; memory.define_signal refuses one, and so does any write to
-- memory.signals (but for callable).
create or replace function memory_internal._signal_problem(function text, callable boolean default true)
returns text
language plpgsql
stable
as $$
declare
    v_oid oid := memory_internal._signal_function(function);
    v_proc record;
begin
    if v_oid is null then
        return format('function %s does not exist', function);
    end if;
    select n.oid as schema, n.nspname as schema_name, owner.rolsuper as by_superuser, owner.rolname as owner
    into v_proc
    from pg_catalog.pg_proc as p
    inner join pg_catalog.pg_namespace as n on p.pronamespace = n.oid
    inner join pg_catalog.pg_roles as owner on p.proowner = owner.oid
    where p.oid = v_oid;
    return case
        when v_proc.schema_name ~ '^pg_(toast_)?temp_' then format('function %s is in a temporary schema', function)
        when not v_proc.by_superuser and v_proc.owner <> 'memory_owner'
            then format('function %s is owned by %s, not a superuser', function, v_proc.owner)
        when memory_internal._schema_problem(v_proc.schema) is not null
            then format('function %s: %s', function, memory_internal._schema_problem(v_proc.schema))
        when callable and v_proc.schema_name not in ('memory', 'memory_internal') and not (
            pg_catalog.has_schema_privilege('memory_owner', v_proc.schema, 'usage')
            and pg_catalog.has_function_privilege('memory_owner', v_oid, 'execute')
        ) then format('memory_owner may not call function %s (grant it usage on schema %s and execute on it)',
                      function, v_proc.schema_name)
    end;
end
$$;

comment on function memory_internal._signal_problem(text, boolean) is
'Internal: why a signal''s function may not run in recall (missing, in a temporary schema, owned by or in a '
'schema writable by a role other than a superuser, or, when asked, not callable by memory_owner), or null.';

create or replace function memory_internal._signal_validate() returns trigger
language plpgsql
security definer
as $$
declare
    v_oid oid := memory_internal._signal_function(new.function);
    v_proc record;
begin
    if v_oid is null then
        raise exception 'agent_memory: signal "%": function % does not exist', new.name, new.function
            using errcode = 'undefined_function';
    end if;
    -- The signature, every name schema-qualified whatever the search_path.
    new.function := (pg_catalog.pg_identify_object('pg_catalog.pg_proc'::regclass, v_oid, 0)).identity;
    select p.pronargs, p.proargtypes[0] as first, p.proargtypes[1] as second, p.prorettype, p.provolatile,
           p.proretset
    into v_proc
    from pg_catalog.pg_proc as p where p.oid = v_oid;
    if v_proc.pronargs <> 2 or v_proc.first <> 'memory.recall_candidate'::regtype
        or v_proc.second <> 'jsonb'::regtype or v_proc.prorettype <> 'double precision'::regtype or v_proc.proretset then
        raise exception 'agent_memory: signal "%" needs a function (memory.recall_candidate, jsonb) returning '
            'double precision, got %', new.name, new.function using errcode = 'invalid_parameter_value';
    end if;
    if memory_internal._signal_problem(new.function, callable => false) is not null then
        raise exception 'agent_memory: signal "%": %', new.name,
            memory_internal._signal_problem(new.function, callable => false)
            using errcode = 'insufficient_privilege',
                  hint = 'recall runs a signal''s function as the extension''s owner: a superuser creates it, in a '
                         'schema only superusers may create in';
    end if;
    if v_proc.provolatile = 'v' then
        raise exception 'agent_memory: signal "%": function % must be immutable or stable, not volatile',
            new.name, new.function using errcode = 'invalid_parameter_value';
    end if;
    return new;
end
$$;

comment on function memory_internal._signal_validate() is
'Internal: trigger that checks a signal''s function: signature, volatility, and who may change it.';

drop trigger if exists signals_validate on memory.signals;
create trigger signals_validate before insert or update on memory.signals
for each row execute function memory_internal._signal_validate();

-- Adds a signal to recall, or changes one: the function and its registry row. Built-in signals are
-- defined the same way by the extension's own files.
create or replace function memory.define_signal(
    name text, stage text, function regprocedure, default_weight double precision, measures text
) returns void
language plpgsql
as $$
begin
    -- Recall must be able to call it, too (a write of memory.signals asks less: a restore grants afterwards).
    if memory_internal._signal_problem(define_signal.function::oid::regprocedure::text) is not null then
        raise exception 'agent_memory: signal "%": %', define_signal.name,
            memory_internal._signal_problem(define_signal.function::oid::regprocedure::text)
            using errcode = 'insufficient_privilege',
                  hint = 'recall runs a signal''s function as the extension''s owner: a superuser creates it, in a '
                         'schema only superusers may create in';
    end if;
    insert into memory.signals as s (name, stage, function, default_weight, measures)
    values (define_signal.name, define_signal.stage, define_signal.function::text, define_signal.default_weight,
            define_signal.measures)
    on conflict on constraint signals_pkey do update
    set stage = excluded.stage, function = excluded.function, default_weight = excluded.default_weight,
        measures = excluded.measures;
end
$$;

comment on function memory.define_signal(text, text, regprocedure, double precision, text) is
'Adds (or changes) a recall signal: name, stage (fusion: a list score fused with the others; boost: '
'added as weight x value), its function (memory.recall_candidate, jsonb) -> double precision, its '
'default weight (the setting weight_<name>) and what it measures. Recall and explain use it at once.';

create or replace function memory_internal._define_builtin_signal(
    name text, stage text, function regprocedure, default_weight double precision, measures text
) returns void
language plpgsql
as $$
begin
    perform memory.define_signal(name, stage, function, default_weight, measures);
    update memory.signals as s set builtin = true where s.name = _define_builtin_signal.name;
    execute format('comment on function %s is %L', function, format('Recall signal %s (%s stage): %s', name, stage,
                                                                      measures));
end
$$;

comment on function memory_internal._define_builtin_signal(text, text, regprocedure, double precision, text) is
'Internal: defines one of the extension''s own signals (not dumped: every install defines them) and '
'comments its function with what it measures.';

-- The signals in pipeline order: fusion first, then boosts, each by name.
create or replace function memory.signal_definitions()
returns table (
    name text, stage text, weight_setting text, weight double precision, default_weight double precision,
    function regprocedure, measures text, builtin boolean
)
language sql
stable
as $$
    select s.name, s.stage, 'weight_' || s.name, (memory.setting('weight_' || s.name))::double precision,
           s.default_weight, to_regprocedure(s.function), s.measures, s.builtin
    from memory.signals as s
    order by s.stage = 'boost', s.name
$$;

comment on function memory.signal_definitions() is
'Every recall signal in pipeline order: name, stage (fusion or boost), its weight setting and the weight '
'in force, the default weight, its function and what it measures.';

comment on table memory.signals is
'The recall signals (read memory.signal_definitions()); add one with memory.define_signal().';
comment on column memory.signals.name is 'The signal''s name, as in recall''s components; its weight is weight_<name>.';
comment on column memory.signals.stage is
'fusion: a list score of chunks, fused with the others; boost: added to a turn''s fused score as weight x value.';
comment on column memory.signals.function is
'The function (memory.recall_candidate, jsonb settings) -> double precision that computes the value, as its '
'signature (regprocedure text; pg_upgrade refuses regprocedure columns).';
comment on column memory.signals.default_weight is 'The default of the setting weight_<name>.';
comment on column memory.signals.measures is 'What the signal measures.';
comment on column memory.signals.builtin is 'Defined by the extension (not dumped; every install defines it).';

comment on type memory.recall_candidate is
'What a signal function sees of a recall candidate: a chunk (fusion stage) or a turn with its best chunk '
'and fused score (boost stage); fields a stage does not know are null.';

-- What is wrong with an object a feature's SQL uses (null: nothing), by the rules of a signal's function
-- (memory_internal._signal_problem): owned by a superuser or memory_owner, in a schema with no problem, never
-- a temporary one.
create or replace function memory_internal._object_problem(object text, owner oid, schema oid) returns text
language plpgsql
stable
as $$
begin
    return case
        when (select n.nspname from pg_catalog.pg_namespace as n where n.oid = schema) ~ '^pg_(toast_)?temp_'
            then format('%s is in a temporary schema', object)
        when not (select r.rolsuper from pg_catalog.pg_roles as r where r.oid = owner) and owner <> 'memory_owner'::regrole
            then format('%s is owned by %s, not a superuser', object, owner::regrole)
        when memory_internal._schema_problem(schema) is not null
            then format('%s: %s', object, memory_internal._schema_problem(schema))
    end;
end
$$;

comment on function memory_internal._object_problem(text, oid, oid) is
'Internal: why code recall would run as the owner could be changed by a role other than a superuser (its '
'owner, its schema), or null.';

-- A feature's row is its attribute of memory.recall_candidate: the trigger adds the attribute (so a restore
-- of the registry adds it too) or checks that the one there has the feature's type. Only a superuser writes
-- the registry (an expression runs as the owner in every recall): table privileges keep other roles out, and
-- this check keeps out any role granted writes on every table (pg_write_all_data). The type is a base or
-- composite type a superuser owns (a domain's checks would run as the owner; a row of null features must be
-- valid). The built-in rows, which the statement's own parts read, are not deleted.
create or replace function memory_internal._recall_feature_validate() returns trigger
language plpgsql
as $$
declare
    v_type regtype;
    v_attribute regtype;
begin
    if not pg_catalog.current_setting('is_superuser')::boolean then
        raise exception 'agent_memory: only a superuser may change recall''s features (% is not one)', current_user
            using errcode = 'insufficient_privilege',
                  hint = 'a feature''s expression runs as the extension''s owner in every tenant''s recall';
    end if;
    if tg_op = 'DELETE' then
        if old.builtin then
            raise exception 'agent_memory: feature "%" is built in', old.name using errcode = 'invalid_parameter_value';
        end if;
        return old;
    end if;
    if length(new.name) > 63 then
        raise exception 'agent_memory: feature name "%" is longer than 63 characters', new.name
            using errcode = 'name_too_long';
    end if;
    v_type := pg_catalog.to_regtype(new.type);
    if v_type is null then
        raise exception 'agent_memory: feature "%": type % does not exist', new.name, new.type
            using errcode = 'undefined_object';
    end if;
    if (select t.typtype from pg_catalog.pg_type as t where t.oid = v_type) not in ('b', 'c', 'e') then
        raise exception 'agent_memory: feature "%": type % is not a base, composite or enum type', new.name, v_type
            using errcode = 'invalid_parameter_value';
    end if;
    if (select memory_internal._object_problem(format('type %s', v_type), t.typowner, t.typnamespace)
        from pg_catalog.pg_type as t where t.oid = v_type) is not null then
        raise exception 'agent_memory: feature "%": %', new.name,
            (select memory_internal._object_problem(format('type %s', v_type), t.typowner, t.typnamespace)
             from pg_catalog.pg_type as t where t.oid = v_type)
            using errcode = 'insufficient_privilege';
    end if;
    new.type := pg_catalog.format_type(v_type, null);
    v_attribute := (
        select a.atttypid::regtype from pg_catalog.pg_attribute as a
        where a.attrelid = 'memory.recall_candidate'::regclass and a.attname = new.name and a.attnum > 0
            and not a.attisdropped
    );
    if v_attribute is null then
        execute format('alter type memory.recall_candidate add attribute %I %s', new.name, new.type);
    elsif v_attribute <> v_type then
        raise exception 'agent_memory: feature "%" is a % in memory.recall_candidate, not a %', new.name,
            pg_catalog.format_type(v_attribute, null), new.type
            using errcode = 'datatype_mismatch',
                  hint = 'give the feature another name, or its type';
    end if;
    return new;
end
$$;

comment on function memory_internal._recall_feature_validate() is
'Internal: trigger that keeps the registry of features a superuser''s and makes a feature''s attribute of '
'memory.recall_candidate (or checks its type).';

drop trigger if exists recall_features_validate on memory.recall_features;
create trigger recall_features_validate before insert or update or delete on memory.recall_features
for each row execute function memory_internal._recall_feature_validate();

-- Writes a feature's row: memory.define_feature's (checked there) and the extension's own (builtin).
create or replace function memory_internal._define_feature(
    name text, stage text, type regtype, expression text, describes text, builtin boolean
) returns void
language plpgsql
as $$
begin
    insert into memory.recall_features as f (name, stage, type, expression, describes, builtin)
    values (name, stage, type::text, expression, describes, builtin)
    on conflict on constraint recall_features_pkey do update
    set stage = excluded.stage, type = excluded.type, expression = excluded.expression, describes = excluded.describes,
        builtin = excluded.builtin;
end
$$;

comment on function memory_internal._define_feature(text, text, regtype, text, text, boolean) is
'Internal: writes a recall feature''s row (builtin: one of the extension''s own, not dumped, defined by every '
'install).';

-- The features in pipeline order (chunk, fusion, turn, memory), each by its place in memory.recall_candidate.
create or replace function memory.feature_definitions()
returns table (name text, stage text, type text, expression text, describes text, builtin boolean)
language sql
stable
as $$
    select f.name, f.stage, f.type, f.expression, f.describes, f.builtin
    from memory.recall_features as f
    inner join pg_catalog.pg_attribute as a on a.attrelid = 'memory.recall_candidate'::regclass and a.attname = f.name
    order by array_position(array['chunk', 'fusion', 'turn', 'memory'], f.stage), a.attnum
$$;

comment on function memory.feature_definitions() is
'Every recall feature (an attribute of memory.recall_candidate that signals read) in pipeline order: name, '
'stage (chunk, fusion, turn or memory), type, SQL expression (null for the fusion stage, computed by the '
'pipeline) and what it describes.';

comment on table memory.recall_features is
'The features recall computes for each candidate (read memory.feature_definitions()); add one with '
'memory.define_feature().';
comment on column memory.recall_features.name is 'The feature''s name: its attribute of memory.recall_candidate.';
comment on column memory.recall_features.stage is
'chunk: per candidate chunk, before fusion; fusion: computed by fusion over the candidates (built in); turn: per '
'candidate turn, after fusion; memory: per turn, of the curated memory it carries (null when it carries none '
'and when its words are scored as a plain turn).';
comment on column memory.recall_features.type is 'The feature''s SQL type.';
comment on column memory.recall_features.expression is
'The SQL expression that computes it at its stage (see memory.define_feature for what it may read).';
comment on column memory.recall_features.describes is 'What the feature describes.';
comment on column memory.recall_features.builtin is 'Defined by the extension (not dumped; every install defines it).';

-- sql/idempotent/recall/094-recall-rerank.sql
-- Recall, the optional rerank stage (setting rerank = http): the best rerank_candidates turns by fused
-- score, each as its best chunk's text, sent to a rerank endpoint (a cross-encoder server). The answer
-- reorders them; a failure or timeout leaves the fused order and is shown in components.

-- {"scores": [one per document, null where unscored]} or {"error": "..."}; never raises for the endpoint.
-- Runs as the owner so the key can be read; the key goes only to the origin it was stored for, and the
-- endpoint is the administrator's choice (rerank_url is set_by admin).
create or replace function memory_internal._rerank(query text, documents text[], settings jsonb) returns jsonb
language plpython3u
volatile
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
import json
from agent_memory_db import rerank, secrets
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
rows = plpy.execute("select value, origin from memory_internal._secrets where name = 'rerank_api_key'")
stored = (rows[0]["value"], rows[0]["origin"]) if rows else None
try:
    api_key = secrets.key_for("rerank_api_key", config["rerank_url"], stored)
    scores = rerank.rerank(config["rerank_url"], query, documents, model=config["rerank_model"] or None,
                           api_key=api_key, timeout=float(config["rerank_timeout_seconds"]), retries=0)
except (rerank.ProviderError, ValueError) as exc:
    if isinstance(exc, rerank.ProviderError):
        plpy.execute(plpy.prepare("select memory_internal._server_log($1)", ["text"]), ["rerank failed: " + exc.detail])
    return json.dumps({"error": str(exc)})
return json.dumps({"scores": scores})
$$;

comment on function memory_internal._rerank(text, text[], jsonb) is
'Internal: relevance scores of documents for a query from the rerank_url endpoint, or the error.';

-- sql/idempotent/recall/095-recall-score.sql
-- Recall, step 3: every candidate scored on every signal of the registry (memory.signals).
--
-- Chunk stage: each candidate chunk gets its full-text (BM25F) and vector features, then every fusion
-- signal's value; values are fused per signal over the candidates (z-score weighted sum, or reciprocal
-- rank fusion). A turn is scored by its best chunk: its full-text and vector values come from that one
-- chunk. Turn stage: the session's best fused score, the neighbours', the session summary's and vector's
-- z-scores are gathered, and every boost signal adds weight x value. Optional rerank last.

-- The calls of one stage's signals as SQL ("memory.signal_x(k.c, ($1).settings), ..."), their names and weights, and
-- the signals left out because their function may not run (memory_internal._signal_problem), each with why.
create or replace function memory_internal._signal_calls(
    stage text, settings jsonb, out calls text, out names text[], out weights double precision[], out skipped text[]
)
language plpgsql
stable
as $$
-- plpgsql, not sql: recall calls this twice, and a plpgsql function keeps its plan (a sql one would be
-- planned at every call).
begin
    -- Each signal's function checked once (materialized: each use of problem below would check it again).
    with vetted as materialized (
        select r.name, r.function, memory_internal._signal_problem(r.function) as problem
        from memory.signals as r
        where r.stage = _signal_calls.stage
    )

    select coalesce(string_agg(s.call, ', ' order by s.name) filter (where s.problem is null), ''),
           coalesce(array_agg(s.name order by s.name) filter (where s.problem is null), '{}'),
           coalesce(array_agg((settings ->> ('weight_' || s.name))::double precision order by s.name)
                        filter (where s.problem is null), '{}'),
           coalesce(array_agg(format('signal %s skipped: %s', s.name, s.problem) order by s.name)
                        filter (where s.problem is not null), '{}')
    into calls, names, weights, skipped
    from (
        select p.*, case when p.problem is null then format('%s(k.c, ($1).settings)', p.function::regprocedure::oid::regproc) end
            as call
        from vetted as p
    ) as s;
end
$$;

comment on function memory_internal._signal_calls(text, jsonb) is
'Internal: the registry''s signals of one stage as SQL calls, with their names and weights in force, and those '
'skipped because their function may not run.';

-- The parts of the scoring statement that the registry of features (memory.recall_features) makes, each
-- attribute of memory.recall_candidate in its order: the chunk stage's columns ("(expression)::type as name";
-- a memory-stage feature is null when the turn carries no memory)
-- and the candidate a fusion signal sees (the chunk's features, null for later stages), the turn and memory
-- stages' columns and the candidate a boost signal sees (every feature), and the memory features a turn's
-- words lack when they are scored as a plain turn ({"name": null, ...}). An attribute no feature computes
-- is null.
create or replace function memory_internal._feature_sql(
    out chunk_columns text, out chunk_candidate text, out turn_columns text, out turn_candidate text,
    out plain_turn jsonb
)
language plpgsql
stable
as $$
begin
    select string_agg(format(E'(%s\n)::%s as %I', f.expression, a.type, a.name), ', ' order by a.n)
               filter (where f.stage = 'chunk'),
           string_agg(case when f.stage = 'chunk' then format('f.%I', a.name) else 'null' end, ', ' order by a.n),
           coalesce(', ' || string_agg(
               format(case when f.stage = 'memory' then E'(case when tm.memory_id is not null then (%s\n) end)::%s as %I'
                           else E'(%s\n)::%s as %I' end, f.expression, a.type, a.name), ', ' order by a.n
           ) filter (where f.stage in ('turn', 'memory')), ''),
           string_agg(case when f.stage is not null then format('d.%I', a.name) else 'null' end, ', ' order by a.n),
           coalesce(jsonb_object_agg(a.name, null) filter (where f.stage = 'memory'), '{}')
    into chunk_columns, chunk_candidate, turn_columns, turn_candidate, plain_turn
    from (
        -- The type with its schema, even pg_catalog's (a caller's temporary types come first in its search_path).
        select a.attname::text as name, format('%I.%I', n.nspname, t.typname) as type, a.attnum as n
        from pg_catalog.pg_attribute as a
        inner join pg_catalog.pg_type as t on a.atttypid = t.oid
        inner join pg_catalog.pg_namespace as n on t.typnamespace = n.oid
        where a.attrelid = 'memory.recall_candidate'::regclass and a.attnum > 0 and not a.attisdropped
    ) as a
    left join memory.recall_features as f on a.name = f.name;
end
$$;

comment on function memory_internal._feature_sql() is
'Internal: the parts of recall''s scoring statement built from the registry of features.';

-- Recall's scoring statement, its first part: the chunk stage and fusion, each candidate turn by its best chunk.
create or replace function memory_internal._scoring_sql_chunks() returns text
language sql
immutable parallel safe
as $fn$
select $sql$
with candidate_chunks as (
    select distinct u.turn_id, u.chunk_no from unnest(($1).turn_ids, ($1).chunk_nos) as u (turn_id, chunk_no)
),
-- The chunk stage's features of each candidate chunk: c the chunk, t its turn, e and x the vectors of the
-- chunk and of its context, b its BM25, r the recall; and the memory the turn carries as recall shows it
-- (looked up once, kept for the turn stage). The words of memories recall does not show (superseded,
-- retracted or pending; at as_of, not holding then) are no candidates.
chunk_features as materialized (
    select c.text as _text, tm.memory_id as _memory_id, tm.kind as _memory_kind, tm.importance as _memory_importance,
           tm.status as _memory_status, tm.evidence_turns as _memory_evidence, tm.tier as _memory_tier,
           tm.last_used as _memory_last_used, %3$s
    from candidate_chunks as cc
    cross join (select ($1).*) as r
    -- One index probe per candidate (the limit keeps the planner from scanning every chunk instead).
    cross join lateral (
        select * from memory.chunks as y
        where y.tenant_id = r.tenant and y.turn_id = cc.turn_id and y.chunk_no = cc.chunk_no
        limit 1
    ) as c
    inner join memory.turns as t on t.tenant_id = r.tenant and t.turn_id = c.turn_id
    left join lateral memory_internal._turn_memory(r.tenant, c.turn_id, r.as_of, r.include_ended) as tm on true
    cross join lateral memory_internal._chunk_bm25(
        c.tsv, c.length, c.context_length, (r.query).lexemes, (r.query).idf, (r.settings ->> 'bm25_k1')::double precision,
        (r.settings ->> 'bm25_b')::double precision, (r.query).avg_length, (r.settings ->> 'context_weight')::double precision
    ) as b
    left join memory.chunk_embeddings as e
        on e.tenant_id = r.tenant and e.turn_id = c.turn_id and e.chunk_no = c.chunk_no and e.model = r.model
    left join memory.chunk_embeddings as x
        on x.tenant_id = r.tenant and x.turn_id = c.context_turn_id and x.chunk_no = 0 and x.model = r.model
    where tm.memory_id is not null
        or not exists (select from memory.memories as m where m.tenant_id = r.tenant and m.turn_id = c.turn_id)
),
-- One row per chunk and fusion signal.
chunk_values as (
    select f.turn_id, f.chunk_no, v.n, v.value, v.weight
    from chunk_features as f
    cross join lateral (select row(%4$s)::memory.recall_candidate as c) as k
    cross join lateral unnest(array[%1$s]::double precision [], ($1).fusion_weights)
        with ordinality as v (value, weight, n)
),
chunk_ranked as (
    select v.*,
           case when v.value is not null then rank() over (partition by v.n order by v.value desc nulls last) end
               as list_rank,
           (v.value - avg(v.value) over (partition by v.n)) / nullif(stddev_pop(v.value) over (partition by v.n), 0)
               as z
    from chunk_values as v
),
chunk_fused as (
    select r.turn_id, r.chunk_no, sum(r.contribution) as fused,
           array_agg(r.value order by r.n) as fusion_values, array_agg(r.list_rank::integer order by r.n) as ranks,
           array_agg(r.z order by r.n) as zs, array_agg(r.contribution order by r.n) as fusion_contributions
    from (
        select r.*,
               case when ($1).settings ->> 'fusion' = 'rrf' then
                        case when r.value is not null
                                 then r.weight / ((($1).settings ->> 'rrf_k')::double precision + r.list_rank)
                             else 0 end
                    else r.weight * coalesce(r.z, 0)
               end as contribution
        from chunk_ranked as r
    ) as r
    group by r.turn_id, r.chunk_no
),
-- A turn is scored by its best chunk.
turn_best as (
    select distinct on (f.turn_id) f.*, cf.fused, cf.fusion_values as _fusion_values, cf.ranks as _ranks,
           cf.zs as _zs, cf.fusion_contributions as _fusion_contributions
    from chunk_fused as cf
    inner join chunk_features as f on cf.turn_id = f.turn_id and cf.chunk_no = f.chunk_no
    order by f.turn_id, cf.fused desc, f.chunk_no
),
$sql$
$fn$;

comment on function memory_internal._scoring_sql_chunks() is
'Internal: recall''s scoring statement, its first part: the chunk stage and fusion, each candidate turn by '
'its best chunk.';

-- Recall's scoring statement, its second part: each candidate's place in its session, and its session's scores.
create or replace function memory_internal._scoring_sql_sessions() returns text
language sql
immutable parallel safe
as $fn$
select $sql$
-- Per turn, by window functions over the candidates (no self-joins): its session's best fused score,
-- the fused scores of the turns just before and after it (when they are candidates).
positioned as (
    select b.*,
           row_number() over w = 1 as _session_row,
           max(b.fused) over (partition by b.session_key) as session_best,
           case when lag(b.position) over w = b.position - 1 then lag(b.fused) over w end as previous_fused,
           case when lead(b.position) over w = b.position + 1 then lead(b.fused) over w end as next_fused
    from turn_best as b
    window w as (partition by b.session_key order by b.position)
),
-- On the first candidate of each session, that session's summary and vector scores, looked up once
-- (materialized: inlined, each use below would run the lookups again).
with_session as materialized (
    select p.*, case when p._session_row then coalesce(sm.summary_score, 0) end as _summary_score,
           sv.cosine as _session_cosine
    from positioned as p
    left join lateral (
        select ts_rank_cd(m.tsv, (($1).query).tsquery) as summary_score from memory.summaries as m
        -- Only for a session's first row (the key is null on the others, so the index finds nothing).
        where m.tenant_id = ($1).tenant and m.session_key = case when p._session_row then p.session_key end
    ) as sm on true
    left join lateral (
        select 1 - (e.embedding <=> ($1).query_vector) as cosine from memory.session_embeddings as e
        where e.tenant_id = ($1).tenant and e.session_key = case when p._session_row then p.session_key end
            and e.model = ($1).model
    ) as sv on true
),
-- z-scores over the candidate sessions (one row each), on their first rows ...
session_z as (
    select ws.*,
           case when ws._session_row then
               (ws._summary_score - avg(ws._summary_score) filter (where ws._session_row) over ())
               / nullif(stddev_pop(ws._summary_score) filter (where ws._session_row) over (), 0)
           end as _summary_z_here,
           case when ws._session_row then
               (ws._session_cosine - avg(ws._session_cosine) filter (where ws._session_row) over ())
               / nullif(stddev_pop(ws._session_cosine) filter (where ws._session_row) over (), 0)
           end as _session_vector_z_here
    from with_session as ws
),
-- ... spread to every candidate of the session.
scored as (
    select z.*, max(z._summary_z_here) over s as summary_z, max(z._session_vector_z_here) over s as session_vector_z
    from session_z as z
    window s as (partition by z.session_key)
),
$sql$
$fn$;

comment on function memory_internal._scoring_sql_sessions() is
'Internal: recall''s scoring statement, its second part: each candidate''s place in its session, and its '
'session''s scores.';

-- Recall's scoring statement, its last part: the turn and memory stages, the boosts, the memories placed, the rerank.
create or replace function memory_internal._scoring_sql_turns() returns text
language sql
immutable parallel safe
as $fn$
select $sql$
-- The turn and memory stages' features of each candidate turn: d its best chunk's features with the fusion
-- stage's, t the turn, s its session, tm the memory it carries (memory_id, kind, importance, status,
-- evidence_turns, tier, last_used; nulls if none), r the recall (materialized: a signal function reading its
-- candidate twice is inlined only when the candidate is plain columns).
described as materialized (
    select d.* %5$s
    from scored as d
    cross join (select ($1).*) as r
    cross join lateral (
        select d._memory_id as memory_id, d._memory_kind as kind, d._memory_importance as importance,
               d._memory_status as status, d._memory_evidence as evidence_turns, d._memory_tier as tier,
               d._memory_last_used as last_used
    ) as tm
    inner join memory.turns as t on t.tenant_id = r.tenant and t.turn_id = d.turn_id
    inner join memory.sessions as s on s.tenant_id = r.tenant and s.session_key = d.session_key
),
-- Every boost signal of each turn, added up in the turn's own row (a few values: no join back needed).
final as (
    select d.turn_id, d.session_key, d.chunk_no, d._text, d.fused, d.fused + b.boost as own_score,
           d._memory_id, d._memory_kind, d._memory_evidence, m.memory_lift,
           d._fusion_values || b.boost_values as signal_values,
           d._fusion_contributions || b.boost_contributions as contributions,
           d._ranks, d._zs,
           row_number() over (order by d.fused + b.boost desc, d.turn_id) as fused_rank
    from described as d
    cross join lateral (select row(%6$s)::memory.recall_candidate as c) as k
    cross join lateral (
        select coalesce(sum(v.weight * coalesce(v.value, 0)), 0) as boost,
               coalesce(array_agg(v.value order by v.n), '{}') as boost_values,
               coalesce(array_agg(v.weight * coalesce(v.value, 0) order by v.n), '{}') as boost_contributions
        from unnest(array[%2$s]::double precision [], ($1).boost_weights) with ordinality as v (value, weight, n)
    ) as b
    -- What being a curated memory adds to the score: its boosts less those of its words as a plain turn.
    cross join lateral (
        select case when d._memory_id is null then 0 else b.boost - coalesce(sum(v.weight * coalesce(v.value, 0)), 0) end
            as memory_lift
        from (select jsonb_populate_record(k.c, %7$L) as c) as k
        cross join lateral unnest(array[%2$s]::double precision [], ($1).boost_weights)
            with ordinality as v (value, weight, n)
        where d._memory_id is not null
    ) as m
),
-- A curated memory stands for the turns it came from: it scores at least as its best evidence turn among
-- the candidates does (which has the conversation around it that a memory lacks) plus what being a memory
-- adds (memory_lift: importance, kind, status), and ranks ahead of it. Other candidates keep their score.
placed as (
    select f.*, greatest(f.own_score, f.memory_lift + (
        select max(e.own_score) from final as e where e.turn_id = any(f._memory_evidence)
    )) as score
    from final as f
),
reranked as (
    select memory_internal._rerank(($1).query_text, array_agg(f._text order by f.fused_rank), ($1).settings) as answer
    from placed as f
    where ($1).settings ->> 'rerank' = 'http' and f.fused_rank <= (($1).settings ->> 'rerank_candidates')::integer
    having count(*) > 0
)
select f.turn_id, f.session_key, f.chunk_no, f.score, f.fused, rr.score as rerank_score,
       row_number() over (
           order by rr.score desc nulls last, f.score desc, f._memory_evidence is null, f.turn_id
       ) as ord,
       f.signal_values, f.contributions, f._ranks, f._zs, r.answer ->> 'error' as rerank_error, ($1).context,
       f._memory_id, f._memory_kind, f._memory_evidence
from placed as f
left join reranked as r on true
left join lateral (select (r.answer -> 'scores' ->> (f.fused_rank - 1)::integer)::double precision as score) as rr
    on true
$sql$
$fn$;

comment on function memory_internal._scoring_sql_turns() is
'Internal: recall''s scoring statement, its last part: the turn and memory stages, the boosts, the memories '
'placed, the rerank.';

-- The statement that scores the candidate chunks of one recall, of its three parts; its one parameter, $1,
-- is the recall (memory_internal._recall_context). %1$s and %2$s are the fusion and boost signal calls from
-- memory_internal._signal_calls; the features' columns and candidates come from memory_internal._feature_sql.
-- Columns the pipeline keeps for itself start with an underscore (a feature's name cannot).
create or replace function memory_internal._scoring_sql(fusion_calls text, boost_calls text) returns text
language sql
stable
as $fn$
select format(
    memory_internal._scoring_sql_chunks() || memory_internal._scoring_sql_sessions()
    || memory_internal._scoring_sql_turns(),
    fusion_calls, boost_calls, p.chunk_columns, p.chunk_candidate, p.turn_columns, p.turn_candidate, p.plain_turn
)
from memory_internal._feature_sql() as p
$fn$;

comment on function memory_internal._scoring_sql(text, text) is
'Internal: the statement that scores recall candidates, with the registry''s signal calls and features in it.';

-- The scoring statement for these signal calls, prepared once per session under a name derived from its
-- text (a new registry makes a new statement): planning it on every recall cost as much as running it.
-- The session is the caller's, who may have prepared a statement of that name itself: one whose text or
-- parameter type is not exactly these is replaced. The parameter's type is written with its schema (a
-- caller's temporary schema comes first for type names in its own search_path), and the same text with the
-- same type is the same statement whoever prepared it: PostgreSQL parses the query again under this
-- function's search_path, where pg_temp comes last, and plans it again for the role that executes it.
create or replace function memory_internal._scoring_statement(fusion_calls text, boost_calls text) returns text
language plpgsql
volatile
as $$
declare
    v_sql text := memory_internal._scoring_sql(fusion_calls, boost_calls);
    v_name text := 'memory_recall_score_' || md5(v_sql);
    v_types text [] := array['memory_internal._recall_context'];
    v_prepare text := format('prepare %I (%s) as %s', v_name, array_to_string(v_types, ', '), v_sql);
    v_found record;
begin
    select p.statement, p.parameter_types into v_found
    from pg_catalog.pg_prepared_statements as p where p.name = v_name;
    if v_found.statement is distinct from v_prepare
        or v_found.parameter_types is distinct from v_types::regtype [] then
        if v_found.statement is not null then
            execute format('deallocate %I', v_name);
        end if;
        execute v_prepare;
    end if;
    return v_name;
end
$$;

comment on function memory_internal._scoring_statement(text, text) is
'Internal: the name of this session''s prepared scoring statement for the given signal calls (prepared again '
'when a statement of that name has other text or parameter types).';

-- Recall's statement with the registry as it is, built as a temporary view (and dropped): an error if it does
-- not parse, else what is wrong with the code it would run as the owner (memory_internal._object_problem of
-- each function, operator and type it uses that is not PostgreSQL's own), or null. memory.define_feature
-- calls it.
create or replace function memory_internal._scoring_code_problem() returns text
language plpgsql
volatile
as $$
declare
    v_fusion record;
    v_boost record;
    v_problem text;
begin
    select * into v_fusion from memory_internal._signal_calls('fusion', '{}');
    select * into v_boost from memory_internal._signal_calls('boost', '{}');
    execute format(
        'create temporary view memory_scoring_check as %s',
        replace(memory_internal._scoring_sql(v_fusion.calls, v_boost.calls), '($1)',
                '(null::memory_internal._recall_context)')
    );
    select string_agg(u.problem, '; ' order by u.problem) into v_problem
    from pg_catalog.pg_depend as d
    inner join pg_catalog.pg_rewrite as w on d.classid = 'pg_catalog.pg_rewrite'::regclass and d.objid = w.oid
    cross join lateral (
        select memory_internal._object_problem(format('function %s', p.oid::regprocedure), p.proowner, p.pronamespace)
        from pg_catalog.pg_proc as p where d.refclassid = 'pg_catalog.pg_proc'::regclass and p.oid = d.refobjid
        union all
        select memory_internal._object_problem(format('operator %s', o.oid::regoperator), o.oprowner, o.oprnamespace)
        from pg_catalog.pg_operator as o where d.refclassid = 'pg_catalog.pg_operator'::regclass and o.oid = d.refobjid
        union all
        select memory_internal._object_problem(format('type %s', t.oid::regtype), t.typowner, t.typnamespace)
        from pg_catalog.pg_type as t where d.refclassid = 'pg_catalog.pg_type'::regclass and t.oid = d.refobjid
    ) as u (problem)
    where w.ev_class = 'pg_temp.memory_scoring_check'::regclass and u.problem is not null;
    drop view pg_temp.memory_scoring_check;
    return v_problem;
end
$$;

comment on function memory_internal._scoring_code_problem() is
'Internal: builds recall''s scoring statement with the registry as it is (an error names what does not parse) '
'and says what code in it a role other than a superuser could change, or null.';

-- Every candidate turn with each signal's value and contribution and the final score, in final order
-- (ord). recall and explain_recall read it.
create or replace function memory_internal._recall_candidates(
    query text, agent_id text, since timestamptz, until timestamptz, source text,
    entities text[], entity_mode text, weights jsonb, query_vector vector, as_of timestamptz,
    include_ended boolean, intent text
) returns table (
    turn_id bigint, session_key bigint, chunk_no integer, score double precision, fused double precision,
    rerank_score double precision, ord bigint, signal_values double precision[], contributions double precision[],
    ranks integer[], zs double precision[], rerank_error text, context jsonb, memory_id bigint, memory_kind text,
    memory_evidence bigint[]
)
language plpgsql
volatile
-- Callers plan for about as many rows as recall_candidates gives (the default of 1000 made plans that
-- joined candidates to themselves look costly enough to compile with JIT, which cost more than the recall).
rows 100
-- The scoring statement is planned once per session (memory_internal._scoring_statement); a generic plan suits it.
set plan_cache_mode = force_generic_plan
-- Its argument travels as text (a literal): times in ISO with their offset, numbers to the last digit.
set datestyle = 'ISO, MDY'
set extra_float_digits = 3
as $$
declare
    v_tenant text := memory.current_tenant();
    v_cfg jsonb := memory_internal._recall_settings(weights);
    v_q memory_internal._recall_query;
    v_degraded text [] := '{}';
    v_model record;
    v_recall_model text;
    v_vector vector := query_vector;
    v_keys bigint [];
    v_chunks integer [];
    v_fusion record;
    v_boost record;
    v_context jsonb;
    v_tiers text [];
begin
    if query is null or btrim(query) = '' then
        raise exception 'agent_memory: recall needs a query';
    end if;
    if entity_mode not in ('any', 'all') then
        raise exception 'agent_memory: entity_mode must be any or all, got %', entity_mode;
    end if;
    if since is not null and until is not null and since > until then
        raise exception 'agent_memory: since (%) is after until (%)', since, until;
    end if;
    if intent is not null and not intent = any (memory_internal._memory_kinds() || 'none'::text) then
        raise exception 'agent_memory: intent must be none or a memory kind (%), got %',
            array_to_string(memory_internal._memory_kinds(), ', '), intent using errcode = 'invalid_parameter_value';
    end if;
    if include_ended is null then
        raise exception 'agent_memory: include_ended must be true or false' using errcode = 'null_value_not_allowed';
    end if;
    v_q := memory_internal._prepare_query(query, v_tenant, agent_id, v_cfg, entities, entity_mode, intent);
    v_tiers := array(select jsonb_array_elements_text(v_cfg -> 'recall_tiers'));

    -- Vectors: the query embedded in the database (or given), against the model recall may use.
    select * into v_model from memory_internal._embedding_model(v_cfg);
    v_recall_model := memory_internal._recall_model(v_model.model);
    if v_model is null then
        v_degraded := v_degraded || 'no embedder configured: full-text only'::text;
    elsif v_recall_model is null then
        v_degraded := v_degraded || 'no embeddings yet: full-text only'::text;
    elsif v_vector is null and v_model.provider = 'client' then
        v_degraded := v_degraded || 'client embedder and no query_vector: full-text only'::text;
    elsif v_vector is null and v_recall_model <> v_model.model then
        v_degraded := v_degraded || format('model %s is still building and %s cannot embed queries: full-text only',
                                           v_model.model, v_recall_model);
    elsif v_vector is null then
        begin
            v_vector := (memory_internal._embed_texts(array[v_q.search_text], v_cfg))[1];
        exception when others then
            v_degraded := v_degraded || ('query embedding failed: ' || sqlerrm || ': full-text only');
        end;
    end if;
    if query_vector is not null and vector_norm(query_vector) = 0 then
        raise exception 'agent_memory: query_vector is all zeros; it has no direction to compare'
            using errcode = 'invalid_parameter_value';
    end if;
    if v_vector is not null and query_vector is not null and vector_dims(query_vector) <> (
        select m.dimensions from memory.embedding_models as m where m.model = v_recall_model
    ) then
        raise exception 'agent_memory: query_vector has % dimensions but model % has %', vector_dims(query_vector),
            v_recall_model, (select m.dimensions from memory.embedding_models as m where m.model = v_recall_model);
    end if;

    select array_agg(c.turn_id), array_agg(c.chunk_no) into v_keys, v_chunks
    -- At as_of, nothing said after it is recalled.
    from memory_internal._candidate_chunks(
        v_tenant, agent_id, since, least(until, as_of), source, v_cfg, v_q, v_vector, v_recall_model,
        -- A filter only when the tenant has sessions or memories in a tier left out (an index probe each).
        case when exists (
            select from unnest(array['hot', 'warm', 'cold']) as l (tier)
            where not l.tier = any(v_tiers) and (
                exists (select from memory.sessions as s where s.tenant_id = v_tenant and s.tier = l.tier)
                or exists (select from memory.memories as m where m.tenant_id = v_tenant and m.tier = l.tier)
            )
        ) then v_tiers end
    ) as c;

    select * into v_fusion from memory_internal._signal_calls('fusion', v_cfg);
    select * into v_boost from memory_internal._signal_calls('boost', v_cfg);
    v_context := jsonb_build_object(
        'model', v_recall_model, 'fusion', v_cfg ->> 'fusion', 'speakers_matched', to_jsonb(v_q.speakers),
        'entities_matched', to_jsonb(v_q.entity_names),
        'degraded', to_jsonb(v_degraded || v_fusion.skipped || v_boost.skipped),
        'signals', to_jsonb(v_fusion.names || v_boost.names),
        'fusion_signals', cardinality(v_fusion.names), 'weights', to_jsonb(v_fusion.weights || v_boost.weights),
        'rerank', v_cfg ->> 'rerank', 'as_of', as_of, 'include_ended', include_ended, 'tiers', to_jsonb(v_tiers),
        'route', case when v_q.intent is not null then 'memory first: ' || v_q.intent else 'hybrid' end
    );
    -- A prepared statement takes its argument as a value in the EXECUTE command (a quoted literal).
    return query execute format(
        'execute %I(%L)', memory_internal._scoring_statement(v_fusion.calls, v_boost.calls),
        row(v_tenant, coalesce(v_keys, '{}'), coalesce(v_chunks, '{}'), v_q, query, v_vector, v_recall_model, v_cfg,
            v_fusion.weights, v_boost.weights, as_of, include_ended, v_context)::memory_internal._recall_context
    );
end
$$;

comment on function memory_internal._recall_candidates(
    text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text
)
is 'Internal: every candidate turn of a recall with each signal''s value and contribution and the final score.';

-- The features the pipeline itself reads or computes: a candidate's keys and place, and the fusion stage's.
select memory_internal._define_feature(
    'turn_id', 'chunk', 'bigint', 'c.turn_id', 'The turn''s id.', builtin => true
);
select memory_internal._define_feature(
    'session_key', 'chunk', 'bigint', 'c.session_key', 'The session''s key (the database''s number for it).',
    builtin => true
);
select memory_internal._define_feature(
    'chunk_no', 'chunk', 'integer', 'c.chunk_no', 'The chunk''s number in its turn.',
    builtin => true
);
select memory_internal._define_feature(
    'position', 'chunk', 'integer', 't.position', 'The turn''s position in its session (0 first).',
    builtin => true
);
select memory_internal._define_feature(
    'created_at', 'chunk', 'timestamptz', 't.created_at', 'When the turn was said.',
    builtin => true
);
select memory_internal._define_feature(
    'fused', 'fusion', 'double precision', null, 'The turn''s fused score (of its best chunk).',
    builtin => true
);
select memory_internal._define_feature(
    'session_best', 'fusion', 'double precision', null,
    'The best fused score among the candidates of the turn''s session.',
    builtin => true
);
select memory_internal._define_feature(
    'previous_fused', 'fusion', 'double precision', null,
    'The fused score of the turn just before, when it is a candidate.',
    builtin => true
);
select memory_internal._define_feature(
    'next_fused', 'fusion', 'double precision', null, 'The fused score of the turn just after, when it is a candidate.',
    builtin => true
);
select memory_internal._define_feature(
    'summary_z', 'fusion', 'double precision', null,
    'z-score of the full-text match of the turn''s session summary, over the candidate sessions.',
    builtin => true
);
select memory_internal._define_feature(
    'session_vector_z', 'fusion', 'double precision', null,
    'z-score of the cosine of the query to the turn''s session vector, over the candidate sessions.',
    builtin => true
);

-- sql/idempotent/recall/096-recall-api.sql
-- Recall, the API: memory.recall and memory.explain_recall, and the components object that shows why a
-- turn ranked where it did (every signal of the registry by name).

-- A candidate's components: built only for the rows a caller shows (recall's k hits), not for every
-- candidate. signals: {name: {value, weight, contribution}} (fusion signals also with rank and z).
create or replace function memory_internal._components(
    chunk_no integer, fused double precision, signal_values double precision[],
    contributions double precision[], ranks integer[], zs double precision[], rerank_score double precision,
    rerank_error text, context jsonb
) returns jsonb
language sql
immutable
as $$
    select jsonb_build_object(
        'signals', (
            select coalesce(jsonb_object_agg(s.name, jsonb_build_object(
                'value', round(signal_values[s.i]::numeric, 6),
                'weight', (context -> 'weights' ->> (s.i::integer - 1))::double precision,
                'contribution', round(contributions[s.i]::numeric, 6)
            ) || case when s.i <= (context ->> 'fusion_signals')::integer then jsonb_build_object(
                'rank', ranks[s.i], 'z', round(zs[s.i]::numeric, 6)
            ) else '{}' end), '{}')
            from jsonb_array_elements_text(context -> 'signals') with ordinality as s (name, i)
        ),
        'fused', round(fused::numeric, 6),
        'chunk_no', chunk_no,
        'model', context -> 'model',
        'fusion', context -> 'fusion',
        'speakers_matched', context -> 'speakers_matched',
        'entities_matched', context -> 'entities_matched',
        'degraded', context -> 'degraded',
        'route', context -> 'route',
        'tiers', context -> 'tiers',
        'rerank', case when context ->> 'rerank' <> 'none' then jsonb_build_object(
            'score', round(rerank_score::numeric, 6), 'error', rerank_error
        ) end
    )
$$;

comment on function memory_internal._components(
    integer, double precision, double precision[], double precision[], integer[], double precision[],
    double precision, text, jsonb
) is
'Internal: the components object of one recall candidate (each signal''s value, weight and contribution).';

-- A call's settings with its tiers (recall's tiers => ...) as recall_tiers.
create or replace function memory_internal._with_tiers(weights jsonb, tiers text[]) returns jsonb
language sql
immutable
as $$
    -- (Weights that are no JSON object are refused as they are.)
    select case when tiers is null or jsonb_typeof(weights) <> 'object' then weights
                else coalesce(weights, '{}') || jsonb_build_object('recall_tiers', to_jsonb(tiers)) end
$$;

comment on function memory_internal._with_tiers(jsonb, text[]) is
'Internal: a recall''s per-call settings with its tiers argument as the setting recall_tiers.';

create or replace function memory.recall(
    query text,
    k integer default 10,
    agent_id text default null,
    since timestamptz default null,
    until timestamptz default null,
    source text default null,
    level text default 'turn',
    entities text[] default null,
    entity_mode text default 'any',
    weights jsonb default null,
    query_vector vector default null,
    as_of timestamptz default null,
    include_ended boolean default false,
    intent text default null,
    tiers text[] default null
) returns setof memory.recall_hit
language plpgsql
volatile
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_started timestamptz := pg_catalog.clock_timestamp();
    v_turns bigint [];
    v_sessions bigint [];
    v_scores double precision [];
    v_components jsonb [];
    v_memories bigint [];
    v_kinds text [];
begin
    perform memory_internal._check_session_settings();  -- first, so that a bad setting's error is short
    if k is null or k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k;
    end if;
    if level not in ('turn', 'session') then
        raise exception 'agent_memory: level must be turn or session, got %', level;
    end if;
    -- Rank once; the hits are kept to return them and, when access counting is on, to count them. A turn
    -- that is the evidence of a memory ranked above it is not a hit of its own: the memory carries its id.
    with candidates as materialized (
        select c.*
        from memory_internal._recall_candidates(recall.query, recall.agent_id, recall.since, recall.until,
                                                recall.source, recall.entities, recall.entity_mode,
                                                memory_internal._with_tiers(recall.weights, recall.tiers),
                                                recall.query_vector, recall.as_of, recall.include_ended,
                                                recall.intent) as c
    )

    select array_agg(h.turn_id order by h.ord), array_agg(h.session_key order by h.ord),
           array_agg(h.score order by h.ord),
           array_agg(memory_internal._components(h.chunk_no, h.fused, h.signal_values, h.contributions, h.ranks, h.zs,
                                        h.rerank_score, h.rerank_error, h.context) order by h.ord),
           array_agg(h.memory_id order by h.ord), array_agg(h.memory_kind order by h.ord)
    into v_turns, v_sessions, v_scores, v_components, v_memories, v_kinds
    from (
        select c.* from (
            select c.*, row_number() over (partition by c.session_key order by c.ord) as in_session
            from candidates as c
            where not exists (
                select from candidates as m where m.ord < c.ord and c.turn_id = any(m.memory_evidence)
            )
        ) as c
        where recall.level = 'turn' or c.in_session = 1
        order by c.ord
        limit recall.k
    ) as h;

    return query
    select s.session_id, s.agent_id, t.turn_id, t.message_id, t.role, t.speaker, t.created_at, t.content,
           m.summary, h.score, h.components, coalesce(h.kind, 'turn'), h.memory_id,
           case when h.memory_id is not null then memory_internal._memory_evidence(v_tenant, h.memory_id) end
    from unnest(v_turns, v_sessions, v_scores, v_components, v_memories, v_kinds) with ordinality
        as h (turn_id, session_key, score, components, memory_id, kind, n)
    inner join memory.turns as t on t.tenant_id = v_tenant and h.turn_id = t.turn_id
    inner join memory.sessions as s on s.tenant_id = v_tenant and h.session_key = s.session_key
    left join memory.summaries as m on m.tenant_id = v_tenant and h.session_key = m.session_key
    order by h.n;

    if (coalesce(recall.weights -> 'recall_count_access', memory.setting('recall_count_access')))::boolean then
        update memory.turns as t
        set access_count = t.access_count + 1, last_accessed_at = pg_catalog.now()
        where t.tenant_id = v_tenant and t.turn_id = any(v_turns);
    end if;
    if (coalesce(recall.weights -> 'tier_promote_on_recall', memory.setting('tier_promote_on_recall')))::boolean
        and current_setting('transaction_read_only') = 'off' then
        perform memory_internal._mark_used(v_tenant, v_sessions, v_turns);
    end if;
    perform memory_internal._count_recall(
        v_tenant, extract(epoch from pg_catalog.clock_timestamp() - v_started),
        coalesce(jsonb_array_length(v_components[1] -> 'degraded') > 0, false)
    );
end
$$;

comment on function memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector, timestamptz, boolean, text,
    text[]
)
is 'The turns and curated memories (level turn) or sessions (level session, with their best turn) that best '
'answer a query, best first: full-text (BM25) and vector scores of each turn''s best chunk fused, plus the '
'boost signals of memory.signal_definitions(), and an optional rerank stage (setting rerank). kind is '
'''turn'' for what was said, or the memory''s kind (rule, preference, ...) with its memory_id and '
'evidence_turn_ids (a turn ranked below a memory it is evidence of is left out). Filters: agent_id, '
'since/until (event time), source. entities: names the recall is about, besides those the query names '
'(signal entity); entity_mode all keeps to sessions that mention every one. as_of: what was said by then '
'and the memories that held then; include_ended: superseded and retracted memories too. intent: the memory '
'kind the question asks for (default: memory.query_intent(query); none: no routing), whose memories come '
'first (signal kind). tiers: the tiers searched (default recall_tiers: hot and warm); what recall returns is '
'moved to hot (tier_promote_on_recall). weights: per-call settings, e.g. ''{"weight_dense": 0.5}''. '
'query_vector: for callers that embed themselves. components shows every signal''s value, weight and '
'contribution, and the route taken.';

-- A limit a caller passes as k: null (no limit) or at least 1, else an error naming it.
create or replace function memory_internal._checked_limit(k integer) returns integer
language plpgsql
immutable
as $$
begin
    if k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k using errcode = 'invalid_parameter_value';
    end if;
    return k;
end
$$;

comment on function memory_internal._checked_limit(integer) is
'Internal: k as a limit (null: none), or an error unless it is at least 1.';

create or replace function memory.explain_recall(
    query text,
    k integer default null,
    agent_id text default null,
    since timestamptz default null,
    until timestamptz default null,
    source text default null,
    entities text[] default null,
    entity_mode text default 'any',
    weights jsonb default null,
    query_vector vector default null,
    as_of timestamptz default null,
    include_ended boolean default false,
    intent text default null,
    tiers text[] default null
) returns table (
    rank bigint, session_id text, turn_id bigint, speaker text, content text, score double precision,
    fused double precision, components jsonb, kind text, memory_id bigint
)
language sql
volatile
as $$
    select c.ord, s.session_id, t.turn_id, t.speaker, t.content, c.score, c.fused,
           memory_internal._components(c.chunk_no, c.fused, c.signal_values, c.contributions, c.ranks, c.zs, c.rerank_score,
                              c.rerank_error, c.context), coalesce(c.memory_kind, 'turn'), c.memory_id
    from memory_internal._recall_candidates(query, agent_id, since, until, source, entities, entity_mode,
                                            memory_internal._with_tiers(weights, tiers), query_vector, as_of,
                                            include_ended, intent) as c
    inner join memory.turns as t on t.tenant_id = memory.current_tenant() and c.turn_id = t.turn_id
    inner join memory.sessions as s on s.tenant_id = memory.current_tenant() and c.session_key = s.session_key
    order by c.ord
    limit memory_internal._checked_limit(explain_recall.k)
$$;

comment on function memory.explain_recall(
    text, integer, text, timestamptz, timestamptz, text, text[], text, jsonb, vector, timestamptz, boolean, text, text[]
) is
'The first k (default every) candidates of a recall in final order with its fused score, the final score '
'and components (every signal''s value, weight and contribution; fusion signals with their rank and '
'z-score among the candidates): what to read to understand and tune ranking.';

-- sql/idempotent/recall/097-define-feature.sql
-- Recall features a superuser adds. Each is checked by building recall's statement with it, so this file
-- comes after the statement's builder (095-recall-score.sql).

-- Adds a feature to recall (or changes one): after it, recall's statement computes it for every candidate
-- at its stage and every signal sees it as (c).<name>. Only a superuser may call it (it is granted to no role:
-- the expression runs as the owner in every tenant's recall), and it runs as the caller. The statement is
-- built at once with the feature: one that does not parse, or that calls a function or uses a type or
-- operator a role other than a superuser could change, is refused here, and nothing is written.
create or replace function memory.define_feature(
    name text, stage text, type regtype, expression text, describes text
) returns void
language plpgsql
as $$
declare
    v_problem text;
begin
    if define_feature.stage is null or define_feature.stage not in ('chunk', 'turn', 'memory') then
        raise exception 'agent_memory: feature "%": stage must be chunk, turn or memory, got %', define_feature.name,
            coalesce(define_feature.stage, 'null')
            using errcode = 'invalid_parameter_value',
                  hint = 'the fusion stage''s features are computed by recall''s pipeline itself';
    end if;
    if define_feature.expression is null or btrim(define_feature.expression) = '' then
        raise exception 'agent_memory: feature "%" needs an expression', define_feature.name
            using errcode = 'invalid_parameter_value';
    end if;
    if exists (select from memory.recall_features as f where f.name = define_feature.name and f.builtin) then
        raise exception 'agent_memory: feature "%" is built in', define_feature.name
            using errcode = 'invalid_parameter_value',
                  hint = 'define a feature of another name (every install defines the built-in ones again)';
    end if;
    perform memory_internal._define_feature(name, stage, type, expression, describes, builtin => false);
    begin
        v_problem := memory_internal._scoring_code_problem();
    exception when others then
        raise exception 'agent_memory: feature "%": recall''s statement does not work with its expression: %',
            define_feature.name, sqlerrm using errcode = 'invalid_parameter_value';
    end;
    if v_problem is not null then
        raise exception 'agent_memory: feature "%": %', define_feature.name, v_problem
            using errcode = 'insufficient_privilege',
                  hint = 'recall runs a feature''s expression as the extension''s owner: what it calls is a '
                         'superuser''s, in a schema only superusers may create in';
    end if;
end
$$;

comment on function memory.define_feature(text, text, regtype, text, text) is
'Adds (or changes) a recall feature, superusers only: its name (the attribute of memory.recall_candidate '
'signals read), stage (chunk: per candidate chunk, over c the chunk, t its turn, e and x the vectors of the '
'chunk and of its context, b its bm25, r the recall; turn: per candidate turn after fusion, over d its best '
'chunk''s features with the fusion stage''s, t, s its session, tm its memory, r; memory: like turn, a property '
'of the memory the turn carries), its type, its SQL expression and what it describes.';

-- sql/idempotent/signals/100-signal-lexical.sql
-- Recall signal "lexical" (fusion stage): BM25 of a chunk over the query's words: its own words, or its
-- own words with its context times context_weight, whichever is higher (memory_internal._chunk_bm25).
select memory_internal._define_feature(
    'bm25', 'chunk', 'double precision',
    $feature$b.bm25$feature$,
    'BM25 of the chunk over the query''s words: its own words, or its own words with its context '
    || 'times context_weight, whichever is higher (memory_internal._chunk_bm25).',
    builtin => true
);

create or replace function memory_internal.signal_lexical(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select (c).bm25
$$;

select memory_internal._define_builtin_signal(
    'lexical', 'fusion', 'memory_internal.signal_lexical(memory.recall_candidate, jsonb)', 1.0,
    'BM25 of a chunk over the query''s words: its own words, or its own words with its context times '
    'context_weight, whichever is higher.'
);

-- sql/idempotent/signals/101-signal-dense.sql
-- Recall signal "dense" (fusion stage): the cosine similarity of the query vector to the chunk's vector,
-- or to the chunk and its context together (the sum of their vectors, as mean pooling embeds a pair)
-- times context_weight, whichever is higher.
select memory_internal._define_feature(
    'cosine', 'chunk', 'double precision',
    $feature$1 - (e.embedding <=> r.query_vector)$feature$,
    'Cosine similarity of the query vector to the chunk''s vector (null without one).',
    builtin => true
);

select memory_internal._define_feature(
    'context_cosine', 'chunk', 'double precision',
    $feature$1 - (x.embedding <=> r.query_vector)$feature$,
    'Cosine similarity of the query vector to the vector of the chunk''s context (the turn before).',
    builtin => true
);

select memory_internal._define_feature(
    'context_similarity', 'chunk', 'double precision',
    $feature$1 - (e.embedding <=> x.embedding)$feature$,
    'Cosine similarity of the chunk''s vector to its context''s.',
    builtin => true
);

create or replace function memory_internal.signal_dense(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case
        when (c).context_cosine is null then (c).cosine
        else greatest(
            (c).cosine,
            (s ->> 'context_weight')::float8 * ((c).cosine + (c).context_cosine) / sqrt(2 + 2 * (c).context_similarity)
        )
    end
$$;

select memory_internal._define_builtin_signal(
    'dense', 'fusion', 'memory_internal.signal_dense(memory.recall_candidate, jsonb)', 1.2,
    'Cosine similarity of the query vector to the chunk''s vector, or to the chunk and its context '
    'together (the sum of their vectors, as mean pooling embeds a pair) times context_weight, whichever '
    'is higher.'
);

-- sql/idempotent/signals/102-signal-session.sql
-- Recall signal "session" (boost stage): The best fused score among the candidates of the turn's
-- session: a session that matches lifts its turns.
create or replace function memory_internal.signal_session(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select (c).session_best
$$;

select memory_internal._define_builtin_signal(
    'session', 'boost', 'memory_internal.signal_session(memory.recall_candidate, jsonb)', 0.5,
    'The best fused score among the candidates of the turn''s session: a session that matches lifts '
    'its turns.'
);

-- sql/idempotent/signals/103-signal-neighbor.sql
-- Recall signal "neighbor" (boost stage): the fused score of the turn just after (the reply to it), or
-- neighbor_previous_share of the turn just before, whichever is higher (when they are candidates). The
-- turn before counts less: it is already the context of the turn's own full-text and vector scores.
create or replace function memory_internal.signal_neighbor(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select coalesce(greatest((c).next_fused, (s ->> 'neighbor_previous_share')::float8 * (c).previous_fused), 0)
$$;

select memory_internal._define_builtin_signal(
    'neighbor', 'boost', 'memory_internal.signal_neighbor(memory.recall_candidate, jsonb)', 0.3,
    'The fused score of the turn just after (the reply to it), or neighbor_previous_share of the one just '
    'before (already its context), whichever is higher; 0 when neither is a candidate.'
);

-- sql/idempotent/signals/104-signal-summary.sql
-- Recall signal "summary" (boost stage): Full-text match of the turn's session summary (z-score over
-- the candidate sessions).
create or replace function memory_internal.signal_summary(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).summary_z, 0)
$$;

select memory_internal._define_builtin_signal(
    'summary', 'boost', 'memory_internal.signal_summary(memory.recall_candidate, jsonb)', 0.1,
    'Full-text match of the turn''s session summary (z-score over the candidate sessions).'
);

-- sql/idempotent/signals/105-signal-session-vector.sql
-- Recall signal "session_vector" (boost stage): Cosine of the query to the turn's session vector
-- (z-score over the candidate sessions).
create or replace function memory_internal.signal_session_vector(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).session_vector_z, 0)
$$;

select memory_internal._define_builtin_signal(
    'session_vector', 'boost', 'memory_internal.signal_session_vector(memory.recall_candidate, jsonb)', 0.1,
    'Cosine of the query to the turn''s session vector (z-score over the candidate sessions).'
);

-- sql/idempotent/signals/106-signal-speaker.sql
-- Recall signal "speaker" (boost stage): 1 when the turn's speaker is a participant the query names
-- (names are matched, not searched as words).
select memory_internal._define_feature(
    'speaker', 'chunk', 'text',
    $feature$t.speaker$feature$,
    'Who said the turn (its speaker''s name).',
    builtin => true
);

select memory_internal._define_feature(
    'speaker_named', 'turn', 'boolean',
    $feature$coalesce(d.speaker = any((r.query).speakers), false)$feature$,
    'Whether the turn''s speaker is a participant the query names.',
    builtin => true
);

create or replace function memory_internal.signal_speaker(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).speaker_named then 1 else 0 end
$$;

select memory_internal._define_builtin_signal(
    'speaker', 'boost', 'memory_internal.signal_speaker(memory.recall_candidate, jsonb)', 2.0,
    '1 when the turn''s speaker is a participant the query names (names are matched, not searched as '
    'words).'
);

-- sql/idempotent/signals/107-signal-recency.sql
-- Recall signal "recency" (boost stage): 0.5 ^ (age in days / recency_half_life_days): 1 for a turn
-- said now, 0.5 one half-life ago.
select memory_internal._define_feature(
    'age_days', 'turn', 'double precision',
    $feature$extract(epoch from pg_catalog.now() - d.created_at) / 86400.0$feature$,
    'Days since the turn was said.',
    builtin => true
);

create or replace function memory_internal.signal_recency(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select power(0.5, least((c).age_days / (s ->> 'recency_half_life_days')::float8, 1000))
$$;

select memory_internal._define_builtin_signal(
    'recency', 'boost', 'memory_internal.signal_recency(memory.recall_candidate, jsonb)', 0,
    '0.5 ^ (age in days / recency_half_life_days): 1 for a turn said now, 0.5 one half-life ago.'
);

-- sql/idempotent/signals/108-signal-access.sql
-- Recall signal "access" (boost stage): ln(1 + how often recall returned the turn) (counted when
-- recall_count_access is on).
select memory_internal._define_feature(
    'access_count', 'chunk', 'bigint',
    $feature$t.access_count$feature$,
    'How often recall returned the turn (counted when recall_count_access is on).',
    builtin => true
);

create or replace function memory_internal.signal_access(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select ln(1 + (c).access_count)
$$;

select memory_internal._define_builtin_signal(
    'access', 'boost', 'memory_internal.signal_access(memory.recall_candidate, jsonb)', 0,
    'ln(1 + how often recall returned the turn) (counted when recall_count_access is on).'
);

-- sql/idempotent/signals/109-signal-open-loop.sql
-- Recall signal "open_loop" (boost stage): 1 when the turn holds an open loop of its session's summary
-- (an unanswered question, a to-do).
select memory_internal._define_feature(
    'holds_open_loop', 'turn', 'boolean',
    $feature$exists (
        select from memory.summaries as m
        cross join lateral jsonb_array_elements_text(m.open_loops) as o (open_loop)
        where m.tenant_id = r.tenant and m.session_key = d.session_key and strpos(t.content, o.open_loop) > 0
    )$feature$,
    'Whether the turn holds an open loop of its session''s summary.',
    builtin => true
);

create or replace function memory_internal.signal_open_loop(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).holds_open_loop then 1 else 0 end
$$;

select memory_internal._define_builtin_signal(
    'open_loop', 'boost', 'memory_internal.signal_open_loop(memory.recall_candidate, jsonb)', 0.1,
    '1 when the turn holds an open loop of its session''s summary (an unanswered question, a to-do).'
);

-- sql/idempotent/signals/110-signal-trust.sql
-- Recall signal "trust" (boost stage): ln(trust) of the turn: 0 at trust 1, negative after unhelpful
-- feedback, positive after helpful.
select memory_internal._define_feature(
    'trust', 'chunk', 'double precision',
    $feature$t.trust$feature$,
    'The turn''s trust (1 at first; feedback moves it).',
    builtin => true
);

create or replace function memory_internal.signal_trust(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select ln(greatest((c).trust, 1e-6))
$$;

select memory_internal._define_builtin_signal(
    'trust', 'boost', 'memory_internal.signal_trust(memory.recall_candidate, jsonb)', 1,
    'ln(trust) of the turn: 0 at trust 1, negative after unhelpful feedback, positive after helpful.'
);

-- sql/idempotent/signals/111-signal-period.sql
-- Recall signal "period" (boost stage): 1 for a turn said within the period of time the query names
-- ("in October 2023", "on 3 May", "last week"), halving every period_half_life_days before or after it;
-- 0 when the query names no period. (Past 1,000 half-lives the value stays 0.5 ^ 1000, not an underflow.)
select memory_internal._define_feature(
    'days_from_period', 'turn', 'double precision',
    $feature$case when (r.query).period is not null then
        extract(epoch from greatest(lower((r.query).period) - d.created_at, d.created_at - upper((r.query).period),
                                    interval '0')) / 86400.0
    end$feature$,
    'Days between the turn and the period of time the query names (0 inside it; null when it names '
    || 'none).',
    builtin => true
);

create or replace function memory_internal.signal_period(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).days_from_period is null then 0
                else power(0.5, least((c).days_from_period / (s ->> 'period_half_life_days')::float8, 1000)) end
$$;

select memory_internal._define_builtin_signal(
    'period', 'boost', 'memory_internal.signal_period(memory.recall_candidate, jsonb)', 6,
    '1 for a turn said within the period of time the query names ("in October 2023", "on 3 May", "last '
    'week"), halving every period_half_life_days before or after it; 0 when the query names none.'
);

-- sql/idempotent/signals/112-signal-tool-result.sql
-- Recall signal "tool_result" (boost stage): -1 for a tool's output (a turn of role tool), 0 for what
-- people and the assistant said. Tool output is indexed (commands, errors, file contents are worth
-- finding), and its weight says how far below a conversation turn of the same relevance it ranks; at 0
-- it ranks as one.
select memory_internal._define_feature(
    'role', 'chunk', 'text',
    $feature$t.role$feature$,
    'The turn''s role (user, assistant, system, tool).',
    builtin => true
);

create or replace function memory_internal.signal_tool_result(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).role = 'tool' then -1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'tool_result', 'boost', 'memory_internal.signal_tool_result(memory.recall_candidate, jsonb)', 0.3,
    '-1 for a tool''s output (role tool), 0 for other turns: how far below a conversation turn of the same '
    || 'relevance tool output ranks.'
);

-- sql/idempotent/signals/113-signal-entity.sql
-- Recall signal "entity" (boost stage): the entities the recall is about that the turn mentions, each
-- counted by how specific it is in the scope (1 for a name said once, near 0 for one said in every turn),
-- over the number of them — those the query names (a run of its words written as a name that is an
-- entity's name or alias in the scope, "postgres" finding PostgreSQL) and those passed as entities.
-- Mentions come from enrichment's extraction (memory.entity_mentions), so a turn that calls the entity by
-- another of its names counts.
select memory_internal._define_feature(
    'entities_mentioned', 'turn', 'double precision',
    $feature$case when cardinality((r.query).entity_ids) > 0 then (
        select coalesce(sum(n.weight), 0) / (select max(g) from unnest((r.query).entity_groups) as g)
        from (
            select distinct g.name_group, g.weight
            from memory.entity_mentions as m
            inner join unnest((r.query).entity_ids, (r.query).entity_groups, (r.query).entity_weights)
                as g (entity_id, name_group, weight) on m.entity_id = g.entity_id
            where m.tenant_id = r.tenant and m.turn_id = d.turn_id and m.entity_id = any((r.query).entity_ids)
        ) as n
    ) else 0 end$feature$,
    'The recall''s entities (each name a group of keys) the turn mentions, each by how specific it is '
    || 'in the scope, over the number of names.',
    builtin => true
);

create or replace function memory_internal.signal_entity(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).entities_mentioned, 0)
$$;

select memory_internal._define_builtin_signal(
    'entity', 'boost', 'memory_internal.signal_entity(memory.recall_candidate, jsonb)', 1.0,
    'The entities of the recall (named in the query, or passed) that the turn mentions, each weighted by how '
    || 'specific it is in the scope (ln(1 + chunks / turns mentioning it) / ln(1 + chunks)), over their number.'
);

-- sql/idempotent/signals/114-signal-entity-neighbor.sql
-- Recall signal "entity_neighbor" (boost stage): 1 when the turn mentions one of the ten entities most
-- often mentioned together with the recall's entities (their neighbours in the co-occurrence graph,
-- memory.entity_edges), 0 otherwise.
select memory_internal._define_feature(
    'neighbor_mentioned', 'turn', 'boolean',
    $feature$cardinality((r.query).neighbor_ids) > 0 and exists (
        select from memory.entity_mentions as m
        where m.tenant_id = r.tenant and m.turn_id = d.turn_id and m.entity_id = any((r.query).neighbor_ids)
    )$feature$,
    'Whether the turn mentions one of the graph neighbours of the recall''s entities.',
    builtin => true
);

create or replace function memory_internal.signal_entity_neighbor(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).neighbor_mentioned then 1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'entity_neighbor', 'boost', 'memory_internal.signal_entity_neighbor(memory.recall_candidate, jsonb)', 0.0,
    '1 when the turn mentions one of the ten entities most often mentioned with the recall''s entities '
    || '(graph neighbours), else 0.'
);

-- sql/idempotent/signals/115-signal-importance.sql
-- Recall signal "importance" (boost stage): the importance (0-1) of the memory a hit carries, 0 for a turn
-- that carries none. A curated claim outranks chat of the same relevance by weight x importance.
select memory_internal._define_feature(
    'memory_importance', 'memory', 'double precision',
    $feature$tm.importance$feature$,
    'The importance (0-1) of the curated memory the turn carries.',
    builtin => true
);

create or replace function memory_internal.signal_importance(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).memory_importance, 0)
$$;

select memory_internal._define_builtin_signal(
    'importance', 'boost', 'memory_internal.signal_importance(memory.recall_candidate, jsonb)', 1,
    'The importance (0-1) of the memory a hit carries; 0 for a turn that carries none.'
);

-- sql/idempotent/signals/116-signal-kind.sql
-- Recall signal "kind" (boost stage): 1 for a memory of the kind the question asks for (its intent:
-- memory.query_intent, or recall's intent argument) that is more relevant than the candidates' mean (its
-- fused score above 0), 0 otherwise. Its weight is the route: large enough by
-- default that such memories come before the hybrid's hits (memory first); 0 turns routing off.
select memory_internal._define_feature(
    'memory_kind', 'memory', 'text',
    $feature$tm.kind$feature$,
    'The kind of the curated memory the turn carries (rule, preference, decision, ...).',
    builtin => true
);

select memory_internal._define_feature(
    'intended', 'memory', 'boolean',
    $feature$coalesce(tm.kind = any((r.query).intent_kinds) and d.fused > 0, false)$feature$,
    'Whether the turn''s memory is of the kind the question asks for and more relevant than the '
    || 'candidates'' mean (fused score above 0).',
    builtin => true
);

create or replace function memory_internal.signal_kind(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).intended then 1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'kind', 'boost', 'memory_internal.signal_kind(memory.recall_candidate, jsonb)', 10,
    '1 for a memory of the kind the question asks for (rule, preference, decision: its intent) more relevant '
    || 'than the candidates'' mean, 0 otherwise; the weight routes such questions to curated memory first.'
);

-- sql/idempotent/signals/117-signal-status.sql
-- Recall signal "status" (boost stage): -1 for a memory that no longer holds (resolved; superseded and
-- retracted ones too when recall is asked to include them), 0 for a memory that holds and for a turn.
select memory_internal._define_feature(
    'memory_status', 'memory', 'text',
    $feature$tm.status$feature$,
    'The status of the curated memory the turn carries, as recall shows it (at as_of: as it was then).',
    builtin => true
);

create or replace function memory_internal.signal_status(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).memory_status in ('resolved', 'superseded', 'retracted') then -1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'status', 'boost', 'memory_internal.signal_status(memory.recall_candidate, jsonb)', 1,
    '-1 for a memory that no longer holds (resolved, or superseded or retracted when included), 0 otherwise.'
);

-- sql/idempotent/signals/118-signal-tier.sql
-- Recall signal "tier" (boost stage): 1 for a hot session or memory, 0.5 for warm, 0 for cold (cold ones
-- take part only when recall's tiers include cold).
select memory_internal._define_feature(
    'tier', 'turn', 'text',
    $feature$coalesce(tm.tier, s.tier)$feature$,
    'The tier of the memory the turn carries, else of its session.',
    builtin => true
);

create or replace function memory_internal.signal_tier(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case (c).tier when 'hot' then 1 when 'warm' then 0.5 else 0 end::double precision
$$;

select memory_internal._define_builtin_signal(
    'tier', 'boost', 'memory_internal.signal_tier(memory.recall_candidate, jsonb)', 0.1,
    'The tier of the hit''s session or memory: 1 hot, 0.5 warm, 0 cold.'
);

-- sql/idempotent/signals/119-signal-decayed-importance.sql
-- Recall signal "decayed_importance" (boost stage): the importance of the hit's memory (or, for chat, the
-- setting session_importance) decayed over the days it went unused (memory.tier_items).
select memory_internal._define_feature(
    'decayed_importance', 'turn', 'double precision',
    $feature$memory.decayed_importance(
        coalesce(tm.importance, (r.settings ->> 'session_importance')::double precision),
        coalesce(tm.last_used, greatest(s.updated_at, s.used_at)), pg_catalog.now(), r.settings
    )$feature$,
    'The importance of the turn''s memory, or session_importance for chat, decayed over the days it '
    || 'went unused.',
    builtin => true
);

create or replace function memory_internal.signal_decayed_importance(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).decayed_importance, 0)
$$;

select memory_internal._define_builtin_signal(
    'decayed_importance', 'boost', 'memory_internal.signal_decayed_importance(memory.recall_candidate, jsonb)', 0,
    'The importance of the hit''s memory, or session_importance for chat, decayed over the days it went unused '
    || '(tier half-lives).'
);

-- sql/idempotent/curated/150-feedback.sql
-- Feedback: a verdict on a recalled turn, a curated memory or a whole session. helpful raises trust,
-- which recall weighs (weight_trust * ln(trust)), by trust_helpful_step; unhelpful, incorrect and stale
-- lower it by trust_unhelpful_factor, so a wrong memory sinks fast and a good one rises slowly. On a
-- memory the verdict moves the trust of the turn that carries its words, and more: incorrect from
-- feedback_retract_after agents retracts it, stale multiplies its importance by feedback_stale_factor. On
-- a session it moves the trust of every turn. An agent's repeat of the verdict it last gave the same target
-- is kept but moves nothing. Every verdict is kept with what it did.

-- Trust after one verdict: up a step for helpful, down by the factor otherwise, within the bounds, and
-- never the other way (a turn above trust_max stays where a DBA put it).
create or replace function memory_internal._trust_after(trust real, helpful boolean) returns real
language sql
stable
as $$
    select case when helpful
        then greatest(trust, least((memory.setting('trust_max') #>> '{}')::real,
                                   trust + (memory.setting('trust_helpful_step') #>> '{}')::real))
        else least(trust, greatest((memory.setting('trust_min') #>> '{}')::real,
                                   trust * (memory.setting('trust_unhelpful_factor') #>> '{}')::real))
    end
$$;

comment on function memory_internal._trust_after(real, boolean) is
'Internal: a turn''s trust after a helpful or other verdict (trust_helpful_step, trust_unhelpful_factor, '
'within trust_min and trust_max).';

comment on type memory.feedback_given is
'What memory.give_feedback returns: the verdict''s id in table memory.feedback, the trust before and after '
'(of the turn judged or carrying the memory''s words; null for a session), the verdict, whether it counted '
'and its effect.';

-- What a counted verdict does to a memory besides its words' trust: stale lowers its importance by
-- feedback_stale_factor; incorrect from feedback_retract_after distinct judges retracts it. Returns what it
-- did, to append to the verdict's effect.
create or replace function memory_internal._memory_verdict(
    tenant text, memory_id bigint, status text, importance double precision, verdict text, judge text
) returns text
language plpgsql
as $$
declare
    v_factor double precision := (memory.setting('feedback_stale_factor') #>> '{}')::double precision;
    v_needed bigint := (memory.setting('feedback_retract_after') #>> '{}')::bigint;
    v_incorrect bigint;
begin
    if verdict = 'stale' then
        update memory.memories as m set importance = m.importance * v_factor
        where m.tenant_id = tenant and m.memory_id = _memory_verdict.memory_id;
        return format('; importance %s -> %s', importance, importance * v_factor);
    elsif verdict = 'incorrect' then
        select count(distinct f.judged_by) + 1 into v_incorrect from memory.feedback as f
        where f.tenant_id = tenant and f.memory_id = _memory_verdict.memory_id and f.verdict = 'incorrect'
            and f.counted and f.judged_by <> judge;
        if status <> 'retracted' and v_incorrect >= v_needed then
            perform from memory_internal._end_memory(_memory_verdict.memory_id, 'retracted', 'retracted');
            return format('; retracted (%s agents said incorrect)', v_incorrect);
        end if;
        return format('; %s of %s agents needed to retract it said incorrect', v_incorrect, v_needed);
    end if;
    return '';
end
$$;

comment on function memory_internal._memory_verdict(text, bigint, text, double precision, text, text) is
'Internal: what a counted stale or incorrect verdict does to a memory (importance, retraction), as text to '
'append to the verdict''s effect.';

create or replace function memory.give_feedback(
    verdict text, turn_id bigint default null, memory_id bigint default null, session_id text default null,
    query text default null, note text default null, judged_by text default null
) returns setof memory.feedback_given
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_verdict text := give_feedback.verdict;
    v_judge text := coalesce(give_feedback.judged_by, session_user);
    v_turn bigint := give_feedback.turn_id;
    v_session bigint;
    v_memory record;
    v_last text;
    v_counted boolean;
    v_before real;
    v_after real;
    v_effect text;
    v_feedback bigint;
begin
    select null::bigint as memory_id, null::bigint as turn_id, null::text as status, null::double precision as importance
    into v_memory;
    if v_verdict is null or v_verdict not in ('helpful', 'unhelpful', 'incorrect', 'stale') then
        raise exception 'agent_memory: feedback verdict must be helpful, unhelpful, incorrect or stale, got %',
            coalesce(v_verdict, 'none') using errcode = 'invalid_parameter_value',
            hint = 'for example memory.give_feedback(''helpful'', turn_id => 42)';
    end if;
    if num_nonnulls(give_feedback.turn_id, give_feedback.memory_id, give_feedback.session_id) <> 1 then
        raise exception 'agent_memory: feedback needs one of turn_id, memory_id or session_id, got %',
            num_nonnulls(give_feedback.turn_id, give_feedback.memory_id, give_feedback.session_id)
            using errcode = 'invalid_parameter_value';
    end if;

    -- The target, locked so that verdicts on it take turns.
    if give_feedback.memory_id is not null then
        select m.memory_id, m.turn_id, m.status, m.importance into v_memory from memory.memories as m
        where m.tenant_id = v_tenant and m.memory_id = give_feedback.memory_id
        for update;
        if not found then
            raise exception 'agent_memory: no memory % in tenant "%"', give_feedback.memory_id, v_tenant
                using errcode = 'no_data_found';
        end if;
        v_turn := v_memory.turn_id;
    elsif give_feedback.session_id is not null then
        -- The judging agent's session of that name, else the only session of that name.
        v_session := memory_internal._session_key(give_feedback.session_id, case when exists (
            select from memory.sessions as s
            where s.tenant_id = v_tenant and s.session_id = give_feedback.session_id and s.agent_id = give_feedback.judged_by
        ) then give_feedback.judged_by end);
        perform from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session for update;
    end if;
    if v_session is null then
        select t.trust into v_before from memory.turns as t
        where t.tenant_id = v_tenant and t.turn_id = v_turn
        for update;
        if not found then
            raise exception 'agent_memory: no turn % in tenant "%"', v_turn, v_tenant using errcode = 'no_data_found';
        end if;
    end if;

    -- A judge's repeat of the verdict it last gave this target is kept, not counted.
    select f.verdict into v_last from memory.feedback as f
    where f.tenant_id = v_tenant and f.judged_by = v_judge and f.counted
        and case when give_feedback.memory_id is not null then f.memory_id = give_feedback.memory_id
                 when v_session is not null then f.session_key = v_session
                 else f.turn_id = v_turn and f.memory_id is null end
    order by f.feedback_id desc
    limit 1;
    v_counted := v_last is distinct from v_verdict;

    if not v_counted then
        v_after := v_before;
        v_effect := format('none: %s already said %s', v_judge, v_verdict);
    elsif v_session is not null then
        update memory.turns as t set trust = memory_internal._trust_after(t.trust, v_verdict = 'helpful')
        where t.tenant_id = v_tenant and t.session_key = v_session;
        v_effect := format('trust of the session''s %s turns %s', (
            select count(*) from memory.turns as t where t.tenant_id = v_tenant and t.session_key = v_session
        ), case when v_verdict = 'helpful' then 'raised' else 'lowered' end);
    else
        v_after := memory_internal._trust_after(v_before, v_verdict = 'helpful');
        update memory.turns as t set trust = v_after where t.tenant_id = v_tenant and t.turn_id = v_turn;
        v_effect := format('trust %s -> %s', v_before, v_after);
        if v_memory.memory_id is not null then
            v_effect := v_effect || memory_internal._memory_verdict(
                v_tenant, v_memory.memory_id, v_memory.status, v_memory.importance, v_verdict, v_judge
            );
        end if;
    end if;

    perform memory_internal._count(v_tenant, array['feedback'], array[v_verdict], array[1]);
    -- Helpful: what was judged is in use, back to hot.
    if v_counted and v_verdict = 'helpful' then
        perform memory_internal._mark_used(v_tenant, array[coalesce(v_session, (
            select t.session_key from memory.turns as t where t.tenant_id = v_tenant and t.turn_id = v_turn
        ))], array[v_turn]);
    end if;

    insert into memory.feedback as f (tenant_id, turn_id, memory_id, session_key, helpful, verdict, query, note,
                                      trust_before, trust_after, judged_by, counted, effect)
    values (v_tenant, case when give_feedback.memory_id is null and v_session is null then v_turn end, give_feedback.memory_id,
            v_session, v_verdict = 'helpful', v_verdict, give_feedback.query, give_feedback.note, v_before, v_after, v_judge,
            v_counted, v_effect)
    returning f.feedback_id into v_feedback;
    return query select v_feedback, v_before, v_after, v_verdict, v_counted, v_effect;
end
$$;

comment on function memory.give_feedback(text, bigint, bigint, text, text, text, text) is
'Records a verdict on a recalled turn (turn_id), a curated memory (memory_id) or a whole session (session_id): '
'helpful, unhelpful, incorrect or stale. helpful adds trust_helpful_step to trust (up to trust_max) and moves '
'what was judged (session, memory) to the hot tier; the others multiply it by trust_unhelpful_factor (down to '
'trust_min). On a memory: the trust of its words'' turn; incorrect from feedback_retract_after distinct judges '
'retracts it; stale multiplies its importance by feedback_stale_factor. On a session: every turn''s trust. '
'judged_by: the agent judging (default the role; session_id names its session, else the only one of that '
'name): its repeat of the verdict it last gave the target is kept with counted false and moves nothing. '
'Returns the verdict''s id in table memory.feedback (which keeps every verdict), the trust before and after '
'(turns and memories), the verdict, whether it counted and what it did.';

-- What feedback has done, per turn: a DBA's view of trust.
create or replace view memory.feedback_summary as
select
    f.tenant_id,
    f.turn_id,
    s.session_id,
    t.agent_id,
    t.trust,
    count(*) filter (where f.helpful and f.counted) as helpful,
    count(*) filter (where not f.helpful and f.counted) as unhelpful,
    max(f.created_at) as last_feedback_at,
    left(t.content, 120) as content
from memory.feedback as f
inner join memory.turns as t on f.tenant_id = t.tenant_id and f.turn_id = t.turn_id
inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
where f.tenant_id = memory.current_tenant()
group by f.tenant_id, f.turn_id, s.session_id, t.agent_id, t.trust, t.content;

comment on view memory.feedback_summary is
'Per judged turn of this tenant (verdicts on the turn itself): counted helpful and other (unhelpful, '
'incorrect, stale) verdicts, the trust it has now, the last verdict.';

-- sql/idempotent/recall/170-bootstrap.sql
-- Bootstrap and task context: what an agent should know, within a character budget, when a new
-- conversation starts (bootstrap) or for a task at hand (context_for_task).

-- A character budget given by a caller: null (the setting's default) or at least 1.
create or replace function memory_internal._check_budget(max_chars integer) returns void
language plpgsql
immutable
as $$
begin
    if max_chars < 1 then
        raise exception 'agent_memory: max_chars must be at least 1, got %', max_chars
            using errcode = 'invalid_parameter_value';
    end if;
end
$$;

comment on function memory_internal._check_budget(integer) is 'Internal: rejects a character budget below 1.';

-- Bootstrap, in order until the budget is spent: the memories that hold now (rules, preferences, open
-- tasks and decisions first, the most important and newest first within a kind), the open loops and
-- decisions of the most recent sessions, then those sessions' summaries.
create or replace function memory.bootstrap(
    agent_id text default null, max_chars integer default null, sessions integer default 5
) returns table (section text, session_id text, at timestamptz, content text)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    perform memory_internal._check_budget(bootstrap.max_chars);
    if bootstrap.sessions is null or bootstrap.sessions < 0 then
        raise exception 'agent_memory: sessions must be 0 or more, got %', coalesce(bootstrap.sessions::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    return query
    with budget as (
        select coalesce(bootstrap.max_chars, (memory.setting('bootstrap_max_chars') #>> '{}')::integer) as chars
    ),
    recent as (
        select s.tenant_id, s.session_key, s.session_id, s.started_at
        from memory.sessions as s
        where s.tenant_id = memory.current_tenant() and s.session_id <> 'remembered'
            and (bootstrap.agent_id is null or s.agent_id = bootstrap.agent_id)
        order by s.started_at desc, s.session_key desc
        limit bootstrap.sessions
    ),
    items as (
        select 1 as priority, 'remembered' as section, 'remembered' as session_id, m.valid_from as at, m.content,
               row_number() over (
                   order by array_position(array['rule', 'preference', 'task', 'decision'], m.kind) nulls last,
                       m.importance desc, m.valid_from desc, m.memory_id desc
               ) as n
        from memory.memory_items as m
        where memory.memory_holds(m.status, m.valid_from, m.valid_to, null)
            and (bootstrap.agent_id is null or m.agent_id = bootstrap.agent_id)
        union all
        select k.priority, k.section, r.session_id, r.started_at, l.item #>> '{}',
               row_number() over (partition by k.section order by r.started_at desc, r.session_key desc, l.n)
        from recent as r
        inner join memory.summaries as m on r.tenant_id = m.tenant_id and r.session_key = m.session_key
        cross join lateral (values (2, 'open_loop', m.open_loops), (3, 'decision', m.decisions))
            as k (priority, section, items)
        cross join lateral jsonb_array_elements(k.items) with ordinality as l (item, n)
        union all
        select 4, 'recent_session', r.session_id, r.started_at, m.summary,
               row_number() over (order by r.started_at desc, r.session_key desc)
        from recent as r
        inner join memory.summaries as m on r.tenant_id = m.tenant_id and r.session_key = m.session_key
    ),
    packed as (
        select i.*, sum(length(i.content)) over (order by i.priority, i.n rows unbounded preceding) as used
        from items as i
    )
    select p.section, p.session_id, p.at, p.content
    from packed as p cross join budget as b
    where p.used <= b.chars
    order by p.priority, p.n;
end
$$;

comment on function memory.bootstrap(text, integer, integer) is
'Context for a new conversation of an agent (or every agent when null), at most max_chars characters '
'(default: setting bootstrap_max_chars): the memories that hold now (rules, preferences, open tasks and '
'decisions first; superseded, resolved and retracted ones left out), then the open loops, decisions and '
'summaries of the most recent sessions. Stops at the first item that would overflow the budget.';

-- Context for a task: the turns most relevant to it (by memory.recall), best first, within a budget.
create or replace function memory.context_for_task(
    task text, max_chars integer default null, agent_id text default null, k integer default 20
) returns table (
    rank bigint, session_id text, turn_id bigint, at timestamptz, speaker text, content text, score double precision
)
language plpgsql
volatile
as $$
#variable_conflict use_column
begin
    perform memory_internal._check_budget(context_for_task.max_chars);
    return query
    with hits as (
        select row_number() over (order by r.score desc, r.turn_id) as rank, r.session_id, r.turn_id,
               r.created_at, coalesce(r.speaker, r.role) as speaker, r.content, r.score
        from memory.recall(task, k => context_for_task.k, agent_id => context_for_task.agent_id) as r
    ),
    packed as (
        select h.*, sum(length(h.content)) over (order by h.rank rows unbounded preceding) as used from hits as h
    )
    select p.rank, p.session_id, p.turn_id, p.created_at, p.speaker, p.content, p.score
    from packed as p
    where p.used <= coalesce(context_for_task.max_chars, (memory.setting('context_max_chars') #>> '{}')::integer)
    order by p.rank;
end
$$;

comment on function memory.context_for_task(text, integer, text, integer) is
'The turns most relevant to a task (memory.recall of the task, up to k), best first, as many as fit in '
'max_chars characters (default: setting context_max_chars); stops at the first that would overflow.';

-- sql/idempotent/lifecycle/182-tenant-export.sql
-- A tenant's whole memory as JSON records, and back: memory.export_tenant() gives every session (with each
-- turn's trust, access count and times, the session's tier and its summary), every curated memory (its
-- versions, evidence and supersede chain), the log of merged paraphrases, the entities with their aliases
-- and states, and the feedback given; memory.import_tenant() stores such records in this database, so
-- that the same recall answers the same. What enrichment derives again (chunks, vectors, full-text
-- statistics, mentions, edges) is not exported: the import queues its sessions for enrichment. A record
-- names a turn by [agent_id, session_id, n], the n-th message of its session's record (the import maps it
-- to the turn that message is here), and a memory by its id in the export (mapped to its id here).

-- A session as JSON in the shape memory.commit takes; with state, also what the database holds about it
-- (record "session": record and update times, tier, the summary enrichment made) and about each turn
-- (trust, access count, times, the caller's vector).
create or replace function memory_internal._session_json(tenant text, session bigint, with_state boolean)
returns jsonb
language sql
stable
as $$
    select jsonb_strip_nulls(jsonb_build_object(
        'agent_id', s.agent_id, 'session_id', s.session_id, 'source', s.source, 'model', s.model,
        'started_at', s.started_at, 'tokens_in', s.tokens_in, 'tokens_out', s.tokens_out,
        'metadata', s.metadata,
        'summary', (select m.summary from memory.summaries as m
                    where m.tenant_id = s.tenant_id and m.session_key = s.session_key and m.method = 'caller'),
        'messages', (
            select coalesce(jsonb_agg(jsonb_build_object(
                'id', t.message_id, 'role', t.role, 'name', t.speaker, 'content', t.content,
                'tool_calls', t.tool_calls, 'tool_call_id', t.tool_call_id, 'tokens', t.tokens,
                'metadata', nullif(t.metadata, '{}'), 'created_at', t.created_at
            ) || case when with_state then jsonb_build_object(
                'trust', t.trust, 'access_count', nullif(t.access_count, 0), 'last_accessed_at', t.last_accessed_at,
                'recorded_at', t.recorded_at, 'embedding', t.client_embedding::text::jsonb
            ) else '{}' end order by t.position), '[]')
            from memory.turns as t
            where t.tenant_id = s.tenant_id and t.session_key = s.session_key
        )
    ) || case when with_state then jsonb_build_object(
        'record', 'session', 'recorded_at', s.recorded_at, 'updated_at', s.updated_at, 'tier', s.tier,
        'tier_since', s.tier_since, 'used_at', s.used_at,
        'derived_summary', (
            select jsonb_build_object('method', m.method, 'summary', m.summary, 'decisions', m.decisions,
                                      'open_loops', m.open_loops)
            from memory.summaries as m
            where m.tenant_id = s.tenant_id and m.session_key = s.session_key and m.method <> 'caller'
        )
    ) else '{}' end)
    from memory.sessions as s
    where s.tenant_id = tenant and s.session_key = session
$$;

comment on function memory_internal._session_json(text, bigint, boolean) is
'Internal: a session as memory.commit takes it; with_state, as a record of memory.export_tenant.';

-- memory.export gives sessions back in the shape memory.commit takes, so an export re-imports idempotently.
create or replace function memory.export(agent_id text default null, session_id text default null)
returns table (agent_id text, session_id text, session jsonb)
language sql
stable
as $$
    select s.agent_id, s.session_id, memory_internal._session_json(s.tenant_id, s.session_key, false)
    from memory.sessions as s
    where s.tenant_id = memory.current_tenant()
        and (export.agent_id is null or s.agent_id = export.agent_id)
        and (export.session_id is null or s.session_id = export.session_id)
    order by s.agent_id, s.started_at, s.session_key
$$;

comment on function memory.export(text, text) is
'Sessions of this tenant (all, one agent''s, or one) as JSON in the shape memory.commit takes: '
'{agent_id, session_id, source, model, started_at, tokens_in, tokens_out, metadata, summary (the caller''s), '
'messages}. Committing an export again adds nothing.';

-- How an export names a turn: [agent_id, session_id, n], the n-th message of its session's record.
create or replace function memory_internal._turn_ref(tenant text, turn bigint) returns jsonb
language sql
stable
as $$
    select jsonb_build_array(s.agent_id, s.session_id, (
        select count(*) from memory.turns as x
        where x.tenant_id = tenant and x.session_key = t.session_key and x.position <= t.position
    ))
    from memory.turns as t
    inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
    where t.tenant_id = tenant and t.turn_id = turn
$$;

comment on function memory_internal._turn_ref(text, bigint) is
'Internal: a turn as export records name it, [agent_id, session_id, n] (the n-th turn of its session).';

-- The records of the sessions, memories and entities given, in an order an import can follow: sessions,
-- then memories (each after the one it supersedes), the merge log, entities, entity states and feedback
-- (on the sessions, their turns, the memories and the turns that carry the memories' words).
create or replace function memory_internal._export_records(
    tenant text, sessions bigint[], memories bigint[], entities bigint[]
) returns setof jsonb
language plpgsql
stable
as $$
begin
    return query
    select jsonb_build_object('record', 'header', 'format', 'agent_memory', 'format_version', 1,
                              'extension_version', memory.version(), 'exported_at', pg_catalog.now());
    return query
    select memory_internal._session_json(tenant, s.session_key, true)
    from memory.sessions as s
    where s.tenant_id = tenant and s.session_key = any(sessions)
    order by s.agent_id, s.started_at, s.session_key;

    return query
    with recursive chain as (
        select m.memory_id, 0 as depth from memory.memories as m
        where m.tenant_id = tenant and m.memory_id = any(memories)
            and (m.supersedes is null or m.supersedes <> all(memories))
        union all
        select m.memory_id, c.depth + 1 from chain as c
        inner join memory.memories as m on m.tenant_id = tenant and m.supersedes = c.memory_id
        where m.memory_id = any(memories)
    )
    select jsonb_strip_nulls(jsonb_build_object(
        'record', 'memory', 'id', m.memory_id, 'agent_id', m.agent_id, 'kind', m.kind, 'content', m.content,
        'key', m.key, 'subjects', m.subjects, 'tags', m.tags, 'importance', m.importance,
        'confidence', m.confidence, 'status', m.status, 'origin', m.origin, 'valid_from', m.valid_from,
        'valid_to', m.valid_to, 'recorded_at', m.recorded_at, 'recorded_by', m.recorded_by,
        'canonical', encode(m.canonical, 'hex'), 'tier', m.tier, 'tier_since', m.tier_since, 'used_at', m.used_at,
        'supersedes', case when m.supersedes = any(memories) then m.supersedes end,
        'words_trust', (select w.trust from memory.turns as w where w.tenant_id = tenant and w.turn_id = m.turn_id),
        'evidence', (
            select coalesce(jsonb_agg(memory_internal._turn_ref(tenant, t.turn_id) order by t.turn_id), '[]')
            from memory.turns as t
            inner join memory.memory_evidence as e on t.tenant_id = e.tenant_id and t.turn_id = e.turn_id
            where e.tenant_id = tenant and e.memory_id = m.memory_id
        )
    ))
    from chain as c
    inner join memory.memories as m on m.tenant_id = tenant and m.memory_id = c.memory_id
    order by c.depth, m.memory_id;

    return query
    select jsonb_strip_nulls(jsonb_build_object(
        'record', 'memory_merge', 'memory', g.memory_id, 'agent_id', g.agent_id, 'kind', g.kind,
        'content', g.content, 'similarity', g.similarity, 'merged', g.merged, 'created_memory', g.created_memory_id,
        'recorded_at', g.recorded_at, 'recorded_by', g.recorded_by
    ))
    from memory.memory_merges as g
    where g.tenant_id = tenant and g.memory_id = any(memories)
        and (g.created_memory_id is null or g.created_memory_id = any(memories))
    order by g.merge_id;

    return query
    select jsonb_build_object('record', 'entity', 'agent_id', e.agent_id, 'name', e.name, 'normalized', e.normalized,
                              'type', e.type, 'aliases', e.aliases)
    from memory.entities as e
    where e.tenant_id = tenant and e.entity_id = any(entities)
    order by e.agent_id, e.normalized;

    return query
    select jsonb_strip_nulls(jsonb_build_object(
        'record', 'entity_state', 'agent_id', e.agent_id, 'entity', e.normalized, 'attribute', x.attribute,
        'value', x.value, 'valid_from', x.valid_from, 'valid_to', x.valid_to, 'recorded_at', x.recorded_at,
        'recorded_by', x.recorded_by
    ))
    from memory.entity_states as x
    inner join memory.entities as e on x.tenant_id = e.tenant_id and x.entity_id = e.entity_id
    where x.tenant_id = tenant and e.entity_id = any(entities)
    order by e.agent_id, e.normalized, x.attribute, x.valid_from;

    return query
    select jsonb_strip_nulls(jsonb_build_object(
        'record', 'feedback',
        'turn', case when t.session_key = any(sessions) then memory_internal._turn_ref(tenant, t.turn_id) end,
        'memory_words', case when t.session_key <> all(sessions) then (
            select min(m.memory_id) from memory.memories as m
            where m.tenant_id = tenant and m.turn_id = t.turn_id and m.memory_id = any(memories)
        ) end,
        'session', case when f.session_key is not null then jsonb_build_array(s.agent_id, s.session_id) end,
        'memory', f.memory_id, 'verdict', f.verdict, 'query', f.query, 'note', f.note,
        'trust_before', f.trust_before, 'trust_after', f.trust_after, 'given_by', f.given_by,
        'judged_by', f.judged_by, 'counted', f.counted, 'effect', f.effect, 'created_at', f.created_at
    ))
    from memory.feedback as f
    left join memory.turns as t on f.tenant_id = t.tenant_id and f.turn_id = t.turn_id
    left join memory.sessions as s on f.tenant_id = s.tenant_id and f.session_key = s.session_key
    where f.tenant_id = tenant
        and (
            t.session_key = any(sessions) or f.session_key = any(sessions) or f.memory_id = any(memories)
            or exists (
                select from memory.memories as m
                where m.tenant_id = tenant and m.turn_id = f.turn_id and m.memory_id = any(memories)
            )
        )
    order by f.created_at, f.feedback_id;
end
$$;

comment on function memory_internal._export_records(text, bigint[], bigint[], bigint[]) is
'Internal: the export records of a tenant''s sessions, memories and entities given (memory.export_tenant, '
'retention archives).';

create or replace function memory.export_tenant(agent_id text default null)
returns setof jsonb
language sql
volatile
as $$
    select r.record
    from memory_internal._export_records(
        memory.current_tenant(),
        array(select s.session_key from memory.sessions as s
              where s.tenant_id = memory.current_tenant()
                  and (export_tenant.agent_id is null or s.agent_id = export_tenant.agent_id)),
        array(select m.memory_id from memory.memories as m
              where m.tenant_id = memory.current_tenant()
                  and (export_tenant.agent_id is null or m.agent_id = export_tenant.agent_id)),
        array(select e.entity_id from memory.entities as e
              where e.tenant_id = memory.current_tenant()
                  and (export_tenant.agent_id is null or e.agent_id = export_tenant.agent_id))
    ) as r (record)
$$;

comment on function memory.export_tenant(text) is
'The whole memory of this tenant (or of one agent) as JSON records, one per row, for memory.import_tenant or '
'`agent-memory import jsonl`: a header, then each session as memory.commit takes it plus its tier, summary and '
'each turn''s trust and access count (record "session"), each curated memory version with its evidence and '
'supersede chain ("memory"), merged paraphrases ("memory_merge"), entities with aliases ("entity"), their '
'states ("entity_state") and the feedback given ("feedback"). Chunks, vectors and mentions are derived again '
'by enrichment; tombstones, settings and metrics stay with this database.';

-- The turn a record names as [agent_id, session_id, n]: the turn the n-th message of that session's record
-- is here when this transaction imported the record, else the n-th turn of the session here (as a record
-- of this database names it), or null.
create or replace function memory_internal._imported_turn(tenant text, ref jsonb) returns bigint
language sql
stable
as $$
    select coalesce(
        (select i.turn_id from pg_temp._agent_memory_import_turns as i
         where i.agent_id = ref ->> 0 and i.session_id = ref ->> 1 and i.n = (ref ->> 2)::bigint),
        (select t.turn_id
         from memory.sessions as s
         inner join memory.turns as t on s.tenant_id = t.tenant_id and s.session_key = t.session_key
         where s.tenant_id = tenant and s.agent_id = ref ->> 0 and s.session_id = ref ->> 1
         order by t.position
         offset (ref ->> 2)::bigint - 1
         limit 1)
    )
    where jsonb_typeof(ref) = 'array' and jsonb_typeof(ref -> 2) = 'number'
$$;

comment on function memory_internal._imported_turn(text, jsonb) is
'Internal: the turn an import record names as [agent_id, session_id, n] (the n-th message of its session''s '
'record), or null.';

-- The messages of a session record as the turns they are of a session here: a message with an id is the
-- turn with that id; one without is, by its words, the k-th turn with those words when it is the k-th
-- message with them (so a session with gaps, or with turns of its own, is matched all the same).
create or replace function memory_internal._message_turns(tenant text, session bigint, messages jsonb)
returns table (n bigint, turn_id bigint)
language sql
stable
as $$
    with given as (
        select m.n, m.message ->> 'id' as message_id,
               sha256(convert_to(memory_internal._message_text(m.message), 'UTF8')) as content_sha256
        from jsonb_array_elements(messages) with ordinality as m (message, n)
    ),
    numbered as (
        select g.*, row_number() over (partition by g.message_id is null, g.content_sha256 order by g.n) as k
        from given as g
    ),
    turns as (
        select t.turn_id, t.message_id, t.content_sha256,
               row_number() over (partition by t.message_id is null, t.content_sha256 order by t.position) as k
        from memory.turns as t
        where t.tenant_id = tenant and t.session_key = session
    )

    select g.n, coalesce(
        (select t.turn_id from turns as t where g.message_id is not null and t.message_id = g.message_id),
        (select t.turn_id from turns as t
         where g.message_id is null and t.message_id is null and t.content_sha256 = g.content_sha256 and t.k = g.k)
    )
    from numbered as g
$$;

comment on function memory_internal._message_turns(text, bigint, jsonb) is
'Internal: the turn of a session each message of a session record is (by id, else by its words), or null.';

-- One session record: committed (queued for enrichment); when the import created it, the turns' and the
-- session's state and its summary are restored. Returns imported, unchanged or forgotten.
create or replace function memory_internal._import_session(tenant text, r jsonb, allow_forgotten boolean)
returns text
language plpgsql
as $$
declare
    v_agent text := coalesce(r ->> 'agent_id', 'default');
    v_state text [] := array['trust', 'access_count', 'last_accessed_at', 'recorded_at'];
    v_commit record;
    v_session bigint;
    v_before record;
    v_new jsonb;
    v_present bigint[];
    v_summary jsonb := r -> 'derived_summary';
    v_config regconfig := (memory.setting('text_search_config') #>> '{}')::regconfig;
begin
    if jsonb_typeof(r -> 'messages') is distinct from 'array' then
        raise exception 'agent_memory: a session record needs "messages", a JSON array'
            using errcode = 'invalid_parameter_value';
    end if;
    if not allow_forgotten
        and exists (select from memory_internal._forgotten(v_agent, r ->> 'session_id', false) as f
                    where f.tombstone_id is not null) then
        return 'forgotten';
    end if;
    select s.session_key, s.updated_at, s.tier, s.tier_since into v_before
    from memory.sessions as s
    where s.tenant_id = tenant and s.agent_id = v_agent and s.session_id = r ->> 'session_id';
    -- Of a session here already, only the messages it does not have are committed.
    select coalesce(jsonb_agg(m.message - v_state order by m.n), '[]') into v_new
    from jsonb_array_elements(r -> 'messages') with ordinality as m (message, n)
    where v_before is null or not exists (
        select from memory_internal._message_turns(tenant, v_before.session_key, r -> 'messages') as k
        where k.n = m.n and k.turn_id is not null
    );
    v_present := array(
        select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.session_key = v_before.session_key
    );
    select c.* into v_commit
    from memory.commit(
        r ->> 'session_id',
        v_new::json,
        agent_id => v_agent, source => r ->> 'source', started_at => (r ->> 'started_at')::timestamptz,
        model => r ->> 'model', tokens_in => (r ->> 'tokens_in')::bigint, tokens_out => (r ->> 'tokens_out')::bigint,
        metadata => coalesce(r -> 'metadata', '{}'), enrich => 'queue', allow_forgotten => allow_forgotten
    ) as c;
    v_session := memory_internal._session_key(r ->> 'session_id', v_agent);
    insert into pg_temp._agent_memory_import_turns (agent_id, session_id, n, turn_id)
    select v_agent, r ->> 'session_id', k.n, k.turn_id
    from memory_internal._message_turns(tenant, v_session, r -> 'messages') as k
    where k.turn_id is not null
    on conflict (agent_id, session_id, n) do update set turn_id = excluded.turn_id;
    -- The turns this import added get their state back; those that were here keep theirs.
    update memory.turns as t
    set trust = coalesce((m.message ->> 'trust')::real, t.trust),
        access_count = coalesce((m.message ->> 'access_count')::bigint, t.access_count),
        last_accessed_at = (m.message ->> 'last_accessed_at')::timestamptz,
        recorded_at = coalesce((m.message ->> 'recorded_at')::timestamptz, t.recorded_at)
    from memory_internal._message_turns(tenant, v_session, r -> 'messages') as k
    inner join jsonb_array_elements(r -> 'messages') with ordinality as m (message, n) on k.n = m.n
    where t.tenant_id = tenant and t.turn_id = k.turn_id and t.turn_id <> all(v_present);
    if not v_commit.created and v_commit.turns_added = 0 then
        -- Nothing new: the session is as it was before (commit counts a write as use).
        update memory.sessions as s
        set updated_at = v_before.updated_at, tier = v_before.tier, tier_since = v_before.tier_since
        where s.tenant_id = tenant and s.session_key = v_session;
        return 'unchanged';
    elsif not v_commit.created then
        return 'imported';
    end if;

    update memory.sessions as s
    set recorded_at = coalesce((r ->> 'recorded_at')::timestamptz, s.recorded_at),
        updated_at = coalesce((r ->> 'updated_at')::timestamptz, s.updated_at),
        tier = coalesce(r ->> 'tier', s.tier),
        tier_since = coalesce((r ->> 'tier_since')::timestamptz, s.tier_since),
        used_at = (r ->> 'used_at')::timestamptz
    where s.tenant_id = tenant and s.session_key = v_session;

    if r ->> 'summary' is not null then
        perform memory.set_summary(r ->> 'session_id', r ->> 'summary', agent_id => v_agent);
    elsif v_summary is not null then
        -- Made from these very turns: enrichment keeps it.
        insert into memory.summaries (tenant_id, session_key, method, summary, decisions, open_loops, source_sha256,
                                      tsv)
        values (tenant, v_session, v_summary ->> 'method', v_summary ->> 'summary',
                coalesce(v_summary -> 'decisions', '[]'), coalesce(v_summary -> 'open_loops', '[]'),
                memory_internal._session_source_sha256(tenant, v_session),
                to_tsvector(v_config, v_summary ->> 'summary'));
    end if;
    return 'imported';
end
$$;

comment on function memory_internal._import_session(text, jsonb, boolean) is
'Internal: stores one session record of an import (memory.import_tenant).';

-- One memory record: its words are the agent's remembered turn (committed if new), its evidence the turns
-- the record names that are here. A version held already (same claim, key and times) is not stored again.
-- The record's id is mapped to the memory's id here, for the records after it.
create or replace function memory_internal._import_memory(tenant text, r jsonb) returns text
language plpgsql
as $$
declare
    v_agent text := coalesce(r ->> 'agent_id', 'default');
    v_canonical bytea := coalesce(
        decode(r ->> 'canonical', 'hex'),
        memory_internal._memory_canonical(r ->> 'kind', memory_internal._memory_subjects(
            array(select jsonb_array_elements_text(coalesce(r -> 'subjects', '[]')))
        ), btrim(r ->> 'content'))
    );
    v_memory bigint;
    v_outcome text := 'unchanged';
begin
    if jsonb_typeof(r -> 'id') is distinct from 'number' or r ->> 'content' is null or r ->> 'kind' is null then
        raise exception 'agent_memory: a memory record needs "id" (a number), "kind" and "content"'
            using errcode = 'invalid_parameter_value';
    elsif r ->> 'kind' <> all(memory_internal._memory_kinds()) then
        raise exception 'agent_memory: memory kind must be one of %, got %',
            array_to_string(memory_internal._memory_kinds(), ', '), r ->> 'kind' using errcode = 'invalid_parameter_value';
    end if;
    select m.memory_id into v_memory
    from memory.memories as m
    where m.tenant_id = tenant and m.agent_id = v_agent and m.canonical = v_canonical
        and m.key is not distinct from r ->> 'key'
        and (
            m.valid_from = (r ->> 'valid_from')::timestamptz and m.recorded_at = (r ->> 'recorded_at')::timestamptz
            -- The same claim holding now here as there: that one.
            or m.valid_to is null and m.status in ('active', 'ongoing') and r ->> 'valid_to' is null
            and coalesce(r ->> 'status', 'active') in ('active', 'ongoing')
        )
    order by m.memory_id
    limit 1;
    if v_memory is null then
        insert into memory.memories (
            tenant_id, agent_id, kind, content, key, subjects, tags, importance, confidence, status, origin,
            valid_from, valid_to, recorded_at, recorded_by, canonical, turn_id, supersedes, tier,
            tier_since, used_at
        )
        select tenant, v_agent, r ->> 'kind', r ->> 'content', r ->> 'key',
               array(select jsonb_array_elements_text(coalesce(r -> 'subjects', '[]'))),
               array(select jsonb_array_elements_text(coalesce(r -> 'tags', '[]'))),
               coalesce((r ->> 'importance')::double precision, 0.5), coalesce((r ->> 'confidence')::double precision, 1),
               coalesce(r ->> 'status', 'active'), coalesce(r ->> 'origin', 'remember'),
               coalesce((r ->> 'valid_from')::timestamptz, pg_catalog.now()), (r ->> 'valid_to')::timestamptz,
               coalesce((r ->> 'recorded_at')::timestamptz, pg_catalog.now()), coalesce(r ->> 'recorded_by', session_user),
               v_canonical,
               memory_internal._memory_turn(r ->> 'content', r ->> 'kind', v_agent, '{}', 'queue'),
               (select i.memory_id from pg_temp._agent_memory_import_memories as i
                where i.source_id = (r ->> 'supersedes')::bigint),
               coalesce(r ->> 'tier', 'hot'), coalesce((r ->> 'tier_since')::timestamptz, pg_catalog.now()),
               (r ->> 'used_at')::timestamptz
        returning memory_id into v_memory;
        perform memory_internal._add_evidence(tenant, v_memory, array(
            select k.turn_id
            from jsonb_array_elements(coalesce(r -> 'evidence', '[]')) as e (ref)
            cross join lateral (select memory_internal._imported_turn(tenant, e.ref) as turn_id) as k
            where k.turn_id is not null
        ));
        v_outcome := 'imported';
        update memory.turns as t set trust = (r ->> 'words_trust')::real
        where t.tenant_id = tenant and r ? 'words_trust'
            and t.turn_id = (select m.turn_id from memory.memories as m where m.tenant_id = tenant and m.memory_id = v_memory);
    end if;
    insert into pg_temp._agent_memory_import_memories (source_id, memory_id)
    values ((r ->> 'id')::bigint, v_memory)
    on conflict (source_id) do update set memory_id = excluded.memory_id;
    return v_outcome;
end
$$;

comment on function memory_internal._import_memory(text, jsonb) is
'Internal: stores one memory record of an import (memory.import_tenant).';

-- The memory an import record names by its id in the export, as mapped by this transaction's import.
create or replace function memory_internal._imported_memory(ref jsonb) returns bigint
language sql
stable
as $$
    select i.memory_id from pg_temp._agent_memory_import_memories as i where i.source_id = (ref #>> '{}')::bigint
$$;

comment on function memory_internal._imported_memory(jsonb) is
'Internal: the memory here of a memory id of the export, mapped by this transaction''s import.';

-- The rest: the merge log, entities, their states and feedback, each stored once (a record whose like is
-- here already is unchanged). A record naming a memory, entity or turn that is not here is an error.
create or replace function memory_internal._import_other(tenant text, r jsonb) returns text
language plpgsql
as $$
declare
    v_kind text := r ->> 'record';
    v_entity bigint;
    v_target record;
    v_rows bigint;
begin
    if v_kind = 'memory_merge' then
        if memory_internal._imported_memory(r -> 'memory') is null
            or r ? 'created_memory' and memory_internal._imported_memory(r -> 'created_memory') is null then
            raise exception 'agent_memory: the memory it names is not among the memories imported before it'
                using errcode = 'foreign_key_violation';
        end if;
        insert into memory.memory_merges (tenant_id, memory_id, agent_id, kind, content, similarity, merged,
                                          created_memory_id, recorded_at, recorded_by)
        select tenant, memory_internal._imported_memory(r -> 'memory'), r ->> 'agent_id', r ->> 'kind', r ->> 'content',
               (r ->> 'similarity')::double precision, (r ->> 'merged')::boolean,
               memory_internal._imported_memory(r -> 'created_memory'), (r ->> 'recorded_at')::timestamptz,
               coalesce(r ->> 'recorded_by', session_user)
        where not exists (
            select from memory.memory_merges as g
            where g.tenant_id = tenant and g.memory_id = memory_internal._imported_memory(r -> 'memory')
                and g.content = r ->> 'content' and g.recorded_at = (r ->> 'recorded_at')::timestamptz
        );
    elsif v_kind = 'entity' then
        insert into memory.entities as e (tenant_id, agent_id, name, normalized, type, aliases)
        values (tenant, r ->> 'agent_id', r ->> 'name', r ->> 'normalized', coalesce(r ->> 'type', 'other'),
                array(select jsonb_array_elements_text(coalesce(r -> 'aliases', '[]'))))
        on conflict (tenant_id, agent_id, normalized) do update
        set aliases = array(select distinct a from unnest(e.aliases || excluded.aliases) as a order by a)
        where not e.aliases @> excluded.aliases;
    elsif v_kind = 'entity_state' then
        select e.entity_id into v_entity from memory.entities as e
        where e.tenant_id = tenant and e.agent_id = r ->> 'agent_id' and e.normalized = r ->> 'entity';
        if v_entity is null then
            raise exception 'agent_memory: entity "%" of agent "%" is not here (its entity record comes first)',
                r ->> 'entity', r ->> 'agent_id' using errcode = 'foreign_key_violation';
        end if;
        insert into memory.entity_states (tenant_id, entity_id, attribute, value, valid_from, valid_to, recorded_at,
                                          recorded_by)
        select tenant, v_entity, r ->> 'attribute', r -> 'value', (r ->> 'valid_from')::timestamptz,
               (r ->> 'valid_to')::timestamptz, coalesce((r ->> 'recorded_at')::timestamptz, pg_catalog.now()),
               coalesce(r ->> 'recorded_by', session_user)
        where not exists (
            select from memory.entity_states as x
            where x.tenant_id = tenant and x.entity_id = v_entity and x.attribute = r ->> 'attribute'
                and x.valid_from = (r ->> 'valid_from')::timestamptz and x.value = r -> 'value'
        );
    elsif v_kind = 'feedback' then
        select coalesce(
                   memory_internal._imported_turn(tenant, r -> 'turn'),
                   (select m.turn_id from memory.memories as m
                    where m.tenant_id = tenant and m.memory_id = memory_internal._imported_memory(r -> 'memory_words'))
               ) as turn_id,
               (select s.session_key from memory.sessions as s
                where s.tenant_id = tenant and s.agent_id = r -> 'session' ->> 0
                    and s.session_id = r -> 'session' ->> 1) as session_key,
               memory_internal._imported_memory(r -> 'memory') as memory_id
        into v_target;
        if num_nonnulls(v_target.turn_id, v_target.session_key, v_target.memory_id) <> 1 then
            raise exception 'agent_memory: feedback names no turn, session or memory that is here'
                using errcode = 'foreign_key_violation';
        end if;
        insert into memory.feedback (tenant_id, turn_id, session_key, memory_id, helpful, verdict, query, note,
                                     trust_before, trust_after, given_by, judged_by, counted, effect, created_at)
        select tenant, v_target.turn_id, v_target.session_key, v_target.memory_id, r ->> 'verdict' = 'helpful',
               r ->> 'verdict', r ->> 'query', r ->> 'note', (r ->> 'trust_before')::real, (r ->> 'trust_after')::real,
               coalesce(r ->> 'given_by', session_user), coalesce(r ->> 'judged_by', r ->> 'given_by', session_user),
               coalesce((r ->> 'counted')::boolean, true), r ->> 'effect',
               coalesce((r ->> 'created_at')::timestamptz, pg_catalog.now())
        where not exists (
            select from memory.feedback as f
            where f.tenant_id = tenant and f.created_at = (r ->> 'created_at')::timestamptz
                and f.verdict = r ->> 'verdict' and f.judged_by = coalesce(r ->> 'judged_by', r ->> 'given_by')
                and f.turn_id is not distinct from v_target.turn_id
                and f.session_key is not distinct from v_target.session_key
                and f.memory_id is not distinct from v_target.memory_id
        );
    else
        raise exception 'agent_memory: unknown record "%" (expected header, session, memory, memory_merge, entity, '
            'entity_state or feedback)', v_kind using errcode = 'invalid_parameter_value';
    end if;
    get diagnostics v_rows = row_count;
    return case when v_rows > 0 then 'imported' else 'unchanged' end;
end
$$;

comment on function memory_internal._import_other(text, jsonb) is
'Internal: stores one merge, entity, entity state or feedback record of an import (memory.import_tenant).';

-- Whether this transaction's import tables exist (false: none yet). They live in the caller's session, whose
-- temporary schema the caller may write: each must be an ordinary table the import made (owned by the role it
-- runs as, memory_owner), without triggers or rules, else the import stops (a view or a trigger of the
-- caller's there would run the caller's code as the owner).
create or replace function memory_internal._import_tables_ready() returns boolean
language plpgsql
stable
as $$
declare
    v_names text [] := array[
        '_agent_memory_import_turns', '_agent_memory_import_memories', '_agent_memory_import_records',
        '_agent_memory_import_counts'
    ];
    v_found integer;
    v_ours integer;
begin
    select count(*), count(*) filter (
        where c.relkind = 'r' and c.relowner = (select r.oid from pg_catalog.pg_roles as r where r.rolname = current_user)
            and not c.relhastriggers and not c.relhasrules
    )
    into v_found, v_ours
    from pg_catalog.pg_class as c
    where c.relnamespace = pg_catalog.pg_my_temp_schema() and c.relname = any(v_names);
    if v_found = 0 then
        return false;
    end if;
    if v_ours < cardinality(v_names) then
        raise exception 'agent_memory: this session has temporary relations named like the import''s own (%)',
            array_to_string(v_names, ', ')
            using errcode = 'object_not_in_prerequisite_state',
                  hint = 'drop them, or import from another session';
    end if;
    return true;
end
$$;

comment on function memory_internal._import_tables_ready() is
'Internal: whether this transaction''s import tables exist; an error if relations of those names are not the '
'import''s own.';

create or replace function memory.import_tenant(records jsonb, allow_forgotten boolean default false)
returns table (record_type text, imported integer, unchanged integer, forgotten integer)
language plpgsql
volatile
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_record jsonb;
    v_n bigint;
    v_before bigint;
    v_kind text;
    v_outcome text;
    v_message text;
    v_state text;
    v_detail text;
    v_hint text;
begin
    if jsonb_typeof(records) is distinct from 'array' then
        raise exception 'agent_memory: import_tenant takes a JSON array of export records'
            using errcode = 'invalid_parameter_value';
    end if;
    -- This transaction's import: the turn each message named is, the id each memory got, how many records.
    if not memory_internal._import_tables_ready() then
        create temporary table _agent_memory_import_turns (
            agent_id text, session_id text, n bigint, turn_id bigint not null, primary key (agent_id, session_id, n)
        ) on commit drop;
        create temporary table _agent_memory_import_memories (
            source_id bigint primary key, memory_id bigint not null
        ) on commit drop;
        create temporary table _agent_memory_import_records (records bigint not null) on commit drop;
        create temporary table _agent_memory_import_counts (
            record_type text primary key, imported integer not null default 0, unchanged integer not null default 0,
            forgotten integer not null default 0
        ) on commit drop;
    end if;
    -- Records are numbered across the calls of one transaction, as one export read in batches.
    select coalesce(max(x.records), 0) into v_before from pg_temp._agent_memory_import_records as x;
    truncate pg_temp._agent_memory_import_counts;
    begin
        for v_record, v_n in select e.r, e.n from jsonb_array_elements(records) with ordinality as e (r, n) loop
            v_kind := null;
            if jsonb_typeof(v_record) <> 'object' then
                raise exception 'agent_memory: it is not a JSON object' using errcode = 'invalid_parameter_value';
            end if;
            -- Lines of memory.export (sessions without a record type) are session records.
            v_kind := coalesce(v_record ->> 'record', case when v_record ? 'messages' then 'session' end);
            if v_kind = 'header' then
                if (v_record ->> 'format_version')::integer > 1 then
                    raise exception 'agent_memory: format_version % is newer than this version reads (1)',
                        v_record ->> 'format_version' using errcode = 'invalid_parameter_value';
                end if;
                continue;
            end if;
            v_outcome := case v_kind
                when 'session' then memory_internal._import_session(v_tenant, v_record, allow_forgotten)
                when 'memory' then memory_internal._import_memory(v_tenant, v_record)
                else memory_internal._import_other(v_tenant, v_record)
            end;
            insert into pg_temp._agent_memory_import_counts as c (record_type, imported, unchanged, forgotten)
            values (v_kind, (v_outcome = 'imported')::integer, (v_outcome = 'unchanged')::integer,
                    (v_outcome = 'forgotten')::integer)
            on conflict (record_type) do update
            set imported = c.imported + excluded.imported, unchanged = c.unchanged + excluded.unchanged,
                forgotten = c.forgotten + excluded.forgotten;
        end loop;
    exception when others then
        get stacked diagnostics v_message = message_text, v_state = returned_sqlstate, v_detail = pg_exception_detail,
            v_hint = pg_exception_hint;
        raise exception 'agent_memory: import record % (%): %', v_before + v_n, coalesce(v_kind, 'no record type'),
            regexp_replace(v_message, '^agent_memory: ', '')
            using errcode = v_state, detail = v_detail, hint = v_hint;
    end;
    delete from pg_temp._agent_memory_import_records;
    insert into pg_temp._agent_memory_import_records (records) values (v_before + jsonb_array_length(records));
    return query select c.record_type, c.imported, c.unchanged, c.forgotten from pg_temp._agent_memory_import_counts as c
    order by array_position(array['session', 'memory', 'memory_merge', 'entity', 'entity_state', 'feedback'],
                            c.record_type);
end
$$;

comment on function memory.import_tenant(jsonb, boolean) is
'Stores records of memory.export_tenant (a JSON array; lines of memory.export count as session records) in '
'this tenant, all or nothing: sessions as memory.commit does (queued for enrichment; a session it creates gets '
'back its tier, summary and each turn''s trust and access count), memories with their evidence and supersede '
'chain, merges, entities, entity states and feedback. What is here already is left as it is, so importing '
'again changes nothing. A forgotten session is skipped unless allow_forgotten. An export sent in several '
'calls must be imported in one transaction: memories are mapped to their ids here for the records after '
'them, and an error names a record by its number among all the transaction''s records. Returns per record '
'type how many were imported, unchanged and skipped as forgotten.';

-- sql/idempotent/lifecycle/186-retention.sql
-- Retention: a tenant's policies bound what it keeps. A policy covers one kind of data (sessions, or
-- curated memories), of one agent or all, optionally only those in one tier (and, for memories, of some
-- statuses), and sets max_age (unused for longer: last written, recalled or judged helpful) and/or
-- keep_last (the agent's newest that many, by last use, of what the policy covers are kept). An item goes
-- when it is over every limit its policy sets. The memories extracted from sessions that go alone go with
-- them. memory.retention_preview() lists what would go; maintenance archives it (gzipped JSON lines of
-- export records, in memory.archives) and removes it in the same transaction. Removal by retention leaves
-- no tombstone: an archive imported again brings its sessions back.

comment on table memory.retention_policies is
'Retention policies of each tenant: what memory.maintain() archives and removes (memory.set_retention).';
comment on column memory.retention_policies.tenant_id is 'The tenant.';
comment on column memory.retention_policies.policy_id is 'The policy.';
comment on column memory.retention_policies.data is 'What it covers: sessions or memories (curated).';
comment on column memory.retention_policies.agent_id is 'The agent whose data it covers (null: every agent).';
comment on column memory.retention_policies.max_age is
'Items unused for longer than this go (last written, returned by recall or judged helpful); null: no age limit.';
comment on column memory.retention_policies.keep_last is
'The newest this many items (by last use) of each agent that the policy covers are kept; null: no count limit.';
comment on column memory.retention_policies.tier is 'Only items in this tier (null: any tier).';
comment on column memory.retention_policies.statuses is 'Memories only: only memories of these statuses (null: any).';
comment on column memory.retention_policies.created_at is 'When the policy was set.';
comment on column memory.retention_policies.created_by is 'The role that set it.';

comment on table memory.archives is
'What retention removed, one row per maintenance run and tenant: the records as gzipped JSON lines '
'(`agent-memory archive ID` writes the file; `agent-memory import jsonl FILE` reads it back) and counts. '
'The row stays as the record once its data is dropped (memory.drop_archive).';
comment on column memory.archives.tenant_id is 'The tenant.';
comment on column memory.archives.archive_id is 'The archive.';
comment on column memory.archives.created_at is 'When retention removed what it holds.';
comment on column memory.archives.created_by is 'The role that ran maintenance.';
comment on column memory.archives.policies is 'The policies that selected what it holds.';
comment on column memory.archives.removed is 'How much went: {sessions, turns, chunks, memories, entities}.';
comment on column memory.archives.records is 'How many export records it holds (the header included).';
comment on column memory.archives.data is
'The records of memory.export_tenant''s format as gzipped JSON lines; null once dropped.';
comment on column memory.archives.sha256 is 'The sha256 of data, kept after it is dropped.';
comment on column memory.archives.dropped_at is 'When its data was dropped (memory.drop_archive); null: still held.';

-- Export records as the bytes of a gzipped JSON lines file.
create or replace function memory_internal._gzip_lines(lines text[]) returns bytea
language plpython3u
immutable strict
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory_internal._load_python()")
from agent_memory_db.archive import gzip_lines
return gzip_lines(lines)
$$;

comment on function memory_internal._gzip_lines(text[]) is
'Internal: lines as a gzip file, one per line (retention archives).';

create or replace function memory.set_retention(
    data text,
    max_age interval default null,
    keep_last integer default null,
    tier text default null,
    agent_id text default null,
    statuses text[] default null
) returns memory.retention_policies
language plpgsql
as $$
declare
    v_policy memory.retention_policies;
begin
    if data is null or data not in ('sessions', 'memories') then
        raise exception 'agent_memory: retention covers sessions or memories, got %', coalesce(data, 'null')
            using errcode = 'invalid_parameter_value';
    elsif max_age is null and keep_last is null then
        raise exception 'agent_memory: a retention policy needs max_age or keep_last (or both)'
            using errcode = 'invalid_parameter_value';
    elsif max_age <= interval '0' then
        raise exception 'agent_memory: retention max_age must be positive, got %', max_age
            using errcode = 'invalid_parameter_value';
    elsif keep_last < 0 then
        raise exception 'agent_memory: retention keep_last must be 0 or more, got %', keep_last
            using errcode = 'invalid_parameter_value';
    elsif tier not in ('hot', 'warm', 'cold') then
        raise exception 'agent_memory: retention tier must be hot, warm or cold, got %', tier
            using errcode = 'invalid_parameter_value';
    elsif statuses is not null and data <> 'memories' then
        raise exception 'agent_memory: retention statuses are for memories, not %', data
            using errcode = 'invalid_parameter_value';
    elsif exists (
        select from unnest(statuses) as s (status)
        where s.status is null or s.status not in ('active', 'ongoing', 'resolved', 'superseded', 'retracted', 'pending')
    ) then
        raise exception 'agent_memory: retention statuses must be among active, ongoing, resolved, superseded, '
            'retracted and pending, got %', statuses using errcode = 'invalid_parameter_value';
    end if;
    insert into memory.retention_policies as p (tenant_id, data, agent_id, max_age, keep_last, tier, statuses)
    values (memory.current_tenant(), set_retention.data, set_retention.agent_id, set_retention.max_age,
            set_retention.keep_last, set_retention.tier, set_retention.statuses)
    returning p.* into v_policy;
    return v_policy;
end
$$;

comment on function memory.set_retention(text, interval, integer, text, text, text[]) is
'Adds a retention policy for this tenant: data sessions or memories, of agent_id (null: every agent), only '
'those in tier and (memories) of statuses if given; an item goes when it is over every limit set: unused for '
'longer than max_age, and not among its agent''s keep_last newest that the policy covers. memory.maintain() '
'archives and removes what the policies select (memory.retention_preview shows it).';

create or replace function memory.drop_retention(policy_id bigint) returns boolean
language sql
as $$
    with dropped as (
        delete from memory.retention_policies as p
        where p.tenant_id = memory.current_tenant() and p.policy_id = drop_retention.policy_id
        returning 1
    )

    select exists (select from dropped)
$$;

comment on function memory.drop_retention(bigint) is
'Removes a retention policy of this tenant; whether there was one.';

create or replace function memory.list_retention_policies()
returns setof memory.retention_policies
language sql
stable
as $$
    select * from memory.retention_policies as p where p.tenant_id = memory.current_tenant() order by p.policy_id
$$;

comment on function memory.list_retention_policies() is 'The retention policies of this tenant.';

-- What a tenant's policies select at a time: each item once, under the first policy that selects it, and
-- the memories extracted from selected sessions alone (they go with them).
create or replace function memory_internal._retention_items(tenant text, at timestamptz)
returns table (
    policy_id bigint, data text, agent_id text, session_key bigint, memory_id bigint, tier text,
    last_used timestamptz, reason text
)
language sql
stable
as $$
    with items as (
        select case i.item when 'session' then 'sessions' else 'memories' end as data, i.agent_id, i.session_key,
               i.memory_id, i.tier, i.status, i.last_used
        from memory_internal._lifecycle_items(tenant, null) as i
    ),
    covered as (
        select p.policy_id, p.max_age, p.keep_last, i.*,
               row_number() over (
                   partition by p.policy_id, i.agent_id
                   order by i.last_used desc, coalesce(i.session_key, i.memory_id) desc
               ) as place
        from memory.retention_policies as p
        inner join items as i
            on i.data = p.data and (p.agent_id is null or i.agent_id = p.agent_id)
            and (p.tier is null or i.tier = p.tier) and (p.statuses is null or i.status = any(p.statuses))
        where p.tenant_id = tenant
    ),
    selected as (
        select distinct on (c.data, coalesce(c.session_key, c.memory_id))
            c.policy_id, c.data, c.agent_id, c.session_key, c.memory_id, c.tier, c.last_used,
            concat_ws(' and ',
                      case when c.max_age is not null then format('unused for more than %s', c.max_age) end,
                      case when c.keep_last is not null then format('not among the agent''s newest %s', c.keep_last) end
            ) as reason
        from covered as c
        where (c.max_age is null or c.last_used < at - c.max_age) and (c.keep_last is null or c.place > c.keep_last)
        order by c.data, coalesce(c.session_key, c.memory_id), c.policy_id
    ),
    -- Memories extracted from the selected sessions' turns alone, as forgetting those sessions removes them.
    extracted as (
        select x.memory_id, (
            select min(s.policy_id)
            from memory.memory_evidence as e
            inner join memory.turns as t on t.tenant_id = e.tenant_id and t.turn_id = e.turn_id
            inner join selected as s on s.data = 'sessions' and s.session_key = t.session_key
            where e.tenant_id = tenant and e.memory_id = x.memory_id
        ) as policy_id
        from memory_internal._extracted_from(tenant, array(
            select t.turn_id from memory.turns as t
            inner join selected as s on s.data = 'sessions' and t.tenant_id = tenant and t.session_key = s.session_key
        )) as x (memory_id)
    )

    select * from selected
    union all
    select e.policy_id, 'memories', m.agent_id, null, m.memory_id, m.tier, greatest(m.recorded_at, m.used_at),
           'extracted from sessions that go'
    from extracted as e
    inner join memory.memories as m on m.tenant_id = tenant and m.memory_id = e.memory_id
    where not exists (select from selected as s where s.memory_id = e.memory_id)
$$;

comment on function memory_internal._retention_items(text, timestamptz) is
'Internal: the sessions and memories a tenant''s retention policies select at a time, with the policy and '
'the reason (memory.retention_preview, memory.maintain).';

create or replace function memory.retention_preview(at timestamptz default pg_catalog.now())
returns table (
    policy_id bigint, data text, agent_id text, session_id text, memory_id bigint, tier text,
    last_used timestamptz, reason text
)
language sql
stable
as $$
    select i.policy_id, i.data, i.agent_id, s.session_id, i.memory_id, i.tier, i.last_used, i.reason
    from memory_internal._retention_items(memory.current_tenant(), retention_preview.at) as i
    left join memory.sessions as s on s.tenant_id = memory.current_tenant() and s.session_key = i.session_key
    order by i.data desc, i.agent_id, i.last_used, coalesce(i.session_key, i.memory_id)
$$;

comment on function memory.retention_preview(timestamptz) is
'The dry run of retention: the sessions and memories of this tenant that memory.maintain() would archive and '
'remove (at: as if it ran then), each with the policy that selects it and why.';

-- Applies a tenant's retention, at most batch items a run (the least recently used first): archives what
-- its policies select, then removes it (sessions with everything derived from them, memories with the turns
-- that carry their words when no other memory has them). Rows are locked in the order forgets take them
-- (sessions, each agent's session of remembered words last, then memories) and the selection is made again
-- once they are: a session written to meanwhile stays. Runs as the tenant, so that what removal reads of
-- the settings is the tenant's. Returns the archive's id and counts, or null when nothing goes.
create or replace function memory_internal._apply_retention(tenant text, at timestamptz, batch integer)
returns jsonb
language plpgsql
as $$
declare
    v_caller text := pg_catalog.current_setting('memory.tenant_id', true);
    v_policies bigint[];
    v_sessions bigint[];
    v_memories bigint[];
    v_words bigint[];
    v_entities bigint[];
    v_session bigint;
    v_turns bigint;
    v_chunks bigint;
    v_lines text[];
    v_data bytea;
    v_archive bigint;
begin
    perform pg_catalog.set_config('memory.tenant_id', tenant, true);
    for attempt in 1..2 loop
        select coalesce(array_agg(distinct i.policy_id order by i.policy_id), '{}'),
               coalesce(array_agg(i.session_key order by i.session_key) filter (where i.session_key is not null), '{}'),
               coalesce(array_agg(i.memory_id order by i.memory_id) filter (where i.memory_id is not null), '{}')
        into v_policies, v_sessions, v_memories
        from (
            select * from memory_internal._retention_items(tenant, at) as x
            where attempt = 1 or x.session_key = any(v_sessions) or x.memory_id = any(v_memories)
            order by x.reason = 'extracted from sessions that go', x.last_used, coalesce(x.session_key, x.memory_id)
            limit batch
        ) as i;
        exit when attempt = 2 or cardinality(v_policies) = 0;
        perform memory_internal._lock_sessions(tenant, v_sessions || array(
            select distinct t.session_key from memory.memories as m
            inner join memory.turns as t on m.tenant_id = t.tenant_id and m.turn_id = t.turn_id
            where m.tenant_id = tenant and m.memory_id = any(v_memories)
        ));
        perform from memory.memories as m
        where m.tenant_id = tenant and m.memory_id = any(v_memories)
        order by m.memory_id
        for update;
    end loop;
    if cardinality(v_policies) = 0 then
        perform pg_catalog.set_config('memory.tenant_id', coalesce(v_caller, ''), true);
        return null;
    end if;
    -- What goes with them, as forgetting them removes it: the memories extracted from these sessions alone,
    -- the turns that carry the words of the memories that go, the entities nothing else mentions.
    v_memories := v_memories || array(
        select x.memory_id from memory_internal._extracted_from(tenant, array(
            select t.turn_id from memory.turns as t where t.tenant_id = tenant and t.session_key = any(v_sessions)
        )) as x (memory_id)
        where x.memory_id <> all(v_memories)
    );
    -- Those memories, then every turn that goes or may, are locked too: a memory remembered with the same
    -- words, or feedback given, meanwhile (each takes a share of the turn's row) is waited for and counted,
    -- or waits for this run and finds the turn gone; it is never removed unseen.
    perform from memory.memories as m
    where m.tenant_id = tenant and m.memory_id = any(v_memories)
    order by m.memory_id
    for update;
    perform from memory.turns as t
    where t.tenant_id = tenant and (
        t.session_key = any(v_sessions)
        or t.turn_id in (select m.turn_id from memory.memories as m where m.tenant_id = tenant and m.memory_id = any(v_memories))
    )
    order by t.turn_id
    for update;
    v_words := array(
        select distinct m.turn_id from memory.memories as m
        where m.tenant_id = tenant and m.memory_id = any(v_memories)
            and not exists (
                select from memory.memories as o
                where o.tenant_id = tenant and o.turn_id = m.turn_id and o.memory_id <> all(v_memories)
            )
    );
    v_entities := array(
        select distinct e.entity_id from memory.entity_mentions as e
        where e.tenant_id = tenant and (e.session_key = any(v_sessions) or e.turn_id = any(v_words))
            and not exists (
                select from memory.entity_mentions as o
                where o.tenant_id = tenant and o.entity_id = e.entity_id
                    and o.session_key <> all(v_sessions) and o.turn_id <> all(v_words)
            )
            and not exists (select from memory.entity_states as x where x.tenant_id = tenant and x.entity_id = e.entity_id)
    );
    select count(*), coalesce(sum((select count(*) from memory.chunks as c
                                   where c.tenant_id = tenant and c.turn_id = t.turn_id)), 0)
    into v_turns, v_chunks
    from memory.turns as t
    where t.tenant_id = tenant and (t.session_key = any(v_sessions) or t.turn_id = any(v_words));
    v_lines := array(
        select r::text from memory_internal._export_records(tenant, v_sessions, v_memories, v_entities) as r
    );
    v_data := memory_internal._gzip_lines(v_lines);

    foreach v_session in array v_sessions loop
        perform from memory_internal._forget_session(tenant, v_session);
    end loop;
    delete from memory.memories as m where m.tenant_id = tenant and m.memory_id = any(v_memories);
    perform from memory_internal._forget_turns(tenant, v_words);

    insert into memory.archives as a (tenant_id, policies, removed, records, data, sha256)
    values (tenant, v_policies,
            jsonb_build_object('sessions', cardinality(v_sessions), 'turns', v_turns, 'chunks', v_chunks,
                               'memories', cardinality(v_memories), 'entities', cardinality(v_entities)),
            cardinality(v_lines), v_data, sha256(v_data))
    returning a.archive_id into v_archive;
    perform pg_catalog.set_config('memory.tenant_id', coalesce(v_caller, ''), true);
    return jsonb_build_object('archive_id', v_archive, 'sessions', cardinality(v_sessions), 'turns', v_turns,
                              'memories', cardinality(v_memories));
end
$$;

comment on function memory_internal._apply_retention(text, timestamptz, integer) is
'Internal: archives at most batch of the items a tenant''s retention policies select at a time, then removes '
'them (memory.maintain).';

create or replace function memory.list_archives()
returns table (
    archive_id bigint, created_at timestamptz, created_by text, policies bigint[], removed jsonb, records bigint,
    bytes integer, sha256 text, dropped_at timestamptz
)
language sql
stable
as $$
    select a.archive_id, a.created_at, a.created_by, a.policies, a.removed, a.records, octet_length(a.data),
           encode(a.sha256, 'hex'), a.dropped_at
    from memory.archives as a
    where a.tenant_id = memory.current_tenant()
    order by a.archive_id
$$;

comment on function memory.list_archives() is
'The archives of this tenant''s retention, oldest first: when, by whom, under which policies, how much went, '
'the size of the gzipped data (null once dropped) and its sha256.';

create or replace function memory.archive(archive_id bigint) returns bytea
language sql
stable
as $$
    select a.data from memory.archives as a where a.tenant_id = memory.current_tenant() and a.archive_id = archive.archive_id
$$;

comment on function memory.archive(bigint) is
'The data of an archive of this tenant: a gzipped JSON lines file that `agent-memory import jsonl` reads back '
'(null once dropped).';

-- Drops an archive's data and keeps its row as the record (only the API writes archives, so none can be
-- forged or altered).
create or replace function memory.drop_archive(archive_id bigint) returns boolean
language sql
as $$
    with dropped as (
        update memory.archives as a set data = null, dropped_at = pg_catalog.now()
        where a.tenant_id = memory.current_tenant() and a.archive_id = drop_archive.archive_id and a.data is not null
        returning 1
    )

    select exists (select from dropped)
$$;

comment on function memory.drop_archive(bigint) is
'Drops the data of an archive of this tenant (once saved elsewhere), keeping its row with the counts and '
'sha256 as the record; whether it held data.';

-- sql/idempotent/operations/215-stats.sql
-- How much memory each agent of this tenant holds, and how far its enrichment has got.
create or replace function memory.stats(agent_id text default null)
returns table (
    agent_id text, sessions bigint, turns bigint, chunks bigint, embedded_chunks bigint, summaries bigint,
    remembered bigint, feedback bigint, pending_jobs bigint, dead_jobs bigint,
    first_turn_at timestamptz, last_turn_at timestamptz
)
language sql
stable
as $$
    with agents as (
        select s.agent_id, count(*) as sessions
        from memory.sessions as s
        where s.tenant_id = memory.current_tenant() and (stats.agent_id is null or s.agent_id = stats.agent_id)
        group by s.agent_id
    )
    select a.agent_id, a.sessions,
           t.turns,
           (select count(*) from memory.chunks as c
            where c.tenant_id = memory.current_tenant() and c.agent_id = a.agent_id),
           (select count(*) from memory.chunks as c
            inner join memory.chunk_embeddings as e
                on c.tenant_id = e.tenant_id and c.turn_id = e.turn_id and c.chunk_no = e.chunk_no
            where c.tenant_id = memory.current_tenant() and c.agent_id = a.agent_id
                and e.model = memory.recall_model()),
           (select count(*) from memory.summaries as m
            inner join memory.sessions as s on m.tenant_id = s.tenant_id and m.session_key = s.session_key
            where s.tenant_id = memory.current_tenant() and s.agent_id = a.agent_id),
           (select count(*) from memory.memories as m
            where m.tenant_id = memory.current_tenant() and m.agent_id = a.agent_id
                and memory.memory_holds(m.status, m.valid_from, m.valid_to, null)),
           -- Verdicts on the agent's turns, memories and sessions.
           (select count(*) from memory.feedback as f
            left join memory.turns as u on f.tenant_id = u.tenant_id and f.turn_id = u.turn_id
            left join memory.memories as m on f.tenant_id = m.tenant_id and f.memory_id = m.memory_id
            left join memory.sessions as s on f.tenant_id = s.tenant_id and f.session_key = s.session_key
            where f.tenant_id = memory.current_tenant() and a.agent_id in (u.agent_id, m.agent_id, s.agent_id)),
           j.pending, j.dead,
           t.first_at, t.last_at
    from agents as a
    cross join lateral (
        select count(*) as turns, min(u.created_at) as first_at, max(u.created_at) as last_at
        from memory.turns as u
        where u.tenant_id = memory.current_tenant() and u.agent_id = a.agent_id
    ) as t
    cross join lateral (
        select count(*) filter (where j.status in ('queued', 'running')) as pending,
               count(*) filter (where j.status = 'dead') as dead
        from memory.jobs as j
        inner join memory.sessions as s on j.tenant_id = s.tenant_id and j.session_key = s.session_key
        where j.tenant_id = memory.current_tenant() and s.agent_id = a.agent_id
    ) as j
    order by a.agent_id
$$;

comment on function memory.stats(text) is
'Per agent of this tenant (or one agent): sessions, turns, indexed chunks and how many have vectors of the '
'recall model, summaries, remembered: the curated memories that hold now, feedback verdicts (on its turns, '
'memories and sessions), pending and dead enrichment jobs, first and last turn time.';

-- sql/idempotent/operations/220-queue.sql
-- The enrichment queue: memory.work() claims jobs with FOR UPDATE SKIP LOCKED and a lease, commits
-- the claim, runs each job in its own transaction, retries failures with backoff, dead-letters a job
-- after queue_max_attempts. A job whose worker died is reclaimed once its lease has run out.
--
-- The worker serves every tenant, so no tenant may stall it: memory.work() is memory_admin's, and its
-- steps run as the owner (memory.work itself commits between jobs, which a security definer procedure
-- cannot, so it runs as its caller and calls the three steps granted to memory_admin). A job whose
-- session another transaction holds is put back for later instead of waited for, and a job waits at most
-- five seconds for any other lock (then it is put back too, the attempt not counted).

create or replace function memory_internal._claim_jobs(max_jobs integer, worker text) returns setof memory.jobs
language plpgsql
security definer
as $$
declare
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_lease interval := make_interval(secs => (memory.setting('queue_lease_seconds'))::numeric);
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: the queue worker is for memory_admin (it serves every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    -- A job whose lease ran out after its last attempt is dead: its worker kept dying on it.
    -- (A job whose worker is still at it is locked by that worker and skipped, whatever its lease says.)
    update memory.jobs as j
    set status = 'dead', leased_until = null, finished_at = pg_catalog.now(),
        last_error = coalesce(j.last_error || '; ', '')
            || format('worker %s lost its lease on attempt %s', j.leased_by, j.attempts)
    where j.job_id in (
        select c.job_id from memory.jobs as c
        where c.status = 'running' and c.leased_until < pg_catalog.now() and c.attempts >= v_max_attempts
        for update skip locked
    );

    return query
    update memory.jobs as j
    set status = 'running', attempts = j.attempts + 1, leased_until = pg_catalog.now() + v_lease,
        leased_by = worker
    where j.job_id in (
        select c.job_id from memory.jobs as c
        where c.status = 'queued' and c.run_after <= pg_catalog.now()
            or c.status = 'running' and c.leased_until < pg_catalog.now()
        order by c.run_after, c.job_id
        limit max_jobs
        for update skip locked
    )
    returning j.*;
end
$$;

comment on function memory_internal._claim_jobs(integer, text) is
'Internal (memory.work, memory_admin): leases up to max_jobs runnable jobs (queued, or running with an '
'expired lease) to a worker.';

-- The chunks of the first job's session and of the next enrich jobs of its tenant (ten sessions at most)
-- go through the model in one call, kept in the backend for those jobs: batches sorted across sessions
-- waste less than a session's own. Their job rows are held meanwhile (after their sessions' keys, the
-- lock order below), so no worker takes them when their lease runs out during the call; a session or job
-- another transaction holds is left out, never waited for. If that call fails, each job embeds what it
-- needs itself and a failure is its own, with its error. Returns the sessions it considered (embedded ahead
-- or not). The jobs are read again by id: only those leased to this worker count.
create or replace function memory_internal._embed_ahead(job_ids bigint[], worker text) returns bigint[]
language plpgsql
security definer
set lock_timeout = '5s'
as $$
declare
    v_tenant text;
    v_ahead bigint [];
    v_held bigint [];
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: the queue worker is for memory_admin (it serves every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    select j.tenant_id into v_tenant from memory.jobs as j where j.job_id = job_ids[1] and j.leased_by = worker;
    select pg_catalog.array_agg(a.session_key order by a.ordinality) into v_ahead
    from (
        select j.session_key, i.ordinality
        from unnest(job_ids) with ordinality as i (job_id, ordinality)
        inner join memory.jobs as j on i.job_id = j.job_id
        where j.kind = 'enrich' and j.tenant_id = v_tenant and j.leased_by = worker
        order by i.ordinality
        limit 10
    ) as a;
    begin
        select pg_catalog.array_agg(h.session_key) into v_held
        from (
            select s.session_key from memory.sessions as s
            where s.tenant_id = v_tenant and s.session_key = any(v_ahead)
            order by s.session_key
            for key share skip locked
        ) as h;
        select pg_catalog.array_agg(h.session_key) into v_held
        from (
            select j.session_key from memory.jobs as j
            where j.job_id = any(job_ids) and j.leased_by = worker and j.session_key = any(v_held)
            order by j.job_id
            for update skip locked
        ) as h;
        perform pg_catalog.set_config('memory.tenant_id', v_tenant, true);
        perform memory_internal._embed_sessions_ahead(v_tenant, coalesce(v_held, '{}'));
    exception when others then
        null;  -- the jobs embed for themselves (see above)
    end;
    return coalesce(v_ahead, '{}');
end
$$;

comment on function memory_internal._embed_ahead(bigint[], text) is
'Internal (memory.work, memory_admin): embeds in one model call the chunks the next enrich jobs of one tenant '
'will need, kept for them; the sessions it considered.';

-- Runs one claimed job; true when the job has more to do (an embed job with chunks left).
create or replace function memory_internal._run_job(job memory.jobs) returns boolean
language plpgsql
as $$
begin
    if job.kind = 'enrich' then
        perform memory_internal._enrich_session(job.tenant_id, job.session_key);
        return false;
    end if;
    return memory.reembed(500) = 500;
end
$$;

comment on function memory_internal._run_job(memory.jobs) is 'Internal: does the work of one job.';

-- Puts a claimed job, whose row the caller holds, back in the queue to run after run_after with its error
-- (null: none), its attempt counted or not; or, when a job of its session is queued already (a commit
-- queued one while this ran: one queued job per session), leaves the work, and the error, to that one and
-- removes this one.
create or replace function memory_internal._requeue(
    job memory.jobs, run_after timestamptz, error text, counted boolean
) returns void
language plpgsql
as $$
begin
    begin
        update memory.jobs as j
        set status = 'queued', attempts = case when counted then j.attempts else j.attempts - 1 end,
            leased_until = null, run_after = _requeue.run_after, last_error = coalesce(_requeue.error, j.last_error)
        where j.job_id = job.job_id;
    exception when unique_violation then
        update memory.jobs as q set last_error = coalesce(_requeue.error, q.last_error)
        where q.tenant_id = job.tenant_id and q.kind = job.kind and q.session_key = job.session_key
            and q.status = 'queued';
        delete from memory.jobs as j where j.job_id = job.job_id;
    end;
end
$$;

comment on function memory_internal._requeue(memory.jobs, timestamptz, text, boolean) is
'Internal: puts a claimed job back in the queue (its attempt counted or not), or leaves its work to a job of '
'its session queued meanwhile.';

-- One job claimed by this worker, in the worker's transaction: done; failed (retried with backoff, dead after
-- queue_max_attempts); busy (its session, its row or a lock it needs is held by another transaction: queued
-- again for queue_backoff_seconds, the attempt not counted, or left to its lease when even its row is held);
-- or skipped (forgotten meanwhile, or another worker's since its lease ran out). It waits at most five seconds
-- for a lock: the worker serves every tenant, and no tenant's open transaction may stall it.
create or replace function memory_internal._work_on(job_id bigint, worker text) returns text
language plpgsql
security definer
set lock_timeout = '5s'
as $$
declare
    v_job memory.jobs;
    v_more boolean;
    v_error text;
    v_state text;
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_backoff numeric := (memory.setting('queue_backoff_seconds'))::numeric;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: the queue worker is for memory_admin (it serves every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    select * into v_job from memory.jobs as j
    where j.job_id = _work_on.job_id and j.leased_by = worker and j.status = 'running';
    if not found then
        return 'skipped';
    end if;
    -- Enrichment is derived data and a job whose completion was lost in a crash simply runs again,
    -- so its transaction need not wait for the WAL flush.
    perform pg_catalog.set_config('synchronous_commit', 'off', true);
    -- The job's tenant is the tenant of what it writes through the API (memories it extracts).
    perform pg_catalog.set_config('memory.tenant_id', v_job.tenant_id, true);
    -- One lock order for commit, forget and workers: the session row, then the rows of the session.
    -- A worker shares its session's key (commits go on; forget waits for the job), then holds its job
    -- row while it works, so a worker that finds the lease run out skips the job instead of running
    -- it a second time. A session or job row another transaction holds (a forget, feedback, a tenant's
    -- open transaction) is not waited for.
    if v_job.session_key is not null then
        perform from memory.sessions as s
        where s.tenant_id = v_job.tenant_id and s.session_key = v_job.session_key
        for key share skip locked;
        if not found then
            if not exists (
                select from memory.sessions as s
                where s.tenant_id = v_job.tenant_id and s.session_key = v_job.session_key
            ) then
                return 'skipped';
            end if;
            perform from memory.jobs as j where j.job_id = v_job.job_id for update skip locked;
            if found then
                perform memory_internal._requeue(
                    v_job, pg_catalog.now() + pg_catalog.make_interval(secs => v_backoff), null, false
                );
            end if;
            return 'busy';
        end if;
    end if;
    perform from memory.jobs as j
    where j.job_id = v_job.job_id and j.leased_by = worker and j.status = 'running'
    for update skip locked;
    if not found then
        return 'skipped';
    end if;
    begin
        v_more := memory_internal._run_job(v_job);
        update memory.jobs as j
        set status = case when v_more then 'queued' else 'done' end,
            attempts = case when v_more then 0 else j.attempts end,
            leased_until = null, last_error = null,
            finished_at = case when v_more then null else pg_catalog.now() end
        where j.job_id = v_job.job_id;
        return 'done';
    exception when others then
        get stacked diagnostics v_error = message_text, v_state = returned_sqlstate;
        if v_state = '55P03' then  -- lock_not_available: another transaction held what the job needs
            perform memory_internal._requeue(
                v_job, pg_catalog.now() + pg_catalog.make_interval(secs => v_backoff), v_error, false
            );
            return 'busy';
        elsif v_job.attempts >= v_max_attempts then
            update memory.jobs as j
            set status = 'dead', leased_until = null, last_error = v_error, finished_at = pg_catalog.now()
            where j.job_id = v_job.job_id;
        else
            perform memory_internal._requeue(
                v_job,
                pg_catalog.now()
                + pg_catalog.make_interval(secs => v_backoff * pg_catalog.power(2, v_job.attempts - 1)),
                v_error, true
            );
        end if;
        return 'failed';
    end;
end
$$;

comment on function memory_internal._work_on(bigint, text) is
'Internal (memory.work, memory_admin): runs one job claimed by this worker in the caller''s transaction; done, '
'failed, busy (held elsewhere: queued again, the attempt not counted) or skipped.';

create or replace procedure memory.work(
    max_jobs integer default 10, inout processed integer default 0, inout failed integer default 0
)
language plpgsql
as $$
declare
    v_worker text := pg_catalog.format('pid %s', pg_catalog.pg_backend_pid());
    v_jobs memory.jobs [];
    v_ahead bigint [] := '{}';
    v_outcome text;
begin
    processed := 0;
    failed := 0;
    v_jobs := array(select c from memory_internal._claim_jobs(max_jobs, v_worker) as c);
    commit;
    for v_index in 1 .. pg_catalog.cardinality(v_jobs) loop
        if v_jobs[v_index].kind = 'enrich' and not v_jobs[v_index].session_key = any(v_ahead) then
            v_ahead := memory_internal._embed_ahead(
                array(select j.job_id from pg_catalog.unnest(v_jobs[v_index:]) as j), v_worker
            );
            commit;
        end if;
        v_outcome := memory_internal._work_on(v_jobs[v_index].job_id, v_worker);
        processed := processed + (v_outcome = 'done')::integer;
        failed := failed + (v_outcome = 'failed')::integer;
        commit;
    end loop;
end
$$;

comment on procedure memory.work (integer, integer, integer) is
'Runs up to max_jobs queued enrichment jobs of every tenant (memory_admin), each in its own transaction: '
'call memory.work(100); outside a transaction block. Returns how many were done and how many failed (retried '
'with backoff, dead after queue_max_attempts); a job whose session another transaction holds waits for a later '
'run. Schedule it with pg_cron or run `agent-memory work`.';

create or replace view memory.queue_status as
select
    j.kind,
    pg_catalog.count(*) filter (where j.status = 'queued') as queued,
    pg_catalog.count(*) filter (where j.status = 'running') as running,
    pg_catalog.count(*) filter (where j.status = 'done') as done,
    pg_catalog.count(*) filter (where j.status = 'dead') as dead,
    pg_catalog.count(*) filter (where j.status = 'queued' and j.attempts > 0) as retrying,
    pg_catalog.now() - pg_catalog.min(j.created_at) filter (where j.status in ('queued', 'running'))
        as oldest_pending_age,
    (pg_catalog.array_agg(j.last_error order by j.job_id desc) filter (where j.last_error is not null))[1]
        as last_error
from memory.jobs as j
group by j.kind;

comment on view memory.queue_status is
'The enrichment queue per job kind: queued, running, done, dead (dead-lettered), retrying, the age of the '
'oldest pending job and the latest error.';
comment on table memory.jobs is
'Enrichment jobs (transactional outbox): commit enqueues, memory.work() runs them. Dead jobs keep their error.';
comment on column memory.jobs.job_id is 'The job.';
comment on column memory.jobs.tenant_id is 'The tenant whose data the job works on.';
comment on column memory.jobs.kind is 'enrich (one session) or embed (backfill vectors of a new embedding model).';
comment on column memory.jobs.session_key is 'The session an enrich job works on.';
comment on column memory.jobs.status is
'queued, running (leased to a worker), done, or dead (gave up; see last_error).';
comment on column memory.jobs.attempts is 'How many times a worker has claimed the job.';
comment on column memory.jobs.run_after is 'Not claimed before this time (backoff after a failure).';
comment on column memory.jobs.leased_until is 'A running job whose lease has passed this time may be reclaimed.';
comment on column memory.jobs.leased_by is 'The worker (backend pid) holding the lease.';
comment on column memory.jobs.last_error is 'The error of the latest failed attempt.';
comment on column memory.jobs.created_at is 'When the job was queued.';
comment on column memory.jobs.finished_at is 'When the job was done or dead-lettered.';

-- sql/idempotent/operations/225-maintenance.sql
-- Maintenance: `call memory.maintain()` does what memory needs done now and then, for every tenant, and
-- records each run in memory.maintenance_runs. Safe to run at any time and as often as wanted: a run
-- that finds another running records that it was skipped, and a run with nothing to do changes nothing.
-- Schedule it with pg_cron (docs/operations.md):
--   select cron.schedule('agent-memory-maintain', '*/10 * * * *', 'call memory.maintain()');

-- The embedding models the stored configuration chooses: for every tenant, and for each tenant that has
-- settings of its own.
create or replace function memory_internal._configured_models() returns setof text
language sql
stable
as $$
    select distinct m.model
    from (select '' as tenant_id union select c.tenant_id from memory.config as c) as t
    cross join lateral memory_internal._embedding_model(memory_internal._configured_settings(t.tenant_id)) as m
$$;

comment on function memory_internal._configured_models() is
'Internal: the embedding models memory.config chooses, for every tenant and for each tenant with settings '
'of its own (session settings left out).';

-- Embedding models no configuration uses. Once every configured model is complete, every other ready
-- model is retired; model_retire_grace_hours later its vectors and HNSW indexes are dropped (its row stays,
-- as the record). Each model's row is locked while it is retired or dropped, so a model chosen again
-- meanwhile (memory_internal._register_model) is left alone. Runs as the owner, who may drop the shared
-- indexes, and only for an administrator's session (memory.maintain checks it too). Returns what it did.
create or replace function memory_internal._retire_models() returns jsonb
language plpgsql
as $$
declare
    v_configured text [] := array(select memory_internal._configured_models());
    v_retired text [];
    v_dropped jsonb := '{}';
    v_model text;
    v_lock_timeout text := pg_catalog.current_setting('lock_timeout');
    v_vectors bigint;
    v_sessions bigint;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: retiring embedding models is for memory_admin (it drops every tenant''s vectors)'
            using errcode = 'insufficient_privilege';
    end if;
    -- While a configured model is still being built, recall needs the ones before it.
    if not exists (
        select from memory.embedding_models as m where m.model = any(v_configured) and m.state <> 'ready'
    ) and exists (select from memory.embedding_models as m where m.model = any(v_configured)) then
        with retired as (
            update memory.embedding_models as m set state = 'retired', retired_at = pg_catalog.now()
            where m.state = 'ready' and m.model <> all(v_configured)
            returning m.model
        )
        select array_agg(r.model order by r.model) into v_retired from retired as r;
    end if;
    for v_model in
        select m.model from memory.embedding_models as m
        where m.state = 'retired'
            and m.retired_at <= pg_catalog.now()
            - interval '1 hour' * (memory.setting('model_retire_grace_hours'))::double precision
            and (
                exists (select from memory.chunk_embeddings as e where e.model = m.model)
                or exists (select from memory.session_embeddings as e where e.model = m.model)
                or to_regclass('memory.chunk_embeddings_hnsw_' || left(md5(m.model), 10)) is not null
            )
        order by m.model
    loop
        perform from memory.embedding_models as m where m.model = v_model and m.state = 'retired' for update;
        if not found then
            continue;
        end if;
        -- Dropping an index waits for every query on its table, and every query after it waits for the
        -- drop: after five seconds it gives up, and the next run tries again.
        begin
            perform pg_catalog.set_config('lock_timeout', '5s', true);
            execute format('drop index if exists memory.%I', 'chunk_embeddings_hnsw_' || left(md5(v_model), 10));
            execute format('drop index if exists memory.%I', 'session_embeddings_hnsw_' || left(md5(v_model), 10));
            perform pg_catalog.set_config('lock_timeout', v_lock_timeout, true);
        exception when lock_not_available then
            raise notice 'agent_memory: the indexes of retired model % are in use; the next memory.maintain() drops them',
                v_model;
            continue;
        end;
        delete from memory.chunk_embeddings as e where e.model = v_model;
        get diagnostics v_vectors = row_count;
        delete from memory.session_embeddings as e where e.model = v_model;
        get diagnostics v_sessions = row_count;
        v_dropped := v_dropped || jsonb_build_object(v_model, jsonb_build_object(
            'chunk_vectors', v_vectors, 'session_vectors', v_sessions
        ));
    end loop;
    return jsonb_build_object('models_retired', coalesce(to_jsonb(v_retired), '[]'), 'vectors_dropped', v_dropped);
end
$$;

comment on function memory_internal._retire_models() is
'Internal: retires the embedding models recall no longer uses and drops their vectors and indexes after '
'model_retire_grace_hours (administrators only).';

-- Tenants grown past their exact_search_max_chunks (as memory.config sets it): the vectors they wrote
-- before join the HNSW graphs.
-- Returns how many chunk vectors joined, per tenant.
create or replace function memory_internal._join_graphs() returns jsonb
language plpgsql
as $$
declare
    v_tenant text;
    v_outside bigint;
    v_joined jsonb := '{}';
begin
    for v_tenant in
        select k.tenant_id from memory.corpus as k
        group by k.tenant_id
        having sum(k.chunks) > (memory_internal._configured_settings(k.tenant_id) ->> 'exact_search_max_chunks')::bigint
        order by k.tenant_id
    loop
        select count(*) into v_outside from memory.chunk_embeddings as e where e.tenant_id = v_tenant and not e.in_graph;
        if v_outside > 0 or exists (
            select from memory.session_embeddings as e where e.tenant_id = v_tenant and not e.in_graph
        ) then
            begin
                perform memory_internal._join_graph(v_tenant);
                v_joined := v_joined || jsonb_build_object(v_tenant, v_outside - (
                    select count(*) from memory.chunk_embeddings as e where e.tenant_id = v_tenant and not e.in_graph
                ));
            exception when lock_not_available then
                v_joined := v_joined || jsonb_build_object(v_tenant, 'skipped: ' || sqlerrm);
            end;
        end if;
    end loop;
    return v_joined;
end
$$;

comment on function memory_internal._join_graphs() is
'Internal: puts the vectors of tenants grown past exact_search_max_chunks that are still outside the HNSW '
'graphs into them; how many chunk vectors joined, per tenant.';

-- Runs as the owner (a procedure that does not commit may), for a memory_admin login only. One run at a
-- time: each takes the row ('', 'maintain') of memory_internal._locks, which no other role can lock (an
-- advisory lock, which any role can take, let a stranger make every run skip). It waits at most five
-- seconds for any lock (a tenant's open transaction holding its rows): what it cannot lock in time, a
-- model's vectors or a tenant's graph or retention, is left to the next run and said in its record.
create or replace procedure memory.maintain()
language plpgsql
security definer
set search_path = pg_catalog, pg_temp
set lock_timeout = '5s'
as $$
declare
    v_started timestamptz := pg_catalog.clock_timestamp();
    v_jobs bigint;
    v_models jsonb;
    v_graph jsonb;
    v_tiers jsonb := '{}';
    v_tenant text;
    v_moved jsonb;
    v_folded bigint;
    v_retention jsonb := '{}';
    v_archived jsonb;
begin
    if not memory_internal._administers() then
        raise exception 'agent_memory: memory.maintain() is for memory_admin (it works on every tenant)'
            using errcode = 'insufficient_privilege';
    end if;
    perform from memory_internal._locks as l where l.tenant_id = '' and l.name = 'maintain' for update skip locked;
    if not found then
        insert into memory.maintenance_runs (started_at, finished_at, status)
        values (v_started, pg_catalog.clock_timestamp(), 'skipped');
        return;
    end if;

    -- The queue: finished jobs older than queue_keep_done_hours (and the record of runs as old). Dead
    -- jobs stay until an operator acts.
    delete from memory.jobs as j
    where j.status = 'done'
        and j.finished_at < pg_catalog.now() - interval '1 hour' * (memory.setting('queue_keep_done_hours'))::double precision;
    get diagnostics v_jobs = row_count;
    delete from memory.maintenance_runs as r
    where r.started_at < pg_catalog.now() - interval '1 hour' * (memory.setting('queue_keep_done_hours'))::double precision;

    begin
        v_models := memory_internal._retire_models();
    exception when lock_not_available then
        v_models := jsonb_build_object('models_skipped', sqlerrm);
        raise notice 'agent_memory: retiring embedding models is left to the next run: %', sqlerrm;
    end;
    v_graph := memory_internal._join_graphs();
    v_folded := memory_internal._fold_metric_counts();
    -- Retention before the tier moves, so that it takes what memory.retention_preview() showed. Each tenant's
    -- apart: one whose rows stay locked for five seconds, or that fails, is left to the next run.
    for v_tenant in select distinct p.tenant_id from memory.retention_policies as p order by p.tenant_id loop
        begin
            v_archived := memory_internal._apply_retention(v_tenant, pg_catalog.now(), (
                memory_internal._configured_settings(v_tenant) ->> 'retention_batch'
            )::integer);
        exception when others then
            v_archived := jsonb_build_object('skipped', sqlerrm);
            raise notice 'agent_memory: retention of tenant % is left to the next run: %', v_tenant, sqlerrm;
        end;
        if v_archived is not null then
            v_retention := v_retention || jsonb_build_object(v_tenant, v_archived);
        end if;
    end loop;
    for v_tenant in select distinct s.tenant_id from memory.sessions as s order by s.tenant_id loop
        v_moved := memory_internal._move_tiers(v_tenant, pg_catalog.now());
        if v_moved <> '{"to_warm": 0, "to_cold": 0}' then
            v_tiers := v_tiers || jsonb_build_object(v_tenant, v_moved);
        end if;
    end loop;

    insert into memory.maintenance_runs (started_at, finished_at, status, actions)
    values (v_started, pg_catalog.clock_timestamp(), 'done',
            jsonb_build_object('jobs_deleted', v_jobs, 'graph_joined', v_graph, 'tiers_moved', v_tiers,
                               'retention', v_retention, 'metric_rows_folded', v_folded) || v_models);
end
$$;

comment on procedure memory.maintain () is
'Maintenance for every tenant (memory_admin): deletes finished jobs older than queue_keep_done_hours, '
'retires embedding models no configuration uses and drops their vectors after model_retire_grace_hours, '
'puts the earlier vectors of tenants grown past exact_search_max_chunks into the HNSW graphs, moves each '
'tenant''s sessions and memories down a tier as their importance decays and agents'' tiers fill '
'(memory.tier_moves shows what it would move), archives and removes, before the tier moves, what each tenant''s '
'retention policies select (memory.retention_preview shows it; memory.archives lists the archives; at most '
'retention_batch items per tenant and run), folds the metric counters of ended backends. '
'One run at a time (a concurrent call is recorded as skipped); each run is recorded in '
'memory.maintenance_runs. Schedule it with pg_cron.';

-- sql/tail.sql
-- Runs last in every install and upgrade script.

-- Every setting's default passes its checks (a checked_by function may be in any subsystem's file).
select memory_internal._check_setting_defaults();

-- Pin every function of the extension to a safe search_path: pg_catalog, the schema pgvector was
-- installed in (its types and operators), pg_temp last. Bodies name our own objects as memory.x.
-- Procedures are left out: one with a SET clause cannot commit; theirs qualify every name instead.
-- So are the few `language sql` expressions that recall inlines into its queries (a turn's memory, the
-- signals of memory.signals among them), and memory_internal._setting_definitions(), which memory.setting()
-- filters by key on every call (a SET clause would stop the planner from inlining them); they name tables
-- as memory.x and call operators of pg_catalog.
do $pin$
declare
    v_vector_schema text := (
        select n.nspname
        from pg_catalog.pg_extension as e
        inner join pg_catalog.pg_namespace as n on e.extnamespace = n.oid
        where e.extname = 'vector'
    );
    v_function regprocedure;
begin
    for v_function in
        select p.oid::regprocedure
        from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc')) and p.prokind <> 'p'
            and p.oid <> all(array[
                'memory_internal._bm25_term(float8, float8, float8, float8, float8, float8)'::regprocedure,
                'memory_internal._chunk_bm25(tsvector, integer, integer, text[], float8[], float8, float8, float8, float8)'
                ::regprocedure,
                'memory_internal._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, bigint[], text[])'
                ::regprocedure,
                'memory_internal._turn_memory(text, bigint, timestamptz, boolean)'::regprocedure,
                'memory_internal._setting_definitions()'::regprocedure
            ])
            and not exists (select from memory.signals as s where to_regprocedure(s.function) = p.oid)
    loop
        execute format(
            'alter function %s set search_path = pg_catalog, %I, pg_temp', v_function, v_vector_schema
        );
    end loop;
end
$pin$;

-- The owner. Every table, view, function and procedure of the extension belongs to memory_owner (made in
-- head.sql), a role nobody logs in as or is granted: a role of its own, not the superuser who installed the
-- extension, so that forced row-level security holds inside the API's functions too (a superuser bypasses
-- it). The schemas stay the installer's (memory_owner may create in schema memory, for the HNSW index of a new
-- embedding model). No function runs as a superuser. Four belong to memory_observer, which reads past
-- row-level security: the two that must see every tenant's chunks whoever calls the API, and answer only yes or
-- no (memory_internal._any_chunks() and _chunks_lacking(model)), and recall's two full-text lists of one tenant
-- (memory_internal._full_text_candidates and _summary_candidates: under a policy, a full-text match cannot use
-- its index).
do $owner$
declare
    v_object record;
    v_observer_functions regprocedure [] := array[
        'memory_internal._any_chunks()'::regprocedure, 'memory_internal._chunks_lacking(text)'::regprocedure,
        'memory_internal._full_text_candidates(text, text, timestamptz, timestamptz, text, '
        'memory_internal._recall_query, jsonb, text[])'::regprocedure,
        'memory_internal._summary_candidates(text, text, text, memory_internal._recall_query, jsonb, text[])'
        ::regprocedure
    ];
begin
    for v_object in
        select c.oid::regclass as name, c.relkind
        from pg_catalog.pg_class as c
        where c.oid in (select memory_internal._extension_objects('pg_catalog.pg_class'))
            and c.relkind in ('r', 'p', 'v') and c.relowner <> 'memory_owner'::regrole
    loop
        execute format('alter %s %s owner to memory_owner',
                       case when v_object.relkind = 'v' then 'view' else 'table' end, v_object.name);
    end loop;
    for v_object in
        select p.oid::regprocedure as name, p.prokind
        from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and p.proowner <> 'memory_owner'::regrole and p.oid <> all(v_observer_functions)
    loop
        execute format('alter %s %s owner to memory_owner',
                       case when v_object.prokind = 'p' then 'procedure' else 'function' end, v_object.name);
    end loop;
    for v_object in select unnest(v_observer_functions) as name loop
        execute format('alter function %s owner to memory_observer', v_object.name);
    end loop;
end
$owner$;

-- The API runs as the owner: every function and procedure of schema memory is security definer, so a
-- caller needs no privilege on a table or an internal function to use it, and every write goes through it.
-- Each takes the tenant from memory.current_tenant(), never from an argument. Left to run as the caller
-- (invoker) are memory.current_tenant(), which row-level security evaluates as the role reading a table,
-- memory.work(), which commits between jobs (a security definer procedure cannot), memory.define_feature(),
-- which only a superuser may call (its expression runs as the owner in every recall), and the pure functions
-- that read nothing a caller cannot and that queries inline (expressions).
do $definer$
declare
    v_function regprocedure;
begin
    for v_function in
        select p.oid::regprocedure
        from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and p.pronamespace = 'memory'::regnamespace and not p.prosecdef
            and p.oid <> all(array[
                'memory.current_tenant()'::regprocedure,
                'memory.work(integer, integer, integer)'::regprocedure,
                'memory.define_feature(text, text, regtype, text, text)'::regprocedure,
                'memory.version()'::regprocedure,
                'memory.query_intent(text)'::regprocedure,
                'memory.metric_definitions()'::regprocedure,
                'memory.recall_duration_buckets()'::regprocedure,
                'memory.memory_holds(text, timestamptz, timestamptz, timestamptz)'::regprocedure,
                'memory.decayed_importance(double precision, timestamptz, timestamptz, jsonb)'::regprocedure
            ])
    loop
        execute format('alter routine %s security definer', v_function);
    end loop;
end
$definer$;

-- Privileges. PUBLIC gets nothing, and no role but memory_owner writes a table, except memory_admin's
-- settings, signal registry and tenant bindings (each write checked by a trigger).
-- - memory_tenant (an application or agent of one tenant): usage on schema memory, select on its tables
--   (row-level security keeps it to its tenant; the maintenance record is memory_admin's), execute on the
--   API but the administrator's functions. Nothing of memory_internal, no sequence (their positions count
--   every tenant's rows), no insert, update, delete, truncate or references, so no lock on a table beyond
--   what a read takes and no row lock.
-- - memory_app: a memory_tenant that may choose its tenant. memory_admin: a memory_app that also writes
--   settings, the registry and bindings, stores secrets, and runs maintenance and the queue worker for
--   every tenant (memory.work calls the internal steps granted it, each running as the owner).
-- - Secrets are the owner's alone. Views run with the privileges and row-level security of the role that
--   reads them. (Objects a later file adds are covered by being created before this runs.)
do $grants$
declare
    v_view regclass;
    v_function regprocedure;
    v_vector_schema regnamespace := (
        select e.extnamespace from pg_catalog.pg_extension as e where e.extname = 'vector'
    );
begin
    revoke all on all functions in schema memory, memory_internal from public, memory_tenant, memory_app, memory_admin;
    revoke all on all procedures in schema memory, memory_internal from public, memory_tenant, memory_app, memory_admin;
    revoke all on all tables in schema memory, memory_internal
    from public, memory_tenant, memory_app, memory_admin, memory_observer;
    revoke all on all sequences in schema memory, memory_internal from public, memory_tenant, memory_app, memory_admin;
    revoke all on schema memory_internal from public, memory_tenant, memory_app;
    -- pgvector's schema is on the search_path of every function of the API: code a role other than a
    -- superuser put there could run as the owner.
    if memory_internal._schema_problem(v_vector_schema) is not null then
        raise exception 'agent_memory: pgvector''s schema is on the search_path of the API''s functions, and %',
            memory_internal._schema_problem(v_vector_schema)
            using hint = format('revoke create on schema %s from the roles that have it (from public: revoke create '
                                'on schema %s from public), or install pgvector in a schema only superusers write',
                                v_vector_schema, v_vector_schema);
    end if;
    grant usage on schema memory, memory_internal to memory_owner, memory_observer;
    grant create on schema memory to memory_owner;  -- the HNSW indexes of a new embedding model
    grant select on memory.chunks, memory.chunk_embeddings, memory.turns, memory.sessions, memory.memories,
    memory.summaries to memory_observer;
    -- What the full-text list inlines (the planner inlines a function only for a role that may run it).
    grant execute on function
    memory_internal._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, bigint[], text[]),
    memory_internal._chunk_bm25(tsvector, integer, integer, text[], float8[], float8, float8, float8, float8),
    memory_internal._bm25_term(float8, float8, float8, float8, float8, float8)
    to memory_observer;
    for v_function in
        select p.oid::regprocedure from pg_catalog.pg_proc as p where p.proowner = 'memory_observer'::regrole
            and p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
    loop
        execute format('grant execute on function %s to memory_owner', v_function);
    end loop;
    if not pg_catalog.has_schema_privilege('memory_owner', v_vector_schema, 'usage') then
        execute format('grant usage on schema %s to memory_owner', v_vector_schema);
    end if;
    -- The import stages records in temporary tables of the caller's session.
    execute format('grant temporary on database %I to memory_owner', pg_catalog.current_database());
    grant usage on schema memory to memory_tenant, memory_app, memory_admin;
    grant usage on schema memory_internal to memory_admin;
    grant memory_tenant to memory_app;
    grant memory_app to memory_admin;
    grant execute on all functions in schema memory to memory_tenant;
    revoke execute on function memory.set_secret(text, text, text), memory.bind_tenant_role(regrole, text),
    memory.define_signal(text, text, regprocedure, double precision, text), memory.reembed(integer),
    memory.define_feature(text, text, regtype, text, text) from memory_tenant;
    grant execute on function memory.set_secret(text, text, text), memory.bind_tenant_role(regrole, text),
    memory.define_signal(text, text, regprocedure, double precision, text), memory.reembed(integer) to memory_admin;
    grant execute on procedure memory.maintain(), memory.work(integer, integer, integer) to memory_admin;
    grant execute on function memory_internal._claim_jobs(integer, text),
    memory_internal._embed_ahead(bigint[], text), memory_internal._work_on(bigint, text) to memory_admin;
    grant select on all tables in schema memory to memory_tenant;
    revoke select on memory.maintenance_runs from memory_tenant;
    grant select on memory.maintenance_runs to memory_admin;
    grant insert, update, delete on memory.config, memory.signals, memory.tenant_roles to memory_admin;
    for v_view in select c.oid::regclass from pg_catalog.pg_class as c
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'v'
    loop
        execute format('alter view %s set (security_invoker = true)', v_view);
    end loop;
end
$grants$;
