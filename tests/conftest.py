"""Fixtures: a real PostgreSQL server (the project's local one, started by `make test`) with the
real extension installed.

A template database with the extension is built once per run; every test that asks for `db` gets a
fresh database cloned from it, dropped afterwards. `bare_db` is a fresh database without the
extension, for install, upgrade and drop tests.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from pytest_postgresql import factories

from agent_memory.localdb import DEFAULT_PORT, LocalServer

ROOT = Path(__file__).resolve().parents[1]
SERVER = LocalServer(
    directory=Path(os.environ.get("AGENT_MEMORY_HOME", ROOT / ".agent-memory")).resolve(),
    port=int(os.environ.get("AGENT_MEMORY_PORT", DEFAULT_PORT)),
)


def install_extension(**connect: Any) -> None:
    connect.pop("autocommit", None)
    with psycopg.connect(**connect, autocommit=True) as conn:
        conn.execute("create extension agent_memory cascade")


def _server_fixture(dbname: str, load: list[Any]) -> Any:
    return factories.postgresql_noproc(
        host=str(SERVER.socket_dir), port=SERVER.port, user="postgres", dbname=dbname, load=load
    )


extension_server = _server_fixture("am_test", [install_extension])
bare_server = _server_fixture("am_bare", [])
db = factories.postgresql("extension_server")
bare_db = factories.postgresql("bare_server")


@pytest.fixture
def dsn(db: psycopg.Connection) -> str:
    """A connection string for the test's database (for clients and the CLI)."""
    info = db.info
    return f"postgresql://{info.user}@/{info.dbname}?host={info.host}&port={info.port}"


class Logins:
    """Login roles made for one test, dropped after it (roles are the cluster's, not the database's)."""

    def __init__(self, admin: psycopg.Connection) -> None:
        self.admin = admin
        self.names: list[str] = []
        self.connections: list[psycopg.Connection] = []

    def create(
        self, tenant: str | None = None, grant: str | None = "auto", name: str | None = None
    ) -> psycopg.Connection:
        """A login, bound to `tenant` if given, granted `grant` (by default memory_tenant for a bound role,
        memory_app otherwise; None for no grant), connected to the test's database."""
        name = name or f"am_test_{uuid.uuid4().hex[:10]}"
        if grant == "auto":
            grant = "memory_tenant" if tenant else "memory_app"
        with psycopg.connect(**self._params("postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("create role {} login").format(sql.Identifier(name)))
            self.names.append(name)
            if grant:
                conn.execute(sql.SQL("grant {} to {}").format(sql.Identifier(grant), sql.Identifier(name)))
            if tenant:
                conn.execute("select memory.bind_tenant_role(quote_ident(%s)::regrole, %s)", (name, tenant))
        conn = psycopg.connect(**self._params(name), autocommit=True)
        self.connections.append(conn)
        return conn

    def _params(self, user: str) -> dict:
        info = self.admin.info
        return {"host": info.host, "port": info.port, "dbname": info.dbname, "user": user}

    def drop(self) -> None:
        for conn in self.connections:
            conn.close()
        with psycopg.connect(**self._params("postgres"), autocommit=True) as conn:
            for name in self.names:
                conn.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(name)))


@pytest.fixture
def logins(db: psycopg.Connection) -> Any:
    """Make login roles connected to the test's database (Logins.create); dropped after the test."""
    made = Logins(db)
    try:
        yield made
    finally:
        made.drop()


@pytest.fixture
def tenant_dsn(db: psycopg.Connection, logins: Logins) -> str:
    """A connection string for a login role bound to tenant "acme" (granted memory_tenant), as an
    application is deployed: row-level security on (the framework adapters' tests connect so)."""
    logins.create(tenant="acme")
    info = db.info
    return f"postgresql://{logins.names[-1]}@/{info.dbname}?host={info.host}&port={info.port}"


@pytest.fixture
def http_stub():
    """An OpenAI-compatible server on loopback (see tests/http_stub.py)."""
    from http_stub import Stub

    with Stub() as stub:
        yield stub


@pytest.fixture
def served(db: psycopg.Connection, logins: Logins) -> Any:
    """`agent-memory serve` over the test's database, with the server's defaults (see tests/http_server.py)."""
    from http_server import serve

    yield from serve(db, logins)


@pytest.fixture(scope="session")
def control_version() -> str:
    """default_version of extension/agent_memory.control: the version everything is released under."""
    text = (ROOT / "extension" / "agent_memory.control").read_text()
    match = re.search(r"^default_version = '(.+)'", text, re.MULTILINE)
    assert match
    return match.group(1)
