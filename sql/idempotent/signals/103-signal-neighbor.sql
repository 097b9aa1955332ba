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
