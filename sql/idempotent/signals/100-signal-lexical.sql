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
