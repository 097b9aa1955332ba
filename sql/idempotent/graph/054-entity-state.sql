-- Entity state over time: an attribute's value holds from valid_from until the next value's valid_from.
-- A write places its value in the history by valid_from, so a backdated write closes the value before it
-- and is itself closed by the value after it; at most one value per attribute is current (valid_to null).

-- Places one active value of an entity's attribute into its history; the row written.
create or replace function memory_internal._place_entity_state(
    tenant text, entity_id bigint, attribute text, value jsonb, valid_from timestamptz, origin text, evidence bigint
) returns bigint
language plpgsql
as $$
#variable_conflict use_column
declare
    v_next timestamptz;
    v_state bigint;
begin
    -- Writers of one entity's state take turns.
    perform from memory.entities as e where e.tenant_id = tenant and e.entity_id = _place_entity_state.entity_id
    for update;
    -- A value at the same instant is a correction of it.
    update memory.entity_states as s set value = _place_entity_state.value, recorded_at = pg_catalog.now(),
        recorded_by = memory_internal._actor(), origin = _place_entity_state.origin, evidence_turn_id = evidence
    where s.tenant_id = tenant and s.entity_id = _place_entity_state.entity_id and s.status = 'active'
        and s.attribute = _place_entity_state.attribute and s.valid_from = _place_entity_state.valid_from
    returning s.state_id into v_state;
    if v_state is null then
        select min(s.valid_from) into v_next from memory.entity_states as s
        where s.tenant_id = tenant and s.entity_id = _place_entity_state.entity_id and s.status = 'active'
            and s.attribute = _place_entity_state.attribute and s.valid_from > _place_entity_state.valid_from;
        update memory.entity_states as s set valid_to = _place_entity_state.valid_from
        where s.tenant_id = tenant and s.entity_id = _place_entity_state.entity_id and s.status = 'active'
            and s.attribute = _place_entity_state.attribute and s.valid_from < _place_entity_state.valid_from
            and (s.valid_to is null or s.valid_to > _place_entity_state.valid_from);
        insert into memory.entity_states (tenant_id, entity_id, attribute, value, valid_from, valid_to, origin,
                                          evidence_turn_id)
        values (tenant, _place_entity_state.entity_id, _place_entity_state.attribute, _place_entity_state.value,
                _place_entity_state.valid_from, v_next, _place_entity_state.origin, evidence)
        returning state_id into v_state;
    end if;
    return v_state;
end
$$;

comment on function memory_internal._place_entity_state(text, bigint, text, jsonb, timestamptz, text, bigint) is
'Internal: places one active value of an entity''s attribute into its history (ending the value before it, '
'ended by the one after it; a value at the same instant corrects it); the state id.';

-- Writes one value into the history (or, pending, beside it for review); the row written.
drop function if exists memory_internal._set_entity_state(text, text, jsonb, timestamptz, text, text);
create or replace function memory_internal._set_entity_state(
    entity text, attribute text, value jsonb, valid_from timestamptz, agent_id text, type text,
    status text default 'active', origin text default 'caller', evidence bigint default null
) returns setof memory.entity_states
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_entity bigint;
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
    if _set_entity_state.status = 'pending' then
        insert into memory.entity_states (tenant_id, entity_id, attribute, value, valid_from, status, origin,
                                          evidence_turn_id)
        values (v_tenant, v_entity, _set_entity_state.attribute, _set_entity_state.value,
                _set_entity_state.valid_from, 'pending', _set_entity_state.origin, evidence)
        returning state_id into v_state;
    else
        v_state := memory_internal._place_entity_state(v_tenant, v_entity, _set_entity_state.attribute,
                                                       _set_entity_state.value, _set_entity_state.valid_from,
                                                       _set_entity_state.origin, evidence);
    end if;
    return query select s.* from memory.entity_states as s where s.tenant_id = v_tenant and s.state_id = v_state;
end
$$;

comment on function memory_internal._set_entity_state(text, text, jsonb, timestamptz, text, text, text, text, bigint) is
'Internal: writes one value of an entity''s attribute into its history, or (status pending) beside it for '
'review, with how it was found (origin) and the turn it came from; the row written.';

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

create or replace function memory_internal._entity_state(
    tenant text, entity text, as_of timestamptz, attribute_name text, agent text
)
returns table (
    entity_id bigint, agent_id text, attribute text, value jsonb, valid_from timestamptz, valid_to timestamptz,
    recorded_at timestamptz
)
language sql
stable
as $$
    select s.entity_id, e.agent_id, s.attribute, s.value, s.valid_from, s.valid_to, s.recorded_at
    from memory.entity_states as s
    inner join memory.entities as e on e.tenant_id = s.tenant_id and e.entity_id = s.entity_id
    where s.tenant_id = tenant and s.status = 'active'
        and s.entity_id = any(memory_internal._entity_ids(_entity_state.entity, _entity_state.agent))
        and (_entity_state.attribute_name is null or s.attribute = _entity_state.attribute_name)
        and s.valid_from <= coalesce(_entity_state.as_of, pg_catalog.now())
        and (s.valid_to is null or s.valid_to > coalesce(_entity_state.as_of, pg_catalog.now()))
    order by s.attribute, e.agent_id
$$;

comment on function memory_internal._entity_state(text, text, timestamptz, text, text) is
'Internal: memory.entity_state of a tenant (named by value, as Citus routes a statement).';

-- (As memory.stats: the API's names, over a SQL function whose parameters have other names.)
create or replace function memory.entity_state(
    entity text, as_of timestamptz default null, attribute text default null, agent_id text default null
)
returns table (
    entity_id bigint, agent_id text, attribute text, value jsonb, valid_from timestamptz, valid_to timestamptz,
    recorded_at timestamptz
)
language sql
stable
as $$
    select * from memory_internal._entity_state(
        memory.current_tenant(), entity_state.entity, entity_state.as_of, entity_state.attribute, entity_state.agent_id
    )
$$;

comment on function memory.entity_state(text, timestamptz, text, text) is
'An entity''s attribute values that hold now (a value set for later is not yet current), or those that held '
'at as_of; one attribute or all; one '
'agent''s scope or (agent_id null) every agent''s.';

create or replace function memory_internal._entity_history(tenant text, entity text, attribute text, agent text)
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
    where s.tenant_id = tenant and s.status = 'active'
        and s.entity_id = any(memory_internal._entity_ids(_entity_history.entity, _entity_history.agent))
        and s.attribute = _entity_history.attribute
    order by e.agent_id, s.valid_from
$$;

comment on function memory_internal._entity_history(text, text, text, text) is
'Internal: memory.entity_history of a tenant (named by value, as Citus routes a statement).';

-- (As memory.stats: the API's names, over a SQL function whose parameters have other names.)
create or replace function memory.entity_history(entity text, attribute text, agent_id text default null)
returns table (
    entity_id bigint, agent_id text, value jsonb, valid_from timestamptz, valid_to timestamptz,
    recorded_at timestamptz, recorded_by text
)
language sql
stable
as $$
    select * from memory_internal._entity_history(
        memory.current_tenant(), entity_history.entity, entity_history.attribute, entity_history.agent_id
    )
$$;

comment on function memory.entity_history(text, text, text) is
'Every value an entity''s attribute has had, oldest first, with the period it held and who recorded it.';

-- State changes enrichment proposed from conversations for review (status pending: setting
-- extracted_memory_status), oldest first.
create or replace function memory_internal._pending_entity_states(tenant text, agent text)
returns table (
    state_id bigint, entity text, agent_id text, attribute text, value jsonb, valid_from timestamptz, origin text,
    evidence_turn_id bigint
)
language sql
stable
as $$
    select s.state_id, e.name, e.agent_id, s.attribute, s.value, s.valid_from, s.origin, s.evidence_turn_id
    from memory.entity_states as s
    inner join memory.entities as e on e.tenant_id = s.tenant_id and e.entity_id = s.entity_id
    where s.tenant_id = tenant and s.status = 'pending'
        and (_pending_entity_states.agent is null or e.agent_id in (_pending_entity_states.agent, ''))
    order by s.valid_from, s.state_id
$$;

comment on function memory_internal._pending_entity_states(text, text) is
'Internal: memory.pending_entity_states of a tenant (named by value, as Citus routes a statement).';

-- (As memory.stats: the API's names, over a SQL function whose parameters have other names.)
create or replace function memory.pending_entity_states(agent_id text default null)
returns table (
    state_id bigint, entity text, agent_id text, attribute text, value jsonb, valid_from timestamptz, origin text,
    evidence_turn_id bigint
)
language sql
stable
as $$
    select * from memory_internal._pending_entity_states(
        memory.current_tenant(), pending_entity_states.agent_id
    )
$$;

comment on function memory.pending_entity_states(text) is
'The entity state changes enrichment read from conversations that wait for review (extracted_memory_status '
'pending), oldest first, each with the turn it came from: approve with memory.approve_entity_state, reject '
'with memory.reject_entity_state.';

-- The pending state of this tenant with this id, locked, or an error naming why not.
create or replace function memory_internal._pending_state(state_id bigint) returns memory.entity_states
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_state memory.entity_states;
begin
    select * into v_state from memory.entity_states as s
    where s.tenant_id = v_tenant and s.state_id = _pending_state.state_id
    for update;
    if v_state.state_id is null then
        raise exception 'agent_memory: no entity state % in tenant "%"', state_id, v_tenant
            using errcode = 'no_data_found';
    elsif v_state.status <> 'pending' then
        raise exception 'agent_memory: entity state % is % and cannot be reviewed (only pending ones are)', state_id,
            v_state.status using errcode = 'invalid_parameter_value';
    end if;
    return v_state;
end
$$;

comment on function memory_internal._pending_state(bigint) is
'Internal: a pending entity state of the tenant, locked; an error when there is none or it is not pending.';

create or replace function memory.approve_entity_state(state_id bigint) returns table (
    entity_id bigint, attribute text, value jsonb, valid_from timestamptz, valid_to timestamptz
)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_pending memory.entity_states := memory_internal._pending_state(approve_entity_state.state_id);
    v_state bigint;
begin
    delete from memory.entity_states as s where s.tenant_id = v_pending.tenant_id and s.state_id = v_pending.state_id;
    v_state := memory_internal._place_entity_state(v_pending.tenant_id, v_pending.entity_id, v_pending.attribute,
                                                   v_pending.value, v_pending.valid_from, v_pending.origin,
                                                   v_pending.evidence_turn_id);
    return query
    select s.entity_id, s.attribute, s.value, s.valid_from, s.valid_to
    from memory.entity_states as s where s.tenant_id = v_pending.tenant_id and s.state_id = v_state;
end
$$;

comment on function memory.approve_entity_state(bigint) is
'Approves a state change enrichment proposed (memory.pending_entity_states): it takes its place in the '
'attribute''s history from when it was said, as memory.set_entity_state would place it (a new state id). '
'Returns it with the period it holds.';

create or replace function memory.reject_entity_state(state_id bigint) returns void
language plpgsql
as $$
declare
    v_pending memory.entity_states := memory_internal._pending_state(reject_entity_state.state_id);
begin
    update memory.entity_states as s set status = 'rejected'
    where s.tenant_id = v_pending.tenant_id and s.state_id = v_pending.state_id;
end
$$;

comment on function memory.reject_entity_state(bigint) is
'Rejects a state change enrichment proposed: it is kept as rejected (and not proposed again from its turn), '
'and never holds.';
