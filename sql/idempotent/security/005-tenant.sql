-- Who is asking: whether the login administers agent_memory, the tenant a session reads and writes,
-- and roles bound to one tenant.

-- Whether the login of this session administers agent_memory (a superuser or a member of memory_admin:
-- pg_has_role counts a superuser a member of every role). It reads session_user, which `set role` does
-- not change and a security definer function does not either, so it means the same inside the API's
-- functions, which run as memory_owner. Row-level security policies say the same inline: a role reading
-- a table evaluates them, and may execute nothing internal.
create or replace function memory_internal._administers() returns boolean
language sql
stable parallel safe
as $$
    select pg_catalog.pg_has_role(session_user, 'memory_admin', 'member')
$$;

comment on function memory_internal._administers() is
'Internal: whether the session''s login is a superuser or a member of memory_admin.';

-- Who does what this session does, as the records say (recorded_by, given_by, forgotten_by, ...): the role
-- taken with `set role`, else the login. A login that serves several roles, the HTTP server among them (it
-- takes each API key's role for its request), records the role it acts as, as memory.current_tenant() reads
-- the tenant from it.
create or replace function memory_internal._actor() returns text
language sql
stable parallel safe
as $$
    select coalesce(nullif(pg_catalog.current_setting('role'), 'none'), session_user)
$$;

comment on function memory_internal._actor() is
'Internal: who acts in this session, as records name it: the role taken with set role, else the login.';

-- The records of a tenant's writes name who made them.
alter table memory.memories alter column recorded_by set default memory_internal._actor();
alter table memory.memory_merges alter column recorded_by set default memory_internal._actor();
alter table memory.memory_supersessions alter column recorded_by set default memory_internal._actor();
alter table memory.entity_states alter column recorded_by set default memory_internal._actor();
alter table memory.feedback alter column given_by set default memory_internal._actor();
alter table memory.tombstones alter column forgotten_by set default memory_internal._actor();
alter table memory.retention_policies alter column created_by set default memory_internal._actor();
alter table memory.archives alter column created_by set default memory_internal._actor();

-- The tenant of this session. A role bound to a tenant in memory.tenant_roles always has that one, whatever
-- it sets: the role taken with `set role` (the setting role, which PostgreSQL lets a session set only to
-- a role its login may become), else the login (session_user). Both read the same inside the API's
-- functions, which run as memory_owner, as outside them (current_user would not). Otherwise the tenant is
-- the setting memory.tenant_id ('default' when unset), which only logins that may switch tenants use:
-- memory_app and memory_admin members and superusers. Any other role, a memory_tenant member bound in no
-- tenant of this database among them, is refused. Row-level security on every tenant-keyed table compares
-- its rows with this, so it calls nothing internal.
create or replace function memory.current_tenant() returns text
language plpgsql
stable parallel safe
as $$
declare
    v_role text := nullif(pg_catalog.current_setting('role'), 'none');
    v_tenant text;
begin
    select r.tenant_id into v_tenant
    from memory.tenant_roles as r
    where r.role_name in (v_role, session_user)
    order by r.role_name = v_role desc nulls last
    limit 1;
    if found then
        return v_tenant;
    end if;
    if not pg_catalog.pg_has_role(session_user, 'memory_app', 'member') then
        raise exception 'agent_memory: role % has no tenant', coalesce(v_role, session_user)
            using hint = 'memory_admin binds it with memory.bind_tenant_role(role, tenant) (it needs '
                         'memory_tenant), or grants it memory_app to let it choose one with set memory.tenant_id';
    end if;
    return coalesce(nullif(pg_catalog.current_setting('memory.tenant_id', true), ''), 'default');
end
$$;

comment on function memory.current_tenant() is
'The tenant whose memory this session reads and writes: the one memory.tenant_roles binds the role taken with '
'set role, else the login, to; else set memory.tenant_id = ''...'' (memory_app, memory_admin), default '
'''default''.';

-- A binding as memory_admin writes it (memory.bind_tenant_role, or memory.tenant_roles itself): a tenant of 1
-- to 200 characters, and a role that is neither one of the extension's own (groups, and the owner: binding
-- one would bind whoever takes it up) nor one of PostgreSQL's predefined roles (pg_*).
create or replace function memory_internal._tenant_role_validate() returns trigger
language plpgsql
security definer
as $$
begin
    if new.tenant_id is null or new.tenant_id = '' or length(new.tenant_id) > 200 then
        raise exception 'agent_memory: tenant_id must be 1 to 200 characters, got %', coalesce(new.tenant_id, 'null')
            using errcode = 'invalid_parameter_value';
    end if;
    if new.role_name in ('memory_tenant', 'memory_app', 'memory_admin', 'memory_owner', 'memory_observer',
                         'memory_http')
        or new.role_name like 'pg\_%' then
        raise exception 'agent_memory: % is one of agent_memory''s or PostgreSQL''s own roles; bind a login or a role '
            'of its own', new.role_name using errcode = 'invalid_parameter_value';
    end if;
    new.bound_at := pg_catalog.now();
    new.bound_by := session_user;
    return new;
end
$$;

comment on function memory_internal._tenant_role_validate() is
'Internal: trigger that refuses a binding of an empty or long tenant, or of the extension''s or PostgreSQL''s own '
'roles.';

drop trigger if exists tenant_roles_validate on memory.tenant_roles;
create trigger tenant_roles_validate before insert or update on memory.tenant_roles
for each row execute function memory_internal._tenant_role_validate();

-- Binds a role to a tenant (or moves it to another): from then on it sees and writes only that tenant. Runs as
-- its caller, memory_admin, who may write the bindings itself (sql/tail.sql).
create or replace function memory.bind_tenant_role(role_name regrole, tenant_id text) returns void
language plpgsql
as $$
declare
    -- The role's name as PostgreSQL spells it (regrole::text quotes names like "Acme-Agent"), read first: Citus
    -- takes no subquery in an insert into its tables.
    v_name text := (select g.rolname from pg_catalog.pg_roles as g where g.oid = bind_tenant_role.role_name);
begin
    insert into memory.tenant_roles as r (role_name, tenant_id)
    values (v_name, bind_tenant_role.tenant_id)
    on conflict on constraint tenant_roles_pkey do update set tenant_id = excluded.tenant_id;
end
$$;

comment on function memory.bind_tenant_role(regrole, text) is
'Binds a role to one tenant (memory_admin): select memory.bind_tenant_role(''acme_app'', ''acme''). The role '
'also needs the grants of memory_tenant: grant memory_tenant to acme_app.';

-- The mapping itself: a session reads the bindings of its login and of the role it took (current_tenant
-- needs them), memory_admin all of them.
alter table memory.tenant_roles enable row level security;
alter table memory.tenant_roles force row level security;
drop policy if exists own_binding on memory.tenant_roles;
create policy own_binding on memory.tenant_roles
using (
    role_name in (session_user, pg_catalog.current_setting('role'))
    or pg_catalog.pg_has_role(session_user, 'memory_admin', 'member')
);
