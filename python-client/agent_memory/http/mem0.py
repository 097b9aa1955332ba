"""mem0's platform API (what mem0ai's MemoryClient 2.2 sends), mapped onto sessions, turns and curated memories,
so that code written for mem0 runs against `agent-memory serve` with host= set to it (docs/http.md, the mapping).

- A mem0 memory is a curated memory under the key mem0/<id> (the id mem0's calls name, kept across updates),
  tagged mem0 and mem0:user=<user_id>, mem0:agent=<agent_id>, mem0:run=<run_id>, mem0:app=<app_id>; mem0's ids
  and the caller's metadata are in its metadata under "mem0". Its agent is mem0's agent_id, else "default".
- add stores the messages as turns of a session (run_id, else mem0:<user_id or agent_id or app_id>) and keeps
  each user message (with infer false, every message) as a memory: agent_memory does not call an LLM here.
- search is memory.recall kept to those tags; update remembers under the same key (the old version is kept,
  superseded); delete retracts; history is memory.memory_history as mem0's events.
"""

from __future__ import annotations

import ast
import hashlib
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, cast

from fastapi import APIRouter, Request

from agent_memory.calls import Kind
from agent_memory.http.routes import tenant
from agent_memory.http.service import HTTPProblem, TenantMemory
from agent_memory.results import MemoryItem

router = APIRouter(tags=["mem0"])
FIELDS = ("user_id", "agent_id", "run_id", "app_id")
KEY_PREFIX = "mem0/"
# Options of mem0's search and get_all that agent_memory answers the same without (ranking is its own).
IGNORED = {
    "rerank",
    "keyword_search",
    "fields",
    "latest_only",
    "show_expired",
    "version",
    "output_format",
    "async_mode",
    "org_id",
    "project_id",
    "page",
    "page_size",
}
Condition = dict[str, str]  # field -> value, all of which must match


def _refuse(detail: str) -> HTTPProblem:
    return HTTPProblem(400, "invalid_input", f"agent_memory: {detail}")


def conditions(filters: Mapping[str, Any] | None) -> list[Condition]:
    """mem0's filters as alternatives (any one matching), each a set of equalities (all matching): a flat
    {"user_id": "alice"}, {"AND": [...]} or {"OR": [...]} of them. Operators and other fields are refused."""
    if not filters:
        return [{}]
    if not isinstance(filters, Mapping):
        raise _refuse("filters must be an object")
    if set(filters) == {"OR"}:
        return [alternative for part in _parts(filters["OR"]) for alternative in conditions(part)]
    merged: Condition = {}
    for name, value in filters.items():
        if name == "AND":
            for part in _parts(value):
                found = conditions(part)
                if len(found) != 1:
                    raise _refuse("an OR inside an AND of mem0 filters is not supported")
                merged.update(found[0])
        elif name in FIELDS and isinstance(value, str | int):
            merged[name] = str(value)
        elif name in FIELDS:
            raise _refuse(f"mem0 filter {name}: only equality with a value is supported, not {value!r}")
        else:
            raise _refuse(f"mem0 filter field {name!r} is not supported: filter by {', '.join(FIELDS)}")
    return [merged]


def _parts(value: Any) -> Sequence[Mapping[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(part, Mapping) for part in value):
        raise _refuse("AND and OR in mem0 filters take a list of objects")
    return value


def tags(ids: Mapping[str, Any]) -> list[str]:
    """The tags of a memory added with these mem0 ids."""
    return ["mem0", *(f"mem0:{name.removesuffix('_id')}={ids[name]}" for name in FIELDS if ids.get(name))]


def tag_for(condition: Condition) -> str:
    """The most selective tag a condition's memories all carry (what recall and list_memories filter by)."""
    return tags(condition)[-1] if condition else "mem0"


def matches(item: MemoryItem, condition: Condition) -> bool:
    ids = _ids(item)
    return all(ids.get(name) == value for name, value in condition.items())


def _ids(item: MemoryItem) -> dict[str, Any]:
    found = (item.metadata or {}).get("mem0")
    return found if isinstance(found, dict) else {}


def mem0_id(item: MemoryItem) -> str:
    return item.key[len(KEY_PREFIX) :] if item.key and item.key.startswith(KEY_PREFIX) else str(item.memory_id)


def shown(item: MemoryItem, score: float | None = None) -> dict[str, Any]:
    """A memory as mem0's platform answers one."""
    ids = _ids(item)
    answer: dict[str, Any] = {
        "id": mem0_id(item),
        "memory": item.content,
        **{name: ids.get(name) for name in FIELDS},
        "hash": hashlib.md5(item.content.encode()).hexdigest(),
        "metadata": ids.get("metadata"),
        "categories": [item.kind],
        "created_at": ids.get("created_at") or item.valid_from.isoformat(),
        "updated_at": item.recorded_at.isoformat(),
        "expiration_date": None,
    }
    if score is not None:
        answer["score"] = score
    return answer


def events(versions: Sequence[MemoryItem]) -> list[dict[str, Any]]:
    """A memory's versions (oldest first) as mem0's history: ADD, then an UPDATE a version, DELETE when retracted."""
    found: list[dict[str, Any]] = []
    previous: str | None = None
    for version in versions:
        if version.status == "retracted" and previous == version.content:
            pass  # a delete of the version that held: its event follows
        else:
            found.append(
                _event(version, "ADD" if previous is None else "UPDATE", previous, version.content, version.recorded_at)
            )
        if version.status == "retracted":
            found.append(_event(version, "DELETE", version.content, None, version.valid_to or version.recorded_at))
        previous = version.content
    return found


def _event(item: MemoryItem, event: str, old: str | None, new: str | None, at: datetime) -> dict[str, Any]:
    ids = _ids(item)
    return {
        "id": f"{item.memory_id}-{event.lower()}",
        "memory_id": mem0_id(item),
        "old_memory": old,
        "new_memory": new,
        "event": event,
        "user_id": ids.get("user_id"),
        "metadata": ids.get("metadata"),
        "created_at": at.isoformat(),
        "updated_at": at.isoformat(),
    }


def _scope(body: Mapping[str, Any]) -> dict[str, str]:
    ids = {name: str(body[name]) for name in FIELDS if body.get(name) not in (None, "")}
    if not ids:
        raise _refuse("add needs one of user_id, agent_id, run_id or app_id")
    return ids


def _messages(given: Any) -> list[dict[str, Any]]:
    if isinstance(given, str):
        given = [{"role": "user", "content": given}]
    elif isinstance(given, Mapping):
        given = [given]
    if not isinstance(given, list) or not given or not all(isinstance(m, Mapping) for m in given):
        raise _refuse("messages must be a string, a message or a non-empty list of {role, content}")
    return [dict(message) for message in given]


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json() if await request.body() else {}
    except ValueError as exc:
        raise _refuse(f"the body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise _refuse("the body must be a JSON object")
    return body


@router.get("/v1/ping/")
async def ping(request: Request) -> Any:
    """What mem0's client asks first: the tenant stands for its org (and agent_memory for its project)."""
    async with tenant(request) as memory:
        cursor = await memory.conn.execute("select memory.current_tenant()")
        row = await cursor.fetchone()
    return {"status": "ok", "org_id": row[0] if row else "default", "project_id": "agent_memory", "user_email": None}


@router.post("/v3/memories/add/")
async def add(request: Request) -> Any:
    """mem0's add: the messages as turns of a session, each user message (infer false: each message) a memory."""
    body = await _body(request)
    _refuse_unsupported(body, {"messages", "metadata", "infer", *FIELDS})
    ids = _scope(body)
    messages = _messages(body.get("messages"))
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise _refuse("metadata must be an object")
    agent = ids.get("agent_id", "default")
    session = ids.get("run_id") or "mem0:" + (ids.get("user_id") or ids.get("agent_id") or ids["app_id"])
    stored = [{**message, "id": message.get("id") or f"mem0-{uuid.uuid4()}"} for message in messages]
    kept = [m for m in stored if body.get("infer", True) is False or m.get("role") == "user"]
    now = datetime.now(timezone.utc).isoformat()
    results = []
    async with tenant(request, write=True) as memory:
        await memory.commit(session, stored, agent_id=agent, metadata={"mem0": ids})
        for message in kept:
            content = str(message.get("content") or "").strip()
            if not content:
                continue
            remembered = await memory.remember(
                content,
                key=KEY_PREFIX + str(uuid.uuid4()),
                agent_id=agent,
                tags=tags(ids),
                metadata={"mem0": {**ids, "created_at": now, "metadata": metadata}},
            )
            event = {"created": "ADD", "updated": "UPDATE"}.get(remembered.outcome, "NONE")
            results.append({"id": mem0_id(remembered), "memory": remembered.content, "event": event})
    return {
        "results": results,
        "status": "SUCCEEDED",
        "event_id": str(uuid.uuid4()),
        "message": f"{len(results)} memories from {len(stored)} messages",
    }


@router.post("/v3/memories/search/")
async def search(request: Request) -> Any:
    """mem0's search: memory.recall among the memories its filters name, best first."""
    body = await _body(request)
    query = str(body.get("query") or "").strip()
    if not query:
        raise _refuse("search needs a query")
    _refuse_unsupported(body, {"query", "filters", "top_k"})
    alternatives = conditions(body.get("filters"))
    top_k = int(body.get("top_k") or 10)
    async with tenant(request) as memory:
        hits = await memory.recall(query, k=top_k, tags=sorted({tag_for(c) for c in alternatives}))
        wanted = [hit.memory_id for hit in hits if hit.memory_id is not None]
        items = {item.memory_id: item for item in await memory.list_memories(memory_ids=wanted, k=len(wanted) or 1)}
    found = [
        shown(items[hit.memory_id], hit.score)
        for hit in hits
        if hit.memory_id in items and any(matches(items[hit.memory_id], c) for c in alternatives)
    ]
    return {"results": found}


@router.post("/v3/memories/")
async def get_all(request: Request) -> Any:
    """mem0's get_all: the memories its filters name that hold now, newest first, a page at a time."""
    body = await _body(request)
    _refuse_unsupported(body, {"filters"})
    page, size = _page(request)
    async with tenant(request) as memory:
        found = await _matching(memory, conditions(body.get("filters")))
    start = (page - 1) * size
    base = str(request.url.remove_query_params(["page", "page_size"]))
    return {
        "count": len(found),
        "next": f"{base}?page={page + 1}&page_size={size}" if start + size < len(found) else None,
        "previous": f"{base}?page={page - 1}&page_size={size}" if page > 1 else None,
        "results": [shown(item) for item in found[start : start + size]],
    }


def _page(request: Request) -> tuple[int, int]:
    try:
        page = int(request.query_params.get("page", 1))
        size = int(request.query_params.get("page_size", 100))
    except ValueError as exc:
        raise _refuse("page and page_size must be whole numbers") from exc
    if page < 1 or not 1 <= size <= 1000:
        raise _refuse("page must be at least 1 and page_size 1 to 1000")
    return page, size


async def _matching(memory: TenantMemory, alternatives: list[Condition]) -> list[MemoryItem]:
    """Every memory that holds now and matches one of the alternatives, newest first."""
    found: dict[int, MemoryItem] = {}
    for condition in alternatives:
        for item in await memory.list_memories(tag=tag_for(condition), k=100_000):
            if matches(item, condition):
                found[item.memory_id] = item
    return sorted(found.values(), key=lambda item: (item.recorded_at, item.memory_id), reverse=True)


def _refuse_unsupported(body: Mapping[str, Any], answered: set[str]) -> None:
    left = sorted(set(body) - answered - IGNORED)
    if left:
        raise _refuse(
            f"mem0 option {', '.join(left)} is not supported by agent_memory (docs/http.md, the mem0 mapping)"
        )


async def _current(memory: TenantMemory, memory_id: str) -> MemoryItem:
    """The memory that holds under mem0's id now (404 when none does: never added, or deleted)."""
    found = await memory.get(KEY_PREFIX + memory_id)
    if not found and memory_id.isdigit():
        found = await memory.list_memories(memory_ids=[int(memory_id)], k=1)
    if not found:
        raise HTTPProblem(404, "not_found", f"agent_memory: no memory {memory_id}")
    return found[0]


@router.get("/v1/memories/{memory_id}/")
async def get(request: Request, memory_id: str) -> Any:
    async with tenant(request) as memory:
        return shown(await _current(memory, memory_id))


@router.put("/v1/memories/{memory_id}/")
async def update(request: Request, memory_id: str) -> Any:
    """mem0's update: remembered again under the same key (the old words kept in the history, superseded)."""
    body = await _body(request)
    _refuse_unsupported(body, {"text", "metadata", "timestamp", "expiration_date"})
    if body.get("expiration_date") is not None or body.get("timestamp") is not None:
        raise _refuse("mem0's timestamp and expiration_date are not supported: use memory.set_retention")
    async with tenant(request, write=True) as memory:
        current = await _current(memory, memory_id)
        ids = _ids(current)
        metadata = body["metadata"] if "metadata" in body else ids.get("metadata")
        # mem0's update names the new words: a replacement, never merged into the old words as a paraphrase.
        await memory.conn.execute("select set_config('memory.memory_dedup', 'off', true)")
        remembered = await memory.remember(
            str(body.get("text") or current.content),
            key=current.key,
            kind=cast(Kind, current.kind),
            agent_id=current.agent_id,
            tags=current.tags,
            metadata={"mem0": {**ids, "metadata": metadata}},
        )
        return shown(remembered)


@router.delete("/v1/memories/{memory_id}/")
async def delete(request: Request, memory_id: str) -> Any:
    """mem0's delete: the memory is retracted (recall and get_all leave it out; its history keeps it)."""
    async with tenant(request, write=True) as memory:
        await memory.retract((await _current(memory, memory_id)).memory_id)
    return {"message": "Memory deleted successfully!"}


@router.delete("/v1/memories/")
async def delete_all(request: Request) -> Any:
    """mem0's delete_all: every memory of the user, agent, run or app named is retracted."""
    query = dict(request.query_params)
    filters = query.pop("filters", None)
    condition = {name: query.pop(name) for name in FIELDS if query.get(name)}
    if filters:
        try:
            parsed = ast.literal_eval(filters)  # mem0's client sends a dict as its Python repr
        except (ValueError, SyntaxError) as exc:
            raise _refuse(f"filters is not a mem0 filter: {filters}") from exc
        alternatives = conditions(parsed)
    else:
        alternatives = [condition]
    if any(not alternative for alternative in alternatives):
        raise _refuse("delete_all needs user_id, agent_id, run_id or app_id")
    async with tenant(request, write=True) as memory:
        for item in await _matching(memory, alternatives):
            await memory.retract(item.memory_id)
    return {"message": "Memories deleted successfully!"}


@router.get("/v1/memories/{memory_id}/history/")
async def history(request: Request, memory_id: str) -> Any:
    async with tenant(request) as memory:
        found = await memory.get(KEY_PREFIX + memory_id)
        if not found:
            found = await memory.list_memories(key_prefix=KEY_PREFIX + memory_id, status="retracted", k=1)
        if not found and memory_id.isdigit():
            return events(await memory.memory_history(int(memory_id)))
        if not found:
            raise HTTPProblem(404, "not_found", f"agent_memory: no memory {memory_id}")
        return events(await memory.memory_history(found[0].memory_id))
