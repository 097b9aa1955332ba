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
