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
