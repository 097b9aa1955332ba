"""The ASGI application of `agent-memory serve`: the API (agent_memory.http.routes), mem0's (agent_memory.http.mem0),
the inspector page (static files), /health and /openapi.json. Every error is JSON:
{"error": code, "detail": the server's agent_memory: message, "status": ...}."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent_memory import __version__
from agent_memory.errors import AgentMemoryError
from agent_memory.http import mem0, routes
from agent_memory.http.service import HTTPProblem, KeyCheck, Limits, Service, problem_body, status_of

INSPECTOR = Path(__file__).with_name("inspector")
PUBLIC_PATHS = ("/health", "/openapi.json", "/", "/favicon.ico")


def is_public(path: str) -> bool:
    """Paths that need no key: the health check, the API's description, the inspector's files (which ask
    for a key before they read anything) and a browser's favicon (404)."""
    return path in PUBLIC_PATHS or path == "/inspector" or path.startswith("/inspector/")


def _problem(
    status: int, error: str, detail: str, headers: dict[str, str] | None = None, sqlstate: str | None = None
) -> Response:
    return Response(problem_body(status, error, detail, sqlstate), status, headers, "application/json")


def create_app(service: Service) -> FastAPI:
    """The application over a Service (its pool is opened when the application starts)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await service.pool.open()
        try:
            await service.refuse_an_administrator()
            yield
        finally:
            await service.pool.close()

    app = FastAPI(
        title="agent_memory",
        version=__version__,
        description="Long-term memory for AI agents in PostgreSQL, over HTTP: every call runs as the API key's "
        "database role. Send the key as `Authorization: Bearer <key>`.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.service = service
    app.include_router(routes.router)
    app.include_router(mem0.router)

    @app.exception_handler(HTTPProblem)
    async def problem(request: Request, exc: HTTPProblem) -> Response:
        return _problem(exc.status, exc.error, exc.detail, exc.headers)

    @app.exception_handler(AgentMemoryError)
    async def refused(request: Request, exc: AgentMemoryError) -> Response:
        status, error = status_of(exc)
        return _problem(status, error, str(exc), sqlstate=exc.sqlstate)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'] if part != 'body') or 'body'}: {error['msg']}"
            for error in exc.errors()
        )
        return _problem(400, "invalid_input", f"agent_memory: {problems}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        detail = (
            f"agent_memory: no {request.method} {request.url.path}"
            if exc.status_code in (404, 405)
            else str(exc.detail)
        )
        return _problem(exc.status_code, "not_found" if exc.status_code == 404 else "http_error", detail)

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> Response:  # logged by uvicorn; the caller gets JSON
        return _problem(500, "internal_error", "agent_memory: the server failed on this request (see its log)")

    @app.get("/health", tags=["operations"])
    async def health() -> Any:
        """Whether the server is up and reaches its database (no key needed)."""
        try:
            async with service.pool.connection(timeout=5) as conn:
                await conn.execute("select 1")
        except Exception as exc:  # any failure to reach the database is the answer, not an error
            return JSONResponse({"status": "unavailable", "detail": f"agent_memory: {exc}"}, 503)
        return {"status": "ok", "version": __version__}

    @app.get("/", include_in_schema=False)
    async def home() -> Response:
        return RedirectResponse("/inspector/")

    app.mount("/inspector", StaticFiles(directory=INSPECTOR, html=True), name="inspector")
    return app


def build(dsn: str, limits: Limits | None = None, max_connections: int = 10) -> KeyCheck:
    """The ASGI application a server runs: FastAPI inside the key check."""
    service = Service.connect(dsn, limits or Limits(), max_connections)
    return KeyCheck(create_app(service), service, is_public)
