-- agent_memory 0.1.0: assembled by extension/tools/assemble.py from sql/; do not edit.

\echo Use "CREATE EXTENSION agent_memory" to load this file. \quit

-- sql/head.sql
-- Runs first in every install and upgrade script: the record of incremental files, and the
-- function that applies each of them exactly once.

create table if not exists memory._migration (
    name text primary key,
    sha256 text not null,
    applied_in_version text not null,
    applied_at timestamptz not null default pg_catalog.now()
);

comment on table memory._migration is
'Incremental SQL files (sql/incremental) applied to this database, each once, with the hash it had.';

-- Applies one incremental file unless it was applied before; a recorded file whose text has changed
-- since is an error, because released incremental files are frozen.
create or replace function memory._apply_migration(
    p_name text, p_sha256 text, p_version text, p_body text
) returns void
language plpgsql
set search_path = pg_catalog, pg_temp
as $$
declare
    v_recorded text;
begin
    select m.sha256 into v_recorded from memory._migration as m where m.name = p_name;
    if found then
        if v_recorded <> p_sha256 then
            raise exception 'agent_memory: incremental file % changed after it was applied', p_name
                using detail = format('recorded sha256 %s, now %s', v_recorded, p_sha256),
                hint = 'released incremental files must never change; add a new file instead';
        end if;
        return;
    end if;
    execute p_body;
    insert into memory._migration (name, sha256, applied_in_version)
    values (p_name, p_sha256, p_version);
end
$$;

comment on function memory._apply_migration(text, text, text, text) is
'Internal: runs an incremental SQL file once and records it in memory._migration.';

-- sql/incremental/001-config.sql
select memory._apply_migration('001-config.sql', '1c21e7fb6d33ea53ff90b8a39501e6ed417e0b79605d790b4648ca102f18ab4b', '0.1.0', $migration_body$
-- Settings a DBA has changed from their defaults. The defaults themselves live in
-- memory.setting_definitions() so that upgrades can ship new ones.
create table memory.config (
    key text primary key,
    value jsonb not null,
    updated_at timestamptz not null default pg_catalog.now(),
    updated_by name not null default current_user
);

select pg_catalog.pg_extension_config_dump('memory.config', '');
$migration_body$);

-- sql/idempotent/001-python.sql
-- Loads the in-database Python package (agent_memory_db) once per backend.
-- It lives in a versioned directory outside the system's site-packages; a package of another
-- release than this SQL is a clear error, never a silent mix.
create or replace function memory._load_python() returns void
language plpython3u
as $$
version, python_dir = "0.1.0", "/usr/local/lib/agent_memory/0.1.0"
if GD.get("agent_memory_version") == version:
    return
import os, sys
if GD.get("agent_memory_version"):
    plpy.error("agent_memory: this connection loaded Python package %s; reconnect to use %s"
               % (GD["agent_memory_version"], version))
if not os.path.isdir(python_dir):
    plpy.error("agent_memory: Python package directory %s is missing" % python_dir,
               hint="run `make install` (it installs the package for /usr/bin/python3)")
if python_dir not in sys.path:
    sys.path.insert(0, python_dir)
import agent_memory_db
try:
    agent_memory_db.require_version(version, python_dir)
except agent_memory_db.VersionMismatch as exc:
    plpy.error(str(exc))
GD["agent_memory_version"] = version
$$;

comment on function memory._load_python() is
'Internal: puts the versioned agent_memory_db package on sys.path and checks it matches this SQL.';

-- sql/idempotent/010-settings.sql
-- Settings: a catalog of defaults, DBA overrides in memory.config, per-session overrides with
-- `set memory.<key> = ...`. Precedence, highest first: per-call argument (where a function takes
-- one), session setting, memory.config, default.

-- Every setting the extension knows, with its default and the values it accepts.
create or replace function memory.setting_definitions()
returns table (
    key text, default_value jsonb, value_type text, allowed jsonb,
    minimum numeric, maximum numeric, description text
)
language sql
immutable parallel safe
as $$
    values
        ('embedder', '"local"'::jsonb, 'string', '["local", "openai", "client", "none"]'::jsonb,
         null::numeric, null::numeric,
         'Which embedder writes and queries vectors: local (all-MiniLM-L6-v2 inside the database), '
         || 'openai (an OpenAI-compatible endpoint), client (callers pass vectors) or none (full-text only).')
$$;

comment on function memory.setting_definitions() is
'Every setting with its default, type, accepted values and meaning. Change one with '
'insert into memory.config or, for one session, set memory.<key> = ...';

-- The value checked against its definition; raises an error that names the key and the problem.
create or replace function memory._validated_setting(p_key text, p_value jsonb) returns jsonb
language plpgsql
stable
as $$
declare
    d record;
begin
    select * into d from memory.setting_definitions() as s where s.key = p_key;
    if not found then
        raise exception 'agent_memory: unknown setting "%"', p_key
            using hint = 'select key from memory.setting_definitions() lists them';
    end if;
    if jsonb_typeof(p_value) is distinct from d.value_type then
        raise exception 'agent_memory: setting "%" must be a JSON %, got %', p_key, d.value_type,
            coalesce(p_value::text, 'null');
    end if;
    if d.allowed is not null and not d.allowed @> jsonb_build_array(p_value) then
        raise exception 'agent_memory: setting "%" must be one of %, got %', p_key, d.allowed, p_value;
    end if;
    if d.minimum is not null and p_value::numeric < d.minimum
        or d.maximum is not null and p_value::numeric > d.maximum then
        raise exception 'agent_memory: setting "%" must be between % and %, got %',
            p_key, d.minimum, d.maximum, p_value;
    end if;
    return p_value;
end
$$;

comment on function memory._validated_setting(text, jsonb) is
'Internal: checks a setting value against memory.setting_definitions().';

create or replace function memory._config_validate() returns trigger
language plpgsql
as $$
begin
    new.value := memory._validated_setting(new.key, new.value);
    new.updated_at := pg_catalog.now();
    new.updated_by := current_user;
    return new;
end
$$;

comment on function memory._config_validate() is
'Internal: trigger that rejects unknown keys and ill-typed values in memory.config.';

drop trigger if exists config_validate on memory.config;
create trigger config_validate before insert or update on memory.config
for each row execute function memory._config_validate();

-- A session setting (`set memory.<key> = '...'`) as JSON of the setting's type.
create or replace function memory._session_setting(p_key text) returns jsonb
language plpgsql
stable
as $$
declare
    v_raw text := pg_catalog.current_setting('memory.' || p_key, true);
    v_type text;
begin
    if v_raw is null or v_raw = '' then
        return null;
    end if;
    select s.value_type into v_type from memory.setting_definitions() as s where s.key = p_key;
    if v_type = 'string' then
        return memory._validated_setting(p_key, to_jsonb(v_raw));
    end if;
    begin
        return memory._validated_setting(p_key, v_raw::jsonb);
    exception when invalid_text_representation then
        raise exception 'agent_memory: session setting memory.% is not a valid %: %', p_key, v_type, v_raw;
    end;
end
$$;

comment on function memory._session_setting(text) is
'Internal: the value of `set memory.<key>` in this session, validated, or null.';

-- The value in force for this session.
create or replace function memory.setting(p_key text) returns jsonb
language sql
stable
as $$
    select coalesce(
        memory._session_setting(p_key),
        (select c.value from memory.config as c where c.key = p_key),
        memory._validated_setting(p_key, (select s.default_value from memory.setting_definitions() as s
                                          where s.key = p_key))
    )
$$;

comment on function memory.setting(text) is
'The value of a setting in force for this session: session setting (set memory.<key>), then '
'memory.config, then the default. Unknown keys are an error.';

create or replace view memory.settings as
select
    s.key,
    memory.setting(s.key) as value,
    case
        when memory._session_setting(s.key) is not null then 'session'
        when c.key is not null then 'config'
        else 'default'
    end as source,
    s.default_value,
    s.description
from memory.setting_definitions() as s
left join memory.config as c on s.key = c.key;

comment on view memory.settings is
'Every setting with the value in force for this session and where it comes from (session, config, default).';
comment on table memory.config is
'Settings changed from their defaults, checked on write against memory.setting_definitions().';
comment on column memory.config.key is 'The setting, one of memory.setting_definitions().key.';
comment on column memory.config.value is 'The value as JSON of the setting''s type.';
comment on column memory.config.updated_at is 'When the value was last written.';
comment on column memory.config.updated_by is 'The role that last wrote it.';

-- sql/idempotent/020-version.sql
create or replace function memory.version() returns text
language sql
immutable parallel safe
as $$ select '0.1.0'::text $$;

comment on function memory.version() is 'The version of the agent_memory SQL objects installed in this database.';

-- sql/idempotent/030-health.sql
-- What is installed and whether it works: the first thing to run after an install or upgrade.
create or replace function memory.health()
returns table (
    extension_version text,
    pgvector_version text,
    python_package_version text,
    python_version text,
    embedder text,
    embedder_loads boolean,
    embedder_dimensions integer,
    problem text
)
language plpython3u
as $$
import sys
extension_version = plpy.execute("select memory.version() as v")[0]["v"]
pgvector_version = plpy.execute(
    "select extversion from pg_catalog.pg_extension where extname = 'vector'")[0]["extversion"]
embedder = plpy.execute("select memory.setting('embedder') #>> '{}' as e")[0]["e"]
python = "%d.%d.%d" % sys.version_info[:3]
try:
    plpy.execute("select memory._load_python()")
except plpy.SPIError as exc:
    return [(extension_version, pgvector_version, None, python, embedder, False, None, str(exc))]
import agent_memory_db
from agent_memory_db import embedder as local
if embedder != "local":
    return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
             None, None, None)]
try:
    if "local_embedder" not in GD:
        GD["local_embedder"] = local.LocalEmbedder()
    dims = len(GD["local_embedder"].embed(["health check"])[0])
except Exception as exc:
    return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
             False, None, str(exc))]
return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
         True, dims, None)]
$$;

comment on function memory.health() is
'Versions of the extension, pgvector, the in-database Python package and interpreter, the configured '
'embedder and whether it loads and embeds; problem says what is wrong, null when all is well.';

-- sql/tail.sql
-- Runs last in every install and upgrade script.

-- Pin every function of the extension to a safe search_path: pg_catalog, the schema pgvector was
-- installed in (its types and operators), pg_temp last. Bodies name our own objects as memory.x.
do $pin$
declare
    v_vector_schema text := (
        select n.nspname
        from pg_catalog.pg_extension as e
        inner join pg_catalog.pg_namespace as n on e.extnamespace = n.oid
        where e.extname = 'vector'
    );
    v_function regprocedure;
begin
    for v_function in
        select p.oid::regprocedure
        from pg_catalog.pg_proc as p
        inner join pg_catalog.pg_depend as d
            on d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e'
        inner join pg_catalog.pg_extension as e on d.refobjid = e.oid
        where e.extname = 'agent_memory'
    loop
        execute format(
            'alter function %s set search_path = pg_catalog, %I, pg_temp', v_function, v_vector_schema
        );
    end loop;
end
$pin$;
