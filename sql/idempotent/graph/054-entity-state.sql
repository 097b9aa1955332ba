-- Entity state over time: an attribute's value holds from valid_from until the next value's valid_from.
-- A write places its value in the history by valid_from, so a backdated write closes the value before it
-- and is itself closed by the value after it; at most one value per attribute is current (valid_to null).

-- Writes one value into the history; the row written.
create or replace function memory_internal._set_entity_state(
    entity text, attribute text, value jsonb, valid_from timestamptz, agent_id text, type text
) returns setof memory.entity_states
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_entity bigint;
    v_next timestamptz;
    v_state bigint;
begin
    if _set_entity_state.attribute is null or btrim(_set_entity_state.attribute) = '' then
        raise exception 'agent_memory: set_entity_state needs an attribute' using errcode = 'invalid_parameter_value';
    end if;
    if _set_entity_state.agent_id is null then
        raise exception 'agent_memory: set_entity_state needs an agent_id (the scope of the entity)'
            using errcode = 'invalid_parameter_value';
    end if;
    if _set_entity_state.value is null or _set_entity_state.valid_from is null then
        raise exception 'agent_memory: set_entity_state needs a value and valid_from (use jsonb ''null'' for none)'
            using errcode = 'invalid_parameter_value';
    end if;
    perform memory_internal._check_graph_query(_set_entity_state.type, 1, 1);
    v_entity := memory_internal._entity_id(v_tenant, _set_entity_state.entity, _set_entity_state.agent_id,
                                            _set_entity_state.type);
    -- Writers of one entity's state take turns.
    perform from memory.entities as e where e.tenant_id = v_tenant and e.entity_id = v_entity for update;

    -- A value at the same instant is a correction of it.
    update memory.entity_states as s set value = _set_entity_state.value, recorded_at = pg_catalog.now(),
        recorded_by = session_user
    where s.tenant_id = v_tenant and s.entity_id = v_entity and s.attribute = _set_entity_state.attribute
        and s.valid_from = _set_entity_state.valid_from
    returning s.state_id into v_state;
    if v_state is null then
        select min(s.valid_from) into v_next from memory.entity_states as s
        where s.tenant_id = v_tenant and s.entity_id = v_entity and s.attribute = _set_entity_state.attribute
            and s.valid_from > _set_entity_state.valid_from;
        update memory.entity_states as s set valid_to = _set_entity_state.valid_from
        where s.tenant_id = v_tenant and s.entity_id = v_entity and s.attribute = _set_entity_state.attribute
            and s.valid_from < _set_entity_state.valid_from
            and (s.valid_to is null or s.valid_to > _set_entity_state.valid_from);
        insert into memory.entity_states (tenant_id, entity_id, attribute, value, valid_from, valid_to)
        values (v_tenant, v_entity, _set_entity_state.attribute, _set_entity_state.value, _set_entity_state.valid_from,
                v_next)
        returning state_id into v_state;
    end if;
    return query select s.* from memory.entity_states as s where s.tenant_id = v_tenant and s.state_id = v_state;
end
$$;

comment on function memory_internal._set_entity_state(text, text, jsonb, timestamptz, text, text) is
'Internal: writes one value of an entity''s attribute into its history; the row written.';

create or replace function memory.set_entity_state(
    entity text, attribute text, value jsonb, valid_from timestamptz default pg_catalog.now(),
    agent_id text default 'default', type text default 'other'
) returns table (
    state_id bigint, entity_id bigint, attribute text, value jsonb, valid_from timestamptz, valid_to timestamptz
)
language sql
as $$
    select s.state_id, s.entity_id, s.attribute, s.value, s.valid_from, s.valid_to
    from memory_internal._set_entity_state(entity, attribute, value, valid_from, agent_id, type) as s
$$;

comment on function memory.set_entity_state(text, text, jsonb, timestamptz, text, text) is
'Records that an entity''s attribute has a value from valid_from (default now) on, in the agent''s scope '
'(the entity is created, of the given type, if new). The value before it ends there; a backdated write '
'ends where the next value begins; a write at the same valid_from corrects that value. At most one value '
'per attribute is current (valid_to null). Returns the value as written, with the period it holds.';

create or replace function memory.entity_state(
    entity text, as_of timestamptz default null, attribute text default null, agent_id text default null
) returns table (
    entity_id bigint, agent_id text, attribute text, value jsonb, valid_from timestamptz, valid_to timestamptz,
    recorded_at timestamptz
)
language sql
stable
as $$
    select s.entity_id, e.agent_id, s.attribute, s.value, s.valid_from, s.valid_to, s.recorded_at
    from memory.entity_states as s
    inner join memory.entities as e on e.tenant_id = s.tenant_id and e.entity_id = s.entity_id
    where s.tenant_id = (select memory.current_tenant())
        and s.entity_id = any(memory_internal._entity_ids(entity_state.entity, entity_state.agent_id))
        and (entity_state.attribute is null or s.attribute = entity_state.attribute)
        and s.valid_from <= coalesce(entity_state.as_of, pg_catalog.now())
        and (s.valid_to is null or s.valid_to > coalesce(entity_state.as_of, pg_catalog.now()))
    order by s.attribute, e.agent_id
$$;

comment on function memory.entity_state(text, timestamptz, text, text) is
'An entity''s attribute values that hold now (a value set for later is not yet current), or those that held '
'at as_of; one attribute or all; one '
'agent''s scope or (agent_id null) every agent''s.';

create or replace function memory.entity_history(entity text, attribute text, agent_id text default null)
returns table (
    entity_id bigint, agent_id text, value jsonb, valid_from timestamptz, valid_to timestamptz,
    recorded_at timestamptz, recorded_by text
)
language sql
stable
as $$
    select s.entity_id, e.agent_id, s.value, s.valid_from, s.valid_to, s.recorded_at, s.recorded_by
    from memory.entity_states as s
    inner join memory.entities as e on e.tenant_id = s.tenant_id and e.entity_id = s.entity_id
    where s.tenant_id = (select memory.current_tenant())
        and s.entity_id = any(memory_internal._entity_ids(entity_history.entity, entity_history.agent_id))
        and s.attribute = entity_history.attribute
    order by e.agent_id, s.valid_from
$$;

comment on function memory.entity_history(text, text, text) is
'Every value an entity''s attribute has had, oldest first, with the period it held and who recorded it.';
