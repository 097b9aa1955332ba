-- Recall signal "summary" (boost stage): Full-text match of the turn's session summary (z-score over
-- the candidate sessions).
create or replace function memory_internal.signal_summary(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).summary_z, 0)
$$;

select memory_internal._define_builtin_signal(
    'summary', 'boost', 'memory_internal.signal_summary(memory.recall_candidate, jsonb)', 0.1,
    'Full-text match of the turn''s session summary (z-score over the candidate sessions).'
);
