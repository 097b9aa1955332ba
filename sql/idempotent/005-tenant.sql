-- Who is asking: whether the login administers agent_memory, the tenant a session reads and writes,
-- and roles bound to one tenant.

-- Whether the login of this session administers agent_memory (a superuser or a member of memory_admin).
-- It reads session_user, which `set role` does not change and a security definer function does not
-- either, so it means the same inside one.
create or replace function memory_internal._administers() returns boolean
language sql
stable parallel safe
as $$
    select coalesce((select r.rolsuper from pg_catalog.pg_roles as r where r.rolname = session_user), false)
           or pg_catalog.pg_has_role(session_user, 'memory_admin', 'member')
$$;

comment on function memory_internal._administers() is
'Internal: whether the session''s login is a superuser or a member of memory_admin.';

-- The tenant of this session. A role bound to a tenant in memory.tenant_roles (the role in use, else the
-- session's login) always has that one, whatever it sets. Otherwise the tenant is the setting
-- memory.tenant_id ('default' when unset), which only roles that may switch tenants use: memory_app and
-- memory_admin members and superusers. Any other role, a memory_tenant member bound in no tenant of this
-- database among them, is refused. Row-level security on every tenant-keyed table compares its rows
-- with this.
create or replace function memory.current_tenant() returns text
language plpgsql
stable parallel safe
as $$
declare
    v_tenant text;
begin
    select r.tenant_id into v_tenant
    from memory.tenant_roles as r
    where r.role_name in (current_user, session_user)
    order by r.role_name = current_user desc
    limit 1;
    if found then
        return v_tenant;
    end if;
    -- Who may choose is decided by the login, as for memory_internal._administers(): the same inside a function
    -- that runs as the owner.
    if not (memory_internal._administers() or pg_catalog.pg_has_role(session_user, 'memory_app', 'member')) then
        raise exception 'agent_memory: role % has no tenant', current_user
            using hint = 'memory_admin binds it with memory.bind_tenant_role(role, tenant) (it needs '
                         'memory_tenant), or grants it memory_app to let it choose one with set memory.tenant_id';
    end if;
    return coalesce(nullif(pg_catalog.current_setting('memory.tenant_id', true), ''), 'default');
end
$$;

comment on function memory.current_tenant() is
'The tenant whose memory this session reads and writes: the one memory.tenant_roles binds the role to, '
'else set memory.tenant_id = ''...'' (memory_app, memory_admin), default ''default''.';

-- Binds a role to a tenant (or moves it to another): from then on it sees and writes only that tenant.
create or replace function memory.bind_tenant_role(role_name regrole, tenant_id text) returns void
language plpgsql
as $$
begin
    if tenant_id is null or tenant_id = '' or length(tenant_id) > 200 then
        raise exception 'agent_memory: tenant_id must be 1 to 200 characters, got %', coalesce(tenant_id, 'null');
    end if;
    -- The role's name as current_user spells it (regrole::text quotes names like "Acme-Agent").
    insert into memory.tenant_roles as r (role_name, tenant_id)
    values ((select g.rolname from pg_catalog.pg_roles as g where g.oid = bind_tenant_role.role_name),
            bind_tenant_role.tenant_id)
    on conflict on constraint tenant_roles_pkey do update
    set tenant_id = excluded.tenant_id, bound_at = pg_catalog.now(), bound_by = current_user;
end
$$;

comment on function memory.bind_tenant_role(regrole, text) is
'Binds a role to one tenant (memory_admin): select memory.bind_tenant_role(''acme_app'', ''acme''). The role '
'also needs the grants of memory_tenant: grant memory_tenant to acme_app.';

comment on table memory.tenant_roles is
'Roles bound to one tenant; only memory_admin writes it. A role sees its own row, memory_admin every row.';
comment on column memory.tenant_roles.role_name is 'The role (a login, or a role used with set role).';
comment on column memory.tenant_roles.tenant_id is 'The tenant it reads and writes.';
comment on column memory.tenant_roles.bound_at is 'When it was bound.';
comment on column memory.tenant_roles.bound_by is 'Who bound it.';

-- The mapping itself: a role reads its own binding (current_tenant needs it), memory_admin all of them.
alter table memory.tenant_roles enable row level security;
alter table memory.tenant_roles force row level security;
drop policy if exists own_binding on memory.tenant_roles;
create policy own_binding on memory.tenant_roles
using (role_name in (current_user, session_user) or memory_internal._administers());
