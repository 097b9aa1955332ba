"""AsyncMemory: Memory for asyncio, over psycopg's async connection pool. Same methods, awaited, and the
same rules for the connection and for agent_id (see agent_memory.client)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar, Unpack

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolClosed, PoolTimeout

from agent_memory import calls, results
from agent_memory.calls import JsonInput, Message
from agent_memory.client import RESET_TENANT, SET_TENANT, pool_timeout, pool_unavailable, resolve_dsn
from agent_memory.errors import from_connect, from_psycopg
from agent_memory.results import EntityType

T = TypeVar("T")


class AsyncMemory:
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

    async def commit(
        self, session_id: str, messages: Sequence[Message], **options: Unpack[calls.CommitOptions]
    ) -> results.Committed:
        """See Memory.commit."""
        return await self._run(calls.commit(session_id, messages, options))

    async def enrich(self, session_id: str, agent_id: str | None = None) -> results.Enriched:
        """See Memory.enrich."""
        return await self._run(calls.enrich(session_id, agent_id))

    async def recall(self, query: str, **options: Unpack[calls.RecallOptions]) -> list[results.Hit]:
        """See Memory.recall."""
        return await self._run(calls.recall(query, options))

    async def explain_recall(self, query: str, **options: Unpack[calls.ExplainOptions]) -> list[results.Candidate]:
        """See Memory.explain_recall."""
        return await self._run(calls.explain_recall(query, options))

    async def give_feedback(
        self, verdict: results.Verdict, **options: Unpack[calls.FeedbackOptions]
    ) -> results.Feedback:
        """See Memory.give_feedback."""
        return await self._run(calls.give_feedback(verdict, options))

    async def remember(self, content: str, **options: Unpack[calls.MemoryOptions]) -> results.Remembered:
        """See Memory.remember."""
        return await self._run(calls.remember(content, options))

    async def get(
        self, key: str, *, agent_id: str | None = None, as_of: datetime | None = None
    ) -> list[results.MemoryItem]:
        """See Memory.get."""
        return await self._run(calls.get(key, agent_id, as_of))

    async def list_memories(self, **filters: Unpack[calls.MemoryFilters]) -> list[results.MemoryItem]:
        """See Memory.list_memories."""
        return await self._run(calls.list_memories(filters))

    async def resolve(self, memory_id: int) -> results.MemoryItem:
        """See Memory.resolve."""
        return await self._run(calls.move_memory("resolve", memory_id))

    async def retract(self, memory_id: int) -> results.MemoryItem:
        """See Memory.retract."""
        return await self._run(calls.move_memory("retract", memory_id))

    async def approve(self, memory_id: int) -> results.MemoryItem:
        """See Memory.approve."""
        return await self._run(calls.move_memory("approve", memory_id))

    async def bootstrap(
        self, *, agent_id: str | None = None, max_chars: int | None = None, sessions: int | None = None
    ) -> results.Bootstrap:
        """See Memory.bootstrap."""
        return await self._run(calls.bootstrap(agent_id, max_chars, sessions))

    async def context_for_task(
        self, task: str, *, max_chars: int | None = None, agent_id: str | None = None, k: int | None = None
    ) -> results.TaskContext:
        """See Memory.context_for_task."""
        return await self._run(calls.context_for_task(task, max_chars, agent_id, k))

    async def forget(self, session_id: str, *, agent_id: str | None = None) -> results.Forgotten:
        """See Memory.forget."""
        return await self._run(calls.forget(session_id, agent_id))

    async def forget_agent(self, agent_id: str) -> results.Forgotten:
        """See Memory.forget_agent."""
        return await self._run(calls.forget_agent(agent_id))

    async def forget_range(self, since: datetime, until: datetime, *, agent_id: str | None = None) -> results.Forgotten:
        """See Memory.forget_range."""
        return await self._run(calls.forget_range(since, until, agent_id))

    async def forget_entity(self, entity: str, *, agent_id: str | None = None) -> results.Forgotten:
        """See Memory.forget_entity."""
        return await self._run(calls.forget_entity(entity, agent_id))

    async def stats(self, agent_id: str | None = None) -> list[results.AgentStats]:
        """See Memory.stats."""
        return await self._run(calls.stats(agent_id))

    async def metrics(self) -> list[results.Metric]:
        """See Memory.metrics."""
        return await self._run(calls.metrics())

    async def export(
        self, *, agent_id: str | None = None, session_id: str | None = None
    ) -> list[results.ExportedSession]:
        """See Memory.export."""
        return await self._run(calls.export(agent_id, session_id))

    async def export_tenant(self, *, agent_id: str | None = None) -> list[results.ExportRecord]:
        """See Memory.export_tenant."""
        return await self._run(calls.export_tenant(agent_id))

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

    async def import_tenant(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        allow_forgotten: bool | None = None,
        batch_size: int = 500,
        on_batch: Callable[[int], None] | None = None,
    ) -> list[results.Imported]:
        """See Memory.import_tenant."""
        return calls.imported_totals(
            await self._run_in_one_transaction(calls.import_tenant(records, allow_forgotten, batch_size, on_batch))
        )

    async def set_retention(
        self,
        data: calls.RetainedData,
        *,
        max_age: timedelta | None = None,
        keep_last: int | None = None,
        tier: calls.Tier | None = None,
        agent_id: str | None = None,
        statuses: Sequence[results.MemoryStatus] | None = None,
    ) -> results.RetentionPolicy:
        """See Memory.set_retention."""
        return await self._run(calls.set_retention(data, max_age, keep_last, tier, agent_id, statuses))

    async def list_retention_policies(self) -> list[results.RetentionPolicy]:
        """See Memory.list_retention_policies."""
        return await self._run(calls.list_retention_policies())

    async def drop_retention(self, policy_id: int) -> bool:
        """See Memory.drop_retention."""
        return await self._run(calls.drop_retention(policy_id))

    async def retention_preview(self, *, at: datetime | None = None) -> list[results.RetentionItem]:
        """See Memory.retention_preview."""
        return await self._run(calls.retention_preview(at))

    async def list_archives(self) -> list[results.Archive]:
        """See Memory.list_archives."""
        return await self._run(calls.list_archives())

    async def archive(self, archive_id: int) -> bytes | None:
        """See Memory.archive."""
        return await self._run(calls.archive(archive_id))

    async def drop_archive(self, archive_id: int) -> bool:
        """See Memory.drop_archive."""
        return await self._run(calls.drop_archive(archive_id))

    async def reindex(self, *, agent_id: str | None = None, session_id: str | None = None) -> results.Reindexed:
        """See Memory.reindex."""
        return await self._run(calls.reindex(agent_id, session_id))

    async def list_entities(
        self,
        search: str | None = None,
        *,
        type: EntityType | None = None,
        agent_id: str | None = None,
        k: int | None = None,
    ) -> list[results.Entity]:
        """See Memory.list_entities."""
        return await self._run(calls.list_entities(search, type, agent_id, k))

    async def entity_neighbors(
        self, entity: str, *, depth: int | None = None, k: int | None = None, agent_id: str | None = None
    ) -> list[results.Neighbor]:
        """See Memory.entity_neighbors."""
        return await self._run(calls.entity_neighbors(entity, depth, k, agent_id))

    async def entity_sessions(
        self, entity: str, *, agent_id: str | None = None, k: int | None = None
    ) -> list[results.EntitySession]:
        """See Memory.entity_sessions."""
        return await self._run(calls.entity_sessions(entity, agent_id, k))

    async def merge_entities(self, keep: str, merge: str, *, agent_id: str | None = None) -> results.Merged:
        """See Memory.merge_entities."""
        return await self._run(calls.merge_entities(keep, merge, agent_id))

    async def set_entity_state(
        self,
        entity: str,
        attribute: str,
        value: JsonInput,
        *,
        valid_from: datetime | None = None,
        agent_id: str | None = None,
        type: EntityType | None = None,
    ) -> results.StateRecorded:
        """See Memory.set_entity_state."""
        return await self._run(calls.set_entity_state(entity, attribute, value, valid_from, agent_id, type))

    async def entity_state(
        self,
        entity: str,
        *,
        as_of: datetime | None = None,
        attribute: str | None = None,
        agent_id: str | None = None,
    ) -> list[results.EntityState]:
        """See Memory.entity_state."""
        return await self._run(calls.entity_state(entity, as_of, attribute, agent_id))

    async def entity_history(
        self, entity: str, attribute: str, *, agent_id: str | None = None
    ) -> list[results.StateHistoryItem]:
        """See Memory.entity_history."""
        return await self._run(calls.entity_history(entity, attribute, agent_id))

    async def health(self) -> results.Health:
        """See Memory.health."""
        return await self._run(calls.health())

    async def work(self, max_jobs: int = 10) -> results.Worked:
        """See Memory.work."""
        return await self._run(calls.work(max_jobs))
