-- Roles and tenants (0.3.0): who may do what, and which tenant a role's rows belong to.

-- Cluster-wide group roles, created once: memory_tenant (the grants an application or agent of one
-- tenant needs; a member must be bound to a tenant in memory.tenant_roles), memory_app (a memory_tenant
-- that may choose its tenant with `set memory.tenant_id`), memory_admin (settings, secrets, tenants,
-- maintenance across tenants).
do $roles$
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_tenant') then
        create role memory_tenant nologin;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_app') then
        create role memory_app nologin;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_admin') then
        create role memory_admin nologin;
    end if;
end
$roles$;

-- Roles bound to one tenant: whatever they `set`, their tenant is this one.
create table memory.tenant_roles (
    role_name name primary key,
    tenant_id text not null check (tenant_id <> '' and length(tenant_id) <= 200),
    bound_at timestamptz not null default pg_catalog.now(),
    bound_by name not null default current_user
);

select pg_catalog.pg_extension_config_dump('memory.tenant_roles', '');

-- Settings per tenant: a row of memory.config with a tenant_id is that tenant's, over the row for every
-- tenant (tenant_id '').
alter table memory.config add column tenant_id text not null default '';
alter table memory.config drop constraint config_pkey;
alter table memory.config add primary key (tenant_id, key);

-- A secret is sent only to the origin (scheme://host[:port]) it was stored for.
alter table memory._secrets add column origin text;

-- Secrets stored before 0.3.0 were for the endpoint configured then (a secret without an origin is sent
-- nowhere until it is stored again with one).
update memory._secrets as s
set origin = coalesce(
    (
        select lower(substring(c.value #>> '{}' from '^(https?://[^/?#@]+)'))
        from memory.config as c
        where c.key = case s.name when 'rerank_api_key' then 'rerank_url' else 'openai_base_url' end
    ),
    case when s.name = 'openai_api_key' then 'https://api.openai.com' end
);

-- setting_definitions() gains who may set each setting; set_secret() the origin.
drop function if exists memory.setting_definitions() cascade;
drop function if exists memory.set_secret(text, text);
-- _register_model runs as the owner and now registers the model in force, not one its caller names.
drop function if exists memory._register_model(text, text, integer);
