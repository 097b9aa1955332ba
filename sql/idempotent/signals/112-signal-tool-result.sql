-- Recall signal "tool_result" (boost stage): -1 for a tool's output (a turn of role tool), 0 for what
-- people and the assistant said. Tool output is indexed (commands, errors, file contents are worth
-- finding), and its weight says how far below a conversation turn of the same relevance it ranks; at 0
-- it ranks as one.
select memory_internal._define_feature(
    'role', 'chunk', 'text',
    $feature$t.role$feature$,
    'The turn''s role (user, assistant, system, tool).',
    builtin => true
);

create or replace function memory_internal.signal_tool_result(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $$
    select case when (c).role = 'tool' then -1.0 else 0.0 end
$$;

select memory_internal._define_builtin_signal(
    'tool_result', 'boost', 'memory_internal.signal_tool_result(memory.recall_candidate, jsonb)', 0.3,
    '-1 for a tool''s output (role tool), 0 for other turns: how far below a conversation turn of the same '
    || 'relevance tool output ranks.'
);
