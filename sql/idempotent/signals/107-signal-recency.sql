-- Recall signal "recency" (boost stage): 0.5 ^ (age in days / recency_half_life_days): 1 for a turn
-- said now, 0.5 one half-life ago.
select memory_internal._define_feature(
    'age_days', 'turn', 'double precision',
    $feature$extract(epoch from pg_catalog.now() - d.created_at) / 86400.0$feature$,
    'Days since the turn was said.',
    builtin => true
);

create or replace function memory_internal.signal_recency(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select power(0.5, least((c).age_days / (s ->> 'recency_half_life_days')::float8, 1000))
$$;

select memory_internal._define_builtin_signal(
    'recency', 'boost', 'memory_internal.signal_recency(memory.recall_candidate, jsonb)', 0,
    '0.5 ^ (age in days / recency_half_life_days): 1 for a turn said now, 0.5 one half-life ago.'
);
