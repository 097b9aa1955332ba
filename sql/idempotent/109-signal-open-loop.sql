-- Recall signal "open_loop" (boost stage): 1 when the turn holds an open loop of its session's summary
-- (an unanswered question, a to-do).
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
