-- Recall signal "period" (boost stage): 1 for a turn said within the period of time the query names
-- ("in October 2023", "on 3 May", "last week"), halving every period_half_life_days before or after it;
-- 0 when the query names no period. (Past 1,000 half-lives the value stays 0.5 ^ 1000, not an underflow.)
select memory_internal._define_feature(
    'days_from_period', 'turn', 'double precision',
    $feature$case when (r.query).period is not null then
        extract(epoch from greatest(lower((r.query).period) - d.created_at, d.created_at - upper((r.query).period),
                                    interval '0')) / 86400.0
    end$feature$,
    'Days between the turn and the period of time the query names (0 inside it; null when it names '
    || 'none).',
    builtin => true
);

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
