-- API keys of the HTTP server (`agent-memory serve`, docs/http.md). A key stands for one database role: a role
-- bound to a tenant (memory.bind_tenant_role), or a memory_app role whose requests name their tenant. The server
-- logs in as a member of memory_http, looks the key up, takes the key's role with `set role` for the request's
-- transaction, and row-level security keeps the tenant's rows apart as for any other session of that role.

-- On a Citus cluster the HTTP server's API keys are the coordinator's, where the server connects (each node keeps
-- its own table of them): a key made or revoked on a worker would be one the server never sees.
create or replace function memory_internal._refuse_keys_on_a_worker() returns void
language plpgsql
stable
as $$
begin
    if memory_internal._citus_group() > 0 then
        raise exception 'agent_memory: on a Citus cluster the HTTP server''s API keys are the coordinator''s'
            using errcode = 'feature_not_supported',
                  hint = 'Make, list and revoke them connected to the coordinator, where the server connects.';
    end if;
end
$$;

comment on function memory_internal._refuse_keys_on_a_worker() is
'Internal: an error on a Citus worker, whose table of API keys the HTTP server never reads.';

-- A new key (memory_admin): the key is returned once, only its sha256 is kept. The role must be one the server
-- may take (granted to memory_http), bound to tenant_id, or a memory_app role for a key without a tenant; never
-- one that administers agent_memory (a superuser, or a member of memory_admin).
create or replace function memory.create_api_key(
    tenant_id text,
    role_name regrole,
    label text default '',
    may_write boolean default true,
    max_request_bytes integer default null,
    requests_per_minute integer default null,
    expires_at timestamptz default null
) returns table (key_id bigint, api_key text)
language plpgsql
as $$
declare
    v_role name := (select g.rolname from pg_catalog.pg_roles as g where g.oid = create_api_key.role_name);
    v_bound text := (select r.tenant_id from memory.tenant_roles as r where r.role_name = v_role);
    v_key text := 'amk_' || pg_catalog.replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
begin
    perform memory_internal._refuse_keys_on_a_worker();
    if create_api_key.tenant_id = '' or length(create_api_key.tenant_id) > 200 then
        raise exception 'agent_memory: tenant_id must be 1 to 200 characters, or null for a role that chooses its '
            'tenant per request' using errcode = 'invalid_parameter_value';
    end if;
    if pg_catalog.pg_has_role(v_role, 'memory_admin', 'member') then
        raise exception 'agent_memory: role % administers agent_memory (a superuser or a member of memory_admin): '
            'a key must not', v_role using errcode = 'invalid_parameter_value',
            hint = 'make a role of the tenant: create role acme_http; grant memory_tenant to acme_http; '
                   'select memory.bind_tenant_role(''acme_http'', ''acme'')';
    end if;
    if v_bound is not null and v_bound is distinct from create_api_key.tenant_id then
        raise exception 'agent_memory: role % is bound to tenant %, not %', v_role, v_bound,
            coalesce(create_api_key.tenant_id, '(none)') using errcode = 'invalid_parameter_value',
            hint = format('pass tenant %L, or use a role bound to the tenant', v_bound);
    end if;
    if v_bound is null and create_api_key.tenant_id is not null then
        raise exception 'agent_memory: role % is bound to no tenant, so a key of tenant % cannot take it',
            v_role, create_api_key.tenant_id using errcode = 'invalid_parameter_value',
            hint = format('bind it first: select memory.bind_tenant_role(%L, %L)', v_role, create_api_key.tenant_id);
    end if;
    if v_bound is null and not pg_catalog.pg_has_role(v_role, 'memory_app', 'member') then
        raise exception 'agent_memory: a key without a tenant needs a memory_app role, and % is not one', v_role
            using errcode = 'invalid_parameter_value', hint = 'pass the tenant of a bound role, or grant memory_app';
    end if;
    if not pg_catalog.pg_has_role('memory_http', v_role, 'member') then
        raise exception 'agent_memory: the HTTP server cannot take role % (memory_http is not a member of it)', v_role
            using errcode = 'invalid_parameter_value', hint = format('grant %I to memory_http', v_role);
    end if;
    if create_api_key.max_request_bytes <= 0 or create_api_key.requests_per_minute <= 0 then
        raise exception 'agent_memory: max_request_bytes and requests_per_minute must be positive (or null: the '
            'server''s defaults)' using errcode = 'invalid_parameter_value';
    end if;
    return query
    insert into memory_internal.api_keys as k (
        key_hash, key_prefix, tenant_id, role_name, label, may_write, max_request_bytes, requests_per_minute,
        expires_at
    )
    values (
        pg_catalog.sha256(pg_catalog.convert_to(v_key, 'UTF8')), left(v_key, 12), create_api_key.tenant_id, v_role,
        coalesce(create_api_key.label, ''), coalesce(create_api_key.may_write, true),
        create_api_key.max_request_bytes, create_api_key.requests_per_minute, create_api_key.expires_at
    )
    returning k.key_id, v_key;
end
$$;

comment on function memory.create_api_key(text, regrole, text, boolean, integer, integer, timestamptz) is
'A new API key of the HTTP server (memory_admin), returned once: select * from memory.create_api_key(''acme'', '
'''acme_http''). The role must be bound to the tenant (or be a memory_app role, for a key without one) and '
'granted to memory_http.';

-- Revokes a key (memory_admin): from the next request on, the server answers it 401.
create or replace function memory.revoke_api_key(key_id bigint) returns boolean
language plpgsql
as $$
begin
    perform memory_internal._refuse_keys_on_a_worker();
    update memory_internal.api_keys as k
    set revoked_at = coalesce(k.revoked_at, pg_catalog.now()), revoked_by = coalesce(k.revoked_by, session_user)
    where k.key_id = revoke_api_key.key_id;
    if not found then
        raise exception 'agent_memory: no API key %', revoke_api_key.key_id using errcode = 'no_data_found',
            hint = 'memory.list_api_keys() lists them';
    end if;
    return true;
end
$$;

comment on function memory.revoke_api_key(bigint) is
'Revokes an API key (memory_admin): select memory.revoke_api_key(3). The HTTP server refuses it from then on.';

-- The keys (memory_admin), newest first: never the key, its first 12 characters.
create or replace function memory.list_api_keys(tenant_id text default null) returns table (
    key_id bigint, key_prefix text, tenant_id text, role_name name, label text, may_write boolean,
    max_request_bytes integer, requests_per_minute integer, created_at timestamptz, created_by name,
    expires_at timestamptz, revoked_at timestamptz, last_used_at timestamptz
)
language sql
stable
as $$
    select k.key_id, k.key_prefix, k.tenant_id, k.role_name, k.label, k.may_write, k.max_request_bytes,
        k.requests_per_minute, k.created_at, k.created_by, k.expires_at, k.revoked_at, k.last_used_at
    from memory_internal.api_keys as k
    where list_api_keys.tenant_id is null or k.tenant_id = list_api_keys.tenant_id
    order by k.key_id desc
$$;

comment on function memory.list_api_keys(text) is
'The HTTP server''s API keys (memory_admin), of one tenant or all: their first characters, role, limits, when '
'created, revoked and last used. The keys themselves are kept nowhere.';

-- What a key may do (memory_http): nothing for an unknown, revoked or expired key; refused to a login that
-- administers. Marks it used, at most once a minute (a key in use is not written on every request), and not
-- on a standby.
create or replace function memory.authenticate_api_key(api_key text) returns table (
    key_id bigint, tenant_id text, role_name name, may_write boolean, max_request_bytes integer,
    requests_per_minute integer
)
language plpgsql
as $$
declare
    v_key memory_internal.api_keys;
begin
    -- Row-level security lets a login that administers see every tenant, whatever role it takes.
    if memory_internal._administers() then
        raise exception 'agent_memory: the login % administers agent_memory (a superuser or a member of '
            'memory_admin), so row-level security would not keep the tenants of its requests apart', session_user
            using errcode = 'insufficient_privilege',
            hint = 'serve keys as a login granted memory_http and nothing else';
    end if;
    select * into v_key
    from memory_internal.api_keys as k
    where k.key_hash = pg_catalog.sha256(pg_catalog.convert_to(coalesce(authenticate_api_key.api_key, ''), 'UTF8'))
        and k.revoked_at is null and (k.expires_at is null or k.expires_at > pg_catalog.now());
    if not found then
        return;
    end if;
    if (v_key.last_used_at is null or v_key.last_used_at < pg_catalog.now() - interval '1 minute')
        and not pg_catalog.pg_is_in_recovery() then
        update memory_internal.api_keys as k set last_used_at = pg_catalog.now() where k.key_id = v_key.key_id;
    end if;
    return query select v_key.key_id, v_key.tenant_id, v_key.role_name, v_key.may_write, v_key.max_request_bytes,
        v_key.requests_per_minute;
end
$$;

comment on function memory.authenticate_api_key(text) is
'The key''s role, tenant, write right and limits, or no row for an unknown, revoked or expired key (memory_http: '
'the HTTP server asks it on every request).';
