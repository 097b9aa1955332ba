"""The API over HTTP: each endpoint one call of one SQL function of the extension, in a transaction as the
key's role (agent_memory.http.service). Bodies and answers are the functions' arguments and rows as JSON;
docs/http.md lists them with curl examples, and /openapi.json describes them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import is_dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from agent_memory.calls import Enrich, EntityMode, Kind, Level, Tier, ToolStatus
from agent_memory.http.service import TENANT_HEADER, HTTPProblem, Service, TenantMemory
from agent_memory.results import EntityType, MemoryStatus, Verdict

router = APIRouter(prefix="/v1")
AgentQuery = Annotated[str | None, Query(description="one agent (default: every agent of the tenant)")]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def given(self, *leave_out: str) -> dict[str, Any]:
        """The fields set, as keyword arguments (None: the database's default)."""
        return {key: value for key, value in self.model_dump(exclude=set(leave_out)).items() if value is not None}


class CommitBody(Body):
    messages: list[dict[str, Any]] = Field(description="{role, content, id?, created_at?, name?, tool_calls?, ...}")
    agent_id: str | None = None
    source: str | None = None
    started_at: datetime | None = None
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    metadata: dict[str, Any] | None = None
    enrich: Enrich | None = None
    allow_forgotten: bool | None = None
    run_id: str | None = None


class RecallBody(Body):
    query: str
    k: int | None = None
    level: Level | None = None
    agent_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    source: str | None = None
    entities: list[str] | None = None
    entity_mode: EntityMode | None = None
    weights: dict[str, Any] | None = None
    as_of: datetime | None = None
    include_ended: bool | None = None
    intent: Kind | Literal["none"] | None = None
    tiers: list[Tier] | None = None
    tags: list[str] | None = None
    tools: list[str] | None = None
    tool_statuses: list[ToolStatus] | None = None
    run_id: str | None = None
    explain: bool = Field(False, description="every candidate with its signals (memory.explain_recall) instead")


class RememberBody(Body):
    content: str
    kind: Kind | None = None
    agent_id: str | None = None
    metadata: dict[str, Any] | None = None
    enrich: Enrich | None = None
    key: str | None = None
    subjects: list[str] | None = None
    tags: list[str] | None = None
    importance: float | None = None
    confidence: float | None = None
    valid_from: datetime | None = None
    evidence: list[int] | None = None
    status: Literal["active", "ongoing", "pending"] | None = None
    shared: bool | None = None
    run_id: str | None = None


class FeedbackBody(Body):
    verdict: Verdict
    turn_id: int | None = None
    memory_id: int | None = None
    session_id: str | None = None
    judged_by: str | None = None
    query: str | None = None
    note: str | None = None


class ContextBody(Body):
    task: str
    max_chars: int | None = None
    agent_id: str | None = None
    k: int | None = None
    run_id: str | None = None


def _plain(value: Any) -> Any:
    """JSON for what json.dumps does not know: results as objects, times and dates as ISO 8601, numbers of
    numeric as floats, durations as seconds."""
    if is_dataclass(value) and not isinstance(value, type):
        return value.__dict__  # its fields; json.dumps walks what they hold (asdict would copy it all first)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, timedelta):
        return value.total_seconds()
    raise TypeError(f"{type(value).__name__} is not JSON")


def answer(value: Any) -> Response:
    """A result as JSON, written directly (FastAPI's own encoder costs several times the time per answer)."""
    body = json.dumps(value, default=_plain, ensure_ascii=False, separators=(",", ":"))
    return Response(body, media_type="application/json")


def service(request: Request) -> Service:
    return request.app.state.service  # type: ignore[no-any-return]


def tenant(request: Request, write: bool = False) -> AbstractAsyncContextManager[TenantMemory]:
    """The request's transaction as its key's role (write: refused to a read-only key)."""
    return service(request).as_caller(request.state.caller, request.headers.get(TENANT_HEADER), write)


@router.get("/whoami", tags=["keys"])
async def whoami(request: Request) -> Response:
    """The key's tenant (as the database sees it), role and rights."""
    caller = request.state.caller
    async with tenant(request) as memory:
        cursor = await memory.conn.execute("select memory.current_tenant()")
        row = await cursor.fetchone()
    return answer(
        {
            "tenant_id": row[0] if row else None,
            "role": caller.role_name,
            "key_id": caller.key_id,
            "may_write": caller.may_write,
        }
    )


@router.post("/sessions/{session_id}/messages", tags=["conversations"])
async def commit(request: Request, session_id: str, body: CommitBody) -> Response:
    """Stores messages of a session (memory.commit): new ones are added, ones already stored are kept."""
    async with tenant(request, write=True) as memory:
        return answer(await memory.commit(session_id, body.messages, **body.given("messages")))


@router.get("/sessions", tags=["conversations"])
async def list_sessions(
    request: Request,
    agent_id: AgentQuery = None,
    search: str | None = None,
    k: int | None = None,
    before: datetime | None = None,
    run_id: str | None = None,
) -> Response:
    """Sessions, most recently updated first (memory.list_sessions)."""
    async with tenant(request) as memory:
        return answer(await memory.list_sessions(agent_id=agent_id, search=search, k=k, before=before, run_id=run_id))


@router.get("/sessions/{session_id}", tags=["conversations"])
async def get_session(request: Request, session_id: str, agent_id: AgentQuery = None) -> Response:
    """A session with its messages (memory.export of it)."""
    async with tenant(request) as memory:
        found = await memory.export(session_id=session_id, agent_id=agent_id)
    if not found:
        raise HTTPProblem(404, "not_found", f"agent_memory: no session {session_id}")
    return answer(found[0] if len(found) == 1 else found)


@router.delete("/sessions/{session_id}", tags=["lifecycle"])
async def forget(request: Request, session_id: str, agent_id: AgentQuery = None) -> Response:
    """Removes a session and everything derived from it, leaving a tombstone (memory.forget)."""
    async with tenant(request, write=True) as memory:
        return answer(await memory.forget(session_id, agent_id=agent_id))


@router.post("/recall", tags=["recall"])
async def recall(request: Request, body: RecallBody) -> Response:
    """The turns and memories that answer a query, best first (memory.recall); with explain, every candidate
    and its signals (memory.explain_recall)."""
    options = body.given("query", "explain")
    async with tenant(request) as memory:
        if body.explain:
            options.pop("level", None)
            return answer({"candidates": await memory.explain_recall(body.query, **options)})
        return answer({"hits": await memory.recall(body.query, **options)})


@router.post("/memories", tags=["memories"])
async def remember(request: Request, body: RememberBody) -> Response:
    """Keeps a fact, preference, rule, decision or task (memory.remember)."""
    async with tenant(request, write=True) as memory:
        return answer(await memory.remember(body.content, **body.given("content")))


@router.get("/memories", tags=["memories"])
async def list_memories(
    request: Request,
    kind: Kind | None = None,
    agent_id: AgentQuery = None,
    subject: str | None = None,
    tag: str | None = None,
    search: str | None = None,
    status: MemoryStatus | None = None,
    as_of: datetime | None = None,
    k: int | None = None,
    key_prefix: str | None = None,
    run_id: str | None = None,
) -> Response:
    """Memories that hold now (or at as_of, or of one status), most important first (memory.list_memories)."""
    async with tenant(request) as memory:
        found = await memory.list_memories(
            kind=kind,
            agent_id=agent_id,
            subject=subject,
            tag=tag,
            search=search,
            status=status,
            as_of=as_of,
            k=k,
            key_prefix=key_prefix,
            run_id=run_id,
        )
    return answer(found)


@router.get("/memories/by-key", tags=["memories"])
async def get(request: Request, key: str, agent_id: AgentQuery = None, as_of: datetime | None = None) -> Response:
    """The memory held under a key now, or at as_of (memory.get)."""
    async with tenant(request) as memory:
        return answer(await memory.get(key, agent_id=agent_id, as_of=as_of))


@router.get("/memories/{memory_id}", tags=["memories"])
async def get_memory(request: Request, memory_id: int) -> Response:
    """One memory, whatever its status (from memory.memory_history)."""
    async with tenant(request) as memory:
        versions = await memory.memory_history(memory_id)
    return answer(next(item for item in versions if item.memory_id == memory_id))


@router.get("/memories/{memory_id}/history", tags=["memories"])
async def memory_history(request: Request, memory_id: int) -> Response:
    """Every version of the memory's claim, oldest first (memory.memory_history)."""
    async with tenant(request) as memory:
        return answer(await memory.memory_history(memory_id))


@router.post("/memories/{memory_id}/share", tags=["memories"])
async def share(request: Request, memory_id: int, shared: bool = True) -> Response:
    """Shares a memory with every agent of the tenant; ?shared=false keeps it to its agent again (memory.share)."""
    async with tenant(request, write=True) as memory:
        return answer(await memory.share(memory_id, shared=shared))


@router.post("/memories/{memory_id}/{move}", tags=["memories"])
async def move_memory(request: Request, memory_id: int, move: Literal["resolve", "retract", "approve"]) -> Response:
    """Resolves (done, stays in the history), retracts (never true) or approves (pending to active) a memory."""
    async with tenant(request, write=True) as memory:
        return answer(await getattr(memory, move)(memory_id))


@router.post("/feedback", tags=["recall"])
async def give_feedback(request: Request, body: FeedbackBody) -> Response:
    """A verdict on a recalled turn, memory or session: trust moves with it (memory.give_feedback)."""
    async with tenant(request, write=True) as memory:
        return answer(await memory.give_feedback(body.verdict, **body.given("verdict")))


@router.get("/bootstrap", tags=["recall"])
async def bootstrap(
    request: Request,
    agent_id: AgentQuery = None,
    max_chars: int | None = None,
    sessions: int | None = None,
    run_id: str | None = None,
) -> Response:
    """Context for a new conversation: what holds now, then recent sessions (memory.bootstrap)."""
    async with tenant(request) as memory:
        found = await memory.bootstrap(agent_id=agent_id, max_chars=max_chars, sessions=sessions, run_id=run_id)
    return answer(found)


@router.post("/context", tags=["recall"])
async def context_for_task(request: Request, body: ContextBody) -> Response:
    """The turns most relevant to a task, as many as fit (memory.context_for_task)."""
    async with tenant(request) as memory:
        return answer(await memory.context_for_task(body.task, **body.given("task")))


@router.get("/stats", tags=["operations"])
async def stats(request: Request, agent_id: AgentQuery = None) -> Response:
    """Each agent's sessions, turns, chunks, summaries, memories and queue (memory.stats)."""
    async with tenant(request) as memory:
        return answer(await memory.stats(agent_id))


@router.get("/metrics", tags=["operations"])
async def metrics(request: Request) -> Response:
    """The tenant's counters and gauges (memory.metrics): recalls, commits, queue, durations."""
    async with tenant(request) as memory:
        return answer(await memory.metrics())


@router.get("/export", tags=["lifecycle"])
async def export(request: Request, agent_id: AgentQuery = None) -> StreamingResponse:
    """The tenant's memory as JSON lines, streamed as the database sends it (memory.export_tenant): what
    memory.import_tenant takes."""
    holder = tenant(request)
    memory: TenantMemory = await holder.__aenter__()  # held until the stream ends

    async def lines() -> AsyncIterator[bytes]:
        failed: BaseException | None = None
        try:
            async with memory.conn.cursor(name="agent_memory_export") as cursor:
                cursor.itersize = 500
                await cursor.execute("select * from memory.export_tenant(agent_id => %s)", (agent_id,))
                async for (record,) in cursor:
                    yield (json.dumps(record, ensure_ascii=False) + "\n").encode()
        except BaseException as exc:
            failed = exc
            raise
        finally:
            await holder.__aexit__(type(failed) if failed else None, failed, None)

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@router.get("/entities", tags=["knowledge graph"])
async def list_entities(
    request: Request,
    search: str | None = None,
    type: EntityType | None = None,
    agent_id: AgentQuery = None,
    k: int | None = None,
) -> Response:
    """People, projects, tools and places mentioned, most mentioned first (memory.list_entities)."""
    async with tenant(request) as memory:
        return answer(await memory.list_entities(search=search, type=type, agent_id=agent_id, k=k))


@router.get("/entities/{entity}/neighbors", tags=["knowledge graph"])
async def entity_neighbors(
    request: Request, entity: str, depth: int | None = None, k: int | None = None, agent_id: AgentQuery = None
) -> Response:
    """The entities mentioned with it, within depth hops (memory.entity_neighbors)."""
    async with tenant(request) as memory:
        return answer(await memory.entity_neighbors(entity, depth=depth, k=k, agent_id=agent_id))


@router.get("/entities/{entity}/sessions", tags=["knowledge graph"])
async def entity_sessions(request: Request, entity: str, agent_id: AgentQuery = None, k: int | None = None) -> Response:
    """The sessions that mention it, most mentions first (memory.entity_sessions)."""
    async with tenant(request) as memory:
        return answer(await memory.entity_sessions(entity, agent_id=agent_id, k=k))


@router.get("/entities/{entity}/state", tags=["knowledge graph"])
async def entity_state(
    request: Request,
    entity: str,
    as_of: datetime | None = None,
    attribute: str | None = None,
    agent_id: AgentQuery = None,
) -> Response:
    """Its attributes' values now, or at as_of (memory.entity_state)."""
    async with tenant(request) as memory:
        return answer(await memory.entity_state(entity, as_of=as_of, attribute=attribute, agent_id=agent_id))
