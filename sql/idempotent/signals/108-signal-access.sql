-- Recall signal "access" (boost stage): ln(1 + how often recall returned the turn) (counted when
-- recall_count_access is on).
select memory_internal._define_feature(
    'access_count', 'chunk', 'bigint',
    $feature$t.access_count$feature$,
    'How often recall returned the turn (counted when recall_count_access is on).',
    builtin => true
);

create or replace function memory_internal.signal_access(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select ln(1 + (c).access_count)
$$;

select memory_internal._define_builtin_signal(
    'access', 'boost', 'memory_internal.signal_access(memory.recall_candidate, jsonb)', 0,
    'ln(1 + how often recall returned the turn) (counted when recall_count_access is on).'
);
