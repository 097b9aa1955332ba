-- Scale-out on Citus: memory_internal._distribute() hands the tables to Citus, once, on the coordinator. It
-- stays internal until every call of the API runs on Citus. A call runs on the cluster as memory.call(tenant,
-- ...), which Citus pushes down whole to the worker that holds the tenant, where the API function reads and
-- writes local shards as its caller's login (memory_owner need not log in there). The tenant's calls run so:
-- commit and enrichment, recall with every filter, curated memory, feedback, the knowledge graph, forget,
-- export and import (tests/citus/test_api_on_cluster.py); memory.work and memory.maintain run on each worker,
-- for the tenants there (tests/citus/test_work_on_cluster.py, test_maintain_on_cluster.py); an administrator
-- binds a role through the coordinator. Their statements take the shapes Citus routes: each
-- names the tenant by a value; no statement mixes a read of a table with a function that reads or writes
-- another (the rows read first, into arrays); no subquery in an insert's values; no function that is not
-- immutable on a row's columns in an update; no statement of data-modifying CTEs or an outer join of a list to
-- a table. Not yet: a new embedding model (memory.reembed, and retiring the old one: writes to a reference table
-- and reads of every tenant, as memory_owner, who may not log in to a worker), the graphs of big tenants, an
-- extension upgrade on Citus (it re-creates the functions and undoes their adaptations below), and notifications
-- (raised on the worker).
-- Every tenant-keyed table is distributed by tenant_id, all co-located (a tenant's rows of every table are on
-- one node, so a statement about one tenant is a router query); the tables every tenant shares (settings,
-- the signal and feature registries, embedding models, tenant bindings, secrets, the extension's own records)
-- are reference tables, copied to every node; the record of maintenance runs (and their lock) and the HTTP
-- server's API keys are each node's own. What Citus cannot keep is changed, here and only on Citus:
-- - policies with subselects: plain calls instead (memory_internal._create_tenant_policies), but on the shards;
-- - memory.jobs' key without the tenant: (tenant_id, job_id), with an index on job_id;
-- - the key memories.supersedes with on delete set null: no action, and a trigger sets it null first;
-- - foreign keys from a tenant's table to a shared one are dropped while the tables move, then restored;
-- - functions planned once for all parameters are planned per call, SQL functions that read tables run as
--   PL/pgSQL,
--   memory.current_tenant() reads the bindings from a statement on a shard, and identity sequences count in
--   a range per node (memory_internal._adapt_to_citus);
-- - the embedding model in force is recorded, and its HNSW indexes made, before the tables move;
-- - memory.call is distributed by its tenant;
-- - memory_owner may create tables in memory_internal, as it does in memory: Citus makes a moved shard as its
--   table's owner (and connects to the workers as the owner to move it: docs/SCALING.md).

-- The tables and how Citus holds each: 'distributed' (by tenant_id), 'reference', or 'local' (each node keeps
-- its own), in an order in which each comes after those it references.
create or replace function memory_internal._citus_plan()
returns table (relation regclass, placement text)
language sql
stable
as $$
    with recursive tables as (
        select c.oid::regclass as relation,
               case
                   -- Each node's own: the record of the maintenance runs on the node and the lock they take turns
                   -- on, and the HTTP server's API keys (it connects to the coordinator, whose keys they are; the
                   -- owner writes them there, and marks them used, without a connection to another node).
                   when c.oid in ('memory.maintenance_runs'::regclass, 'memory_internal._node_locks'::regclass,
                                  'memory_internal.api_keys'::regclass)
                       then 'local'
                   when exists (
                       select from pg_catalog.pg_attribute as a
                       where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
                   ) and c.oid not in ('memory.tenant_roles'::regclass, 'memory.config'::regclass)
                       then 'distributed'
                   else 'reference'
               end as placement
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
'Internal: each table of the extension with how Citus holds it (distributed by tenant_id, reference, or local: '
'each node''s own), referenced tables first.';

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

-- A SQL function's body as PL/pgSQL: its statements, in order, returning what the last gives (returns: set,
-- void, value of type result, or out into the output parameters named in result; agent_memory_db.plpgsql).
create or replace function memory_internal._plpgsql_body(body text, returns text, result text) returns text
language plpython3u
immutable
as $$
@load_python@
from agent_memory_db.plpgsql import plpgsql_body
return plpgsql_body(body, returns, result)
$$;

comment on function memory_internal._plpgsql_body(text, text, text) is
'Internal: the body of a PL/pgSQL function that runs a SQL function''s statements and returns what it returns '
'(for Citus).';

-- The body of a PL/pgSQL function of one statement, which names its parameters by position ($1 the tenant), as one
-- that runs the statement prepared once per session on the tenant's shards (agent_memory_db.plpgsql).
create or replace function memory_internal._prepared_body(body text, purpose text, types text[]) returns text
language plpython3u
immutable
as $$
@load_python@
from agent_memory_db.plpgsql import prepared_body
return prepared_body(body, purpose, types)
$$;

comment on function memory_internal._prepared_body(text, text, text[]) is
'Internal: the body of a PL/pgSQL function of one statement that runs it prepared on the tenant''s shards (for '
'Citus).';

-- The tenant policies of this node's shards (policies: those alone) check with subselects, once per statement, as
-- on one node: a shard is a plain table to PostgreSQL, which runs the statements Citus sends it (a plain call,
-- once per row, took 58 of a recall's 107 ms on a worker). A shard is known by its name, its table's and its
-- shard's number (Citus hides shards from pg_class). Returns how many policies it changed.
create or replace function memory_internal._subselect_shard_policies(policies oid[] default null) returns integer
language plpgsql
as $$
declare
    v_shard record;
    v_changes text := pg_catalog.current_setting('citus.enable_manual_changes_to_shards');
    v_count integer := 0;
begin
    perform pg_catalog.set_config('citus.enable_manual_changes_to_shards', 'on', true);
    for v_shard in
        select p.polname, p.polrelid::regclass as shard, d.logicalrelid::regclass as relation
        from pg_catalog.pg_policy as p
        cross join lateral
            pg_catalog.regexp_match(p.polrelid::regclass::text, '^(memory\.[a-z_]+)_([0-9]+)$') as m (part)
        inner join pg_dist_shard as d
            on d.shardid = m.part[2]::bigint and d.logicalrelid = pg_catalog.to_regclass(m.part[1])
        where p.polname in ('tenant_isolation', 'tenant_settings') and (policies is null or p.oid = any (policies))
    loop
        execute format('alter policy %I on %s using (%s)', v_shard.polname, v_shard.shard,
                       memory_internal._tenant_check(v_shard.relation, false));
        v_count := v_count + 1;
    end loop;
    perform pg_catalog.set_config('citus.enable_manual_changes_to_shards', v_changes, true);
    return v_count;
end
$$;

comment on function memory_internal._subselect_shard_policies(oid[]) is
'Internal: the tenant policies of this Citus node''s shards (or of those given) check with subselects (once per '
'statement); returns how many it changed.';

-- A shard Citus makes on this node (distributing, moving a shard here) gets its table's policies, plain calls:
-- they check with subselects at once (memory_internal._adapt_to_citus has this run after each create policy).
-- It runs as the owner whoever creates a policy (an event trigger runs as the role whose command fired it, a
-- superuser's too), and does nothing about a policy on anything but a shard of the extension's tables. Should it
-- fail, the shard is as safe, and slower: a warning says so, and the move goes on.
create or replace function memory_internal._subselect_new_shard_policies() returns event_trigger
language plpgsql
security definer
as $$
declare
    v_policies oid[] := array(
        select c.objid from pg_catalog.pg_event_trigger_ddl_commands() as c
        where c.classid = 'pg_catalog.pg_policy'::regclass
            and c.object_identity ~ '^(tenant_isolation|tenant_settings) on memory\.[a-z_]+_[0-9]+$'
    );
begin
    if pg_catalog.cardinality(v_policies) > 0 then
        perform memory_internal._subselect_shard_policies(v_policies);
    end if;
exception when others then
    raise warning 'agent_memory: a new shard''s tenant policy checks once per row: %', sqlerrm
        using hint = 'select memory_internal._distribute() on the coordinator makes it check once per statement';
end
$$;

comment on function memory_internal._subselect_new_shard_policies() is
'Internal: (event trigger, on Citus) the tenant policies a shard is created with check with subselects.';

-- Whether a function's body names a table or view of the extension's (on Citus, one of Citus's).
create or replace function memory_internal._reads_tables(body text) returns boolean
language sql
stable
as $$
    select exists (
        select from pg_catalog.pg_class as c
        where c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace)
            and c.relkind in ('r', 'v', 'p')
            -- (Not a shard, <table>_<shard id>: PostgreSQL alone plans a statement on one.)
            and c.relname !~ '_[0-9]+$'
            and body ~ format('\m%s\.%s\M', c.relnamespace::regnamespace, c.relname)
    )
$$;

comment on function memory_internal._reads_tables(text) is
'Internal: whether a function''s body names a table or view of the extension (not a Citus shard of one).';

-- Whether a function's body reads tables, and only tables every node holds whole (reference tables: settings, the
-- registries, the embedding models; neither a distributed table nor a view), each where a statement reads it (after
-- from or join: not in a regclass, a message or a text).
create or replace function memory_internal._reads_only_reference_tables(body text) returns boolean
language sql
stable
as $$
    with named as (
        select p.placement, format('\m%s\.%s\M', n.nspname, c.relname) as pattern
        from pg_catalog.pg_class as c
        inner join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
        left join memory_internal._citus_plan() as p on p.relation = c.oid
        where n.nspname in ('memory', 'memory_internal') and c.relkind in ('r', 'v', 'p', 'm')
            and c.relname !~ '_[0-9]+$'  -- (not a shard)
            and body ~ format('\m%s\.%s\M', n.nspname, c.relname)
    )

    select exists (select from named) and not exists (
        select from named as d
        where d.placement is distinct from 'reference'
            or pg_catalog.regexp_count(body, d.pattern)
            <> pg_catalog.regexp_count(body, '\m(from|join)\s+' || d.pattern, 1, 'i')
    )
$$;

comment on function memory_internal._reads_only_reference_tables(text) is
'Internal: whether a function''s body reads only tables Citus copies to every node (reference tables).';

-- The functions that read only reference tables and write none (stable or immutable) read this node's copy by its
-- shard's name, which is the same on every node: PostgreSQL plans a plain table, as on one node, where Citus
-- planned each statement on every call (about eight a recall reading settings alone), and those of SQL stay SQL
-- (memory_internal._adapt_to_citus leaves them so), inlined where their callers are. How many it changed.
create or replace function memory_internal._read_reference_tables_here() returns integer
language plpgsql
as $$
declare
    v_names text[];
    v_shards text[];
    v_function record;
    v_count integer := 0;
begin
    select array_agg(format('%I.%I', n.nspname, c.relname)), array_agg(h.name) into v_names, v_shards
    from pg_dist_partition as p
    inner join pg_catalog.pg_class as c on c.oid = p.logicalrelid
    inner join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
    cross join lateral memory_internal._tables_here(p.logicalrelid) as h
    where p.partmethod = 'n' and p.repmodel = 't' and n.nspname in ('memory', 'memory_internal')
        and h.shard is not null;
    if v_names is null then
        return 0;  -- (the tables are not Citus's yet, or this node holds no copy of them)
    end if;
    for v_function in
        select p.prosrc, pg_catalog.pg_get_functiondef(p.oid) as definition
        from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and p.provolatile in ('s', 'i')
            and p.prolang in (select l.oid from pg_catalog.pg_language as l where l.lanname in ('sql', 'plpgsql'))
            and memory_internal._reads_only_reference_tables(p.prosrc)
    loop
        -- (pg_get_functiondef: the header's lines, then the body's, which begin with "AS ".)
        execute pg_catalog.left(v_function.definition, pg_catalog.strpos(v_function.definition, e'\nAS '))
            || 'AS ' || pg_catalog.quote_literal(memory_internal._renamed(v_function.prosrc, v_names, v_shards));
        v_count := v_count + 1;
    end loop;
    return v_count;
end
$$;

comment on function memory_internal._read_reference_tables_here() is
'Internal: on a Citus node, the functions that only read reference tables read this node''s copies of them by '
'their shards'' names; how many.';

-- How the API's functions plan on a Citus node (memory_internal._adapt_to_citus, after the SQL functions that read
-- tables run as PL/pgSQL): PostgreSQL's choice where a function forces one generic plan, commit's turns and the
-- counters prepared on the tenant's shards, and a function that reads the tables choosing its own plans.
create or replace function memory_internal._adapt_plans_to_citus() returns void
language plpgsql
as $$
declare
    v_function regprocedure;
    v_prepared record;
    v_definition text;
begin
    for v_function in
        select p.oid::regprocedure from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and 'plan_cache_mode=force_generic_plan' = any(p.proconfig)
    loop
        execute format('alter function %s set plan_cache_mode = auto', v_function);
    end loop;
    for v_prepared in
        select p.oid::regprocedure as function, p.prosrc, p.proname as purpose,
               array(select pg_catalog.format_type(t.type, null) from unnest(p.proargtypes) as t (type)) as types
        from pg_catalog.pg_proc as p
        where p.oid in ('memory_internal._add_turns(text, bigint, text, jsonb, jsonb, bigint)'::regprocedure,
                        'memory_internal._add_counts(text, text[], text[], double precision[])'::regprocedure)
    loop
        if pg_catalog.strpos(v_prepared.prosrc, 'memory_internal._prepared(') = 0 then  -- (not done already)
            v_definition := pg_catalog.pg_get_functiondef(v_prepared.function);
            execute pg_catalog.left(v_definition, pg_catalog.strpos(v_definition, e'\nAS ')) || 'AS '
                || pg_catalog.quote_literal(memory_internal._prepared_body(
                    v_prepared.prosrc, pg_catalog.ltrim(v_prepared.purpose, '_'), v_prepared.types
                ));
        end if;
        -- (One plan for every tenant of the shard group: the statement names the shards. Its arguments travel as
        -- literals: times in ISO with their offset, numbers to the last digit.)
        execute format('alter function %s set plan_cache_mode = force_generic_plan', v_prepared.function);
        execute format('alter function %s set extra_float_digits = 3', v_prepared.function);
        execute format('alter function %s set datestyle = ''ISO, MDY''', v_prepared.function);
    end loop;
    -- A function that reads the tables, called inside one of those prepared statements (a trigger, say), chooses
    -- its own plans: a generic plan forced on a statement about Citus's tables is one Citus cannot run.
    for v_function in
        select p.oid::regprocedure from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc')) and p.prokind = 'f'
            and p.prolang in (
                select l.oid from pg_catalog.pg_language as l where l.lanname in ('plpgsql', 'plpython3u')
            )
            and not exists (select from unnest(p.proconfig) as c (setting) where c.setting like 'plan_cache_mode=%')
            and memory_internal._reads_tables(p.prosrc)
    loop
        execute format('alter function %s set plan_cache_mode = auto', v_function);
    end loop;
end
$$;

comment on function memory_internal._adapt_plans_to_citus() is
'Internal: how the API''s functions plan on a Citus node (PostgreSQL''s choice, statements prepared on the '
'tenant''s shards, each table-reading function its own plans).';

-- What the API's functions need to run on a Citus node, as memory.call runs them on the tenant's worker:
-- - PostgreSQL's choice of plan where a function forces one generic plan (Citus plans a statement about its tables
--   for its parameters' values, and cannot run the generic plan of one; custom plans for all, as before, replanned
--   the catalog reads of every function called too). Recall's scoring statement names the tenant's shards and
--   keeps its one plan (memory_internal._on_local_shards);
-- - each SQL function that reads a table or view of the extension runs as PL/pgSQL, its statements unchanged:
--   Citus plans no statement of a SQL function that reads its tables with the function's parameters in it,
--   nor one that an inlined SQL function brought a table into (a SQL function that reads no table is still
--   inlined where PostgreSQL inlines it);
-- - a statement may run inside a statement on a shard (nested distributed execution): memory.current_tenant()
--   reading memory.tenant_roles (a reference table) where row-level security calls it, a trigger, which runs
--   on the shard, writing the tables of the tenant whose rows fired it, and within memory.call (and the queue
--   worker's steps for a job: memory_internal._work_on, _embed_ahead; maintenance's for a tenant whose shards
--   it holds: _apply_retention, _move_tiers, _join_graph) a function called for each row of a statement reading
--   the tenant's other rows. Each such statement names the tenant,
--   whose shards are on this node (the bindings are copied to every node): it runs here, in the transaction;
-- - memory.current_tenant() reads the bindings from this node's shard of memory.tenant_roles;
-- - the statements of commit's turns and of the counters (memory_internal._add_turns, _add_counts: one statement
--   each) run prepared once per session on the tenant's shards, as recall's scoring statement does: an insert of a
--   select, Citus plans and runs the select, then sends its rows on (13.5 of a 20 ms commit, 0.7 ms so); a
--   function that reads the tables, called inside them, chooses its own plans;
-- - the tenant policies of the node's shards check with subselects (memory_internal._subselect_shard_policies),
--   and those of each shard made here from now on (an event trigger on create policy);
-- - each node's identity sequences of distributed tables count in a range of their own ((group << 48) + 1 on,
--   as Citus's do): a tenant's rows take their keys on the node that holds them, and no key a node gives
--   meets one a tenant brought along when its shards moved there;
-- - the functions that read only reference tables, and write none, read the node's copies by their shards' names
--   (memory_internal._read_reference_tables_here);
-- - memory.set_secret runs as its caller, a superuser: Citus writes the secrets, a reference table, on every node
--   as the role that writes them, and memory_owner may not log in to a node (memory_admin, who may not write
--   the secrets itself, is refused there).
drop function if exists memory_internal._adapt_to_citus();
create or replace function memory_internal._adapt_to_citus(bindings text default null) returns void
language plpgsql
as $$
declare
    v_function regprocedure;
    v_sql_function record;
    v_propagation text := pg_catalog.current_setting('citus.enable_ddl_propagation');
    v_sequence record;
    v_group bigint := (select g.groupid from pg_dist_local_group as g);
begin
    -- (Each node changes its own functions: this runs on every node, and a worker may not send its changes on.)
    perform pg_catalog.set_config('citus.enable_ddl_propagation', 'off', true);
    alter function memory.current_tenant() set citus.allow_nested_distributed_execution = on;
    alter function memory.set_secret(text, text, text) security invoker;
    alter function memory.call(text, text, jsonb) set citus.allow_nested_distributed_execution = on;
    alter function memory_internal._work_on(text, bigint, text) set citus.allow_nested_distributed_execution = on;
    alter function memory_internal._embed_ahead(text, bigint[], text)
    set citus.allow_nested_distributed_execution = on;
    alter function memory_internal._apply_retention(text, timestamptz, integer)
    set citus.allow_nested_distributed_execution = on;
    alter function memory_internal._move_tiers(text, timestamptz) set citus.allow_nested_distributed_execution = on;
    alter function memory_internal._join_graph(text, integer) set citus.allow_nested_distributed_execution = on;
    perform memory_internal._read_reference_tables_here();
    for v_function in
        select p.oid::regprocedure from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and p.prorettype = 'trigger'::regtype
    loop
        execute format('alter function %s set citus.allow_nested_distributed_execution = on', v_function);
    end loop;
    for v_sql_function in
        select pg_catalog.pg_get_functiondef(p.oid) as definition,
               memory_internal._plpgsql_body(
                   p.prosrc,
                   case when p.proretset then 'set' when p.prorettype = 'void'::regtype then 'void'
                        when 'o' = any(p.proargmodes) then 'out' else 'value' end,
                   case when 'o' = any(p.proargmodes) then
                            (select string_agg(quote_ident(a.name), ', ' order by a.n)
                             from unnest(p.proargnames, p.proargmodes) with ordinality as a (name, mode, n)
                             where a.mode = 'o')
                        else pg_catalog.format_type(p.prorettype, null) end
               ) as body
        from pg_catalog.pg_proc as p
        where p.oid in (select memory_internal._extension_objects('pg_catalog.pg_proc'))
            and p.prolang = (select l.oid from pg_catalog.pg_language as l where l.lanname = 'sql')
            -- (PL/pgSQL takes no output column of a parameter's name.)
            and (select count(*) = count(distinct a.name) from unnest(p.proargnames) as a (name) where a.name <> '')
            and memory_internal._reads_tables(p.prosrc)
            and not (p.provolatile in ('s', 'i') and memory_internal._reads_only_reference_tables(p.prosrc))
    loop
        -- (pg_get_functiondef: the header's lines, then the body's, which begin with "AS ".)
        execute pg_catalog.replace(
            pg_catalog.left(v_sql_function.definition, pg_catalog.strpos(v_sql_function.definition, e'\nAS ')),
            e'\n LANGUAGE sql\n', e'\n LANGUAGE plpgsql\n'
        ) || 'AS ' || pg_catalog.quote_literal(v_sql_function.body);
    end loop;
    perform memory_internal._adapt_plans_to_citus();
    if not exists (select from pg_catalog.pg_event_trigger as e where e.evtname = 'memory_shard_policies') then
        create event trigger memory_shard_policies on ddl_command_end when tag in ('CREATE POLICY')
        execute function memory_internal._subselect_new_shard_policies();
        alter extension agent_memory add event trigger memory_shard_policies;
    end if;
    perform memory_internal._subselect_shard_policies();
    if bindings is not null then
        perform memory_internal._read_bindings_from(bindings);
    end if;
    perform pg_catalog.set_config('citus.enable_ddl_propagation', v_propagation, true);
    -- (The coordinator's range starts at 1, past the keys it holds. Once the tables are Citus's, so are their
    -- sequences, which it does not let a node alter.)
    for v_sequence in
        select d.objid::regclass as sequence, coalesce(q.last_value, 0) as last_value
        from pg_catalog.pg_depend as d
        inner join memory_internal._citus_plan() as t on t.relation = d.refobjid and t.placement = 'distributed'
        inner join pg_catalog.pg_sequences as q on format('%I.%I', q.schemaname, q.sequencename)::regclass = d.objid
        where d.classid = 'pg_catalog.pg_class'::regclass and d.deptype = 'i'
            and not memory_internal._citus_table('memory.sessions')
    loop
        execute format('alter sequence %s minvalue %s maxvalue %s start %s restart %s', v_sequence.sequence,
                       (v_group << 48) + 1, (v_group + 1) << 48, (v_group << 48) + 1,
                       greatest((v_group << 48) + 1, v_sequence.last_value + 1));
    end loop;
end
$$;

comment on function memory_internal._adapt_to_citus(text) is
'Internal: what the API''s functions need on a Citus node (custom plans, SQL functions that read tables run as '
'PL/pgSQL, the tenant''s binding read from a shard''s statement and from bindings, the node''s shard of '
'memory.tenant_roles, tenant policies with subselects on its shards once the tables are Citus''s, '
'identity sequences in a range of the node''s own).';

-- The changes Citus needs before it takes the tables; returns the foreign keys from a distributed table to a
-- reference table, dropped (their definitions, to restore once every table is Citus's).
create or replace function memory_internal._prepare_for_citus() returns table (relation regclass, definition text)
language plpgsql
as $$
declare
    v_key record;
begin
    perform memory_internal._create_tenant_policies(plain => true);
    perform memory_internal._adapt_to_citus();
    -- A shard moved to another node is made there by the table's owner.
    grant create on schema memory_internal to memory_owner;
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

-- Row-level security calls memory.current_tenant() for each row a statement reads on a shard, and its read of
-- memory.tenant_roles, a reference table, would be a statement Citus plans each time (220 turns counted as
-- memory_owner: 12-15 ms, against 0.4 ms on one node): it reads this node's copy, the table's one shard, directly.
create or replace function memory_internal._read_bindings_from(shard text) returns void
language plpgsql
as $$
declare
    v_propagation text := pg_catalog.current_setting('citus.enable_ddl_propagation');
    v_definition text := pg_catalog.pg_get_functiondef('memory.current_tenant()'::regprocedure);
begin
    if pg_catalog.strpos(v_definition, 'from memory.tenant_roles ') = 0 then
        if pg_catalog.strpos(v_definition, format('from %s ', shard)) > 0 then
            return;  -- read there already
        end if;
        raise exception 'agent_memory: memory.current_tenant() no longer reads memory.tenant_roles as this expects'
            using hint = 'memory_internal._read_bindings_from rewrites its "from memory.tenant_roles" to the shard';
    end if;
    perform pg_catalog.set_config('citus.enable_ddl_propagation', 'off', true);
    execute pg_catalog.replace(v_definition, 'from memory.tenant_roles ', format('from %s ', shard));
    perform pg_catalog.set_config('citus.enable_ddl_propagation', v_propagation, true);
end
$$;

comment on function memory_internal._read_bindings_from(text) is
'Internal: memory.current_tenant() reads the bindings from this node''s shard of memory.tenant_roles (on Citus).';

-- memory_internal._adapt_to_citus() on every node of the cluster, this one last, with the bindings' shard; the
-- nodes adapted. Not while distributing: the other nodes' changes would wait for that transaction to end.
create or replace function memory_internal._adapt_every_node() returns integer
language plpgsql
as $$
declare
    v_bindings text := (
        select pg_catalog.shard_name('memory.tenant_roles'::regclass, d.shardid)
        from pg_dist_shard as d where d.logicalrelid = 'memory.tenant_roles'::regclass
    );
    v_failed text;
    v_nodes integer;
begin
    select string_agg(format('%s:%s: %s', r.nodename, r.nodeport, r.result), '; ') filter (where not r.success),
           count(*)
    into v_failed, v_nodes
    from pg_catalog.run_command_on_workers(format('select memory_internal._adapt_to_citus(%L)', v_bindings)) as r;
    if v_failed is not null then
        raise exception 'agent_memory: could not adapt every worker to Citus: %', v_failed;
    end if;
    perform memory_internal._adapt_to_citus(v_bindings);
    return v_nodes + 1;
end
$$;

comment on function memory_internal._adapt_every_node() is
'Internal: memory_internal._adapt_to_citus() on every node of the Citus cluster; returns how many.';

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
        -- Run again once distributing has ended, and after a node is added (citus_add_node: its extension is as
        -- its script made it): every node adapted, with what needs the tables placed (the bindings' shard).
        return jsonb_build_object('distributed', false, 'reason', 'the tables are distributed already',
                                  'adapted', memory_internal._adapt_every_node());
    end if;
    -- The workers' own copies of the tables (made by the extension's script there) change alike, so that
    -- what Citus later does to the coordinator's it can do to theirs.
    select string_agg(format('%s:%s: %s', r.nodename, r.nodeport, r.result), '; ') into v_failed
    from pg_catalog.run_command_on_workers('select count(*) from memory_internal._prepare_for_citus()') as r
    where not r.success;
    if v_failed is not null then
        raise exception 'agent_memory: distributing could not prepare every worker: %', v_failed;
    end if;
    -- The embedding model in force is recorded, and its HNSW indexes made, while the tables are the
    -- coordinator's: done by a tenant's first enrichment on a worker, it would write a reference table and
    -- index every shard as the owner, from the worker.
    perform memory_internal._register_model();
    create temporary table _citus_keys on commit drop as select * from memory_internal._prepare_for_citus();
    -- Triggers on distributed tables run on the workers, on each shard (counts and edges are kept per tenant,
    -- whose rows are all on one node).
    set local citus.enable_unsafe_triggers = on;
    -- One connection per node: foreign keys to reference tables are added in the same transaction.
    set local citus.multi_shard_modify_mode = 'sequential';
    for v_table in select * from memory_internal._citus_plan() as p where p.placement <> 'local' loop
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
    -- A call for a tenant runs on the worker that holds the tenant, in a transaction block too (where the
    -- transaction then stays on that worker).
    perform pg_catalog.create_distributed_function('memory.call(text, text, jsonb)', 'tenant_id',
                                                   colocate_with => v_anchor::text, force_delegation => true);
    return jsonb_build_object('distributed', true) || v_placed;
end
$$;

comment on function memory_internal._distribute() is
'Internal (not yet an API: maintenance and upgrades do not run on Citus yet): on a Citus '
'coordinator, once, as a '
'superuser: distributes every tenant-keyed table by tenant_id (co-located: a tenant''s rows are on one node) '
'and makes the shared tables reference tables. Returns the tables by placement, or distributed false when '
'they are Citus''s already. An error without Citus.';
