-- The last turn of a session taken back: memory.pop_turn removes it with everything derived from it, as
-- forget_range removes turns, and returns it as the message commit took. A conversation store that undoes
-- its last item (the OpenAI Agents SDK's Session.pop_item) calls it; the session stays, so committing to it
-- again needs no allow_forgotten.
create or replace function memory.pop_turn(session_id text, agent_id text default null) returns jsonb
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_session bigint;
    v_turn memory.turns;
begin
    begin
        v_session := memory_internal._session_key(pop_turn.session_id, pop_turn.agent_id);
    exception when no_data_found then
        return null;
    end;
    if exists (
        select from memory.sessions as s where s.tenant_id = v_tenant and s.session_key = v_session and s.source = 'remember'
    ) then
        raise exception 'agent_memory: session "%" holds the words of curated memories, not a conversation',
            pop_turn.session_id using errcode = 'invalid_parameter_value',
            hint = 'resolve or retract the memory instead (memory.resolve, memory.retract)';
    end if;
    if cardinality(memory_internal._lock_sessions(v_tenant, array[v_session])) = 0 then
        return null;
    end if;
    select * into v_turn from memory.turns as t
    where t.tenant_id = v_tenant and t.session_key = v_session
    order by t.position desc
    limit 1;
    if v_turn.turn_id is null then
        return null;
    end if;
    perform memory_internal._forget_sessions(
        v_tenant, '{}',
        jsonb_build_object('agent_id', v_turn.agent_id, 'session_id', pop_turn.session_id, 'last_turn', true),
        array[v_turn.turn_id]
    );
    return memory_internal._message_json(v_turn);
end
$$;

comment on function memory.pop_turn(text, text) is
'Removes the last turn of a session (of agent_id, or of whichever agent has it) with everything derived '
'from it, as memory.forget_range removes turns (one tombstone; the session is queued to be summarized and '
'indexed again), and returns it as the message memory.commit takes (as memory.export gives it). The session '
'stays, even empty: committing to it again is not refused. Null when the session does not exist or has no '
'turn. The session ''remembered'' (the words of curated memories) is refused: resolve or retract a memory instead.';
