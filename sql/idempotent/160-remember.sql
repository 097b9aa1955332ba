-- Remembered facts: what an agent (or its user) asks to keep, stored as turns of one session per
-- agent, 'remembered', so they are enriched, recalled, judged and forgotten like any other turn. A fact
-- is enriched as it is remembered (enrich => 'now'), so the next recall, even in the same transaction,
-- finds it.
-- The turn of one remembered fact, committed to the agent's session 'remembered'; how many were added.
create or replace function memory_internal._remember_turn(
    content text, message_id text, kind text, agent_id text, metadata jsonb, enrich text
) returns integer
language sql
as $$
    select c.turns_added
    from memory.commit(
        'remembered',
        json_build_array(json_build_object(
            'role', 'user', 'content', content, 'id', message_id,
            'metadata', metadata || jsonb_build_object('kind', kind)
        )),
        agent_id => agent_id, source => 'remember', enrich => enrich
    ) as c
$$;

comment on function memory_internal._remember_turn(text, text, text, text, jsonb, text) is
'Internal: commits one remembered fact to the agent''s session ''remembered''; the turns added (0 or 1).';

create or replace function memory.remember(
    content text, kind text default 'fact', agent_id text default 'default', metadata jsonb default '{}',
    enrich text default 'now'
) returns table (turn_id bigint, session_id text, added boolean)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_kinds constant text [] := array['fact', 'preference', 'rule', 'decision', 'event', 'observation', 'skill'];
    v_text text := btrim(remember.content);
    v_id text;
    v_added integer;
begin
    if v_text is null or v_text = '' then
        raise exception 'agent_memory: remember needs some content' using errcode = 'invalid_parameter_value';
    end if;
    if remember.kind is null or not remember.kind = any (v_kinds) then
        raise exception 'agent_memory: remember kind must be one of %, got %', array_to_string(v_kinds, ', '),
            coalesce(remember.kind, 'null') using errcode = 'invalid_parameter_value';
    end if;
    if remember.metadata is null or jsonb_typeof(remember.metadata) <> 'object' then
        raise exception 'agent_memory: remember metadata must be a JSON object' using errcode = 'invalid_parameter_value';
    end if;
    -- The same text remembered twice is one turn: its id is its hash.
    v_id := 'remembered:' || encode(sha256(convert_to(v_text, 'UTF8')), 'hex');
    -- Enriched now by default; if that fails (an endpoint down), the fact is kept and queued instead.
    begin
        v_added := memory_internal._remember_turn(v_text, v_id, remember.kind, remember.agent_id, remember.metadata,
                                                  remember.enrich);
    exception when others then
        if remember.enrich is distinct from 'now' then
            raise;
        end if;
        raise notice 'agent_memory: remembered, but enriching it failed (%); it is queued instead', sqlerrm;
        v_added := memory_internal._remember_turn(v_text, v_id, remember.kind, remember.agent_id, remember.metadata,
                                                  'queue');
    end;
    return query
    select t.turn_key, 'remembered'::text, v_added > 0
    from memory.turns as t
    inner join memory.sessions as s on t.tenant_id = s.tenant_id and t.session_key = s.session_key
    where s.tenant_id = memory.current_tenant() and s.agent_id = remember.agent_id
        and s.session_id = 'remembered' and t.message_id = v_id;
end
$$;

comment on function memory.remember(text, text, text, jsonb, text) is
'Keeps a fact, preference, rule, decision, event, observation or skill for an agent: a turn of its session '
'''remembered'' (enriched, recalled, judged and forgotten like any turn). enrich: now (the default: '
'recallable at once, in the same transaction), queue or none. Remembering the same text again adds '
'nothing. Returns the turn_id and whether it was new.';
