-- API keys of the HTTP server (0.4.0): `agent-memory serve` answers a request with a key as the database role
-- the key is bound to. memory_http is the group of the server's logins: it may look keys up, and is granted each
-- key's role so that the server can take it (set role) for the request.
do $roles$
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_http') then
        create role memory_http nologin;
    end if;
end
$roles$;

-- Only the owner reads or writes this table: memory_admin creates, lists and revokes keys with the API's
-- functions, memory_http looks one up by its hash. The key itself is shown once and kept nowhere.
create table memory_internal.api_keys (
    key_id bigint generated always as identity primary key,
    key_hash bytea not null unique,
    key_prefix text not null,
    tenant_id text check (tenant_id <> '' and length(tenant_id) <= 200),
    role_name name not null,
    label text not null default '',
    may_write boolean not null default true,
    max_request_bytes integer check (max_request_bytes > 0),
    requests_per_minute integer check (requests_per_minute > 0),
    created_at timestamptz not null default pg_catalog.now(),
    created_by name not null default session_user,
    expires_at timestamptz,
    revoked_at timestamptz,
    revoked_by name,
    last_used_at timestamptz
);

select pg_catalog.pg_extension_config_dump('memory_internal.api_keys', '');
select pg_catalog.pg_extension_config_dump('memory_internal.api_keys_key_id_seq', '');

comment on table memory_internal.api_keys is
'API keys of the HTTP server, hashed (sha256): each answers as one role, bound to a tenant or choosing it per '
'request. Read with memory.list_api_keys().';
