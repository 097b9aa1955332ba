-- Runs last in every install and upgrade script.

-- Pin every function of the extension to a safe search_path: pg_catalog, the schema pgvector was
-- installed in (its types and operators), pg_temp last. Bodies name our own objects as memory.x.
-- Procedures are left out: one with a SET clause cannot commit; theirs qualify every name instead.
-- So are the few `language sql` expressions that recall inlines into its queries, the signals of
-- memory.signals among them, and memory.setting_definitions(), which memory.setting() filters by key on
-- every call (a SET clause would stop the planner from inlining them); they name tables as memory.x and
-- call operators of pg_catalog.
do $pin$
declare
    v_vector_schema text := (
        select n.nspname
        from pg_catalog.pg_extension as e
        inner join pg_catalog.pg_namespace as n on e.extnamespace = n.oid
        where e.extname = 'vector'
    );
    v_function regprocedure;
begin
    for v_function in
        select p.oid::regprocedure
        from pg_catalog.pg_proc as p
        inner join pg_catalog.pg_depend as d
            on d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e'
        inner join pg_catalog.pg_extension as e on d.refobjid = e.oid
        where e.extname = 'agent_memory' and p.prokind <> 'p'
            and p.oid <> all(array[
                'memory_internal._bm25_term(float8, float8, float8, float8, float8, float8)'::regprocedure,
                'memory_internal._chunk_bm25(tsvector, integer, integer, text[], float8[], float8, float8, float8, float8)'
                ::regprocedure,
                'memory_internal._turn_filter(text, bigint, bigint, timestamptz, timestamptz, text, bigint[], text[])'
                ::regprocedure,
                'memory.setting_definitions()'::regprocedure
            ])
            and not exists (select from memory.signals as s where to_regprocedure(s.function) = p.oid)
    loop
        execute format(
            'alter function %s set search_path = pg_catalog, %I, pg_temp', v_function, v_vector_schema
        );
    end loop;
end
$pin$;

-- Privileges. PUBLIC gets nothing. memory_tenant gets what an application of one tenant needs: every
-- function but the administrator's, and the tenant-keyed tables (row-level security keeps it to its
-- tenant); it reads the settings, registry and models. memory_app is a memory_tenant that may choose its
-- tenant; memory_admin a memory_app that also writes settings, the signal registry and tenant bindings,
-- and stores secrets. Secrets are the owner's alone. Views run with the privileges and row-level security
-- of the role that reads them. (Objects a later file adds are covered by being created before this runs.)
do $grants$
declare
    v_view regclass;
begin
    revoke all on all functions in schema memory, memory_internal from public;
    revoke all on all procedures in schema memory, memory_internal from public;
    revoke all on all tables in schema memory, memory_internal from public;
    revoke all on schema memory_internal from public;
    revoke all on all tables in schema memory_internal from memory_tenant, memory_app, memory_admin;
    grant usage on schema memory, memory_internal to memory_tenant, memory_app, memory_admin;
    grant memory_tenant to memory_app;
    grant memory_app to memory_admin;
    -- The public functions run with the caller's privileges and call the internal ones.
    grant execute on all functions in schema memory, memory_internal to memory_tenant;
    grant execute on all procedures in schema memory, memory_internal to memory_tenant;
    revoke execute on function memory.set_secret(text, text, text), memory.bind_tenant_role(regrole, text),
    memory.define_signal(text, text, regprocedure, double precision, text) from memory_tenant;
    grant execute on function memory.set_secret(text, text, text), memory.bind_tenant_role(regrole, text),
    memory.define_signal(text, text, regprocedure, double precision, text) to memory_admin;
    -- Maintenance works on every tenant: memory_admin's alone.
    revoke execute on procedure memory.maintain() from memory_tenant;
    revoke execute on function memory_internal._retire_models() from memory_tenant;
    grant execute on procedure memory.maintain() to memory_admin;
    grant execute on function memory_internal._retire_models() to memory_admin;
    grant select, insert, update, delete on all tables in schema memory to memory_tenant;
    grant usage on all sequences in schema memory to memory_tenant;
    revoke insert, update, delete on memory.config, memory.signals, memory.tenant_roles, memory.embedding_models
    from memory_tenant;
    grant insert, update, delete on memory.config, memory.signals, memory.tenant_roles to memory_admin;
    revoke all on memory.maintenance_runs from memory_tenant;
    -- A tombstone is a record: written by forget (memory_internal._bury, as the owner), never written,
    -- changed or removed by an application. So is an archive: written by maintenance (memory_admin), its
    -- data dropped by memory.drop_archive (as the owner).
    revoke insert, update, delete on memory.tombstones, memory.forgotten_sessions, memory.archives from memory_tenant;
    grant insert on memory.archives to memory_admin;
    grant select, insert, delete on memory.maintenance_runs to memory_admin;
    for v_view in select c.oid::regclass from pg_catalog.pg_class as c
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'v'
    loop
        execute format('alter view %s set (security_invoker = true)', v_view);
    end loop;
end
$grants$;
