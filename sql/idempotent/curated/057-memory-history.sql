-- A memory's history: the versions of the claim it belongs to, oldest first. remember with a key (or a
-- changed claim on the same subject) supersedes the version that held; memories.supersedes links each version
-- to the one before it, and a retracted correction is a version too.
create or replace function memory.memory_history(memory_id bigint) returns setof memory.memory_items
language plpgsql
stable
as $$
declare
    v_tenant text := memory.current_tenant();
begin
    if not exists (select from memory.memories as m
                   where m.tenant_id = v_tenant and m.memory_id = memory_history.memory_id) then
        raise exception 'agent_memory: no memory % in this tenant', memory_history.memory_id
            using errcode = 'no_data_found';
    end if;
    return query
    with recursive earlier as (
        select m.memory_id, m.supersedes from memory.memories as m
        where m.tenant_id = v_tenant and m.memory_id = memory_history.memory_id
        union
        select m.memory_id, m.supersedes from memory.memories as m
        inner join earlier as e on m.memory_id = e.supersedes
        where m.tenant_id = v_tenant
    ),
    later as (
        select m.memory_id from memory.memories as m
        where m.tenant_id = v_tenant and m.memory_id = memory_history.memory_id
        union
        select m.memory_id from memory.memories as m
        inner join later as l on m.supersedes = l.memory_id
        where m.tenant_id = v_tenant
    )
    select i.* from memory_internal._memory_items(
        v_tenant, array(select e.memory_id from earlier as e union select l.memory_id from later as l)
    ) as i
    order by i.valid_from, i.recorded_at, i.memory_id;
end
$$;

comment on function memory.memory_history(bigint) is
'Every version of a memory''s claim, oldest first: those it superseded, itself, and those that superseded it '
'(a retracted correction too), whatever their status. For the history of a key, pass any of its versions.';
