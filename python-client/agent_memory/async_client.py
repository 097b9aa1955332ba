"""AsyncMemory: Memory for asyncio, over psycopg's async connection pool. Same methods, awaited, and the
same rules for the connection and for agent_id (see agent_memory.client)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolClosed, PoolTimeout

from agent_memory import calls, notifications, results
from agent_memory.async_methods import AsyncMethods
from agent_memory.client import RESET_TENANT, SET_TENANT, pool_timeout, pool_unavailable, resolve_dsn
from agent_memory.errors import from_connect, from_psycopg

T = TypeVar("T")


class AsyncMemory(AsyncMethods):
    """Long-term memory in PostgreSQL for asyncio: `async with AsyncMemory(dsn) as memory:` (or
    `await memory.open()` and `await memory.close()`)."""

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool: AsyncConnectionPool | None = None,
        tenant: str | None = None,
        max_connections: int = 4,
    ) -> None:
        url = resolve_dsn("AsyncMemory", dsn, pool, tenant)
        self.tenant = tenant
        self._owns_pool = pool is None
        self._dsn = url or ""
        if pool is None:
            pool = AsyncConnectionPool(self._dsn, min_size=1, max_size=max_connections, open=False)
        self._pool = pool

    async def open(self) -> None:
        """Opens the pool if the client created it (async with does this)."""
        if self._owns_pool:
            try:
                await (await psycopg.AsyncConnection.connect(self._dsn)).close()
            except psycopg.Error as exc:
                raise from_connect(exc) from exc
            await self._pool.open()

    async def close(self) -> None:
        """Closes the pool if the client created it."""
        if self._owns_pool:
            await self._pool.close()

    async def __aenter__(self) -> AsyncMemory:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def _connection(self, procedure: bool) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        try:
            async with self._pool.connection() as conn:
                if conn.adapters.types.get("vector") is None:
                    await register_vector_async(conn)
                if procedure:
                    await conn.commit()
                    await conn.set_autocommit(True)
                try:
                    if self.tenant is not None:
                        await conn.execute(SET_TENANT, (self.tenant, not procedure))
                    yield conn
                finally:
                    if procedure:
                        await conn.execute(RESET_TENANT)
                        await conn.set_autocommit(False)
        except PoolClosed as exc:
            raise pool_unavailable("AsyncMemory", self._owns_pool) from exc
        except PoolTimeout as exc:
            raise pool_timeout(exc) from exc
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc

    async def _run(self, call: calls.Call[T]) -> T:
        async with self._connection(call.procedure) as conn, conn.cursor(row_factory=dict_row) as cursor:
            await cursor.execute(call.statement, call.params)
            rows = await cursor.fetchall()
        return call.result(rows)

    async def _run_in_one_transaction(self, steps: Iterable[calls.Call[T]]) -> list[T]:
        done = []
        async with self._connection(False) as conn, conn.cursor(row_factory=dict_row) as cursor:
            for step in steps:
                await cursor.execute(step.statement, step.params)
                done.append(step.result(await cursor.fetchall()))
        return done

    async def iter_export_tenant(
        self, *, agent_id: str | None = None, batch_size: int = 1000
    ) -> AsyncIterator[results.ExportRecord]:
        """See Memory.iter_export_tenant."""
        call = calls.export_tenant(agent_id)
        async with (
            self._connection(False) as conn,
            conn.cursor(name="agent_memory_export", row_factory=dict_row) as cursor,
        ):
            cursor.itersize = batch_size
            await cursor.execute(call.statement, call.params)
            async for row in cursor:
                yield row["export_tenant"]

    async def subscribe(
        self, *, agent_id: str | None = None, shared_only: bool = False, timeout: float | None = None
    ) -> AsyncIterator[results.Notification]:
        """See Memory.subscribe."""
        async with self._connection(True) as conn:
            channel = await (await conn.execute(notifications.LISTEN)).fetchone()
            assert channel is not None
            await conn.execute(notifications.listen(channel[0]))
            try:
                async for note in conn.notifies(timeout=timeout):
                    event = notifications.read(note.payload)
                    if event is not None and notifications.wanted(event, agent_id, shared_only):
                        yield event
            finally:
                await conn.execute("unlisten *")
