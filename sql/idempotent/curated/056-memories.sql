-- Curated memories read and moved through their statuses: by key, by filters, at a point in time,
-- resolved and retracted, and the views an operator asks first (rules and preferences, open tasks,
-- decisions).

-- The kinds of memory.
create or replace function memory_internal._memory_kinds() returns text[]
language sql
immutable parallel safe
as $$ select array['fact', 'preference', 'rule', 'decision', 'skill', 'event', 'observation', 'task'] $$;

comment on function memory_internal._memory_kinds() is 'Internal: the kinds a memory can have.';

-- A memory's evidence turns, in order.
create or replace function memory_internal._memory_evidence(tenant text, memory_id bigint) returns bigint[]
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    return (
        select coalesce(array_agg(e.turn_id order by e.turn_id), '{}')
        from memory.memory_evidence as e
        where e.tenant_id = tenant and e.memory_id = _memory_evidence.memory_id
    );
end
$$;

comment on function memory_internal._memory_evidence(text, bigint) is
'Internal: the turns a memory came from (memory.memory_evidence), in order.';

-- A memory as the functions return it: its words, kind, key and period, the version it supersedes and the
-- one that superseded it, the turn that carries its words, the turns it came from and the caller's metadata.
-- The memories of a tenant (memory_ids: those alone), read as the caller: the view memory.memory_items is the
-- caller's tenant's, and the API's functions read a tenant they name by value (as Citus routes a statement).
-- Inlined where it is read (no SET clause, see tail.sql), so that the conditions of the statement that reads it
-- apply to the memories' own rows.
create or replace function memory_internal._memory_items(tenant text, memory_ids bigint[]) returns table (
    memory_id bigint, agent_id text, kind text, content text, key text, subjects text[], tags text[],
    importance double precision, confidence double precision, status text, valid_from timestamptz,
    valid_to timestamptz, recorded_at timestamptz, recorded_by text, supersedes bigint, superseded_by bigint,
    turn_id bigint, evidence_turn_ids bigint[], origin text, metadata jsonb, shared boolean, run_id text
)
language sql
stable
as $$
    select
        m.memory_id,
        m.agent_id,
        m.kind,
        m.content,
        m.key,
        m.subjects,
        m.tags,
        m.importance,
        m.confidence,
        m.status,
        m.valid_from,
        m.valid_to,
        m.recorded_at,
        m.recorded_by,
        m.supersedes,
        (
            select n.memory_id from memory.memories as n
            where n.tenant_id = tenant and n.supersedes = m.memory_id and n.status <> 'retracted'
            order by n.valid_from, n.memory_id limit 1
        ),
        m.turn_id,
        (
            select coalesce(array_agg(e.turn_id order by e.turn_id), '{}') from memory.memory_evidence as e
            where e.tenant_id = tenant and e.memory_id = m.memory_id
        ),
        m.origin,
        m.metadata,
        m.shared,
        m.run_id
    from memory.memories as m
    where m.tenant_id = tenant and (memory_ids is null or m.memory_id = any(memory_ids))
$$;

comment on function memory_internal._memory_items(text, bigint[]) is
'Internal: the memories of a tenant (memory_ids: those alone) as memory.memory_items shows them.';

-- (The tenant looked up once, for every row.)
create or replace view memory.memory_items as
with t as materialized (select memory.current_tenant() as tenant)

select i.*
from t
cross join lateral memory_internal._memory_items(t.tenant, null) as i;

-- Whether a memory held at an instant (null: holds now): its period covers it and it was not retracted.
create or replace function memory.memory_holds(
    status text, valid_from timestamptz, valid_to timestamptz, as_of timestamptz
) returns boolean
language sql
stable
as $$
    select case
        when as_of is null then status in ('active', 'ongoing') and valid_to is null and valid_from <= pg_catalog.now()
        else status not in ('retracted', 'pending') and valid_from <= as_of and (valid_to is null or valid_to > as_of)
    end
$$;

comment on function memory.memory_holds(text, timestamptz, timestamptz, timestamptz) is
'Whether a memory of this status and period holds now (as_of null: current and active or ongoing) or held at '
'as_of (its period covers it and it was neither retracted nor left pending).';

-- (0.3.0's memory of a turn as recall shows it: recall's scoring statement reads it itself.)
drop function if exists memory_internal._turn_memory(text, bigint, timestamptz, boolean);

create or replace function memory.get(key text, agent_id text default null, as_of timestamptz default null)
returns setof memory.memory_items
language sql
stable
as $$
    select i.* from memory.memory_items as i
    where i.key = get.key and (get.agent_id is null or i.agent_id = get.agent_id)
        and memory.memory_holds(i.status, i.valid_from, i.valid_to, get.as_of)
    order by i.agent_id
$$;

comment on function memory.get(text, text, timestamptz) is
'The memory held under a key: the current version, or (as_of) the one that held then; one agent''s or '
'(agent_id null) each agent''s. No row: nothing holds under that key.';

create or replace function memory.list_memories(
    kind text default null, agent_id text default null, subject text default null, tag text default null,
    search text default null, status text default null, as_of timestamptz default null, k integer default 100,
    key_prefix text default null, memory_ids bigint[] default null, run_id text default null
) returns setof memory.memory_items
language plpgsql
stable
as $$
#variable_conflict use_column
begin
    if list_memories.kind is not null and not list_memories.kind = any (memory_internal._memory_kinds()) then
        raise exception 'agent_memory: memory kind must be one of %, got %',
            array_to_string(memory_internal._memory_kinds(), ', '), list_memories.kind using errcode = 'invalid_parameter_value';
    end if;
    if list_memories.status is not null
        and list_memories.status not in ('active', 'ongoing', 'resolved', 'superseded', 'retracted', 'pending') then
        raise exception
            'agent_memory: memory status must be active, ongoing, resolved, superseded, retracted or pending, got %',
            list_memories.status using errcode = 'invalid_parameter_value';
    end if;
    if list_memories.status is not null and list_memories.as_of is not null then
        raise exception 'agent_memory: give status or as_of, not both'
            using errcode = 'invalid_parameter_value', hint = 'as_of lists what held then, whatever its status now';
    end if;
    if list_memories.k is null or list_memories.k < 1 then
        raise exception 'agent_memory: k must be at least 1, got %', coalesce(list_memories.k::text, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    return query
    select i.* from memory.memory_items as i
    where (list_memories.kind is null or i.kind = list_memories.kind)
        and (list_memories.agent_id is null or i.agent_id = list_memories.agent_id)
        and (list_memories.subject is null or i.subjects @> array[memory.normalize_entity(list_memories.subject)])
        and (list_memories.tag is null or i.tags @> array[list_memories.tag])
        and (list_memories.search is null or strpos(lower(i.content), lower(list_memories.search)) > 0)
        and (list_memories.key_prefix is null or starts_with(i.key, list_memories.key_prefix))
        and (list_memories.memory_ids is null or i.memory_id = any(list_memories.memory_ids))
        and (list_memories.run_id is null or i.run_id = list_memories.run_id)
        and case when list_memories.status is null then memory.memory_holds(i.status, i.valid_from, i.valid_to,
                                                                                 list_memories.as_of)
                 else i.status = list_memories.status end
    order by i.importance desc, i.valid_from desc, i.memory_id desc
    limit list_memories.k;
end
$$;

comment on function memory.list_memories(
    text, text, text, text, text, text, timestamptz, integer, text, bigint[], text
) is
'This tenant''s memories, most important then newest first, at most k (default 100): those that hold now '
'(active or ongoing, not superseded), or those that held at as_of, or those of one status. Filters: kind, '
'agent_id, subject (normalized as entity names), tag, search (words in the content, any case), key_prefix '
'(keys that begin with it, case and all), memory_ids (those memories alone, as recall returned them), run_id '
'(those remembered in that run).';

-- Moves a current memory to a final status; the row after the move.
create or replace function memory_internal._end_memory(memory_id bigint, status text, verb text)
returns setof memory.memory_items
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_now text;
    -- (A value, not a call: Citus takes no call of a function that is not immutable in an update's coalesce.)
    v_ended timestamptz := pg_catalog.now();
begin
    update memory.memories as m
    set status = _end_memory.status, valid_to = coalesce(m.valid_to, greatest(v_ended, m.valid_from))
    where m.tenant_id = v_tenant and m.memory_id = _end_memory.memory_id
        and (m.status in ('active', 'ongoing') or _end_memory.status = 'retracted' and m.status <> 'retracted');
    if not found then
        select m.status into v_now from memory.memories as m
        where m.tenant_id = v_tenant and m.memory_id = _end_memory.memory_id;
        if v_now is null then
            raise exception 'agent_memory: no memory % in tenant "%"', _end_memory.memory_id, v_tenant
                using errcode = 'no_data_found';
        end if;
        raise exception 'agent_memory: memory % is % and cannot be %', _end_memory.memory_id, v_now, _end_memory.verb
            using errcode = 'invalid_parameter_value';
    end if;
    return query select i.* from memory_internal._memory_items(v_tenant, array[_end_memory.memory_id]) as i;
end
$$;

comment on function memory_internal._end_memory(bigint, text, text) is
'Internal: ends a memory with status resolved or retracted (its period ends now); an error names why not.';

create or replace function memory.resolve(memory_id bigint) returns setof memory.memory_items
language sql
as $$ select * from memory_internal._end_memory(resolve.memory_id, 'resolved', 'resolved') $$;

comment on function memory.resolve(bigint) is
'Marks a current memory (a task done, a question settled) resolved: it stops holding now and is kept in '
'the history. Returns it.';

create or replace function memory.retract(memory_id bigint) returns setof memory.memory_items
language sql
as $$ select * from memory_internal._end_memory(retract.memory_id, 'retracted', 'retracted') $$;

comment on function memory.retract(bigint) is
'Marks a memory retracted (it was never true): recall and as_of leave it out; the row is kept. The version '
'it superseded stays superseded. Returns it.';

-- A proposal (status pending) approved: it holds from now on, as if remembered now.
create or replace function memory.approve(memory_id bigint) returns setof memory.memory_items
language plpgsql
as $$
declare
    v_tenant text := memory.current_tenant();
    v_status text;
    v_held bigint;
    v_content text;
    v_settings jsonb := memory_internal._settings_json();
begin
    select m.status into v_status from memory.memories as m
    where m.tenant_id = v_tenant and m.memory_id = approve.memory_id
    for update;
    if v_status is null then
        raise exception 'agent_memory: no memory % in tenant "%"', approve.memory_id, v_tenant
            using errcode = 'no_data_found';
    elsif v_status <> 'pending' then
        raise exception 'agent_memory: memory % is % and cannot be approved (only pending ones are)',
            approve.memory_id, v_status using errcode = 'invalid_parameter_value';
    end if;
    select h.memory_id into v_held from memory.memories as p
    inner join memory.memories as h
        on h.tenant_id = p.tenant_id and h.agent_id = p.agent_id and h.canonical = p.canonical and h.key is null
        and h.valid_to is null and h.status in ('active', 'ongoing')
    where p.tenant_id = v_tenant and p.memory_id = approve.memory_id;
    if v_held is not null then
        raise exception 'agent_memory: memory % states what memory % already holds', approve.memory_id, v_held
            using errcode = 'unique_violation', hint = 'retract the proposal instead';
    end if;
    update memory.memories as m set status = 'active', valid_from = greatest(m.valid_from, pg_catalog.now())
    where m.tenant_id = v_tenant and m.memory_id = approve.memory_id;
    -- Approved, it supersedes what it changes, as if remembered now.
    select m.content into v_content from memory.memories as m
    where m.tenant_id = v_tenant and m.memory_id = approve.memory_id;
    perform memory_internal._supersede(v_tenant, approve.memory_id,
                                       memory_internal._claim_vector(v_content, v_settings), v_settings);
    return query select i.* from memory_internal._memory_items(v_tenant, array[approve.memory_id]) as i;
end
$$;

comment on function memory.approve(bigint) is
'Approves a proposed memory (status pending, as enrichment stores them when extracted_memory_status is '
'pending): it is active from now on and recalled, and supersedes a memory whose claim it changes (as '
'memory.remember does). Reject a proposal with memory.retract. Returns it.';

create or replace view memory.rules_and_preferences as
select i.* from memory.memory_items as i
where i.kind in ('rule', 'preference') and memory.memory_holds(i.status, i.valid_from, i.valid_to, null)
order by i.kind asc, i.importance desc, i.valid_from desc;

create or replace view memory.open_tasks as
select i.* from memory.memory_items as i
where i.kind = 'task' and memory.memory_holds(i.status, i.valid_from, i.valid_to, null)
order by i.importance desc, i.valid_from asc;

create or replace view memory.recent_decisions as
select i.* from memory.memory_items as i
where i.kind = 'decision' and memory.memory_holds(i.status, i.valid_from, i.valid_to, null)
order by i.valid_from desc;
