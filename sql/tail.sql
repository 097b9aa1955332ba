-- Runs last in every install and upgrade script.

-- Every setting's default passes its checks (a checked_by function may be in any subsystem's file).
select memory_internal._check_setting_defaults();

-- Pin every function of the extension to a safe search_path: pg_catalog, the schema pgvector was
-- installed in (its types and operators), pg_temp last. Bodies name our own objects as memory.x.
-- Procedures are left out: one with a SET clause cannot commit; theirs qualify every name instead.
-- So are the few `language sql` expressions that recall inlines into its queries (a turn's memory, the
-- signals of memory.signals among them), those commit inlines per message (its checks, text and hash), and
-- memory_internal._setting_definitions(), which memory.setting() filters by key on every call (a SET clause
-- would stop the planner from inlining them); they name tables as memory.x and call operators of pg_catalog.
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
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc')) and p.prokind <> 'p'
            and p.oid <> all(array[
                'memory_internal._bm25_term(float8, float8, float8, float8, float8, float8)'::regprocedure,
                'memory_internal._chunk_bm25(tsvector, integer, integer, text[], float8[], float8, float8, float8, float8)'
                ::regprocedure,
                'memory_internal._memory_items(text, bigint[])'::regprocedure,
                'memory_internal._visible_to(text, memory_internal._recall_query, text, bigint, bigint)'::regprocedure,
                'memory_internal._setting_definitions()'::regprocedure,
                'memory_internal._message_problem(jsonb, integer, integer)'::regprocedure,
                'memory_internal._message_text(jsonb)'::regprocedure,
                'memory_internal._message_sha256(jsonb, text)'::regprocedure
            ])
            and not exists (select from memory.signals as s where to_regprocedure(s.function) = p.oid)
    loop
        execute format(
            'alter function %s set search_path = pg_catalog, %I, pg_temp', v_function, v_vector_schema
        );
    end loop;
end
$pin$;

-- The owner. Every table, view, function and procedure of the extension belongs to memory_owner (made in
-- head.sql), a role nobody logs in as or is granted: a role of its own, not the superuser who installed the
-- extension, so that forced row-level security holds inside the API's functions too (a superuser bypasses
-- it). The schemas stay the installer's (memory_owner may create in schema memory, for the HNSW index of a new
-- embedding model). No function runs as a superuser. Five belong to memory_observer, which reads past
-- row-level security: the two that must see every tenant's chunks whoever calls the API, and answer only yes or
-- no (memory_internal._any_chunks() and _chunks_lacking(model)), recall's two full-text lists of one tenant
-- (memory_internal._full_text_candidates and _summary_candidates: under a policy, a full-text match cannot use
-- its index), and the planner's estimate of a tenant's chunks (memory_internal._planned_chunks: under a policy
-- it would estimate the policy's rows).
do $owner$
declare
    v_object record;
    v_observer_functions regprocedure [] := array[
        'memory_internal._any_chunks()'::regprocedure, 'memory_internal._chunks_lacking(text)'::regprocedure,
        'memory_internal._full_text_candidates(text, text, timestamptz, timestamptz, text, '
        'memory_internal._recall_query, jsonb, text[])'::regprocedure,
        'memory_internal._summary_candidates(text, text, text, memory_internal._recall_query, jsonb, text[])'
        ::regprocedure,
        'memory_internal._planned_chunks(text)'::regprocedure
    ];
begin
    for v_object in
        select c.oid::regclass as name, c.relkind
        from pg_catalog.pg_class as c
        where c.oid in (select memory_internal._extension_objects('pg_catalog.pg_class'))
            and c.relkind in ('r', 'p', 'v') and c.relowner <> 'memory_owner'::regrole
    loop
        execute format('alter %s %s owner to memory_owner',
                       case when v_object.relkind = 'v' then 'view' else 'table' end, v_object.name);
    end loop;
    for v_object in
        select p.oid::regprocedure as name, p.prokind
        from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and p.proowner <> 'memory_owner'::regrole and p.oid <> all(v_observer_functions)
    loop
        execute format('alter %s %s owner to memory_owner',
                       case when v_object.prokind = 'p' then 'procedure' else 'function' end, v_object.name);
    end loop;
    for v_object in select unnest(v_observer_functions) as name loop
        execute format('alter function %s owner to memory_observer', v_object.name);
    end loop;
end
$owner$;

-- The API runs as the owner: every function and procedure of schema memory is security definer, so a
-- caller needs no privilege on a table or an internal function to use it, and every write goes through it.
-- Each takes the tenant from memory.current_tenant(), never from an argument. Left to run as the caller
-- (invoker) are memory.current_tenant(), which row-level security evaluates as the role reading a table,
-- memory.work(), which commits between jobs (a security definer procedure cannot), memory.define_feature(),
-- which only a superuser may call (its expression runs as the owner in every recall), memory.call(), which calls
-- an API function as its caller would (as the owner, it would lift the privileges the function checks),
-- memory.bind_tenant_role(), which writes what its caller, memory_admin, may write itself (on a Citus cluster
-- the write reaches every node as the caller's login: memory_owner may not log in), and the pure functions that
-- read nothing a caller cannot and that queries inline (expressions).
do $definer$
declare
    v_function regprocedure;
begin
    for v_function in
        select p.oid::regprocedure
        from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and p.pronamespace = 'memory'::regnamespace and not p.prosecdef
            and p.oid <> all(array[
                'memory.current_tenant()'::regprocedure,
                'memory.call(text, text, jsonb)'::regprocedure,
                'memory.bind_tenant_role(regrole, text)'::regprocedure,
                'memory.work(integer, integer, integer)'::regprocedure,
                'memory.define_feature(text, text, regtype, text, text)'::regprocedure,
                'memory.version()'::regprocedure,
                'memory.query_intent(text)'::regprocedure,
                'memory.metric_definitions()'::regprocedure,
                'memory.recall_duration_buckets()'::regprocedure,
                'memory.memory_holds(text, timestamptz, timestamptz, timestamptz)'::regprocedure,
                'memory.decayed_importance(double precision, timestamptz, timestamptz, jsonb)'::regprocedure
            ])
    loop
        execute format('alter routine %s security definer', v_function);
    end loop;
end
$definer$;

-- Privileges. PUBLIC gets nothing, and no role but memory_owner writes a table, except memory_admin's
-- settings, signal registry and tenant bindings (each write checked by a trigger).
-- - memory_tenant (an application or agent of one tenant): usage on schema memory, select on its tables
--   (row-level security keeps it to its tenant; the maintenance record is memory_admin's), execute on the
--   API but the administrator's functions. Nothing of memory_internal, no sequence (their positions count
--   every tenant's rows), no insert, update, delete, truncate or references, so no lock on a table beyond
--   what a read takes and no row lock.
-- - memory_app: a memory_tenant that may choose its tenant. memory_admin: a memory_app that also writes
--   settings, the registry and bindings, stores secrets, makes and revokes the HTTP server's API keys, lists
--   the big tenants' graphs due, and runs maintenance and the queue worker for every tenant (memory.work calls
--   the internal steps granted it, each running as the owner).
-- - memory_http (the HTTP server's logins): looks API keys up, and takes the role of a key (granted to it).
-- - Secrets are the owner's alone. Views run with the privileges and row-level security of the role that
--   reads them. (Objects a later file adds are covered by being created before this runs.)
do $grants$
declare
    v_view regclass;
    v_function regprocedure;
    v_vector_schema regnamespace := (
        select e.extnamespace from pg_catalog.pg_extension as e where e.extname = 'vector'
    );
begin
    revoke all on all functions in schema memory, memory_internal from public, memory_tenant, memory_app, memory_admin;
    revoke all on all procedures in schema memory, memory_internal from public, memory_tenant, memory_app, memory_admin;
    revoke all on all tables in schema memory, memory_internal
    from public, memory_tenant, memory_app, memory_admin, memory_observer;
    revoke all on all sequences in schema memory, memory_internal from public, memory_tenant, memory_app, memory_admin;
    revoke all on schema memory_internal from public, memory_tenant, memory_app;
    -- pgvector's schema is on the search_path of every function of the API: code a role other than a
    -- superuser put there could run as the owner.
    if memory_internal._schema_problem(v_vector_schema) is not null then
        raise exception 'agent_memory: pgvector''s schema is on the search_path of the API''s functions, and %',
            memory_internal._schema_problem(v_vector_schema)
            using hint = format('revoke create on schema %s from the roles that have it (from public: revoke create '
                                'on schema %s from public), or install pgvector in a schema only superusers write',
                                v_vector_schema, v_vector_schema);
    end if;
    grant usage on schema memory, memory_internal to memory_owner, memory_observer;
    grant create on schema memory to memory_owner;  -- the HNSW indexes of a new embedding model
    grant select on memory.chunks, memory.chunk_embeddings, memory.turns, memory.sessions, memory.memories,
    memory.summaries to memory_observer;
    -- What the full-text list calls, and inlines (the planner inlines a function only for a role that may run it).
    grant execute on function
    memory_internal._turn_filter_sql(text, timestamptz, timestamptz, text, bigint[], text[], text[], text[], text),
    memory_internal._tool_result_call(text, bigint, integer, text), memory_internal._tool_name(jsonb, jsonb, text),
    memory_internal._chunk_bm25(tsvector, integer, integer, text[], float8[], float8, float8, float8, float8),
    memory_internal._bm25_term(float8, float8, float8, float8, float8, float8),
    memory_internal._visible_to(text, memory_internal._recall_query, text, bigint, bigint)
    to memory_observer;
    for v_function in
        select p.oid::regprocedure from pg_catalog.pg_proc as p where p.proowner = 'memory_observer'::regrole
            and p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
    loop
        execute format('grant execute on function %s to memory_owner', v_function);
    end loop;
    if not pg_catalog.has_schema_privilege('memory_owner', v_vector_schema, 'usage') then
        execute format('grant usage on schema %s to memory_owner', v_vector_schema);
    end if;
    -- The import stages records in temporary tables of the caller's session.
    execute format('grant temporary on database %I to memory_owner', pg_catalog.current_database());
    grant usage on schema memory to memory_tenant, memory_app, memory_admin;
    grant usage on schema memory_internal to memory_admin;
    grant memory_tenant to memory_app;
    grant memory_app to memory_admin;
    grant execute on all functions in schema memory to memory_tenant;
    revoke execute on function memory.set_secret(text, text, text), memory.bind_tenant_role(regrole, text),
    memory.define_signal(text, text, regprocedure, double precision, text), memory.reembed(integer),
    memory.define_feature(text, text, regtype, text, text),
    memory.create_api_key(text, regrole, text, boolean, integer, integer, timestamptz),
    memory.revoke_api_key(bigint), memory.list_api_keys(text), memory.authenticate_api_key(text),
    memory.tenant_graph_statements() from memory_tenant;
    grant execute on function memory.set_secret(text, text, text), memory.bind_tenant_role(regrole, text),
    memory.define_signal(text, text, regprocedure, double precision, text), memory.reembed(integer),
    memory.create_api_key(text, regrole, text, boolean, integer, integer, timestamptz),
    memory.revoke_api_key(bigint), memory.list_api_keys(text), memory.tenant_graph_statements() to memory_admin;
    -- The HTTP server's logins look keys up, and nothing else (they take a key's role for its request).
    grant usage on schema memory to memory_http;
    grant execute on function memory.authenticate_api_key(text) to memory_http;
    grant execute on procedure memory.maintain(), memory.work(integer, integer, integer) to memory_admin;
    grant execute on function memory_internal._claim_jobs(integer, text),
    memory_internal._embed_ahead(text, bigint[], text), memory_internal._work_on(text, bigint, text),
    memory_internal._analyze_grown_tenants(text[]) to memory_admin;
    grant select on all tables in schema memory to memory_tenant;
    -- The rows of the view memory.memory_items, read as the reader, under row-level security, for the tenant the
    -- reader acts for (no role of a tenant may name memory_internal, so it is not a function it calls itself).
    grant execute on function memory_internal._memory_items(text, bigint[]) to memory_tenant;
    revoke select on memory.maintenance_runs from memory_tenant;
    grant select on memory.maintenance_runs to memory_admin;
    grant insert, update, delete on memory.config, memory.signals, memory.tenant_roles to memory_admin;
    for v_view in select c.oid::regclass from pg_catalog.pg_class as c
        where c.relnamespace = 'memory'::regnamespace and c.relkind = 'v'
    loop
        execute format('alter view %s set (security_invoker = true)', v_view);
    end loop;
end
$grants$;
