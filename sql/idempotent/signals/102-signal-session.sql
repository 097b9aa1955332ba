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
