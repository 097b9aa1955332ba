-- Runs first in every install and upgrade script: the schema of the extension's internals, the record
-- of incremental files, and the function that applies each of them exactly once.

-- Internals (functions a DBA is not asked to call, internal tables and types) live in memory_internal,
-- so that \df memory.* lists the public API. Before 0.3.0 they were memory._*: the record moves here, the
-- rest moves in incremental file 009.
create schema if not exists memory_internal;
comment on schema memory_internal is
'agent_memory''s internals: the functions, tables and types behind the public API of schema memory.';
do $move$
begin
    if pg_catalog.to_regclass('memory._migration') is not null then
        alter table memory._migration set schema memory_internal;
        drop function memory._apply_migration(text, text, text, text);
    end if;
end
$move$;

create table if not exists memory_internal._migration (
    name text primary key,
    sha256 text not null,
    applied_in_version text not null,
    applied_at timestamptz not null default pg_catalog.now()
);

comment on table memory_internal._migration is
'Incremental SQL files (sql/incremental) applied to this database, each once, with the hash it had.';

-- Applies one incremental file unless it was applied before; a recorded file whose text has changed
-- since is an error, because released incremental files are frozen. It runs the file under the
-- install script's search_path (the extension's schema, then pgvector's), so it sets none itself.
create or replace function memory_internal._apply_migration(
    p_name text, p_sha256 text, p_version text, p_body text
) returns void
language plpgsql
as $$
declare
    v_recorded text;
begin
    select m.sha256 into v_recorded from memory_internal._migration as m where m.name = p_name;
    if found then
        if v_recorded <> p_sha256 then
            raise exception 'agent_memory: incremental file % changed after it was applied', p_name
                using detail = format('recorded sha256 %s, now %s', v_recorded, p_sha256),
                hint = 'released incremental files must never change; add a new file instead';
        end if;
        return;
    end if;
    execute p_body;
    insert into memory_internal._migration (name, sha256, applied_in_version)
    values (p_name, p_sha256, p_version);
end
$$;

comment on function memory_internal._apply_migration(text, text, text, text) is
'Internal: runs an incremental SQL file once and records it in memory_internal._migration.';

-- The roles the extension's objects belong to (sql/tail.sql gives them what is theirs): memory_owner owns
-- every table, view and function, and the API runs as it; memory_observer owns the two functions that must
-- see every tenant's chunks whoever calls (it may read those tables past row-level security, and nothing
-- else). Roles are the cluster's: one that already exists must be what this makes (no login, no superuser, no
-- member and a member of no role, no right to make roles or databases; only memory_observer bypasses
-- row-level security); anything else is a role someone else controls, and the install stops.
do $owners$
declare
    v_role record;
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_owner') then
        create role memory_owner nologin;
    end if;
    if not exists (select from pg_catalog.pg_roles where rolname = 'memory_observer') then
        create role memory_observer nologin bypassrls;
    end if;
    for v_role in
        select r.rolname, r.rolcanlogin or r.rolsuper or r.rolcreaterole or r.rolcreatedb
                          or r.rolbypassrls <> (r.rolname = 'memory_observer') or exists (
                              select from pg_catalog.pg_auth_members as m where m.roleid = r.oid or m.member = r.oid
                          ) as controlled
        from pg_catalog.pg_roles as r where r.rolname in ('memory_owner', 'memory_observer')
    loop
        if v_role.controlled then
            raise exception 'agent_memory: role % exists and can log in, create roles or databases, bypasses '
                'row-level security where it should not, or has members or roles: it must be a bare role only the '
                'extension uses', v_role.rolname
                using hint = 'drop it (or revoke what it has) and install again';
        end if;
    end loop;
end
$owners$;

-- The objects of one catalog (pg_proc, pg_class) that belong to this extension: what sql/tail.sql pins to
-- a search_path, hands to memory_owner and makes run as it.
create or replace function memory_internal._extension_objects(catalog regclass) returns setof oid
language sql
stable
as $$
    select d.objid
    from pg_catalog.pg_depend as d
    inner join pg_catalog.pg_extension as e on d.refobjid = e.oid
    where d.classid = catalog and d.deptype = 'e' and e.extname = 'agent_memory'
$$;

comment on function memory_internal._extension_objects(regclass) is
'Internal: the objects of a catalog (pg_proc, pg_class) that belong to agent_memory.';
