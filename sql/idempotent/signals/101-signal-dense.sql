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
