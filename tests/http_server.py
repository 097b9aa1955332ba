"""An `agent-memory serve` on loopback over the test's database: uvicorn in a thread, logged in as a role
that is a member of memory_http (as deployed), and API keys made as an administrator makes them (the
fixture `served` of tests/conftest.py)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg
import uvicorn
from psycopg import sql

from agent_memory.http.app import build
from agent_memory.http.service import Limits


@dataclass
class Served:
    """A running server: its address, and keys made for it (each of a new role bound to its tenant)."""

    url: str
    db: psycopg.Connection
    logins: Any
    roles: dict[str, str] = field(default_factory=dict)

    def role(self, tenant: str) -> str:
        """A role bound to the tenant, granted to memory_http (one per tenant)."""
        if tenant not in self.roles:
            self.logins.create(tenant=tenant)
            name = self.logins.names[-1]
            self.db.execute(sql.SQL("grant {} to memory_http").format(sql.Identifier(name)))
            self.roles[tenant] = name
        return self.roles[tenant]

    def key(self, tenant: str | None = "acme", role: str | None = None, **options: Any) -> str:
        """A new API key of the tenant (or, with a memory_app role, of none) with the options of create_api_key."""
        role = role or self.role(str(tenant))
        names = ", ".join(f"{name} => %({name})s" for name in options)
        row = self.db.execute(
            f"select api_key from memory.create_api_key(%(tenant)s, quote_ident(%(role)s)::regrole"
            f"{', ' + names if names else ''})",
            {"tenant": tenant, "role": role, **options},
        ).fetchone()
        assert row is not None
        return str(row[0])

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        given = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers={**given, **headers}, timeout=60)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(app: Any) -> tuple[uvicorn.Server, threading.Thread, str]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("agent-memory serve did not start")
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


def serve(db: psycopg.Connection, logins: Any, limits: Limits | None = None) -> Iterator[Served]:
    db.commit()
    db.autocommit = True
    logins.create(grant="memory_http")
    info = db.info
    dsn = f"postgresql://{logins.names[-1]}@/{info.dbname}?host={info.host}&port={info.port}"
    server, thread, url = start(build(dsn, limits or Limits(), max_connections=8))
    try:
        yield Served(url, db, logins)
    finally:
        server.should_exit = True
        thread.join(30)
