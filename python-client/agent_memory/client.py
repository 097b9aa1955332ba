"""Memory and AsyncMemory: every method is one call of one SQL function of the extension.

    from agent_memory import Memory

    with Memory("postgresql:///app") as memory:
        memory.commit("s1", [{"role": "user", "content": "Deploys go out on Fridays."}])
        for hit in memory.recall("when do we deploy?"):
            print(hit.score, hit.content)

The client opens a connection pool from a connection string, or uses the caller's pool (which it then
leaves open). It never runs DDL and has no default credentials. With tenant= every call runs as that
tenant (memory.tenant_id, set for the call's transaction only).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, Unpack

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from agent_memory import calls, results
from agent_memory.errors import ConnectionFailed, from_psycopg

T = TypeVar("T")
# Local to the call's transaction; procedures run outside one, so for them it is set and then reset.
SET_TENANT = "select set_config('memory.tenant_id', %s, %s)"
RESET_TENANT = "reset memory.tenant_id"


def check_arguments(dsn: str | None, pool: object, tenant: str | None) -> None:
    if (dsn is None) == (pool is None):
        raise ValueError("pass either a connection string (dsn) or a connection pool (pool), not both or neither")
    if tenant is not None and not tenant.strip():
        raise ValueError("tenant must not be empty")


def _first_connection(dsn: str) -> None:
    """Connects once, so that a wrong address fails now with the server's reason, not as a pool timeout."""
    try:
        psycopg.connect(dsn).close()
    except psycopg.Error as exc:
        raise from_psycopg(exc) from exc


class Memory:
    """Long-term memory in PostgreSQL, synchronous. Thread-safe: calls share the pool."""

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool: ConnectionPool | None = None,
        tenant: str | None = None,
        max_connections: int = 4,
    ) -> None:
        check_arguments(dsn, pool, tenant)
        self.tenant = tenant
        self._owns_pool = pool is None
        if pool is None:
            _first_connection(str(dsn))
            pool = ConnectionPool(str(dsn), min_size=1, max_size=max_connections, open=True)
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
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc
        except PoolTimeout as exc:
            raise ConnectionFailed(f"no database connection available: {exc}") from exc

    def _run(self, call: calls.Call[T]) -> T:
        with self._connection(call.procedure) as conn, conn.cursor(row_factory=dict_row) as cursor:
            rows = cursor.execute(call.statement, call.params).fetchall()
        return call.result(rows)

    def commit(
        self, session_id: str, messages: Sequence[Mapping[str, Any]], **options: Unpack[calls.CommitOptions]
    ) -> results.Committed:
        """Stores a session's messages; only new ones are added (memory.commit). enrich: queue, now or none."""
        return self._run(calls.commit(session_id, messages, options))

    def enrich(self, session_id: str, agent_id: str | None = None) -> results.Enriched:
        """Enriches one session now: chunks, vectors, summary (memory.enrich)."""
        return self._run(calls.enrich(session_id, agent_id))

    def recall(self, query: str, **options: Unpack[calls.RecallOptions]) -> list[results.Hit]:
        """The turns (or sessions, level='session') that best answer the query (memory.recall)."""
        return self._run(calls.recall(query, options))

    def explain_recall(self, query: str, **options: Unpack[calls.RecallFilters]) -> list[results.Candidate]:
        """Every candidate with its rank in each list and every component (memory.explain_recall)."""
        return self._run(calls.explain_recall(query, options))

    def feedback(
        self, turn_id: int, helpful: bool, *, query: str | None = None, note: str | None = None
    ) -> results.Feedback:
        """Says whether a recalled turn helped; moves its trust (memory.feedback)."""
        return self._run(calls.feedback(turn_id, helpful, query, note))

    def remember(
        self,
        content: str,
        *,
        kind: str | None = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> results.Remembered:
        """Keeps a fact, preference, rule, decision, event, observation or skill (memory.remember)."""
        return self._run(calls.remember(content, kind, agent_id, metadata))

    def bootstrap(
        self, *, agent_id: str | None = None, max_chars: int | None = None, sessions: int | None = None
    ) -> results.Bootstrap:
        """Context for a new conversation within a character budget (memory.bootstrap); .text() renders it."""
        return self._run(calls.bootstrap(agent_id, max_chars, sessions))

    def context_for_task(
        self, task: str, *, max_chars: int | None = None, agent_id: str | None = None, k: int | None = None
    ) -> results.TaskContext:
        """The turns most relevant to a task, within a character budget (memory.context_for_task)."""
        return self._run(calls.context_for_task(task, max_chars, agent_id, k))

    def forget(self, session_id: str, *, agent_id: str | None = None) -> results.Forgotten:
        """Removes a session and everything derived from it (memory.forget)."""
        return self._run(calls.forget(session_id, agent_id))

    def stats(self, agent_id: str | None = None) -> list[results.AgentStats]:
        """Per agent: sessions, turns, chunks, vectors, summaries, feedback, pending jobs (memory.stats)."""
        return self._run(calls.stats(agent_id))

    def export(self, *, agent_id: str | None = None, session_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions in the shape commit takes (memory.export)."""
        return self._run(calls.export(agent_id, session_id))

    def health(self) -> results.Health:
        """Versions and whether the embedder works (memory.health)."""
        return self._run(calls.health())

    def work(self, max_jobs: int = 10) -> results.Worked:
        """Runs up to max_jobs queued enrichment jobs, each committed on its own (call memory.work)."""
        return self._run(calls.work(max_jobs))
