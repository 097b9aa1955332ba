-- Scale-out on Citus: memory_internal._distribute() hands the tables to Citus, once, on the coordinator. It
-- stays internal until the API's calls run on Citus. Today four things stop them there: SQL functions that
-- read tables and are inlined or called with parameters (Citus plans neither), the counting triggers (a
-- transition table is not visible to the query Citus sends on), the policies' tenant lookup in
-- memory.tenant_roles (a distributed query from a query on a shard), and memory_owner, as whom Citus would
-- log in to the workers (it may not log in). Every tenant-keyed table is distributed by tenant_id, all
-- co-located (a tenant's rows of every table are on one node, so a statement about one tenant is a router
-- query); the tables every tenant shares (settings, the signal and feature registries, embedding models,
-- tenant bindings, the HTTP server's API keys, the extension's own records) are reference tables, copied to
-- every node. What Citus
-- cannot keep is changed, here and only on Citus:
-- - policies with subselects: plain calls instead (memory_internal._create_tenant_policies);
-- - memory.jobs' key without the tenant: (tenant_id, job_id), with an index on job_id;
-- - the key memories.supersedes with on delete set null: no action, and a trigger sets it null first;
-- - foreign keys from a tenant's table to a shared one are dropped while the tables move, then restored.

-- The tables and how Citus holds each: 'distributed' (by tenant_id) or 'reference', in an order in which
-- each comes after those it references.
create or replace function memory_internal._citus_plan()
returns table (relation regclass, placement text)
language sql
stable
as $$
    with recursive tables as (
        select c.oid::regclass as relation,
               case when exists (
                        select from pg_catalog.pg_attribute as a
                        where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
                    ) and c.oid not in ('memory.tenant_roles'::regclass, 'memory.config'::regclass,
                                        'memory_internal.api_keys'::regclass)
                    then 'distributed' else 'reference' end as placement
        from pg_catalog.pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace) and c.relkind = 'r'
    ),
    depth (relation, level) as (
        select t.relation, 0 from tables as t
        union all
        select f.conrelid::regclass, d.level + 1
        from depth as d
        inner join pg_catalog.pg_constraint as f on f.contype = 'f' and f.confrelid = d.relation
            and f.conrelid <> f.confrelid
        where d.level < 20
    )
    select t.relation, t.placement
    from tables as t
    inner join (select d.relation, max(d.level) as level from depth as d group by d.relation) as l
        on l.relation = t.relation
    order by t.placement = 'distributed', l.level, t.relation::text
$$;

comment on function memory_internal._citus_plan() is
'Internal: each table of the extension with how Citus holds it (distributed by tenant_id, or reference), '
'referenced tables first.';

-- Before a memory is deleted, the memory that superseded it no longer names it (on Citus, where the
-- foreign key cannot set it null itself).
create or replace function memory_internal._unlink_superseded() returns trigger
language plpgsql
as $$
begin
    update memory.memories as m set supersedes = null
    where m.tenant_id = old.tenant_id and m.supersedes = old.memory_id;
    return old;
end
$$;

comment on function memory_internal._unlink_superseded() is
'Internal: trigger (on Citus) that clears the supersedes of the memories that name a memory being deleted.';

-- The changes Citus needs before it takes the tables; returns the foreign keys from a distributed table to a
-- reference table, dropped (their definitions, to restore once every table is Citus's).
create or replace function memory_internal._prepare_for_citus() returns table (relation regclass, definition text)
language plpgsql
as $$
declare
    v_key record;
begin
    perform memory_internal._create_tenant_policies(plain => true);
    alter table memory.jobs drop constraint if exists jobs_pkey;
    alter table memory.jobs add primary key (tenant_id, job_id);
    create index if not exists jobs_by_id on memory.jobs (job_id);
    alter table memory.memories drop constraint if exists memories_tenant_id_supersedes_fkey;
    alter table memory.memories add constraint memories_tenant_id_supersedes_fkey
        foreign key (tenant_id, supersedes) references memory.memories (tenant_id, memory_id);
    drop trigger if exists memories_unlink_superseded on memory.memories;
    create trigger memories_unlink_superseded before delete on memory.memories
    for each row execute function memory_internal._unlink_superseded();
    for v_key in
        select f.conrelid::regclass as relation, f.conname, pg_catalog.pg_get_constraintdef(f.oid) as definition
        from pg_catalog.pg_constraint as f
        inner join memory_internal._citus_plan() as r on r.relation = f.confrelid and r.placement = 'reference'
        inner join memory_internal._citus_plan() as d on d.relation = f.conrelid and d.placement = 'distributed'
        where f.contype = 'f'
    loop
        execute format('alter table %s drop constraint %I', v_key.relation, v_key.conname);
        relation := v_key.relation;
        definition := format('constraint %I %s', v_key.conname, v_key.definition);
        return next;
    end loop;
end
$$;

comment on function memory_internal._prepare_for_citus() is
'Internal: changes what Citus cannot keep (policies, memory.jobs'' key, the supersedes key) and drops the '
'foreign keys from distributed to reference tables, returning them to restore.';

create or replace function memory_internal._distribute() returns jsonb
language plpgsql
as $$
declare
    v_table record;
    v_keys record;
    v_anchor regclass;
    v_placed jsonb := '{"distributed": [], "reference": []}';
    v_failed text;
begin
    if to_regproc('pg_catalog.citus_is_coordinator') is null then
        raise exception 'agent_memory: distributing needs Citus, and this database does not have it'
            using errcode = 'feature_not_supported',
                  hint = 'Run it on a Citus coordinator: create extension citus, add the workers with '
                         'citus_add_node(), then select memory_internal._distribute().';
    end if;
    if not (select r.rolsuper from pg_catalog.pg_roles as r where r.rolname = current_user) then
        raise exception 'agent_memory: distributing is for a superuser (it hands the tables to Citus)'
            using errcode = 'insufficient_privilege';
    end if;
    if not pg_catalog.citus_is_coordinator() then
        raise exception 'agent_memory: distributing runs on the Citus coordinator, and this node is not it'
            using errcode = 'feature_not_supported';
    end if;
    if memory_internal._citus_table('memory.sessions') then
        return jsonb_build_object('distributed', false, 'reason', 'the tables are distributed already');
    end if;
    -- The workers' own copies of the tables (made by the extension's script there) change alike, so that
    -- what Citus later does to the coordinator's it can do to theirs.
    select string_agg(format('%s:%s: %s', r.nodename, r.nodeport, r.result), '; ') into v_failed
    from pg_catalog.run_command_on_workers('select count(*) from memory_internal._prepare_for_citus()') as r
    where not r.success;
    if v_failed is not null then
        raise exception 'agent_memory: distributing could not prepare every worker: %', v_failed;
    end if;
    create temporary table _citus_keys on commit drop as select * from memory_internal._prepare_for_citus();
    -- Triggers on distributed tables run on the workers, on each shard (counts and edges are kept per tenant,
    -- whose rows are all on one node).
    set local citus.enable_unsafe_triggers = on;
    -- One connection per node: foreign keys to reference tables are added in the same transaction.
    set local citus.multi_shard_modify_mode = 'sequential';
    for v_table in select * from memory_internal._citus_plan() loop
        if v_table.placement = 'reference' then
            perform pg_catalog.create_reference_table(v_table.relation);
        else
            perform pg_catalog.create_distributed_table(v_table.relation, 'tenant_id',
                                                        colocate_with => coalesce(v_anchor::text, 'none'));
            v_anchor := coalesce(v_anchor, v_table.relation);
        end if;
        v_placed := jsonb_insert(v_placed, array[v_table.placement, '-1'], to_jsonb(v_table.relation::text), true);
    end loop;
    for v_keys in select * from _citus_keys loop
        execute format('alter table %s add %s', v_keys.relation, v_keys.definition);
    end loop;
    return jsonb_build_object('distributed', true) || v_placed;
end
$$;

comment on function memory_internal._distribute() is
'Internal (not yet an API: the API''s calls do not all run on Citus yet): on a Citus coordinator, once, as a '
'superuser: distributes every tenant-keyed table by tenant_id (co-located: a tenant''s rows are on one node) '
'and makes the shared tables reference tables. Returns the tables by placement, or distributed false when '
'they are Citus''s already. An error without Citus.';
