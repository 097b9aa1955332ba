-- Entity state read from conversations (setting entity_state_extraction): enrichment reads the state
-- changes a session's users state (agent_memory_db.state_changes: "Ana now leads billing.", "The deploy
-- freeze is over.") into memory.entity_states, each holding from when its turn was said, with the turn as
-- evidence and origin patterns or llm, active or pending review as extracted_memory_status says.

-- The state changes of a session's user turns: by the patterns (answer null), or from the claims of the llm
-- extractor's answer.
create or replace function memory_internal._propose_states(turns jsonb, answer text)
returns table (turn_id bigint, entity text, attribute text, value text)
language plpython3u
stable
as $$
@load_python@
import json
from agent_memory_db.state_changes import of_session
try:
    changes = of_session(json.loads(turns), answer)
except ValueError as exc:
    plpy.error("agent_memory: llm memory extraction failed: %s" % exc)
return [(c.turn_id, c.entity, c.attribute, c.value) for c in changes]
$$;

comment on function memory_internal._propose_states(jsonb, text) is
'Internal: the entity state changes a session''s user turns state (turn, entity, attribute, value), by the '
'patterns or from the llm memory extractor''s claims.';

-- The agent of a session enrichment extracts from (memories, entity states), after checking that it runs
-- as the session's tenant.
create or replace function memory_internal._extraction_agent(tenant text, session bigint, what text) returns text
language plpgsql
stable
as $$
declare
    v_tenant text := memory.current_tenant();
begin
    if v_tenant is distinct from tenant then
        raise exception 'agent_memory: extracting % of tenant "%" as tenant "%"', what, tenant, v_tenant;
    end if;
    return (select s.agent_id from memory.sessions as s where s.tenant_id = tenant and s.session_key = session);
end
$$;

comment on function memory_internal._extraction_agent(text, bigint, text) is
'Internal: the agent of a session enrichment extracts from, or an error when it runs as another tenant.';

-- A session's state changes written in the agent's scope, each from when its turn was said, in the order
-- they were said; one proposed from a turn once (kept, pending or rejected), or one whose instant already has
-- a value of the attribute, is not proposed again.
create or replace function memory_internal._extract_states(
    tenant text, session bigint, turns jsonb, settings jsonb, answer text
) returns void
language plpgsql
as $$
declare
    v_agent text := memory_internal._extraction_agent(tenant, session, 'entity states');
    v_change record;
begin
    for v_change in
        select p.turn_id, p.entity, p.attribute, p.value, t.created_at as said_at
        from memory_internal._propose_states(turns, answer) as p
        inner join memory.turns as t on t.tenant_id = tenant and t.turn_id = p.turn_id
        where not exists (
            select from memory.entity_states as x
            inner join memory.entities as e on e.tenant_id = x.tenant_id and e.entity_id = x.entity_id
            where x.tenant_id = tenant and x.attribute = p.attribute and e.agent_id = memory_internal._entity_owner(v_agent)
                and e.normalized = memory.normalize_entity(p.entity)
                -- (a later turn said at the same instant corrected the value: it stays)
                and (x.evidence_turn_id = p.turn_id or x.valid_from = t.created_at)
        )
        order by t.created_at, t.position
    loop
        perform memory_internal._set_entity_state(
            v_change.entity, v_change.attribute, to_jsonb(v_change.value), v_change.said_at, v_agent, 'other',
            status => case when settings ->> 'extracted_memory_status' = 'pending' then 'pending' else 'active' end,
            origin => settings ->> 'memory_extractor', evidence => v_change.turn_id
        );
    end loop;
end
$$;

comment on function memory_internal._extract_states(text, bigint, jsonb, jsonb, text) is
'Internal: writes the entity state changes a session''s users state in its agent''s scope, each from when '
'it was said with its turn as evidence (status from extracted_memory_status; origin patterns or llm).';
