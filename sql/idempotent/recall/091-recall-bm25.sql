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
