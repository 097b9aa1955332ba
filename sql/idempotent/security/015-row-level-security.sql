-- Row-level security, enabled and forced on every table of the schema with a tenant_id column (a table
-- added later gets it by having one): a role sees and writes the rows of memory.current_tenant(), and
-- memory_admin every tenant's (the worker and maintenance serve them all). It holds for a role that reads
-- the tables and inside the API's functions alike: they run as memory_owner, whom it holds too, and it
-- reads the session's login and role, not current_user. The functions filter by tenant as well. A policy
-- calls nothing internal (a tenant role reading a table evaluates it); the subselects make each check run
-- once per statement, not once per row. Citus refuses subqueries in the policies of the tables it distributes
-- (and in a statement that writes one with them): there the same checks are plain calls, made once per row. Its
-- shards, where a tenant's rows are, are plain tables to PostgreSQL: each node gives them the subselects
-- (memory_internal._subselect_shard_policies), and Citus copies the plain calls to a shard it makes anew.

-- A tenant-keyed table's policy check: its rows are the tenant's (settings: also the rows for every tenant),
-- or the role is memory_admin's; each read once per statement by a subselect, or (plain) called per row.
create or replace function memory_internal._tenant_check(relation regclass, plain boolean) returns text
language sql
immutable
as $$
    select format(
        case when relation = 'memory.config'::regclass then 'tenant_id in ('''', %1$s) or %2$s'
             else 'tenant_id = %1$s or %2$s' end,
        case when plain then 'memory.current_tenant()' else '(select memory.current_tenant())' end,
        case when plain then 'pg_catalog.pg_has_role(session_user, ''memory_admin'', ''member'')'
             else '(select pg_catalog.pg_has_role(session_user, ''memory_admin'', ''member''))' end
    )
$$;

comment on function memory_internal._tenant_check(regclass, boolean) is
'Internal: the row-level security check of a tenant-keyed table (subselects, or plain calls).';

-- (Re)creates the tenant policies: with subselects, or as plain calls on Citus's tables and when plain says so
-- (memory_internal._distribute(), before it hands the tables to Citus).
create or replace function memory_internal._create_tenant_policies(plain boolean default false) returns void
language plpgsql
as $$
declare
    v_table regclass;
begin
    for v_table in
        select c.oid::regclass
        from pg_catalog.pg_class as c
        inner join pg_catalog.pg_attribute as a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
        where c.relnamespace = 'memory'::regnamespace and c.relkind in ('r', 'p')
            and c.oid <> 'memory.tenant_roles'::regclass
    loop
        execute format('alter table %s enable row level security', v_table);
        execute format('alter table %s force row level security', v_table);
        execute format('drop policy if exists tenant_isolation on %s', v_table);
        execute format('drop policy if exists tenant_settings on %s', v_table);
        execute format('create policy %I on %s using (%s)',
                       case when v_table = 'memory.config'::regclass then 'tenant_settings' else 'tenant_isolation' end,
                       v_table, memory_internal._tenant_check(v_table, plain or memory_internal._citus_table(v_table)));
    end loop;
end
$$;

comment on function memory_internal._create_tenant_policies(boolean) is
'Internal: (re)creates the row-level security policy of every tenant-keyed table (subselects, or plain calls '
'on the tables Citus holds).';

select memory_internal._create_tenant_policies();
