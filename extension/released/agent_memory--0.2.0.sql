-- agent_memory 0.2.0: assembled by extension/tools/assemble.py from sql/; do not edit.

\echo Use "CREATE EXTENSION agent_memory" to load this file. \quit

-- sql/head.sql
-- Runs first in every install and upgrade script: the record of incremental files, and the
-- function that applies each of them exactly once.

create table if not exists memory._migration (
    name text primary key,
    sha256 text not null,
    applied_in_version text not null,
    applied_at timestamptz not null default pg_catalog.now()
);

comment on table memory._migration is
'Incremental SQL files (sql/incremental) applied to this database, each once, with the hash it had.';

-- Applies one incremental file unless it was applied before; a recorded file whose text has changed
-- since is an error, because released incremental files are frozen. It runs the file under the
-- install script's search_path (the extension's schema, then pgvector's), so it sets none itself.
create or replace function memory._apply_migration(
    p_name text, p_sha256 text, p_version text, p_body text
) returns void
language plpgsql
as $$
declare
    v_recorded text;
begin
    select m.sha256 into v_recorded from memory._migration as m where m.name = p_name;
    if found then
        if v_recorded <> p_sha256 then
            raise exception 'agent_memory: incremental file % changed after it was applied', p_name
                using detail = format('recorded sha256 %s, now %s', v_recorded, p_sha256),
                hint = 'released incremental files must never change; add a new file instead';
        end if;
        return;
    end if;
    execute p_body;
    insert into memory._migration (name, sha256, applied_in_version)
    values (p_name, p_sha256, p_version);
end
$$;

comment on function memory._apply_migration(text, text, text, text) is
'Internal: runs an incremental SQL file once and records it in memory._migration.';

-- sql/incremental/001-config.sql
select memory._apply_migration('001-config.sql', '1c21e7fb6d33ea53ff90b8a39501e6ed417e0b79605d790b4648ca102f18ab4b', '0.2.0', $migration_body$
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
select memory._apply_migration('002-sessions-and-turns.sql', '1de9b06c2fd3ddf34d14d29f6bbc775f6f3e9352fffdc1678ba2f9b06e26b555', '0.2.0', $migration_body$
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
select memory._apply_migration('003-enrichment.sql', 'b905e6b5c0737e68b00dcc08a9c01b0dc98a6c428f06dd796d116ffa8a049116', '0.2.0', $migration_body$
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
select memory._apply_migration('004-jobs.sql', '56e4f84549760fd87ca74813541c380986fe4933d23610d960aa8bd010252938', '0.2.0', $migration_body$
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
select memory._apply_migration('005-feedback.sql', '1bbee7a43d319c99a00f4a0275413f79745437db52779e480d9967338f6a2470', '0.2.0', $migration_body$
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

-- sql/idempotent/001-python.sql
-- Loads the in-database Python package (agent_memory_db) once per backend.
-- It lives in a versioned directory outside the system's site-packages; a package of another
-- release than this SQL is a clear error, never a silent mix.
create or replace function memory._load_python() returns void
language plpython3u
as $$
version, python_dir = "0.2.0", "/usr/local/lib/agent_memory/0.2.0"
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
GD["agent_memory_version"] = version
$$;

comment on function memory._load_python() is
'Internal: puts the versioned agent_memory_db package on sys.path and checks it matches this SQL.';

-- sql/idempotent/010-settings.sql
-- Settings: a catalog of defaults, DBA overrides in memory.config, per-session overrides with
-- `set memory.<key> = ...`. Precedence, highest first: per-call argument (where a function takes
-- one), session setting, memory.config, default.

-- Every setting the extension knows, with its default and the values it accepts.
create or replace function memory.setting_definitions()
returns table (
    key text, default_value jsonb, value_type text, allowed jsonb,
    minimum numeric, maximum numeric, description text
)
language sql
immutable parallel safe
as $$
    values
        ('embedder', '"local"'::jsonb, 'string', '["local", "openai", "client", "none"]'::jsonb,
         null::numeric, null::numeric,
         'Which embedder writes and queries vectors: local (all-MiniLM-L6-v2 inside the database), '
         || 'openai (an OpenAI-compatible endpoint), client (callers pass vectors) or none (full-text only).'),
        ('enrich', '"queue"', 'string', '["queue", "now", "none"]', null, null,
         'What commit does about enrichment by default: queue a job, enrich now, or nothing.'),
        ('max_message_chars', '200000', 'number', null, 1, 100000000,
         'The longest message commit accepts, in characters.'),
        ('index_roles', '["user", "assistant"]', 'array', null, null, null,
         'Roles whose turns are indexed for recall (add "tool" or "system" to index those).'),
        ('index_context_turns', '1', 'number', null, 0, 10,
         'How many preceding indexed turns are indexed together with a turn, as its context.'),
        ('index_min_chars', '12', 'number', null, 0, 1000,
         'Turns shorter than this are not indexed (with slash commands, confirmations, heartbeats).'),
        ('chunk_chars', '1500', 'number', null, 100, 100000,
         'Long turns are split at sentence ends into chunks of at most this many characters.'),
        ('text_search_config', '"english"', 'string', null, null, null,
         'The text search configuration for full-text vectors of chunks and summaries.'),
        ('summarizer', '"extractive"', 'string', '["extractive", "llm", "none"]', null, null,
         'How sessions are summarized: extractive (deterministic, in the database), llm, or none.'),
        ('summary_sentences', '5', 'number', null, 1, 50,
         'How many sentences the extractive summary keeps.'),
        ('openai_base_url', '"https://api.openai.com/v1"', 'string', null, null, null,
         'Base URL of the OpenAI-compatible endpoint (…/v1) for the openai embedder and llm summarizer.'),
        ('openai_embedding_model', '"text-embedding-3-small"', 'string', null, null, null,
         'The embedding model asked of the endpoint.'),
        ('openai_embedding_dimensions', '1536', 'number', null, 1, 16000,
         'The dimensions that model returns (checked on every answer).'),
        ('openai_chat_model', '"gpt-4o-mini"', 'string', null, null, null,
         'The chat model that writes llm summaries.'),
        ('http_timeout_seconds', '30', 'number', null, 1, 600, 'Timeout of one HTTP request to the endpoint.'),
        ('http_retries', '2', 'number', null, 0, 10,
         'Retries of a request that failed to connect or got 429 or 5xx, with exponential backoff.'),
        ('client_dimensions', '384', 'number', null, 1, 16000,
         'Dimensions of vectors that callers pass with the client embedder.'),
        ('queue_max_attempts', '5', 'number', null, 1, 100,
         'Attempts of a job before it is dead-lettered (status dead, error kept).'),
        ('queue_backoff_seconds', '10', 'number', null, 0, 86400,
         'Retry delay after the first failure; it doubles with each further failure.'),
        ('queue_lease_seconds', '300', 'number', null, 1, 86400,
         'How long a claimed job is leased to its worker; after that another worker may reclaim it.'),
        ('recall_candidates', '50', 'number', null, 5, 5000,
         'How many chunks each candidate list (full-text, vectors) contributes before fusion.'),
        ('session_candidates', '5', 'number', null, 0, 1000,
         'How many sessions the summary full-text and session-vector lists contribute (two chunks each).'),
        ('lexical_max_df', '300', 'number', null, 1, 1000000000,
         'A query term found in more chunks than this still scores, but brings no full-text candidates by itself.'),
        ('fusion', '"zscore"', 'string', '["zscore", "rrf"]', null, null,
         'How the lists are fused: zscore (weighted sum of normalized scores) or rrf (reciprocal rank fusion).'),
        ('rrf_k', '60', 'number', null, 1, 1000, 'The k of reciprocal rank fusion: 1 / (rrf_k + rank).'),
        ('weight_lexical', '1.0', 'number', null, 0, 100, 'Weight of the full-text (BM25) score of turns.'),
        ('weight_dense', '0.6', 'number', null, 0, 100, 'Weight of the vector (cosine) score of turns.'),
        ('weight_summary', '0.1', 'number', null, 0, 100,
         'Weight of the full-text score of the turn''s session summary.'),
        ('weight_session_vector', '0.1', 'number', null, 0, 100,
         'Weight of the cosine score of the turn''s session vector.'),
        ('weight_speaker', '2.0', 'number', null, 0, 100,
         'Boost of turns spoken by a participant the query names (names are matched, not searched as words).'),
        ('weight_session', '0.5', 'number', null, 0, 100,
         'Adds this times the best fused score in the turn''s session: sessions that match lift their turns.'),
        ('weight_neighbor', '0.2', 'number', null, 0, 100,
         'Adds this times the better fused score of the turns just before and after.'),
        ('weight_recency', '0', 'number', null, 0, 100,
         'Boost of recent turns: this times 0.5 ^ (age / recency_half_life_days).'),
        ('recency_half_life_days', '30', 'number', null, 0.001, 100000, 'Half-life of the recency boost.'),
        ('weight_access', '0', 'number', null, 0, 100,
         'Boost of often recalled turns: this times ln(1 + access_count).'),
        ('weight_open_loop', '0.1', 'number', null, 0, 100,
         'Boost of turns that hold an open loop of their session''s summary.'),
        ('weight_trust', '1', 'number', null, 0, 100, 'Adds this times ln(trust) of the turn (trust 1 adds 0).'),
        ('trust_helpful_step', '0.1', 'number', null, 0, 10,
         'What a helpful verdict adds to a turn''s trust (up to trust_max).'),
        ('trust_unhelpful_factor', '0.5', 'number', null, 0, 1,
         'What an unhelpful verdict multiplies a turn''s trust by (down to trust_min): one no outweighs one yes.'),
        ('trust_min', '0.05', 'number', null, 0.000001, 1, 'The lowest trust feedback can leave a turn with.'),
        ('trust_max', '2', 'number', null, 1, 100, 'The highest trust feedback can give a turn.'),
        ('bootstrap_max_chars', '4000', 'number', null, 100, 1000000,
         'The character budget of memory.bootstrap() when the call does not give one.'),
        ('context_max_chars', '4000', 'number', null, 100, 1000000,
         'The character budget of memory.context_for_task() when the call does not give one.'),
        ('bm25_k1', '0.9', 'number', null, 0, 10, 'BM25 term-frequency saturation.'),
        ('bm25_b', '0.4', 'number', null, 0, 1, 'BM25 length normalization.'),
        ('strip_speaker_names', 'true', 'boolean', null, null, null,
         'Leave speaker names the query mentions out of its text and vector search (they are matched as speakers).'),
        ('exact_search_max_chunks', '20000', 'number', null, 0, 100000000,
         'Up to this many chunks in scope, vector search is exact; above it, HNSW with iterative scan.'),
        ('recall_count_access', 'false', 'boolean', null, null, null,
         'Count how often recall returns each turn (makes recall write; leave off on a read replica).')
$$;

comment on function memory.setting_definitions() is
'Every setting with its default, type, accepted values and meaning. Change one with '
'insert into memory.config or, for one session, set memory.<key> = ...';

-- The value checked against its definition; raises an error that names the key and the problem.
create or replace function memory._validated_setting(p_key text, p_value jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    d record;
begin
    select * into d from memory.setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    if jsonb_typeof(p_value) is distinct from d.value_type then
        raise exception 'agent_memory: setting "%" must be a JSON %, got %', p_key, d.value_type,
            coalesce(p_value::text, 'null');
    end if;
    if d.allowed is not null and not d.allowed @> jsonb_build_array(p_value) then
        raise exception 'agent_memory: setting "%" must be one of %, got %', p_key, d.allowed, p_value;
    end if;
    if d.minimum is not null and p_value::numeric < d.minimum
        or d.maximum is not null and p_value::numeric > d.maximum then
        raise exception 'agent_memory: setting "%" must be between % and %, got %',
            p_key, d.minimum, d.maximum, p_value;
    end if;
    return p_value;
end
$$;

comment on function memory._validated_setting(text, jsonb) is
'Internal: checks a setting value against memory.setting_definitions().';

create or replace function memory._config_validate() returns trigger
language plpgsql
as $$
begin
    new.value := memory._validated_setting(new.key, new.value);
    new.updated_at := pg_catalog.now();
    new.updated_by := current_user;
    return new;
end
$$;

comment on function memory._config_validate() is
'Internal: trigger that rejects unknown keys and ill-typed values in memory.config.';

drop trigger if exists config_validate on memory.config;
create trigger config_validate before insert or update on memory.config
for each row execute function memory._config_validate();

-- A session setting (`set memory.<key> = '...'`) as JSON of the setting's type.
create or replace function memory._session_setting(p_key text) returns jsonb
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
    select s.value_type into v_type from memory.setting_definitions() as s where s.key = p_key;
    if v_type = 'string' then
        return memory._validated_setting(p_key, to_jsonb(v_raw));
    end if;
    begin
        return memory._validated_setting(p_key, v_raw::jsonb);
    exception when invalid_text_representation then
        raise exception 'agent_memory: session setting memory.% is not a valid %: %', p_key, v_type, v_raw;
    end;
end
$$;

comment on function memory._session_setting(text) is
'Internal: the value of `set memory.<key>` in this session, validated, or null.';

-- The value in force for this session. Defaults are valid by construction and are not checked again.
create or replace function memory.setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_value jsonb := memory._session_setting(p_key);
begin
    if v_value is not null then
        return v_value;
    end if;
    select c.value into v_value from memory.config as c where c.key = p_key;
    if found then
        return v_value;
    end if;
    select s.default_value into v_value from memory.setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    return v_value;
end
$$;

comment on function memory.setting(text) is
'The value of a setting in force for this session: session setting (set memory.<key>), then '
'memory.config, then the default. Unknown keys are an error.';

create or replace view memory.settings as
select
    s.key,
    coalesce(session_value.value, c.value, s.default_value) as value,
    case
        when session_value.value is not null then 'session'
        when c.key is not null then 'config'
        else 'default'
    end as source,
    s.default_value,
    s.description
from memory.setting_definitions() as s
left join memory.config as c on s.key = c.key
cross join lateral (select memory._session_setting(s.key) as value) as session_value;

comment on view memory.settings is
'Every setting with the value in force for this session and where it comes from (session, config, default).';
comment on table memory.config is
'Settings changed from their defaults, checked on write against memory.setting_definitions().';
comment on column memory.config.key is 'The setting, one of memory.setting_definitions().key.';
comment on column memory.config.value is 'The value as JSON of the setting''s type.';
comment on column memory.config.updated_at is 'When the value was last written.';
comment on column memory.config.updated_by is 'The role that last wrote it.';

-- sql/idempotent/015-tenant.sql
-- The tenant of this session: `set memory.tenant_id = 'acme'`; 'default' when unset.
create or replace function memory.current_tenant() returns text
language sql
stable parallel safe
as $$ select coalesce(nullif(pg_catalog.current_setting('memory.tenant_id', true), ''), 'default') $$;

comment on function memory.current_tenant() is
'The tenant whose memory this session reads and writes: set memory.tenant_id = ''...''; default ''default''.';

-- sql/idempotent/020-version.sql
create or replace function memory.version() returns text
language sql
immutable parallel safe
as $$ select '0.2.0'::text $$;

comment on function memory.version() is 'The version of the agent_memory SQL objects installed in this database.';

-- sql/idempotent/030-health.sql
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
    plpy.execute("select memory._load_python()")
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

-- sql/idempotent/035-data-comments.sql
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
comment on column memory.turns.turn_key is 'Internal key of the turn.';
comment on column memory.turns.session_key is 'The session (memory.sessions.session_key).';
comment on column memory.turns.agent_id is 'The agent (as on the session).';
comment on column memory.turns.position is 'Order of the turn in its session, from 0.';
comment on column memory.turns.message_id is 'The caller''s message id, when given (unique per session).';
comment on column memory.turns.role is 'user, assistant, system or tool.';
comment on column memory.turns.name is 'The speaker''s name, when given; kept as data, not indexed as text.';
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
'The text indexed for recall: per turn, one or more chunks with preceding turns as context.';
comment on column memory.chunks.tenant_id is 'The tenant.';
comment on column memory.chunks.turn_key is 'The turn the chunk indexes.';
comment on column memory.chunks.chunk_no is 'Chunk number within the turn, from 0.';
comment on column memory.chunks.session_key is 'The turn''s session.';
comment on column memory.chunks.agent_id is 'The turn''s agent.';
comment on column memory.chunks.text is 'The indexed text (context, then the turn''s own text).';
comment on column memory.chunks.text_sha256 is 'sha256 of text: an unchanged chunk is never re-embedded.';
comment on column memory.chunks.tsv is 'Full-text vector of text (setting text_search_config).';

comment on table memory.chunk_embeddings is 'Vectors of chunks, one per chunk and embedding model.';
comment on column memory.chunk_embeddings.tenant_id is 'The tenant.';
comment on column memory.chunk_embeddings.turn_key is 'The chunk''s turn.';
comment on column memory.chunk_embeddings.chunk_no is 'The chunk.';
comment on column memory.chunk_embeddings.model is 'The embedding model (memory.embedding_models).';
comment on column memory.chunk_embeddings.text_sha256 is 'sha256 of the text that was embedded.';
comment on column memory.chunk_embeddings.embedding is 'The vector (unit length for the local model).';

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

comment on table memory.embedding_models is
'Embedding models used so far; recall uses a model once it is ready (every chunk has its vector).';
comment on column memory.embedding_models.model is 'The model name.';
comment on column memory.embedding_models.provider is 'local, openai or client.';
comment on column memory.embedding_models.dimensions is 'Dimensions of its vectors.';
comment on column memory.embedding_models.state is 'building (backfill running), ready, or retired.';
comment on column memory.embedding_models.created_at is 'When the model was first used.';
comment on column memory.embedding_models.ready_at is 'When its vectors became complete.';
comment on column memory.turns.trust is
'Multiplies the turn''s recall score (1 = neutral); feedback and DBAs may change it.';
comment on column memory.turns.access_count is
'How often recall returned the turn (counted only when recall_count_access is on).';
comment on column memory.turns.last_accessed_at is 'When recall last returned the turn (with recall_count_access).';
comment on column memory.chunks.length is 'Lexeme occurrences in tsv: the chunk''s length for BM25.';

comment on table memory.speakers is 'Names that speak in each tenant and agent (turns.name), matched against queries.';
comment on column memory.speakers.tenant_id is 'The tenant.';
comment on column memory.speakers.agent_id is 'The agent.';
comment on column memory.speakers.name is 'A speaker''s name as given on messages.';

comment on table memory.lexicon is
'BM25 document frequencies: in how many chunks of a tenant and agent each lexeme occurs.';
comment on column memory.lexicon.tenant_id is 'The tenant.';
comment on column memory.lexicon.agent_id is 'The agent.';
comment on column memory.lexicon.lexeme is 'A lexeme of the chunks'' tsvectors.';
comment on column memory.lexicon.chunks is 'How many chunks contain it.';

comment on table memory.corpus is 'BM25 collection statistics per tenant and agent.';
comment on column memory.corpus.tenant_id is 'The tenant.';
comment on column memory.corpus.agent_id is 'The agent.';
comment on column memory.corpus.chunks is 'How many chunks are indexed.';
comment on column memory.corpus.total_length is 'Their total length (lexeme occurrences), for the average length.';

comment on table memory.feedback is 'Every helpful / unhelpful verdict on a turn and the trust it moved (audit trail).';
comment on column memory.feedback.tenant_id is 'The tenant.';
comment on column memory.feedback.feedback_id is 'Internal key of the verdict.';
comment on column memory.feedback.turn_key is 'The turn judged (memory.turns.turn_key, the turn_id recall returns).';
comment on column memory.feedback.helpful is 'True when the turn helped, false when it did not.';
comment on column memory.feedback.query is 'The query the turn was recalled for, when given.';
comment on column memory.feedback.note is 'Free text from whoever gave the verdict.';
comment on column memory.feedback.trust_before is 'The turn''s trust before this verdict.';
comment on column memory.feedback.trust_after is 'The turn''s trust after it.';
comment on column memory.feedback.given_by is 'The database role that gave it.';
comment on column memory.feedback.created_at is 'When it was given.';

-- sql/idempotent/040-commit.sql
-- memory.commit: store a session's messages. Idempotent: a message already stored (same caller id,
-- or without id the same content at the same position) is skipped, so re-committing a growing
-- session appends only its new turns. Bad input raises an error naming the message and stores nothing.

-- The first problem with one message (a JSON object, as jsonb), or null when it is acceptable.
create or replace function memory._message_problem(message jsonb, max_chars integer, dimensions integer)
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
        when length(message::text) > max_chars and length(memory._message_text(message)) > max_chars
            then format('is %s characters long, over the limit of %s (setting max_message_chars)',
                        length(memory._message_text(message)), max_chars)
        when message -> 'id' is not null and jsonb_typeof(message -> 'id') not in ('string', 'number')
            then 'has an id that is neither a string nor a number'
        when message -> 'created_at' is not null
            and (jsonb_typeof(message -> 'created_at') <> 'string'
                 or message ->> 'created_at' !~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*(Z|z|[+-]\d{2}(:?\d{2})?)?$')
            then format('has created_at %s, which is not an ISO 8601 timestamp', message -> 'created_at')
        when message -> 'metadata' is not null and jsonb_typeof(message -> 'metadata') <> 'object'
            then 'has metadata that is not a JSON object'
        when message -> 'name' is not null and jsonb_typeof(message -> 'name') not in ('string', 'null')
            then 'has a name that is not a string'
        when message -> 'embedding' is not null and (
            jsonb_typeof(message -> 'embedding') <> 'array'
            or jsonb_array_length(message -> 'embedding') <> dimensions
            or exists (select from jsonb_array_elements(message -> 'embedding') as x where jsonb_typeof(x) <> 'number')
        ) then format('has an embedding that is not a list of %s numbers (setting client_dimensions)', dimensions)
    end
$$;

comment on function memory._message_problem(jsonb, integer, integer) is
'Internal: what is wrong with one message given to memory.commit, or null.';

-- A message's text: the content string, or its text parts joined by newlines.
create or replace function memory._message_text(message jsonb) returns text
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

comment on function memory._message_text(jsonb) is
'Internal: the text of a message''s content (a string, or text parts joined by newlines).';

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
    enrich text default null
) returns table (session_key bigint, created boolean, turns_added integer, job_id bigint)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_max_chars integer := (memory.setting('max_message_chars'))::integer;
    v_dimensions integer := (memory.setting('client_dimensions'))::integer;
    v_enrich text := coalesce(commit.enrich, memory.setting('enrich') #>> '{}');
    v_problem record;
    v_bad_time record;
    v_session bigint;
    v_created boolean;
    v_added integer;
    v_job bigint;
    v_messages jsonb;
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

    -- jsonb cannot hold NUL characters: find the message that has one in the text, then parse the
    -- array once as jsonb for every further step.
    if strpos(commit.messages::text, '\u0000') > 0 then
        select m.n - 1 as index, 'contains a NUL character (\u0000)' as problem into v_problem
        from json_array_elements(commit.messages) with ordinality as m (message, n)
        where strpos(m.message::text, '\u0000') > 0
        order by m.n
        limit 1;
        raise exception 'agent_memory: message % %', v_problem.index, v_problem.problem
            using errcode = 'invalid_parameter_value';
    end if;
    v_messages := commit.messages::jsonb;

    select p.index, p.problem into v_problem
    from (
        select m.n - 1 as index,
               case
                   when jsonb_typeof(m.message) is distinct from 'object' then 'is not a JSON object'
                   else memory._message_problem(m.message, v_max_chars, v_dimensions)
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
    exception when datetime_field_overflow or invalid_datetime_format then
        for v_bad_time in
            select m.n - 1 as index, m.message ->> 'created_at' as created_at
            from jsonb_array_elements(v_messages) with ordinality as m (message, n)
            where m.message ->> 'created_at' is not null order by m.n
        loop
            begin
                perform v_bad_time.created_at::timestamptz;
            exception when datetime_field_overflow or invalid_datetime_format then
                raise exception 'agent_memory: message % has created_at "%", which is not a valid time',
                    v_bad_time.index, v_bad_time.created_at using errcode = 'invalid_parameter_value';
            end;
        end loop;
    end;

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
        updated_at = pg_catalog.now()
    returning s.session_key, (s.xmax = 0) into v_session, v_created;

    with parsed as (
        select m.n - 1 as index, m.message
        from jsonb_array_elements(v_messages) with ordinality as m (message, n)
    ),
    texts as (
        select p.index, p.message, p.message ->> 'id' as message_id, memory._message_text(p.message) as content
        from parsed as p
    ),
    incoming as (
        select x.*, sha256(convert_to(x.content, 'UTF8')) as content_sha256 from texts as x
    ),
    fresh as (
        select i.* from incoming as i
        where not exists (
            select from memory.turns as t
            where t.tenant_id = v_tenant and t.session_key = v_session
                and (
                    t.message_id = i.message_id
                    or i.message_id is null and t.message_id is null and t.position = i.index
                    and t.content_sha256 = i.content_sha256
                )
        )
    ),
    last_position as (
        select coalesce(max(t.position), -1) as p from memory.turns as t
        where t.tenant_id = v_tenant and t.session_key = v_session
    )
    insert into memory.turns (tenant_id, session_key, agent_id, position, message_id, role, name, content,
                              content_sha256, tool_calls, tool_call_id, tokens, client_embedding, metadata, created_at)
    select v_tenant, v_session, commit.agent_id,
           lp.p + row_number() over (order by f.index),
           f.message_id, f.message ->> 'role', f.message ->> 'name', f.content, f.content_sha256,
           f.message -> 'tool_calls', f.message ->> 'tool_call_id',
           (f.message ->> 'tokens')::integer,
           (f.message ->> 'embedding')::vector,
           coalesce(f.message -> 'metadata', '{}'),
           coalesce((f.message ->> 'created_at')::timestamptz,
                    (select s.started_at from memory.sessions as s
                     where s.tenant_id = v_tenant and s.session_key = v_session))
    from fresh as f cross join last_position as lp
    order by f.index;
    get diagnostics v_added = row_count;

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
        perform memory._enrich_session(v_tenant, v_session);
    end if;

    return query select v_session, v_created, v_added, v_job;
end
$$;

comment on function memory.commit(text, json, text, text, timestamptz, text, bigint, bigint, jsonb, text) is
'Stores a session''s messages (a JSON array of {role, content, id?, created_at?, name?, tool_calls?, '
'tool_call_id?, tokens?, metadata?, embedding? (client embedder)}) under this tenant and agent_id. '
'Idempotent: only new turns are added. '
'enrich: queue (default, a job for memory.work), now, or none. Returns the session key, whether the '
'session is new, how many turns were added and the queued job. Pass jsonb as messages::json.';

-- sql/idempotent/050-embedding.sql
-- Embedding: the model the settings choose, one call that embeds texts with it, secrets for
-- endpoints, and a partial HNSW index per model.

-- Every setting in force, as one JSON object (what the Python side reads).
-- plpgsql, not sql: its plan is kept for the session (a sql function called from plpgsql is planned again
-- on every call, which cost more than the query itself).
create or replace function memory._settings_json() returns jsonb
language plpgsql
stable
as $$
begin
    return (select jsonb_object_agg(s.key, s.value) from memory.settings as s);
end
$$;

comment on function memory._settings_json() is 'Internal: every setting in force as one JSON object.';

-- Stores a secret (such as openai_api_key) where only the extension's owner can read it.
create or replace function memory.set_secret(name text, value text) returns void
language sql
security definer
as $$
    insert into memory._secrets as s (name, value) values (set_secret.name, set_secret.value)
    on conflict on constraint _secrets_pkey do update set value = excluded.value
$$;

revoke all on function memory.set_secret(text, text) from public;

comment on function memory.set_secret(text, text) is
'Stores a secret, e.g. select memory.set_secret(''openai_api_key'', ''sk-...''). Only the extension''s '
'owner may call it; the secret is readable by no other role.';

-- The embedding model that settings (as from memory._settings_json()) choose; no row for embedder = none.
create or replace function memory._embedding_model(settings jsonb)
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

comment on function memory._embedding_model(jsonb) is
'Internal: the embedding model that the given settings choose.';

create or replace function memory.embedding_model()
returns table (provider text, model text, dimensions integer)
language sql
stable
as $$ select * from memory._embedding_model(memory._settings_json()) $$;

comment on function memory.embedding_model() is
'The embedding model the settings choose (provider, model, dimensions); no row when embedder = none.';

-- Runs as the owner so the endpoint's key can be read; it returns only vectors.
create or replace function memory._embed_texts(texts text[], settings jsonb) returns vector[]
language plpython3u
security definer
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory._load_python()")
import json
from agent_memory_db import embedding
config = json.loads(settings)
key = None
if config["embedder"] == "openai":
    rows = plpy.execute("select value from memory._secrets where name = 'openai_api_key'")
    key = rows[0]["value"] if rows else None
try:
    vectors = embedding.embed(config, texts or [], key, GD)
except Exception as exc:
    plpy.error("agent_memory: embedding failed: %s" % exc)
return [embedding.as_pgvector(v) for v in vectors]
$$;

revoke all on function memory._embed_texts(text[], jsonb) from public;

comment on function memory._embed_texts(text[], jsonb) is
'Internal: embeds texts with the embedder the given settings choose.';

create or replace function memory.embed(texts text[]) returns vector[]
language sql
stable
security definer
as $$ select memory._embed_texts(texts, memory._settings_json()) $$;

comment on function memory.embed(text[]) is
'Vectors for texts with the configured embedder (the local model by default), in the same order.';

-- A partial HNSW index for one model's vectors (each model has its own dimensions).
create or replace function memory._ensure_vector_index(model text, dimensions integer) returns void
language plpgsql
as $$
declare
    v_suffix text := left(md5(model), 10);
begin
    if to_regclass('memory.chunk_embeddings_hnsw_' || v_suffix) is not null then
        return;
    end if;
    execute format(
        'create index if not exists %I on memory.chunk_embeddings using hnsw ((embedding::vector(%s)) vector_cosine_ops) where model = %L',
        'chunk_embeddings_hnsw_' || v_suffix, dimensions, model
    );
    execute format(
        'create index if not exists %I on memory.session_embeddings using hnsw ((embedding::vector(%s)) vector_cosine_ops) where model = %L',
        'session_embeddings_hnsw_' || v_suffix, dimensions, model
    );
end
$$;

comment on function memory._ensure_vector_index(text, integer) is
'Internal: creates the partial HNSW indexes (chunks and sessions) for one embedding model.';

-- The default model's indexes ship with the extension.
select memory._ensure_vector_index('all-MiniLM-L6-v2', 384);

-- sql/idempotent/055-lexicon.sql
-- Term statistics for BM25 (memory.lexicon, memory.corpus) and the speakers of each scope
-- (memory.speakers), kept current by triggers so recall reads them instead of counting.

-- How many lexeme occurrences a tsvector holds: a chunk's length for BM25.
create or replace function memory._tsv_length(tsv tsvector) returns integer
language sql
immutable strict parallel safe
as $$ select coalesce(sum(coalesce(cardinality(u.positions), 1)), 0)::integer from unnest(tsv) as u $$;

comment on function memory._tsv_length(tsvector) is 'Internal: the number of lexeme occurrences in a tsvector.';

-- Adds (sign 1) or removes (sign -1) chunks from the statistics. Rows are touched in key order so
-- that concurrent enrichments lock them in the same order.
create or replace function memory._count_chunks(
    tenants text[], agents text[], lengths integer[], tsvs tsvector[], sign integer
) returns void
language sql
as $$
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
    group by c.tenant_id, c.agent_id, u.lexeme
    order by c.tenant_id, c.agent_id, u.lexeme
    on conflict (tenant_id, agent_id, lexeme) do update
    set chunks = l.chunks + excluded.chunks;

    delete from memory.lexicon as l
    where sign < 0 and l.chunks <= 0 and l.tenant_id = any(tenants) and l.agent_id = any(agents);
$$;

comment on function memory._count_chunks(text[], text[], integer[], tsvector[], integer) is
'Internal: adds or removes chunks from the BM25 statistics (memory.lexicon, memory.corpus).';

create or replace function memory._chunks_changed() returns trigger
language plpgsql
as $$
begin
    if tg_op in ('DELETE', 'UPDATE') then
        perform memory._count_chunks(array_agg(o.tenant_id), array_agg(o.agent_id), array_agg(o.length),
                                     array_agg(o.tsv), -1)
        from old_chunks as o having count(*) > 0;
    end if;
    if tg_op in ('INSERT', 'UPDATE') then
        perform memory._count_chunks(array_agg(n.tenant_id), array_agg(n.agent_id), array_agg(n.length),
                                     array_agg(n.tsv), 1)
        from new_chunks as n having count(*) > 0;
    end if;
    return null;
end
$$;

comment on function memory._chunks_changed() is 'Internal: trigger that keeps the BM25 statistics current.';

drop trigger if exists chunks_counted_insert on memory.chunks;
create trigger chunks_counted_insert after insert on memory.chunks
referencing new table as new_chunks
for each statement execute function memory._chunks_changed();

drop trigger if exists chunks_counted_update on memory.chunks;
create trigger chunks_counted_update after update on memory.chunks
referencing old table as old_chunks new table as new_chunks
for each statement execute function memory._chunks_changed();

drop trigger if exists chunks_counted_delete on memory.chunks;
create trigger chunks_counted_delete after delete on memory.chunks
referencing old table as old_chunks
for each statement execute function memory._chunks_changed();

create or replace function memory._turns_added() returns trigger
language plpgsql
as $$
begin
    insert into memory.speakers (tenant_id, agent_id, name)
    select distinct n.tenant_id, n.agent_id, n.name from new_turns as n where n.name is not null
    order by 1, 2, 3
    on conflict do nothing;
    return null;
end
$$;

comment on function memory._turns_added() is 'Internal: trigger that records the speakers of new turns.';

drop trigger if exists turns_speakers on memory.turns;
create trigger turns_speakers after insert on memory.turns
referencing new table as new_turns
for each statement execute function memory._turns_added();

-- sql/idempotent/060-enrich.sql
-- Enrichment of one session: index chunks (with full-text vectors), their embeddings, the summary and
-- the session embedding. Work already done for unchanged text is never repeated.

-- The chunks the indexing settings produce for a session's turns.
create or replace function memory._chunk_turns(turns jsonb, settings jsonb)
returns table (turn_key bigint, chunk_no integer, text text)
language plpython3u
immutable
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory._load_python()")
import json
from agent_memory_db import indexing
chunks = indexing.index_chunks(json.loads(turns), indexing.policy_from_settings(json.loads(settings)))
return [(c.turn_key, c.chunk_no, c.text) for c in chunks]
$$;

comment on function memory._chunk_turns(jsonb, jsonb) is
'Internal: the chunks to index for a session''s turns (noise filtered, context added, long turns split).';

create or replace function memory._summarize_turns(turns jsonb, settings jsonb)
returns table (method text, summary text, decisions jsonb, open_loops jsonb)
language plpython3u
security definer
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory._load_python()")
import json
from agent_memory_db import embedding, openai_compat, summarize
messages, config = json.loads(turns), json.loads(settings)
if config["summarizer"] == "llm":
    rows = plpy.execute("select value from memory._secrets where name = 'openai_api_key'")
    endpoint = embedding.endpoint(config, rows[0]["value"] if rows else None)
    try:
        result = summarize.parse_llm_summary(
            openai_compat.chat(endpoint, config["openai_chat_model"], summarize.llm_messages(messages)))
    except (openai_compat.ProviderError, ValueError) as exc:
        plpy.error("agent_memory: llm summary failed: %s" % exc)
else:
    result = summarize.extractive(messages, int(config["summary_sentences"]))
return [(result.method, result.text, json.dumps(result.decisions), json.dumps(result.open_loops))]
$$;

revoke all on function memory._summarize_turns(jsonb, jsonb) from public;

comment on function memory._summarize_turns(jsonb, jsonb) is
'Internal: a session summary with decisions and open loops, extractive or from the llm endpoint.';

create or replace function memory._enrich_session(tenant text, session bigint) returns void
language plpgsql
as $$
declare
    v_settings jsonb := memory._settings_json();
    v_config regconfig := (v_settings ->> 'text_search_config')::regconfig;
    v_model record;
    v_turns jsonb;
    v_source bytea;
    v_summary record;
    v_summarized boolean := false;
    v_chunk_keys bigint [];
    v_chunk_nos integer [];
    v_chunk_texts text [];
    v_texts text [];
    v_keys bigint [];
    v_chunks integer [];
    v_vectors vector [];
begin
    select coalesce(jsonb_agg(jsonb_build_object(
                'turn_key', t.turn_key, 'role', t.role, 'name', t.name, 'content', t.content)
                order by t.position), '[]'),
           sha256(convert_to(coalesce(string_agg(encode(t.content_sha256, 'hex'), ',' order by t.position), ''), 'UTF8'))
    into v_turns, v_source
    from memory.turns as t where t.tenant_id = tenant and t.session_key = session;

    select * into v_model from memory._embedding_model(v_settings);
    if v_model is not null then
        perform memory._register_model(v_model.provider, v_model.model, v_model.dimensions);
    end if;

    -- The model and summarizer run first, so that the writes below (whose BM25 statistics rows other
    -- workers also update) hold their locks only for the end of the transaction.
    select coalesce(array_agg(n.turn_key), '{}'), coalesce(array_agg(n.chunk_no), '{}'), coalesce(array_agg(n.text), '{}')
    into v_chunk_keys, v_chunk_nos, v_chunk_texts
    from memory._chunk_turns(v_turns, v_settings) as n;
    if v_model is not null and v_model.provider <> 'client' then
        select array_agg(n.text), array_agg(n.turn_key), array_agg(n.chunk_no) into v_texts, v_keys, v_chunks
        from unnest(v_chunk_keys, v_chunk_nos, v_chunk_texts) as n (turn_key, chunk_no, text)
        where not exists (
            select from memory.chunk_embeddings as e
            where e.tenant_id = tenant and e.turn_key = n.turn_key and e.chunk_no = n.chunk_no
                and e.model = v_model.model and e.text_sha256 = sha256(convert_to(n.text, 'UTF8'))
        );
        if v_texts is not null then
            v_vectors := memory._embed_texts(v_texts, v_settings);
        end if;
    end if;
    if v_settings ->> 'summarizer' <> 'none' and not exists (
        select from memory.summaries as s
        where s.tenant_id = tenant and s.session_key = session
            and (s.method = 'caller' or s.source_sha256 = v_source)
    ) then
        select * into v_summary from memory._summarize_turns(v_turns, v_settings);
        v_summarized := true;
    end if;

    -- Chunks: keep unchanged ones, replace changed ones, drop those the settings no longer produce.
    delete from memory.chunks as c
    where c.tenant_id = tenant and c.session_key = session
        and not exists (
            select from unnest(v_chunk_keys, v_chunk_nos) as n (turn_key, chunk_no)
            where n.turn_key = c.turn_key and n.chunk_no = c.chunk_no
        );
    insert into memory.chunks as c (tenant_id, turn_key, chunk_no, session_key, agent_id, text, text_sha256, tsv,
                                    length)
    select tenant, n.turn_key, n.chunk_no, session, t.agent_id, n.text, sha256(convert_to(n.text, 'UTF8')),
           v.tsv, memory._tsv_length(v.tsv)
    from unnest(v_chunk_keys, v_chunk_nos, v_chunk_texts) as n (turn_key, chunk_no, text)
    inner join memory.turns as t on t.tenant_id = tenant and n.turn_key = t.turn_key
    cross join lateral (select to_tsvector(v_config, n.text) as tsv) as v
    where not exists (
        select from memory.chunks as o
        where o.tenant_id = tenant and o.turn_key = n.turn_key and o.chunk_no = n.chunk_no
            and o.text_sha256 = sha256(convert_to(n.text, 'UTF8'))
    )
    order by n.turn_key, n.chunk_no
    on conflict (tenant_id, turn_key, chunk_no) do update
    set text = excluded.text, text_sha256 = excluded.text_sha256, tsv = excluded.tsv, length = excluded.length
    where c.text_sha256 <> excluded.text_sha256;

    -- Embeddings: drop those of changed text, write the new ones (or the caller's vectors).
    if v_model is not null then
        delete from memory.chunk_embeddings as e
        using memory.chunks as c
        where c.tenant_id = tenant and c.session_key = session and e.tenant_id = c.tenant_id
            and e.turn_key = c.turn_key and e.chunk_no = c.chunk_no and e.text_sha256 <> c.text_sha256;
        if v_model.provider = 'client' then
            insert into memory.chunk_embeddings (tenant_id, turn_key, chunk_no, model, text_sha256, embedding)
            select c.tenant_id, c.turn_key, c.chunk_no, 'client', c.text_sha256, t.client_embedding
            from memory.chunks as c
            inner join memory.turns as t on c.tenant_id = t.tenant_id and c.turn_key = t.turn_key
            where c.tenant_id = tenant and c.session_key = session and t.client_embedding is not null
            on conflict do nothing;
        elsif v_texts is not null then
            insert into memory.chunk_embeddings (tenant_id, turn_key, chunk_no, model, text_sha256, embedding)
            select tenant, k.turn_key, k.chunk_no, v_model.model, sha256(convert_to(k.text, 'UTF8')), k.embedding
            from unnest(v_keys, v_chunks, v_texts, v_vectors) as k (turn_key, chunk_no, text, embedding)
            on conflict (tenant_id, turn_key, chunk_no, model) do update
            set text_sha256 = excluded.text_sha256, embedding = excluded.embedding;
        end if;
        perform memory._mark_ready_if_complete(v_model.model);
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
        perform memory._embed_session(tenant, session, v_model.model);
    end if;
end
$$;

comment on function memory._enrich_session(text, bigint) is
'Internal: enriches one session (chunks, embeddings, summary, session embedding), skipping unchanged work.';

-- The session's vector: the normalized mean of its chunks' vectors under one model (no model call).
create or replace function memory._embed_session(tenant text, session bigint, model text) returns void
language sql
as $$
    insert into memory.session_embeddings as e (tenant_id, session_key, model, text_sha256, embedding)
    select tenant, session, _embed_session.model,
           sha256(string_agg(c.text_sha256, '' order by c.turn_key, c.chunk_no)),
           l2_normalize(avg(ce.embedding))
    from memory.chunks as c
    inner join memory.chunk_embeddings as ce
        on c.tenant_id = ce.tenant_id and c.turn_key = ce.turn_key and c.chunk_no = ce.chunk_no
    where c.tenant_id = tenant and c.session_key = session and ce.model = _embed_session.model
    having count(*) > 0
    on conflict on constraint session_embeddings_pkey do update
    set text_sha256 = excluded.text_sha256, embedding = excluded.embedding
    where e.text_sha256 <> excluded.text_sha256
$$;

comment on function memory._embed_session(text, bigint, text) is
'Internal: a session''s vector under one model, the normalized mean of its chunks'' vectors.';

-- The key of this tenant's session of an agent; an unknown one is an error that names it.
create or replace function memory._session_key(session_id text, agent_id text) returns bigint
language plpgsql
stable
as $$
declare
    v_session bigint;
begin
    select s.session_key into v_session from memory.sessions as s
    where s.tenant_id = memory.current_tenant() and s.agent_id = _session_key.agent_id
        and s.session_id = _session_key.session_id;
    if not found then
        raise exception 'agent_memory: no session "%" for agent "%" in tenant "%"',
            _session_key.session_id, _session_key.agent_id, memory.current_tenant() using errcode = 'no_data_found';
    end if;
    return v_session;
end
$$;

comment on function memory._session_key(text, text) is
'Internal: the key of a session of this tenant, or an error naming the session, agent and tenant.';

create or replace function memory.enrich(session_id text, agent_id text default 'default')
returns table (session_key bigint, chunks integer, embedded integer, summary text)
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint := memory._session_key(enrich.session_id, enrich.agent_id);
begin
    perform memory._enrich_session(v_tenant, v_session);
    return query
    select v_session,
           (select count(*)::integer from memory.chunks as c where c.tenant_id = v_tenant and c.session_key = v_session),
           (select count(*)::integer from memory.chunk_embeddings as e
            inner join memory.chunks as c using (tenant_id, turn_key, chunk_no)
            where c.tenant_id = v_tenant and c.session_key = v_session),
           (select s.summary from memory.summaries as s where s.tenant_id = v_tenant and s.session_key = v_session);
end
$$;

comment on function memory.enrich(text, text) is
'Enriches one session now: index chunks, embeddings, summary and session embedding. Returns the counts.';

create or replace function memory.set_summary(
    session_id text, summary text, decisions jsonb default '[]', open_loops jsonb default '[]',
    agent_id text default 'default'
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
    v_session := memory._session_key(set_summary.session_id, set_summary.agent_id);
    insert into memory.summaries as s (tenant_id, session_key, method, summary, decisions, open_loops, tsv)
    values (v_tenant, v_session, 'caller', set_summary.summary, set_summary.decisions, set_summary.open_loops,
            to_tsvector((memory.setting('text_search_config') #>> '{}')::regconfig, set_summary.summary))
    on conflict (tenant_id, session_key) do update
    set method = 'caller', summary = excluded.summary, decisions = excluded.decisions,
        open_loops = excluded.open_loops, source_sha256 = null, tsv = excluded.tsv, created_at = pg_catalog.now();
end
$$;

comment on function memory.set_summary(text, text, jsonb, jsonb, text) is
'Stores the caller''s own summary of a session; enrichment then leaves it as it is.';

-- sql/idempotent/070-models.sql
-- Changing the embedding model without downtime: vectors of a new model are written in the background
-- (jobs of kind embed) while recall keeps using the last model whose vectors are complete.

-- Records a model the first time it is used; a model that arrives while chunks exist starts as
-- building and gets a background job that embeds them.
create or replace function memory._register_model(provider text, model text, dimensions integer) returns void
language plpgsql
as $$
begin
    if exists (select from memory.embedding_models as m where m.model = _register_model.model) then
        return;
    end if;
    if provider <> 'client' then
        perform memory._ensure_vector_index(model, dimensions);
    end if;
    insert into memory.embedding_models (model, provider, dimensions, state, ready_at)
    select model, provider, dimensions,
           case when exists (select from memory.chunks) then 'building' else 'ready' end,
           case when exists (select from memory.chunks) then null else pg_catalog.now() end
    on conflict do nothing;
    if found and exists (select from memory.chunks) then
        insert into memory.jobs (tenant_id, kind) values (memory.current_tenant(), 'embed');
    end if;
end
$$;

comment on function memory._register_model(text, text, integer) is
'Internal: records an embedding model on first use; with existing chunks it starts as building.';

-- Embeds up to batch chunks that lack a vector of the configured model; when none are left the model
-- becomes ready and recall switches to it. Returns how many chunks it embedded.
create or replace function memory.reembed(batch integer default 500) returns integer
language plpgsql
as $$
declare
    v_settings jsonb := memory._settings_json();
    v_model record;
    v_keys bigint [];
    v_nos integer [];
    v_tenants text [];
    v_texts text [];
    v_vectors vector [];
    v_count integer;
begin
    select * into v_model from memory.embedding_model();
    if v_model is null or v_model.provider = 'client' then
        return 0;
    end if;
    perform memory._register_model(v_model.provider, v_model.model, v_model.dimensions);
    select array_agg(c.tenant_id), array_agg(c.turn_key), array_agg(c.chunk_no), array_agg(c.text)
    into v_tenants, v_keys, v_nos, v_texts
    from (
        select c.tenant_id, c.turn_key, c.chunk_no, c.text from memory.chunks as c
        where not exists (
            select from memory.chunk_embeddings as e
            where e.tenant_id = c.tenant_id and e.turn_key = c.turn_key and e.chunk_no = c.chunk_no
                and e.model = v_model.model
        )
        limit batch
    ) as c;
    v_count := coalesce(cardinality(v_texts), 0);
    if v_count > 0 then
        v_vectors := memory._embed_texts(v_texts, v_settings);
        insert into memory.chunk_embeddings (tenant_id, turn_key, chunk_no, model, text_sha256, embedding)
        select k.tenant_id, k.turn_key, k.chunk_no, v_model.model, sha256(convert_to(k.text, 'UTF8')), k.embedding
        from unnest(v_tenants, v_keys, v_nos, v_texts, v_vectors) as k (tenant_id, turn_key, chunk_no, text, embedding)
        on conflict do nothing;
    end if;
    if v_count < batch then
        perform memory._mark_ready_if_complete(v_model.model);
    end if;
    return v_count;
end
$$;

comment on function memory.reembed(integer) is
'Embeds up to batch chunks lacking a vector of the configured model (all tenants); marks the model ready '
'when none are left, and recall then switches to it. Queued automatically when the model changes.';

-- Marks a building model ready once every chunk has its vector (checked only while it is building).
create or replace function memory._mark_ready_if_complete(model text) returns void
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
        and not exists (
            select from memory.chunks as c
            where not exists (
                select from memory.chunk_embeddings as e
                where e.tenant_id = c.tenant_id and e.turn_key = c.turn_key and e.chunk_no = c.chunk_no
                    and e.model = _mark_ready_if_complete.model
            )
        );
end
$$;

comment on function memory._mark_ready_if_complete(text) is
'Internal: a building embedding model becomes ready when no chunk lacks its vector.';

-- The model recall uses: the configured one once its vectors are complete, else the last ready one.
create or replace function memory._recall_model(configured text) returns text
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

comment on function memory._recall_model(text) is
'Internal: the model recall uses when the settings configure the given one (null: none configured).';

create or replace function memory.recall_model() returns text
language sql
stable
as $$ select memory._recall_model((select e.model from memory.embedding_model() as e)) $$;

comment on function memory.recall_model() is
'The embedding model recall uses: the configured one once all chunks have its vectors, else the most '
'recently completed one; null when there are no vectors.';

-- sql/idempotent/080-queue.sql
-- The enrichment queue: memory.work() claims jobs with FOR UPDATE SKIP LOCKED and a lease, commits
-- the claim, runs each job in its own transaction, retries failures with backoff, dead-letters a job
-- after queue_max_attempts. A job whose worker died is reclaimed once its lease has run out.

create or replace function memory._claim_jobs(max_jobs integer, worker text) returns setof memory.jobs
language plpgsql
as $$
declare
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_lease interval := make_interval(secs => (memory.setting('queue_lease_seconds'))::numeric);
begin
    -- A job whose lease ran out after its last attempt is dead: its worker kept dying on it.
    update memory.jobs as j
    set status = 'dead', leased_until = null, finished_at = pg_catalog.now(),
        last_error = coalesce(j.last_error || '; ', '')
            || format('worker %s lost its lease on attempt %s', j.leased_by, j.attempts)
    where j.status = 'running' and j.leased_until < pg_catalog.now() and j.attempts >= v_max_attempts;

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

comment on function memory._claim_jobs(integer, text) is
'Internal: leases up to max_jobs runnable jobs (queued, or running with an expired lease) to a worker.';

-- Runs one claimed job; true when the job has more to do (an embed job with chunks left).
create or replace function memory._run_job(job memory.jobs) returns boolean
language plpgsql
as $$
begin
    if job.kind = 'enrich' then
        perform memory._enrich_session(job.tenant_id, job.session_key);
        return false;
    end if;
    return memory.reembed(500) = 500;
end
$$;

comment on function memory._run_job(memory.jobs) is 'Internal: does the work of one job.';

create or replace procedure memory.work(
    max_jobs integer default 10, inout processed integer default 0, inout failed integer default 0
)
language plpgsql
as $$
declare
    v_worker text := pg_catalog.format('pid %s', pg_catalog.pg_backend_pid());
    v_job memory.jobs;
    v_jobs memory.jobs [];
    v_more boolean;
    v_error text;
    v_max_attempts integer := (memory.setting('queue_max_attempts'))::integer;
    v_backoff numeric := (memory.setting('queue_backoff_seconds'))::numeric;
begin
    processed := 0;
    failed := 0;
    select pg_catalog.array_agg(c) into v_jobs from memory._claim_jobs(max_jobs, v_worker) as c;
    commit;
    foreach v_job in array coalesce(v_jobs, '{}') loop
        -- Enrichment is derived data and a job whose completion was lost in a crash simply runs again,
        -- so its transaction need not wait for the WAL flush.
        perform pg_catalog.set_config('synchronous_commit', 'off', true);
        begin
            v_more := memory._run_job(v_job);
            update memory.jobs as j
            set status = case when v_more then 'queued' else 'done' end,
                attempts = case when v_more then 0 else j.attempts end,
                leased_until = null, last_error = null,
                finished_at = case when v_more then null else pg_catalog.now() end
            where j.job_id = v_job.job_id;
            processed := processed + 1;
        exception when others then
            get stacked diagnostics v_error = message_text;
            update memory.jobs as j
            set status = case when j.attempts >= v_max_attempts then 'dead' else 'queued' end,
                run_after = pg_catalog.now()
                    + pg_catalog.make_interval(secs => v_backoff * pg_catalog.power(2, j.attempts - 1)),
                leased_until = null, last_error = v_error,
                finished_at = case when j.attempts >= v_max_attempts then pg_catalog.now() end
            where j.job_id = v_job.job_id;
            failed := failed + 1;
        end;
        commit;
    end loop;
end
$$;

comment on procedure memory.work (integer, integer, integer) is
'Runs up to max_jobs queued enrichment jobs, each in its own transaction: call memory.work(100); '
'outside a transaction block. Returns how many were done and how many failed (retried with backoff, '
'dead after queue_max_attempts). Schedule it with pg_cron or run `agent-memory worker`.';

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

-- sql/idempotent/090-recall.sql
-- Recall: hybrid ranking of turns (and sessions) inside the database.
--
-- Candidates: the top recall_candidates chunks by BM25 over the chunks' lexemes (term statistics in
-- memory.lexicon), the top recall_candidates chunks by cosine similarity to the query vector (exact for
-- small scopes, HNSW with iterative scan for large ones), and the best chunks of the top session_candidates
-- sessions by summary full text and by session vector. For every candidate both scores are computed
-- exactly, then fused (z-score weighted sum, or reciprocal rank fusion), then the session, neighbour,
-- speaker, summary, session-vector, recency, access, open-loop and trust signals are added. Every
-- signal's rank and contribution is returned in `components`.

-- The recall settings in force, with per-call weights (keys of memory.setting_definitions()) on top.
create or replace function memory._recall_settings(weights jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    v_key text;
begin
    if weights is null then
        return memory._settings_json();
    end if;
    if jsonb_typeof(weights) <> 'object' then
        raise exception 'agent_memory: weights must be a JSON object of settings, got %', jsonb_typeof(weights);
    end if;
    for v_key in select jsonb_object_keys(weights) loop
        perform memory._validated_setting(v_key, weights -> v_key);
    end loop;
    return memory._settings_json() || weights;
end
$$;

comment on function memory._recall_settings(jsonb) is
'Internal: the settings in force for one recall, per-call weights taking precedence.';

-- The speakers of the scope whose names the query mentions (whole words, any case).
-- plpgsql for the plan it keeps across calls (see memory._settings_json).
create or replace function memory._query_speakers(query text, tenant text, agent text) returns text[]
language plpgsql
stable
as $$
begin
    return (
        select coalesce(array_agg(distinct s.name), '{}')
        from memory.speakers as s
        where s.tenant_id = tenant and (agent is null or s.agent_id = agent)
            and query ~* ('\m' || regexp_replace(s.name, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M')
    );
end
$$;

comment on function memory._query_speakers(text, text, text) is
'Internal: speakers of the scope named in the query.';

create or replace function memory._without_names(query text, names text[]) returns text
language sql
immutable
as $$
    select coalesce((
        select regexp_replace(query, '\m(' || string_agg(regexp_replace(n, '([.*+?^${}()|\[\]\\])', '\\\1', 'g'), '|')
                                     || ')(''s)?\M', ' ', 'gi')
        from unnest(names) as n
    ), query)
$$;

comment on function memory._without_names(text, text[]) is 'Internal: the query with the given names taken out.';

-- One query term's BM25 contribution to a chunk: idf, the term's frequency in the chunk, the chunk's length.
create or replace function memory._bm25_term(
    idf double precision, frequency integer, length integer,
    k1 double precision, b double precision, avg_length double precision
) returns double precision
language sql
immutable parallel safe
as $$
    select idf * (coalesce(frequency, 1) * (k1 + 1))
        / (coalesce(frequency, 1) + k1 * (1 - b + b * length / greatest(avg_length, 1)))
$$;

comment on function memory._bm25_term(
    double precision, integer, integer, double precision, double precision,
    double precision
) is
'Internal: one query term''s BM25 contribution to a chunk (inlined into the recall queries).';

-- Whether a turn mentions the entities (as a whole word in its text, or as its speaker): any or all.
create or replace function memory._matches_entities(content text, speaker text, entities text[], mode text)
returns boolean
language sql
immutable parallel safe
as $$
    select entities is null or cardinality(entities) = 0 or (
        select case when mode = 'all' then bool_and(m.hit) else bool_or(m.hit) end
        from (
            select coalesce(lower(speaker) = lower(e), false)
                   or content ~* ('\m' || regexp_replace(e, '([.*+?^${}()|\[\]\\])', '\\\1', 'g') || '\M') as hit
            from unnest(entities) as e
        ) as m
    )
$$;

comment on function memory._matches_entities(text, text, text[], text) is
'Internal: whether a turn names any (or all) of the entities, in its text or as its speaker.';

-- One row when a turn passes recall's filters on event time, source and entities, none otherwise. Used as
-- `cross join lateral memory._turn_filter(...)`: the planner inlines it, a filter not given folds away,
-- and with it the lookup it needs (a scalar function with subqueries could not be inlined).
create or replace function memory._turn_filter(
    tenant text, turn bigint, session bigint, since timestamptz, until timestamptz, source text,
    entities text[], entity_mode text
) returns setof boolean
language sql
stable
as $$
    select true
    where (since is null and until is null and entities is null or exists (
                select from memory.turns as t
                where t.tenant_id = tenant and t.turn_key = turn
                    and (since is null or t.created_at >= since) and (until is null or t.created_at <= until)
                    and (entities is null or memory._matches_entities(t.content, t.name, entities, entity_mode))
            ))
        and (source is null or exists (
                select from memory.sessions as s
                where s.tenant_id = tenant and s.session_key = session and s.source = _turn_filter.source
            ))
$$;

comment on function memory._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, text[], text) is
'Internal: one row when a turn passes recall''s time, source and entity filters (null filters pass).';

-- The statement of a nearest-vector list over chunk_embeddings or session_embeddings ("e"): the query
-- vector is $1, the tenant $2, the list's length $9 (other filters' parameters as memory._recall_candidates
-- passes them). Exact search sorts every distance ("+ 0" keeps the HNSW index out); otherwise the partial
-- HNSW index of the model serves the order (with iterative scan, so filters do not starve the list).
create or replace function memory._nearest_sql(
    relation text, keys text[], model text, dimensions integer, exact boolean, filter text
) returns text
language plpgsql
immutable
as $$
begin
    return format(
        'select %s from (select %s from memory.%I as e where e.model = %L and e.tenant_id = $2 %s order by %s limit $9) as n',
        (select string_agg(format('array_agg(n.%I)', k), ', ') from unnest(keys) as k),
        (select string_agg(format('e.%I', k), ', ') from unnest(keys) as k),
        relation, model, coalesce(filter, ''),
        format(case when exact then '(e.embedding::vector(%s) <=> $1) + 0' else 'e.embedding::vector(%s) <=> $1' end,
               dimensions)
    );
end
$$;

comment on function memory._nearest_sql(text, text[], text, integer, boolean, text) is
'Internal: the statement of a nearest-vector candidate list (exact or HNSW) for memory._recall_candidates.';

-- Every candidate turn with its signals and final score, best first. recall and explain_recall read it.
create or replace function memory._recall_candidates(
    query text, agent_id text, since timestamptz, until timestamptz, source text,
    entities text[], entity_mode text, weights jsonb, query_vector vector
) returns table (
    turn_key bigint, session_key bigint, score double precision, signals double precision[], context jsonb
)
language plpgsql
stable
-- Plans made for each call's values: a cached generic plan cannot tell one agent's filter from another's.
set plan_cache_mode = force_custom_plan
as $$
declare
    v_tenant text := memory.current_tenant();
    v_cfg jsonb := memory._recall_settings(weights);
    v_tsconfig regconfig := (v_cfg ->> 'text_search_config')::regconfig;
    v_candidates integer := (v_cfg ->> 'recall_candidates')::integer;
    v_speakers text [] := memory._query_speakers(query, v_tenant, agent_id);
    v_search_text text := query;
    v_lexemes text [];
    v_tsquery tsquery;
    v_degraded text [] := '{}';
    v_model record;
    v_recall_model text;
    v_vector vector := query_vector;
    v_lex_keys bigint [] := '{}';
    v_lex_chunks integer [] := '{}';
    v_dense_keys bigint [] := '{}';
    v_dense_chunks integer [] := '{}';
    v_session_keys bigint [] := '{}';
    v_session_chunks integer [] := '{}';
    v_exact boolean;
    v_vector_sessions bigint [];
    v_chunks_in_scope double precision;
    v_avg_length double precision;
    v_idf double precision [];
    v_df bigint [];
    v_generating tsquery;
    v_k1 double precision := (v_cfg ->> 'bm25_k1')::double precision;
    v_b double precision := (v_cfg ->> 'bm25_b')::double precision;
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

    -- Speaker names the query mentions are matched as speakers (weight_speaker), so by default they are
    -- left out of what is searched as text and as a vector: indexed text holds no speaker names.
    if (v_cfg ->> 'strip_speaker_names')::boolean and cardinality(v_speakers) > 0 then
        v_search_text := memory._without_names(query, v_speakers);
        if btrim(regexp_replace(v_search_text, '\W', '', 'g')) = '' then
            v_search_text := query;
        end if;
    end if;
    v_lexemes := tsvector_to_array(to_tsvector(v_tsconfig, v_search_text));
    select coalesce(sum(k.chunks), 0), coalesce(sum(k.total_length), 0) / greatest(coalesce(sum(k.chunks), 0), 1)
    into v_chunks_in_scope, v_avg_length
    from memory.corpus as k
    where k.tenant_id = v_tenant and (_recall_candidates.agent_id is null or k.agent_id = _recall_candidates.agent_id);
    select array_agg(ln(1 + (v_chunks_in_scope - coalesce(d.df, 0) + 0.5) / (coalesce(d.df, 0) + 0.5)) order by l.n),
           array_agg(coalesce(d.df, 0) order by l.n)
    into v_idf, v_df
    from unnest(v_lexemes) with ordinality as l (lexeme, n)
    left join lateral (
        select sum(x.chunks) as df from memory.lexicon as x
        where x.tenant_id = v_tenant and x.lexeme = l.lexeme
            and (_recall_candidates.agent_id is null or x.agent_id = _recall_candidates.agent_id)
    ) as d on true;
    if cardinality(v_lexemes) > 0 then
        v_tsquery := array_to_string(array(select quote_literal(l) from unnest(v_lexemes) as l), ' | ')::tsquery;
        -- Terms in more than lexical_max_df chunks of the scope still count in every score, but do not
        -- bring candidates by themselves (the rarest term always does): a word in most chunks would make
        -- the list score nearly every chunk while adding little to any.
        v_generating := array_to_string(array(
            select quote_literal(g.lexeme) from unnest(v_lexemes, v_df) as g (lexeme, df)
            where g.df <= (v_cfg ->> 'lexical_max_df')::bigint
                or g.df = (select min(m) from unnest(v_df) as m)
        ), ' | ')::tsquery;
        select array_agg(b.turn_key), array_agg(b.chunk_no) into v_lex_keys, v_lex_chunks
        from (
            select c.turn_key, c.chunk_no
            from memory.chunks as c
            cross join lateral memory._turn_filter(c.tenant_id, c.turn_key, c.session_key, since, until,
                                                   _recall_candidates.source, entities, entity_mode)
            cross join lateral unnest(c.tsv) as u
            inner join unnest(v_lexemes, v_idf) as q (lexeme, idf) on u.lexeme = q.lexeme
            where c.tenant_id = v_tenant and c.tsv @@ v_generating
                and (_recall_candidates.agent_id is null or c.agent_id = _recall_candidates.agent_id)
            group by c.turn_key, c.chunk_no, c.length
            order by sum(memory._bm25_term(q.idf, cardinality(u.positions), c.length, v_k1, v_b, v_avg_length)) desc,
                     c.turn_key
            limit v_candidates
        ) as b;
    end if;

    -- Vectors: the query embedded in the database (or given), against the model recall may use.
    select * into v_model from memory._embedding_model(v_cfg);
    v_recall_model := memory._recall_model(v_model.model);
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
            v_vector := (memory._embed_texts(array[v_search_text], v_cfg))[1];
        exception when others then
            v_degraded := v_degraded || ('query embedding failed: ' || sqlerrm || ': full-text only');
        end;
    end if;
    if v_vector is not null then
        if query_vector is not null and vector_dims(query_vector) <> (
            select m.dimensions from memory.embedding_models as m where m.model = v_recall_model
        ) then
            raise exception 'agent_memory: query_vector has % dimensions but model % has %', vector_dims(query_vector),
                v_recall_model, (select m.dimensions from memory.embedding_models as m where m.model = v_recall_model);
        end if;
        v_exact := v_chunks_in_scope <= (v_cfg ->> 'exact_search_max_chunks')::bigint;
        if not v_exact then
            perform set_config('hnsw.iterative_scan', 'relaxed_order', true);
            perform set_config('hnsw.ef_search', greatest(40, least(1000, v_candidates))::text, true);
        end if;
        -- The filters' tables are read only when a filter is given: unfiltered, a search reads vectors alone.
        execute memory._nearest_sql(
            'chunk_embeddings', array['turn_key', 'chunk_no'], v_recall_model, vector_dims(v_vector), v_exact,
            case when coalesce(_recall_candidates.agent_id, _recall_candidates.source) is not null
                      or since is not null or until is not null or entities is not null then $filter$
                and exists (
                    select from memory.chunks as c
                    cross join lateral memory._turn_filter(c.tenant_id, c.turn_key, c.session_key, $4, $5, $6, $7, $8)
                    where c.tenant_id = e.tenant_id and c.turn_key = e.turn_key and c.chunk_no = e.chunk_no
                        and ($3 is null or c.agent_id = $3)
                )$filter$
            end
        ) into v_dense_keys, v_dense_chunks
        using v_vector, v_tenant, _recall_candidates.agent_id, since, until, _recall_candidates.source,
              entities, entity_mode, v_candidates;
        execute memory._nearest_sql(
            'session_embeddings', array['session_key'], v_recall_model, vector_dims(v_vector), v_exact,
            case when coalesce(_recall_candidates.agent_id, _recall_candidates.source) is not null then $filter$
                and exists (
                    select from memory.sessions as s
                    where s.tenant_id = e.tenant_id and s.session_key = e.session_key
                        and ($3 is null or s.agent_id = $3) and ($6 is null or s.source = $6)
                )$filter$
            end
        ) into v_vector_sessions
        using v_vector, v_tenant, _recall_candidates.agent_id, since, until, _recall_candidates.source,
              entities, entity_mode, (v_cfg ->> 'session_candidates')::integer;
    end if;

    -- Session lists: the sessions whose summary best matches the query's words and those whose vector is
    -- closest to it; each brings its two chunks closest to the query, so a session found by its summary
    -- or its overall subject takes part even when none of its turns made the lists above.
    select array_agg(x.turn_key), array_agg(x.chunk_no) into v_session_keys, v_session_chunks
    from (
        select distinct best.turn_key, best.chunk_no
        from (
            (
                select m.session_key from memory.summaries as m
                where m.tenant_id = v_tenant and v_tsquery is not null and m.tsv @@ v_tsquery
                    and (coalesce(_recall_candidates.agent_id, _recall_candidates.source) is null or exists (
                        select from memory.sessions as s
                        where s.tenant_id = m.tenant_id and s.session_key = m.session_key
                            and (_recall_candidates.agent_id is null or s.agent_id = _recall_candidates.agent_id)
                            and (_recall_candidates.source is null or s.source = _recall_candidates.source)
                    ))
                order by ts_rank_cd(m.tsv, v_tsquery) desc, m.session_key
                limit (v_cfg ->> 'session_candidates')::integer
            )
            union
            select v.session_key from unnest(v_vector_sessions) as v (session_key)
        ) as found
        cross join lateral (
            select c.turn_key, c.chunk_no from memory.chunks as c
            cross join lateral memory._turn_filter(c.tenant_id, c.turn_key, c.session_key, since, until, null,
                                                   entities, entity_mode)
            left join memory.chunk_embeddings as e
                on c.tenant_id = e.tenant_id and c.turn_key = e.turn_key and c.chunk_no = e.chunk_no
                    and e.model = v_recall_model
            where c.tenant_id = v_tenant and c.session_key = found.session_key
            -- Full-text rank only decides among chunks without a vector (computed for those alone).
            order by e.embedding <=> v_vector nulls last,
                case when e.embedding is null then ts_rank_cd(c.tsv, v_tsquery) end desc nulls last, c.turn_key
            limit 2
        ) as best
    ) as x;

    return query
    with candidate_chunks as (
        select distinct u.turn_key, u.chunk_no
        from unnest(coalesce(v_lex_keys, '{}') || coalesce(v_dense_keys, '{}') || coalesce(v_session_keys, '{}'),
                    coalesce(v_lex_chunks, '{}') || coalesce(v_dense_chunks, '{}') || coalesce(v_session_chunks, '{}'))
            as u (turn_key, chunk_no)
    ),
    chunk_scores as (
        select c.turn_key, c.session_key,
               coalesce((
                   select sum(memory._bm25_term(q.idf, cardinality(u.positions), c.length, v_k1, v_b, v_avg_length))
                   from unnest(c.tsv) as u inner join unnest(v_lexemes, v_idf) as q (lexeme, idf) on u.lexeme = q.lexeme
               ), 0) as bm25,
               (select 1 - (e.embedding <=> v_vector) from memory.chunk_embeddings as e
                where e.tenant_id = c.tenant_id and e.turn_key = c.turn_key and e.chunk_no = c.chunk_no
                    and e.model = v_recall_model) as cosine
        from candidate_chunks as cc
        -- One index probe per candidate (the limit keeps the planner from scanning every chunk instead).
        cross join lateral (
            select * from memory.chunks as x
            where x.tenant_id = v_tenant and x.turn_key = cc.turn_key and x.chunk_no = cc.chunk_no
            limit 1
        ) as c
    ),
    turn_scores as (
        select cs.turn_key, min(cs.session_key) as session_key, max(cs.bm25) as bm25, max(cs.cosine) as cosine
        from chunk_scores as cs group by cs.turn_key
    ),
    ranked as (
        select ts.*,
               rank() over (order by ts.bm25 desc) as lexical_rank,
               rank() over (order by ts.cosine desc nulls last) as dense_rank,
               (ts.bm25 - avg(ts.bm25) over ()) / nullif(stddev_pop(ts.bm25) over (), 0) as lexical_z,
               (ts.cosine - avg(ts.cosine) over ()) / nullif(stddev_pop(ts.cosine) over (), 0) as dense_z
        from turn_scores as ts
    ),
    fused as (
        select r.*,
               case when v_cfg ->> 'fusion' = 'rrf' then
                   (v_cfg ->> 'weight_lexical')::float8 * case when r.bm25 > 0 then 1.0 / ((v_cfg ->> 'rrf_k')::float8 + r.lexical_rank) else 0 end
                   + (v_cfg ->> 'weight_dense')::float8 * case when r.cosine is not null then 1.0 / ((v_cfg ->> 'rrf_k')::float8 + r.dense_rank) else 0 end
               else
                   (v_cfg ->> 'weight_lexical')::float8 * coalesce(r.lexical_z, 0)
                   + (v_cfg ->> 'weight_dense')::float8 * coalesce(r.dense_z, 0)
               end as fused
        from ranked as r
    ),
    -- Per turn, by window functions over the candidates (no self-joins): its session's best fused score,
    -- the better fused score of the turns just before and after it (when they are candidates), and on
    -- the first candidate of each session that session's summary and vector scores, looked up once.
    positioned as (
        select f.*, t.name, t.content, t.created_at, t.trust, t.access_count,
               row_number() over w = 1 as session_row,
               max(f.fused) over (partition by f.session_key) as best,
               greatest(
                   case when lag(t.position) over w = t.position - 1 then lag(f.fused) over w end,
                   case when lead(t.position) over w = t.position + 1 then lead(f.fused) over w end
               ) as neighbor
        from fused as f
        inner join memory.turns as t on t.tenant_id = v_tenant and f.turn_key = t.turn_key
        window w as (partition by f.session_key order by t.position)
    ),
    -- Materialized: its lookups run once, not once for each use in the z-scores below.
    with_session as materialized (
        select p.*, case when p.session_row then coalesce(sm.summary_score, 0) end as summary_score, sm.open_loops,
               sv.cosine as session_cosine
        from positioned as p
        left join lateral (
            select ts_rank_cd(m.tsv, v_tsquery) as summary_score, m.open_loops from memory.summaries as m
            -- Only for a session's first row (the key is null on the others, so the index finds nothing).
            where m.tenant_id = v_tenant and m.session_key = case when p.session_row then p.session_key end
        ) as sm on true
        left join lateral (
            select 1 - (e.embedding <=> v_vector) as cosine from memory.session_embeddings as e
            where e.tenant_id = v_tenant and e.session_key = case when p.session_row then p.session_key end
                and e.model = v_recall_model
        ) as sv on true
    ),
    -- z-scores over the candidate sessions (one row each), on their first rows.
    session_z as (
        select ws.*,
               case when ws.session_row then
                   (ws.summary_score - avg(ws.summary_score) filter (where ws.session_row) over ())
                   / nullif(stddev_pop(ws.summary_score) filter (where ws.session_row) over (), 0)
               end as summary_z_here,
               case when ws.session_row then
                   (ws.session_cosine - avg(ws.session_cosine) filter (where ws.session_row) over ())
                   / nullif(stddev_pop(ws.session_cosine) filter (where ws.session_row) over (), 0)
               end as session_vector_z_here
        from with_session as ws
    ),
    -- ... spread to every candidate of the session.
    scored as (
        select z.*,
               max(z.summary_z_here) over s as summary_z,
               max(z.session_vector_z_here) over s as session_vector_z,
               first_value(z.open_loops) over (s order by z.session_row desc) as session_open_loops
        from session_z as z
        window s as (partition by z.session_key)
    ),
    parts as (
        select sc.*,
               (v_cfg ->> 'weight_session')::float8 * sc.best as p_session,
               (v_cfg ->> 'weight_neighbor')::float8 * coalesce(sc.neighbor, 0) as p_neighbor,
               (v_cfg ->> 'weight_summary')::float8 * coalesce(sc.summary_z, 0) as p_summary,
               (v_cfg ->> 'weight_session_vector')::float8 * coalesce(sc.session_vector_z, 0) as p_session_vector,
               case when sc.name = any(v_speakers) then (v_cfg ->> 'weight_speaker')::float8 else 0 end as p_speaker,
               (v_cfg ->> 'weight_recency')::float8
               * power(0.5, extract(epoch from pg_catalog.now() - sc.created_at) / 86400.0
                            / (v_cfg ->> 'recency_half_life_days')::float8) as p_recency,
               (v_cfg ->> 'weight_access')::float8 * ln(1 + sc.access_count) as p_access,
               case when exists (select from jsonb_array_elements_text(sc.session_open_loops) as o
                                 where strpos(sc.content, o) > 0)
                   then (v_cfg ->> 'weight_open_loop')::float8 else 0 end as p_open_loop,
               (v_cfg ->> 'weight_trust')::float8 * ln(greatest(sc.trust, 1e-6)) as p_trust
        from scored as sc
    )
    select p.turn_key, p.session_key,
           p.fused + p.p_session + p.p_neighbor + p.p_summary + p.p_session_vector + p.p_speaker + p.p_recency
           + p.p_access + p.p_open_loop + p.p_trust as score,
           array[p.bm25, p.lexical_rank, p.lexical_z, p.cosine, case when p.cosine is not null then p.dense_rank end,
                 p.dense_z, p.fused, p.p_session, p.p_neighbor, p.p_summary, p.p_session_vector, p.p_speaker,
                 p.p_recency, p.p_access, p.p_open_loop, p.p_trust],
           jsonb_build_object('model', v_recall_model, 'fusion', v_cfg ->> 'fusion',
                              'speakers_matched', to_jsonb(v_speakers), 'degraded', to_jsonb(v_degraded),
                              'count_access', v_cfg -> 'recall_count_access')
    from parts as p
    order by 3 desc, p.turn_key;
end
$$;

comment on function memory._recall_candidates(text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector)
is 'Internal: every candidate turn of a recall with each signal and the final score.';

-- A candidate's components, from the signals memory._recall_candidates returns: built only for the rows a
-- caller shows (recall's k hits), not for every candidate.
create or replace function memory._components(signals double precision[], context jsonb) returns jsonb
language sql
immutable
as $$
    select jsonb_build_object(
        'lexical', jsonb_build_object('bm25', round(signals[1]::numeric, 6), 'rank', signals[2]::integer,
                                      'z', round(signals[3]::numeric, 6)),
        'dense', jsonb_build_object('cosine', round(signals[4]::numeric, 6), 'rank', signals[5]::integer,
                                    'z', round(signals[6]::numeric, 6), 'model', context -> 'model'),
        'fusion', context -> 'fusion',
        'fused', round(signals[7]::numeric, 6),
        'session', round(signals[8]::numeric, 6),
        'neighbor', round(signals[9]::numeric, 6),
        'summary', round(signals[10]::numeric, 6),
        'session_vector', round(signals[11]::numeric, 6),
        'speaker', round(signals[12]::numeric, 6),
        'recency', round(signals[13]::numeric, 6),
        'access', round(signals[14]::numeric, 6),
        'open_loop', round(signals[15]::numeric, 6),
        'trust', round(signals[16]::numeric, 6),
        'speakers_matched', context -> 'speakers_matched',
        'degraded', context -> 'degraded'
    )
$$;

comment on function memory._components(double precision[], jsonb) is
'Internal: the components object of one recall candidate (each signal''s rank and contribution).';

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
    query_vector vector default null
) returns table (
    session_id text, agent text, turn_id bigint, message_id text, role text, speaker text,
    created_at timestamptz, content text, summary text, score double precision, components jsonb
)
language plpgsql
volatile
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_turns bigint [];
    v_sessions bigint [];
    v_scores double precision [];
    v_components jsonb [];
    v_count_access boolean;
begin
    if k is null or k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', k;
    end if;
    if level not in ('turn', 'session') then
        raise exception 'agent_memory: level must be turn or session, got %', level;
    end if;
    -- Rank once; the hits are kept to return them and, when access counting is on, to count them.
    select array_agg(h.turn_key order by h.score desc, h.turn_key), array_agg(h.session_key order by h.score desc, h.turn_key),
           array_agg(h.score order by h.score desc, h.turn_key),
           array_agg(memory._components(h.signals, h.context) order by h.score desc, h.turn_key),
           bool_or((h.context ->> 'count_access')::boolean)
    into v_turns, v_sessions, v_scores, v_components, v_count_access
    from (
        select c.* from (
            select c.*, row_number() over (partition by c.session_key order by c.score desc, c.turn_key) as in_session
            from memory._recall_candidates(recall.query, recall.agent_id, recall.since, recall.until, recall.source,
                                           recall.entities, recall.entity_mode, recall.weights,
                                           recall.query_vector) as c
        ) as c
        where recall.level = 'turn' or c.in_session = 1
        order by c.score desc, c.turn_key
        limit recall.k
    ) as h;

    return query
    select s.session_id, s.agent_id, t.turn_key, t.message_id, t.role, t.name, t.created_at, t.content,
           m.summary, h.score, h.components
    from unnest(v_turns, v_sessions, v_scores, v_components) with ordinality
        as h (turn_key, session_key, score, components, n)
    inner join memory.turns as t on t.tenant_id = v_tenant and h.turn_key = t.turn_key
    inner join memory.sessions as s on s.tenant_id = v_tenant and h.session_key = s.session_key
    left join memory.summaries as m on m.tenant_id = v_tenant and h.session_key = m.session_key
    order by h.n;

    if v_count_access then
        update memory.turns as t
        set access_count = t.access_count + 1, last_accessed_at = pg_catalog.now()
        where t.tenant_id = v_tenant and t.turn_key = any(v_turns);
    end if;
end
$$;

comment on function memory.recall(
    text, integer, text, timestamptz, timestamptz, text, text, text[], text, jsonb, vector
)
is 'The turns (level turn) or sessions (level session, with their best turn) that best answer a query, best '
'first: hybrid full-text (BM25) and vector search fused with session, neighbour, speaker, summary, recency, '
'access, open-loop and trust signals. Filters: agent_id, since/until (event time), source, entities (any/all). '
'weights: per-call settings, e.g. ''{"weight_dense": 0.5}''. query_vector: for callers that embed themselves. '
'components shows every signal''s rank and contribution.';

create or replace function memory.explain_recall(
    query text,
    agent_id text default null,
    since timestamptz default null,
    until timestamptz default null,
    source text default null,
    entities text[] default null,
    entity_mode text default 'any',
    weights jsonb default null,
    query_vector vector default null
) returns table (
    rank bigint, session_id text, turn_id bigint, speaker text, content text, score double precision,
    lexical_rank integer, dense_rank integer, components jsonb
)
language sql
stable
as $$
    select row_number() over (order by c.score desc, c.turn_key), s.session_id, t.turn_key, t.name, t.content, c.score,
           c.signals[2]::integer, c.signals[5]::integer, memory._components(c.signals, c.context)
    from memory._recall_candidates(query, agent_id, since, until, source, entities, entity_mode, weights,
                                   query_vector) as c
    inner join memory.turns as t on t.tenant_id = memory.current_tenant() and c.turn_key = t.turn_key
    inner join memory.sessions as s on s.tenant_id = memory.current_tenant() and c.session_key = s.session_key
    order by c.score desc, c.turn_key
$$;

comment on function memory.explain_recall(text, text, timestamptz, timestamptz, text, text[], text, jsonb, vector) is
'Every candidate of a recall with its rank in the full-text and vector lists, each signal''s contribution '
'(components) and the final score: what to read to understand and tune ranking.';

-- sql/idempotent/100-feedback.sql
-- Feedback: a helpful or unhelpful verdict on a recalled turn moves its trust, which recall weighs
-- (weight_trust * ln(trust)). Asymmetric by default: one unhelpful verdict halves trust, a helpful
-- one adds 0.1, so a wrong memory sinks fast and a good one rises slowly. Every verdict is kept.
create or replace function memory.feedback(
    turn_id bigint, helpful boolean, query text default null, note text default null
) returns table (feedback_id bigint, trust_before real, trust_after real)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_before real;
    v_after real;
    v_feedback bigint;
begin
    if feedback.helpful is null then
        raise exception 'agent_memory: feedback needs helpful => true or false' using errcode = 'null_value_not_allowed';
    end if;
    select t.trust into v_before from memory.turns as t
    where t.tenant_id = v_tenant and t.turn_key = feedback.turn_id
    for update;
    if not found then
        raise exception 'agent_memory: no turn % in tenant "%"', feedback.turn_id, v_tenant
            using errcode = 'no_data_found';
    end if;
    v_after := case when feedback.helpful
        then least((memory.setting('trust_max') #>> '{}')::real,
                   v_before + (memory.setting('trust_helpful_step') #>> '{}')::real)
        else greatest((memory.setting('trust_min') #>> '{}')::real,
                      v_before * (memory.setting('trust_unhelpful_factor') #>> '{}')::real)
    end;
    -- A verdict never moves trust the other way (a turn above trust_max stays where a DBA put it).
    v_after := case when feedback.helpful then greatest(v_after, v_before) else least(v_after, v_before) end;
    update memory.turns as t set trust = v_after where t.tenant_id = v_tenant and t.turn_key = feedback.turn_id;
    insert into memory.feedback as f (tenant_id, turn_key, helpful, query, note, trust_before, trust_after)
    values (v_tenant, feedback.turn_id, feedback.helpful, feedback.query, feedback.note, v_before, v_after)
    returning f.feedback_id into v_feedback;
    return query select v_feedback, v_before, v_after;
end
$$;

comment on function memory.feedback(bigint, boolean, text, text) is
'Records whether a recalled turn (turn_id from memory.recall) helped, and moves its trust: helpful adds '
'trust_helpful_step (up to trust_max), unhelpful multiplies by trust_unhelpful_factor (down to trust_min). '
'Returns the verdict''s id in memory.feedback (which keeps every verdict) and the trust before and after.';

-- What feedback has done, per turn: a DBA's view of trust.
create or replace view memory.feedback_summary as
select
    f.tenant_id,
    f.turn_key as turn_id,
    s.session_id,
    t.agent_id,
    t.trust,
    count(*) filter (where f.helpful) as helpful,
    count(*) filter (where not f.helpful) as unhelpful,
    max(f.created_at) as last_feedback_at,
    left(t.content, 120) as content
from memory.feedback as f
inner join memory.turns as t on f.tenant_id = t.tenant_id and f.turn_key = t.turn_key
inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
where f.tenant_id = memory.current_tenant()
group by f.tenant_id, f.turn_key, s.session_id, t.agent_id, t.trust, t.content;

comment on view memory.feedback_summary is
'Per judged turn of this tenant: helpful and unhelpful counts, the trust it has now, the last verdict.';

-- sql/idempotent/110-remember.sql
-- Remembered facts: what an agent (or its user) asks to keep, stored as turns of one session per
-- agent, 'remembered', so they are enriched, recalled, judged and forgotten like any other turn.
create or replace function memory.remember(
    content text, kind text default 'fact', agent_id text default 'default', metadata jsonb default '{}'
) returns table (turn_id bigint, session_id text, added boolean)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_kinds constant text [] := array['fact', 'preference', 'rule', 'decision', 'event', 'observation', 'skill'];
    v_text text := btrim(remember.content);
    v_id text;
    v_added integer;
begin
    if v_text is null or v_text = '' then
        raise exception 'agent_memory: remember needs some content' using errcode = 'invalid_parameter_value';
    end if;
    if remember.kind is null or not remember.kind = any (v_kinds) then
        raise exception 'agent_memory: remember kind must be one of %, got %', array_to_string(v_kinds, ', '),
            coalesce(remember.kind, 'null') using errcode = 'invalid_parameter_value';
    end if;
    if remember.metadata is null or jsonb_typeof(remember.metadata) <> 'object' then
        raise exception 'agent_memory: remember metadata must be a JSON object' using errcode = 'invalid_parameter_value';
    end if;
    -- The same text remembered twice is one turn: its id is its hash.
    v_id := 'remembered:' || encode(sha256(convert_to(v_text, 'UTF8')), 'hex');
    select c.turns_added into v_added
    from memory.commit(
        'remembered',
        json_build_array(json_build_object(
            'role', 'user', 'content', v_text, 'id', v_id,
            'metadata', remember.metadata || jsonb_build_object('kind', remember.kind)
        )),
        agent_id => remember.agent_id, source => 'remember'
    ) as c;
    return query
    select t.turn_key, 'remembered'::text, v_added > 0
    from memory.turns as t
    inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
    where s.tenant_id = memory.current_tenant() and s.agent_id = remember.agent_id
        and s.session_id = 'remembered' and t.message_id = v_id;
end
$$;

comment on function memory.remember(text, text, text, jsonb) is
'Keeps a fact, preference, rule, decision, event, observation or skill for an agent: a turn of its session '
'''remembered'' (enriched, recalled, judged and forgotten like any turn). Remembering the same text again '
'adds nothing. Returns the turn_id and whether it was new.';

-- sql/idempotent/120-bootstrap.sql
-- Bootstrap and task context: what an agent should know, within a character budget, when a new
-- conversation starts (bootstrap) or for a task at hand (context_for_task).

-- A character budget given by a caller: null (the setting's default) or at least 1.
create or replace function memory._check_budget(max_chars integer) returns void
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

comment on function memory._check_budget(integer) is 'Internal: rejects a character budget below 1.';

-- Bootstrap, in order until the budget is spent: remembered facts (most trusted, then newest), the open
-- loops and decisions of the most recent sessions, then those sessions' summaries.
create or replace function memory.bootstrap(
    agent_id text default null, max_chars integer default null, sessions integer default 5
) returns table (section text, session_id text, at timestamptz, content text)
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    perform memory._check_budget(bootstrap.max_chars);
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
        select 1 as priority, 'remembered' as section, s.session_id, t.created_at as at, t.content,
               row_number() over (order by t.trust desc, t.created_at desc, t.turn_key desc) as n
        from memory.sessions as s
        inner join memory.turns as t on s.tenant_id = t.tenant_id and s.session_key = t.session_key
        where s.tenant_id = memory.current_tenant() and s.session_id = 'remembered'
            and (bootstrap.agent_id is null or s.agent_id = bootstrap.agent_id)
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
'(default: setting bootstrap_max_chars): remembered facts, then the open loops, decisions and summaries of '
'the most recent sessions. Stops at the first item that would overflow the budget.';

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
    perform memory._check_budget(context_for_task.max_chars);
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

-- sql/idempotent/130-lifecycle.sql
-- Forgetting and exporting sessions. forget() removes a session and everything derived from it (turns,
-- chunks, vectors, summary, jobs, feedback; full-text statistics and speakers follow) in one transaction.
-- export() gives sessions back in the shape memory.commit takes, so an export re-imports idempotently.
create or replace function memory.forget(session_id text, agent_id text default 'default')
returns table (session_key bigint, turns_removed integer, chunks_removed integer)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_tenant text := memory.current_tenant();
    v_session bigint := memory._session_key(forget.session_id, forget.agent_id);
    v_turns integer;
    v_chunks integer;
    v_names text [];
begin
    select count(*), coalesce(array_agg(distinct t.name) filter (where t.name is not null), '{}')
    into v_turns, v_names
    from memory.turns as t where t.tenant_id = v_tenant and t.session_key = v_session;
    select count(*) into v_chunks from memory.chunks as c where c.tenant_id = v_tenant and c.session_key = v_session;
    -- Turns, chunks, vectors, summary, jobs and feedback go with the session (foreign keys cascade).
    delete from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session;
    delete from memory.speakers as p
    where p.tenant_id = v_tenant and p.agent_id = forget.agent_id and p.name = any (v_names)
        and not exists (
            select from memory.turns as t
            where t.tenant_id = v_tenant and t.agent_id = p.agent_id and t.name = p.name
        );
    return query select v_session, v_turns, v_chunks;
end
$$;

comment on function memory.forget(text, text) is
'Removes a session of an agent and everything derived from it (turns, chunks, vectors, summary, jobs, '
'feedback, full-text statistics, speakers no other turn has) in one transaction. Returns what was removed.';

create or replace function memory.export(agent_id text default null, session_id text default null)
returns table (agent_id text, session_id text, session jsonb)
language sql
stable
as $$
    select s.agent_id, s.session_id,
           jsonb_strip_nulls(jsonb_build_object(
               'agent_id', s.agent_id, 'session_id', s.session_id, 'source', s.source, 'model', s.model,
               'started_at', s.started_at, 'tokens_in', s.tokens_in, 'tokens_out', s.tokens_out,
               'metadata', s.metadata,
               'summary', (select m.summary from memory.summaries as m
                           where m.tenant_id = s.tenant_id and m.session_key = s.session_key and m.method = 'caller'),
               'messages', (
                   select coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                       'id', t.message_id, 'role', t.role, 'name', t.name, 'content', t.content,
                       'tool_calls', t.tool_calls, 'tool_call_id', t.tool_call_id, 'tokens', t.tokens,
                       'metadata', nullif(t.metadata, '{}'), 'created_at', t.created_at
                   )) order by t.position), '[]')
                   from memory.turns as t
                   where t.tenant_id = s.tenant_id and t.session_key = s.session_key
               )
           ))
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

-- sql/idempotent/140-stats.sql
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
                on c.tenant_id = e.tenant_id and c.turn_key = e.turn_key and c.chunk_no = e.chunk_no
            where c.tenant_id = memory.current_tenant() and c.agent_id = a.agent_id
                and e.model = memory.recall_model()),
           (select count(*) from memory.summaries as m
            inner join memory.sessions as s on m.tenant_id = s.tenant_id and m.session_key = s.session_key
            where s.tenant_id = memory.current_tenant() and s.agent_id = a.agent_id),
           t.remembered,
           (select count(*) from memory.feedback as f
            inner join memory.turns as u on f.tenant_id = u.tenant_id and f.turn_key = u.turn_key
            where f.tenant_id = memory.current_tenant() and u.agent_id = a.agent_id),
           j.pending, j.dead,
           t.first_at, t.last_at
    from agents as a
    cross join lateral (
        select count(*) as turns, min(u.created_at) as first_at, max(u.created_at) as last_at,
               count(*) filter (where s.session_id = 'remembered') as remembered
        from memory.turns as u
        inner join memory.sessions as s on u.tenant_id = s.tenant_id and u.session_key = s.session_key
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
'recall model, summaries, remembered facts, feedback verdicts, pending and dead enrichment jobs, first and '
'last turn time.';

-- sql/tail.sql
-- Runs last in every install and upgrade script.

-- Pin every function of the extension to a safe search_path: pg_catalog, the schema pgvector was
-- installed in (its types and operators), pg_temp last. Bodies name our own objects as memory.x.
-- Procedures are left out: one with a SET clause cannot commit; theirs qualify every name instead.
-- So are the few `language sql` expressions that recall inlines into its queries (a SET clause would
-- stop the planner from inlining them); they name tables as memory.x and call operators of pg_catalog.
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
        inner join pg_catalog.pg_depend as d
            on d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e'
        inner join pg_catalog.pg_extension as e on d.refobjid = e.oid
        where e.extname = 'agent_memory' and p.prokind <> 'p'
            and p.oid <> all(array[
                'memory._bm25_term(float8, integer, integer, float8, float8, float8)'::regprocedure,
                'memory._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, text[], text)'::regprocedure
            ])
    loop
        execute format(
            'alter function %s set search_path = pg_catalog, %I, pg_temp', v_function, v_vector_schema
        );
    end loop;
end
$pin$;
