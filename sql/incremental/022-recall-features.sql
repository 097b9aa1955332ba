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
