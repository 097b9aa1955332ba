"""The server's part between HTTP and the database: the pool its login holds, the key check every request
passes (401, 413, 429 before any tenant's data is touched), and the transaction a request runs in, as the
key's role.

A request with a key is answered in one transaction of the server's login that first takes the key's role
(`set role`, local to the transaction) and, for a key of a memory_app role, the tenant the request names.
From there on it is a session of that role: memory.current_tenant() and row-level security decide what it
sees, exactly as for a client that logs in as the role.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import errors as pg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agent_memory import calls, errors
from agent_memory.async_methods import AsyncMethods
from agent_memory.errors import AgentMemoryError, ConnectionFailed, from_psycopg
from agent_memory.http.keys import Caller, RateLimiter, key_from_headers, retry_after

T = TypeVar("T")
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TENANT_HEADER = "x-agent-memory-tenant"
TAKE_ROLE = "select set_config('role', %s, true), set_config('memory.tenant_id', %s, true)"


class HTTPProblem(Exception):
    """An answer other than success: the status, a short error code and the message for people."""

    def __init__(self, status: int, error: str, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail, self.headers = status, error, detail, headers or {}


class AdministratorLogin(RuntimeError):
    """The server's login administers agent_memory: it must not serve keys."""


@dataclass(frozen=True)
class Limits:
    """The server's defaults for a key that sets none of its own."""

    max_request_bytes: int = 1_048_576
    requests_per_minute: int = 600


@dataclass
class Service:
    """What every request shares: the pool of the server's login, the defaults and the rate limiter."""

    pool: AsyncConnectionPool
    limits: Limits = field(default_factory=Limits)
    limiter: RateLimiter = field(default_factory=RateLimiter)

    @classmethod
    def connect(cls, dsn: str, limits: Limits, max_connections: int = 10) -> Service:
        async def configure(conn: psycopg.AsyncConnection[Any]) -> None:
            await register_vector_async(conn)
            await conn.commit()

        return cls(
            AsyncConnectionPool(dsn, min_size=1, max_size=max_connections, open=False, configure=configure), limits
        )

    async def refuse_an_administrator(self) -> None:
        """Stops the server when its login administers agent_memory: row-level security lets such a login see
        every tenant, whatever role it takes, so keys would not keep tenants apart."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute("select session_user, pg_has_role(session_user, 'memory_admin', 'member')")
            row = await cursor.fetchone()
        if row and row[1]:
            raise AdministratorLogin(
                f"agent_memory: agent-memory serve logged in as {row[0]}, who administers agent_memory (a superuser "
                "or a member of memory_admin): row-level security would not keep the tenants of its requests apart. "
                "Log in as a role granted memory_http and nothing else (docs/http.md)"
            )

    async def authenticate(self, key: str) -> Caller | None:
        """What the key may do, or None for an unknown, revoked or expired one."""
        try:
            async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cursor:
                await cursor.execute("select * from memory.authenticate_api_key(%s)", (key,))
                row = await cursor.fetchone()
        except PoolTimeout as exc:
            raise ConnectionFailed(f"agent_memory: no database connection available: {exc}") from exc
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc
        return Caller(**row) if row else None

    @asynccontextmanager
    async def as_caller(self, caller: Caller, tenant: str | None, write: bool) -> AsyncIterator[TenantMemory]:
        """A transaction as the key's role (committed when the block ends without an exception)."""
        if write and not caller.may_write:
            raise HTTPProblem(403, "read_only_key", "agent_memory: this API key may only read")
        chosen = resolve_tenant(caller, tenant)
        try:
            async with self.pool.connection() as conn:
                try:
                    await conn.execute(TAKE_ROLE, (caller.role_name, chosen))
                except pg.InsufficientPrivilege as exc:
                    raise HTTPProblem(
                        503,
                        "server_role",
                        f"agent_memory: the server's login cannot take role {caller.role_name} of API key "
                        f"{caller.key_id} ({exc.diag.message_primary}): grant {caller.role_name} to memory_http, "
                        "and memory_http to the server's login",
                    ) from exc
                yield TenantMemory(conn)
        except PoolTimeout as exc:
            raise ConnectionFailed(f"agent_memory: no database connection available: {exc}") from exc
        except psycopg.Error as exc:
            raise from_psycopg(exc) from exc


def resolve_tenant(caller: Caller, asked: str | None) -> str:
    """The tenant a request runs in: the key's, or for a key that chooses (a memory_app role), the one the
    request names in the X-Agent-Memory-Tenant header."""
    if caller.tenant_id is not None:
        if asked and asked != caller.tenant_id:
            raise HTTPProblem(
                403, "wrong_tenant", f"agent_memory: this API key is of tenant {caller.tenant_id}, not {asked}"
            )
        return caller.tenant_id
    if not asked:
        raise HTTPProblem(
            400, "no_tenant", "agent_memory: this API key chooses its tenant per request: send X-Agent-Memory-Tenant"
        )
    return asked


class TenantMemory(AsyncMethods):
    """AsyncMemory's methods on the one connection of a request's transaction."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.conn = conn

    async def _run(self, call: calls.Call[T]) -> T:
        if call.procedure:
            raise HTTPProblem(400, "not_over_http", "agent_memory: this call commits as it goes: not over HTTP")
        async with self.conn.cursor(row_factory=dict_row) as cursor:
            await cursor.execute(call.statement, call.params)
            rows = await cursor.fetchall()
        return call.result(rows)

    async def _run_in_one_transaction(self, steps: Iterable[calls.Call[T]]) -> list[T]:
        return [await self._run(step) for step in steps]


def status_of(exc: AgentMemoryError) -> tuple[int, str]:
    """The HTTP status and error code of a database refusal."""
    state = exc.sqlstate or ""
    kinds: list[tuple[type[AgentMemoryError], int, str]] = [
        (errors.NotFound, 404, "not_found"),
        (errors.ForgottenSession, 409, "forgotten_session"),
        (errors.InvalidInput, 400, "invalid_input"),
        (errors.NotInstalled, 503, "not_installed"),
        (errors.ConnectionFailed, 503, "database_unavailable"),
    ]
    for kind, status, code in kinds:
        if isinstance(exc, kind):
            return status, code
    if state == "42501":
        return 403, "forbidden"
    if state in ("40001", "40P01", "55P03", "23505"):
        return 409, "conflict"
    if state.startswith(("53", "57", "08")):
        return 503, "database_unavailable"
    return 500, "database_error"


def problem_body(status: int, error: str, detail: str, sqlstate: str | None = None) -> bytes:
    """Every error's JSON: {"error": code, "detail": message, "status": status[, "sqlstate": ...]}."""
    body: dict[str, Any] = {"error": error, "detail": detail, "status": status}
    if sqlstate:
        body["sqlstate"] = sqlstate
    return json.dumps(body).encode()


async def send_problem(send: Send, problem: HTTPProblem) -> None:
    body = problem_body(problem.status, problem.error, problem.detail)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(name.lower().encode(), value.encode()) for name, value in problem.headers.items()]
    await send({"type": "http.response.start", "status": problem.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class KeyCheck:
    """ASGI middleware: every request but the public paths needs a key the database knows, within the key's
    rate, and a body within its size; the Caller goes to scope["state"]["caller"]. A refusal is answered
    here, before the request is read further."""

    def __init__(self, app: ASGIApp, service: Service, public: Callable[[str], bool]) -> None:
        self.app, self.service, self.public = app, service, public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.public(scope["path"]):
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        try:
            caller, max_bytes = await self._admit(headers)
        except HTTPProblem as problem:
            await send_problem(send, problem)
            return
        except AgentMemoryError as exc:
            status, error = status_of(exc)
            await send_problem(send, HTTPProblem(status, error, str(exc)))
            return
        scope.setdefault("state", {})["caller"] = caller
        await self._run_within(scope, receive, send, max_bytes)

    async def _admit(self, headers: dict[str, str]) -> tuple[Caller, int]:
        key = key_from_headers(headers)
        if key is None:
            raise HTTPProblem(
                401,
                "no_api_key",
                "agent_memory: no API key: send Authorization: Bearer <key>",
                {"WWW-Authenticate": "Bearer"},
            )
        caller = await self.service.authenticate(key)
        if caller is None:
            raise HTTPProblem(
                401, "bad_api_key", "agent_memory: unknown, revoked or expired API key", {"WWW-Authenticate": "Bearer"}
            )
        per_minute = caller.requests_per_minute or self.service.limits.requests_per_minute
        wait = self.service.limiter.take(caller.key_id, per_minute)
        if wait:
            raise HTTPProblem(
                429,
                "rate_limited",
                f"agent_memory: more than {per_minute} requests a minute with this API key",
                {"Retry-After": retry_after(wait)},
            )
        max_bytes = caller.max_request_bytes or self.service.limits.max_request_bytes
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > max_bytes:
            raise too_large(max_bytes)
        return caller, max_bytes

    async def _run_within(self, scope: Scope, receive: Receive, send: Send, max_bytes: int) -> None:
        """Reads the body first (chunked, or longer than it said: cut at max_bytes with a 413), then runs the
        app on it. A body is at most max_bytes, so holding it costs no more than the limit allows."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > max_bytes:
                await send_problem(send, too_large(max_bytes))
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()  # after the body: the client's disconnect
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


def too_large(max_bytes: int) -> HTTPProblem:
    return HTTPProblem(413, "too_large", f"agent_memory: the request is over this API key's {max_bytes} bytes")
