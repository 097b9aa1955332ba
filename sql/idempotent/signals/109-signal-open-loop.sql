-- Recall signal "open_loop" (boost stage): 1 when the turn holds an open loop of its session's summary
-- (an unanswered question, a to-do).
select memory_internal._define_feature(
    'holds_open_loop', 'turn', 'boolean',
    $feature$exists (
        select from memory.summaries as m
        cross join lateral jsonb_array_elements_text(m.open_loops) as o (open_loop)
        where m.tenant_id = r.tenant and m.session_key = d.session_key and strpos(t.content, o.open_loop) > 0
    )$feature$,
    'Whether the turn holds an open loop of its session''s summary.',
    builtin => true
);

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
