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
    plpy.execute("select memory_internal._load_python()")
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
