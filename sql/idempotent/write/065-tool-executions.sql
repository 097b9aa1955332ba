-- Tool executions: each tool result of a conversation with the call it answers (pg-memory's tool_executions).
-- A tool result is a turn of role tool; its call is the tool_calls entry of an earlier turn of its session
-- with the same id; its status (success, error, timeout) and duration in milliseconds are what the message
-- said (memory.commit keeps them in the turn's metadata as tool_status and duration_ms).

-- The tool_calls entry a tool result answers: the latest earlier turn of its session with a call of its id.
create or replace function memory_internal._tool_result_call(
    tenant text, session_key bigint, result_position integer, tool_call_id text
) returns jsonb
language sql
stable
as $$
    select e.call
    from memory.turns as t
    cross join lateral jsonb_array_elements(t.tool_calls) as e (call)
    where
        t.tenant_id = tenant and t.session_key = _tool_result_call.session_key and t.position < result_position
        and jsonb_typeof(t.tool_calls) = 'array' and e.call ->> 'id' = _tool_result_call.tool_call_id
    order by t.position desc
    limit 1
$$;

comment on function memory_internal._tool_result_call(text, bigint, integer, text) is
'Internal: the tool_calls entry a tool result answers (by the call''s id), or null.';

-- A tool result's tool: its call's name, else the tool the importer kept in its metadata, else its speaker.
-- A call is in one of the shapes callers send: OpenAI's {function: {name, arguments}}, or {name, arguments | input}.
create or replace function memory_internal._tool_name(call jsonb, metadata jsonb, speaker text) returns text
language sql
immutable parallel safe
as $$ select coalesce(call #>> '{function,name}', call ->> 'name', metadata ->> 'tool', speaker) $$;

comment on function memory_internal._tool_name(jsonb, jsonb, text) is
'Internal: the tool a tool result comes from (its call''s name, else metadata.tool, else its speaker).';

-- Tenants read this view themselves (as invoker): it calls no internal function, so it spells out what
-- memory_internal._tool_result_call and _tool_name do for recall's tool filter.
create or replace view memory.tool_executions as
select
    s.session_id,
    r.agent_id,
    c.turn_id as call_turn_id,
    r.turn_id as result_turn_id,
    r.tool_call_id,
    coalesce(c.call #>> '{function,name}', c.call ->> 'name', r.metadata ->> 'tool', r.speaker) as tool,
    coalesce(c.call #> '{function,arguments}', c.call -> 'arguments', c.call -> 'input') as arguments,
    r.content as result,
    r.metadata ->> 'tool_status' as status,
    case when jsonb_typeof(r.metadata -> 'duration_ms') = 'number' then (r.metadata ->> 'duration_ms')::bigint end
        as duration_ms,
    coalesce(c.created_at, r.created_at) as called_at,
    r.created_at as answered_at
from memory.turns as r
inner join memory.sessions as s on r.tenant_id = s.tenant_id and r.session_key = s.session_key
left join lateral (
    select
        t.turn_id,
        t.created_at,
        e.call
    from memory.turns as t
    cross join lateral jsonb_array_elements(t.tool_calls) as e (call)
    where
        t.tenant_id = r.tenant_id and t.session_key = r.session_key and t.position < r.position
        and jsonb_typeof(t.tool_calls) = 'array' and e.call ->> 'id' = r.tool_call_id
    order by t.position desc
    limit 1
) as c on true
where r.tenant_id = (select memory.current_tenant()) and r.role = 'tool';

drop function if exists memory_internal._tool_call_name(jsonb);
