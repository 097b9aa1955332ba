-- Recall signal "tier" (boost stage): 1 for a hot session or memory, 0.5 for warm, 0 for cold (cold ones
-- take part only when recall's tiers include cold).
select memory_internal._define_feature(
    'tier', 'turn', 'text',
    $feature$coalesce(tm.tier, s.tier)$feature$,
    'The tier of the memory the turn carries, else of its session.',
    builtin => true
);

create or replace function memory_internal.signal_tier(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case (c).tier when 'hot' then 1 when 'warm' then 0.5 else 0 end::double precision
$$;

select memory_internal._define_builtin_signal(
    'tier', 'boost', 'memory_internal.signal_tier(memory.recall_candidate, jsonb)', 0.1,
    'The tier of the hit''s session or memory: 1 hot, 0.5 warm, 0 cold.'
);
