-- The extension's version installed in this database, the version on the server's disk (its control file's
-- default_version), and the versions ALTER EXTENSION agent_memory UPDATE goes through from one to the other
-- ('0.3.0--0.4.0'; null when they are the same, or when no update path leads there).
create or replace function memory_internal._extension_update(out installed text, out available text, out path text)
language sql
stable
as $$
    select e.extversion, a.default_version, (
        select p.path from pg_catalog.pg_extension_update_paths('agent_memory') as p
        where p.source = e.extversion and p.target = a.default_version
    )
    from pg_catalog.pg_extension as e
    left join pg_catalog.pg_available_extensions as a on a.name = e.extname
    where e.extname = 'agent_memory'
$$;

comment on function memory_internal._extension_update() is
'Internal: the installed version, the version on disk, and the update path between them (null if none).';

-- What is installed and whether it works: the first thing to run after an install or upgrade.
drop function if exists memory.health();
create or replace function memory.health()
returns table (
    extension_version text,
    pgvector_version text,
    python_package_version text,
    python_version text,
    embedder text,
    embedder_loads boolean,
    embedder_dimensions integer,
    problem text,
    available_version text,
    update_path text
)
language plpython3u
as $$
import sys
update = plpy.execute("select * from memory_internal._extension_update()")[0]
older = None
if update["path"]:
    older = ("agent_memory %s is installed and %s is on the server's disk: alter extension agent_memory update "
             "(agent-memory db upgrade) applies %s" % (update["installed"], update["available"],
                                                       update["path"].replace("--", " -> ")))
elif update["available"] != update["installed"]:
    older = ("agent_memory %s is installed and %s is on the server's disk, with no update path between them"
             % (update["installed"], update["available"]))
extension_version = plpy.execute("select memory.version() as v")[0]["v"]
pgvector_version = plpy.execute(
    "select extversion from pg_catalog.pg_extension where extname = 'vector'")[0]["extversion"]
embedder = plpy.execute("select memory.setting('embedder') #>> '{}' as e")[0]["e"]
python = "%d.%d.%d" % sys.version_info[:3]
try:
    plpy.execute("select memory_internal._load_python()")
except plpy.SPIError as exc:
    return [(extension_version, pgvector_version, None, python, embedder, False, None, str(exc),
             update["available"], update["path"])]
import agent_memory_db
from agent_memory_db import embedder as local
if embedder != "local":
    return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
             None, None, older, update["available"], update["path"])]
try:
    if "local_embedder" not in GD:
        GD["local_embedder"] = local.LocalEmbedder()
    dims = len(GD["local_embedder"].embed(["health check"])[0])
except Exception as exc:
    return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
             False, None, str(exc), update["available"], update["path"])]
return [(extension_version, pgvector_version, agent_memory_db.__version__, python, embedder,
         True, dims, older, update["available"], update["path"])]
$$;

comment on function memory.health() is
'Versions of the extension, pgvector, the in-database Python package and interpreter, the configured '
'embedder and whether it loads and embeds; problem says what is wrong, null when all is well (an installed '
'version older than the one on the server''s disk is one). available_version: the version on disk; '
'update_path: the versions ALTER EXTENSION agent_memory UPDATE goes through to it (null: none to apply).';
