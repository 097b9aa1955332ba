-- Row-level security, enabled and forced on every table of the schema with a tenant_id column (a table
-- added later gets it by having one): a role sees and writes the rows of memory.current_tenant(), and
-- memory_admin every tenant's (the worker and maintenance serve them all). It holds for a role that reads
-- the tables and inside the API's functions alike: they run as memory_owner, whom it holds too, and it
-- reads the session's login and role, not current_user. The functions filter by tenant as well. A policy
-- calls nothing internal (a tenant role reading a table evaluates it); the subselects make each check run
-- once per statement, not once per row.
do $rls$
declare
    v_table regclass;
begin
    for v_table in
        select c.oid::regclass
        from pg_catalog.pg_class as c
        inner join pg_catalog.pg_attribute as a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
        where c.relnamespace = 'memory'::regnamespace and c.relkind in ('r', 'p')
            and c.oid not in ('memory.tenant_roles'::regclass, 'memory.config'::regclass)
    loop
        execute format('alter table %s enable row level security', v_table);
        execute format('alter table %s force row level security', v_table);
        execute format('drop policy if exists tenant_isolation on %s', v_table);
        execute format(
            'create policy tenant_isolation on %s '
            'using (tenant_id = (select memory.current_tenant()) '
            'or (select pg_catalog.pg_has_role(session_user, ''memory_admin'', ''member'')))',
            v_table
        );
    end loop;
end
$rls$;

-- Settings: a role reads the rows for every tenant and its own tenant's; memory_admin writes them all.
alter table memory.config enable row level security;
alter table memory.config force row level security;
drop policy if exists tenant_settings on memory.config;
create policy tenant_settings on memory.config
using (
    tenant_id in ('', (select memory.current_tenant()))
    or (select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member'))
);
