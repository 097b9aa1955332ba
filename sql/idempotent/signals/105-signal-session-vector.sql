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
