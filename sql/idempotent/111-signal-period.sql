-- Recall signal "period" (boost stage): 1 for a turn said within the period of time the query names
-- ("in October 2023", "on 3 May", "last week"), halving every period_half_life_days before or after it;
-- 0 when the query names no period. (Past 1,000 half-lives the value stays 0.5 ^ 1000, not an underflow.)
create or replace function memory_internal.signal_period(c memory.recall_candidate, s jsonb) returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).days_from_period is null then 0
                else power(0.5, least((c).days_from_period / (s ->> 'period_half_life_days')::float8, 1000)) end
$$;

select memory_internal._define_builtin_signal(
    'period', 'boost', 'memory_internal.signal_period(memory.recall_candidate, jsonb)', 6,
    '1 for a turn said within the period of time the query names ("in October 2023", "on 3 May", "last '
    'week"), halving every period_half_life_days before or after it; 0 when the query names none.'
);
