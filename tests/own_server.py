"""A PostgreSQL cluster of a test's own, with the extension in database memory: for tests that stop, crash or
copy a server (the shared test server must stay up)."""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import psycopg

from agent_memory.localdb import LocalServer


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def private_directory() -> Path:
    path = Path(tempfile.mkdtemp(prefix="am-", dir="/tmp"))
    path.chmod(0o755)
    return path


@contextmanager
def own_server(config: Mapping[str, str] | None = None) -> Iterator[LocalServer]:
    """A started cluster with database memory and the extension (config: rows of memory.config, as JSON text);
    stopped and removed after."""
    own = LocalServer(directory=private_directory(), port=free_port())
    own.start()
    try:
        with psycopg.connect(own.url(), autocommit=True) as conn:
            conn.execute("create database memory")
        with psycopg.connect(own.url("memory"), autocommit=True) as conn:
            conn.execute("create extension agent_memory cascade")
            for key, value in (config or {}).items():
                conn.execute("insert into memory.config values (%s, %s::jsonb)", (key, value))
        yield own
    finally:
        own._run("pg_ctl", "stop", "-m", "immediate", "-D", str(own.data_dir), check=False)
        shutil.rmtree(own.directory, ignore_errors=True)
