"""Memory and AsyncMemory: every method is one call of one SQL function of the extension.

    from agent_memory import Memory

    with Memory("postgresql:///app") as memory:
        memory.commit("s1", [{"role": "user", "content": "Deploys go out on Fridays."}])
        for hit in memory.recall("when do we deploy?"):
            print(hit.score, hit.content)

The client opens a connection pool from a connection string (else $DATABASE_URL), or uses the caller's
pool (which it then leaves open). It never runs DDL and has no default credentials. With tenant= every
call runs as that tenant (memory.tenant_id, set for the call's transaction only).

agent_id, in every method: when it is left out, calls that read or address stored data (recall,
explain_recall, bootstrap, context_for_task, stats, export, forget, enrich, reindex, and the knowledge
graph's list_entities, entity_neighbors, entity_sessions, entity_state, entity_history) cover every agent of
the tenant, and a session named without an agent must then exist under one agent only; calls that store
data (commit, remember, set_entity_state, merge_entities) write to agent "default".
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from agent_memory import calls, notifications, results
from agent_memory.errors import CHECK_DSN, ConnectionFailed, from_connect, from_psycopg
from agent_memory.methods import Methods

T = TypeVar("T")
# Local to the call's transaction; procedures run outside one, so for them it is set and then reset.
SET_TENANT = "select set_config('memory.tenant_id', %s, %s)"
RESET_TENANT = "reset memory.tenant_id"


def resolve_dsn(client: str, dsn: str | None, pool: object, tenant: str | None) -> str | None:
    """The connection string to open a pool with (dsn, else $DATABASE_URL), or None when a pool is given."""
    if tenant is not None and not tenant.strip():
        raise ValueError("tenant must not be empty")
    if dsn is not None and pool is not None:
        raise ValueError(f"{client}: pass a connection string (dsn) or a connection pool (pool=), not both")
    if pool is not None:
        return None
    dsn = dsn if dsn is not None else os.environ.get("DATABASE_URL")
    if not dsn:
        raise ValueError(
            f"{client} got no connection string, no pool and no $DATABASE_URL: pass one, as in "
            f'{client}("postgresql://user@host/dbname") or {client}(pool=a_psycopg_pool), or set $DATABASE_URL'
        )
    return dsn


def pool_unavailable(client: str, owns_pool: bool) -> ConnectionFailed:
    """The error for a call on a pool that is not open: what the caller has to do instead."""
    if not owns_pool:
        return ConnectionFailed(f"the pool given to {client}(pool=...) is not open: open it first (pool.open())")
    if client == "AsyncMemory":
        return ConnectionFailed(
            "AsyncMemory is not open: use `async with AsyncMemory(...) as memory:` or call `await memory.open()` first"
        )
    return ConnectionFailed(f"this {client} is closed: create a new one (or use it inside `with {client}(...)`)")


def pool_timeout(exc: PoolTimeout) -> ConnectionFailed:
    return ConnectionFailed(f"no database connection available: {exc}; {CHECK_DSN}")


def _first_connection(dsn: str) -> None:
    """Connects once, so that a wrong address fails now with the server's reason, not as a pool timeout."""
    try:
        psycopg.connect(dsn).close()
    except psycopg.Error as exc:
        raise from_connect(exc) from exc


class Memory(Methods):
    """Long-term memory in PostgreSQL, synchronous. Thread-safe: calls share the pool.

    Memory(dsn) opens a pool (dsn left out: $DATABASE_URL); Memory(pool=p) uses the caller's. For agent_id
    left out, see the module docstring.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool: ConnectionPool | None = None,
        tenant: str | None = None,
        max_connections: int = 4,
    ) -> None:
        url = resolve_dsn("Memory", dsn, pool, tenant)
        self.tenant = tenant
        self._owns_pool = pool is None
        if pool is None:
            assert url is not None
            _first_connection(url)
            pool = ConnectionPool(url, min_size=1, max_size=max_connections, open=True)
        self._pool = pool

    def close(self) -> None:
        """Closes the pool if the client opened it."""
        if self._owns_pool:
            self._pool.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _connection(self, procedure: bool) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as conn:
                if conn.adapters.types.get("vector") is None:
                    register_vector(conn)
                if procedure:
                    conn.commit()
                    conn.autocommit = True
                try:
                    if self.tenant is not None:
                        conn.execute(SET_TENANT, (self.tenant, not procedure))
                    yield conn
                finally:
                    if procedure:
                        conn.execute(RESET_TENANT)
                        conn.autocommit = False
        except PoolClosed as exc:
            raise pool_unavailable("Memory", self._owns_pool) from exc
        except PoolTimeout as exc:
            raise pool_timeout(exc) from exc
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc

    def _run(self, call: calls.Call[T]) -> T:
        with self._connection(call.procedure) as conn, conn.cursor(row_factory=dict_row) as cursor:
            rows = cursor.execute(call.statement, call.params).fetchall()
        return call.result(rows)

    def _run_in_one_transaction(self, steps: Iterable[calls.Call[T]]) -> list[T]:
        with self._connection(False) as conn, conn.cursor(row_factory=dict_row) as cursor:
            return [step.result(cursor.execute(step.statement, step.params).fetchall()) for step in steps]

    def iter_export_tenant(
        self, *, agent_id: str | None = None, batch_size: int = 1000
    ) -> Iterator[results.ExportRecord]:
        """export_tenant's records as the server sends them, batch_size at a time (a server-side cursor), for
        a tenant too large to hold: the connection is held until the iteration ends or is closed."""
        call = calls.export_tenant(agent_id)
        with self._connection(False) as conn, conn.cursor(name="agent_memory_export", row_factory=dict_row) as cursor:
            cursor.itersize = batch_size
            cursor.execute(call.statement, call.params)
            for row in cursor:
                yield row["export_tenant"]

    def subscribe(
        self, *, agent_id: str | None = None, shared_only: bool = False, timeout: float | None = None
    ) -> Iterator[results.Notification]:
        """What arrives in this tenant as it commits (LISTEN on memory.notification_channel()): sessions
        committed and memories remembered, shared or unshared. For agent_id, its own and what the other agents
        share (shared_only: only those); without, every event of the tenant. timeout: stop after that many
        seconds (None: wait until the iteration is closed). Holds one connection of the pool meanwhile."""
        with self._connection(True) as conn:
            channel = conn.execute(notifications.LISTEN).fetchone()
            assert channel is not None
            conn.execute(notifications.listen(channel[0]))
            try:
                for note in conn.notifies(timeout=timeout):
                    event = notifications.read(note.payload)
                    if event is not None and notifications.wanted(event, agent_id, shared_only):
                        yield event
            finally:
                conn.execute("unlisten *")
