-- Recall signal "importance" (boost stage): the importance (0-1) of the memory a hit carries, 0 for a turn
-- that carries none. A curated claim outranks chat of the same relevance by weight x importance.
select memory_internal._define_feature(
    'memory_importance', 'memory', 'double precision',
    $feature$tm.importance$feature$,
    'The importance (0-1) of the curated memory the turn carries.',
    builtin => true
);

create or replace function memory_internal.signal_importance(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select coalesce((c).memory_importance, 0)
$$;

select memory_internal._define_builtin_signal(
    'importance', 'boost', 'memory_internal.signal_importance(memory.recall_candidate, jsonb)', 1,
    'The importance (0-1) of the memory a hit carries; 0 for a turn that carries none.'
);
