-- Loads the in-database Python package (agent_memory_db) once per backend.
-- It lives in a versioned directory outside the system's site-packages; a package of another
-- release than this SQL is a clear error, never a silent mix.
create or replace function memory_internal._load_python() returns void
language plpython3u
as $$
version, python_dir = "@extversion@", "@python_dir@"
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
from agent_memory_db import openai_compat
# Waits between retries of an endpoint are the server's, so that a cancel or statement timeout ends them.
openai_compat.wait = lambda seconds: plpy.execute("select pg_catalog.pg_sleep(%f)" % seconds)
GD["agent_memory_version"] = version
$$;

comment on function memory_internal._load_python() is
'Internal: puts the versioned agent_memory_db package on sys.path and checks it matches this SQL.';
