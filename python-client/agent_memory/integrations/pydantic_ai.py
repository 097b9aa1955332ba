"""Pydantic AI Harness memory over agent_memory: `AgentMemoryStore`, the harness's `MemoryStore` (with write
metadata and search) kept as curated memories of one agent.

    from pydantic_ai_harness import Memory
    from agent_memory.integrations.pydantic_ai import AgentMemoryStore

    agent = Agent(model, capabilities=[Memory(AgentMemoryStore(async_memory, agent_id="support-bot"))])

A memory file is the memory held under a key: its path is the key, its words the content (tagged `tag`, of
kind `kind`), its version the memory's id. A write is a new claim under the key, which supersedes the one
before (history kept); a delete resolves it (it stops holding, kept in history). Each write and delete runs
in one transaction that takes an advisory lock on the key and checks the version first (compare-and-set).
`search` ranks with recall (full text and vectors), keeping what contains a query word or is close in
meaning, then adds the files that contain a query word but recall did not rank. Operation receipts are kept
by the store instance (the most recent 1,024), as `InMemoryStore` keeps them. docs/integrations.md says what
maps to what and what is not supported.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, TypeVar

import anyio
from psycopg import sql
from pydantic_ai_harness.memory import (
    MemoryConflictError,
    MemoryFile,
    MemoryMutation,
    MemoryOperation,
    MemoryOperationConflictError,
    MemorySearchMatch,
    MemorySearchResult,
)

# The bundled stores' own path rules, so a path means here what it means to them.
from pydantic_ai_harness.memory._store import MAX_METADATA_CHARS, validate_store_path, validate_store_prefix

from agent_memory import calls, results
from agent_memory.async_client import AsyncMemory
from agent_memory.calls import Enrich, Kind

T = TypeVar("T")
TAG = "pydantic-ai"
MAX_RECEIPTS = 1024
"""How many recent operation receipts a store keeps for replay protection (as InMemoryStore does)."""
_LISTED = 100_000  # list_memories orders by importance, not key: every path under a prefix is read, then sorted
_RECALLED = 100  # recall's largest k
# Advisory locks are the cluster's: the key names the tenant, so tenants never wait on each other's.
_LOCK = sql.SQL("select pg_advisory_xact_lock(hashtextextended(memory.current_tenant() || chr(31) || {}, 0))").format(
    sql.Placeholder("lock")
)


class AgentMemoryStore:
    """A harness `MemoryStore`, `MetadataMemoryStore` and `SearchableMemoryStore` over an AsyncMemory the
    caller opens and closes: files are the memories `agent_id` holds under their paths as keys, of `kind`,
    tagged `tag`, enriched as `enrich` says; `search` keeps what recall ranks by meaning alone when its cosine
    with the query is at least `min_similarity`."""

    def __init__(
        self,
        memory: AsyncMemory,
        *,
        agent_id: str = "default",
        kind: Kind = "fact",
        tag: str = TAG,
        enrich: Enrich = "now",
        min_similarity: float = 0.45,
    ) -> None:
        if not isinstance(memory, AsyncMemory):
            raise TypeError(
                f"AgentMemoryStore needs an agent_memory.AsyncMemory (the harness's store is async), got "
                f"{type(memory).__name__}"
            )
        if not agent_id.strip():
            raise ValueError("agent_id must not be empty")
        if not tag.strip():
            raise ValueError("tag must not be empty")
        self._memory = memory
        self._agent_id = agent_id
        self._kind: Kind = kind
        self._tag = tag
        self._enrich: Enrich = enrich
        self._min_similarity = min_similarity
        self._receipts: OrderedDict[str, tuple[str, MemoryMutation]] = OrderedDict()
        self._locks = [anyio.Lock() for _ in range(32)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(agent_id={self._agent_id!r})"

    async def read(self, path: str, *, max_chars: int) -> MemoryFile | None:
        """The file at `path` (its first max_chars characters), or None when no memory is held under it."""
        validate_store_path(path)
        if max_chars <= 0:
            raise ValueError("max_chars must be positive")
        held = await self._memory.get(path, agent_id=self._agent_id)
        if not held:
            return None
        item = held[0]
        text = _text(item)
        operation_id = item.metadata.get("operation_id")
        return MemoryFile(
            content=text[:max_chars],
            version=str(item.memory_id),
            operation_id=operation_id if isinstance(operation_id, str) else None,
            truncated=len(text) > max_chars,
            metadata=_write_metadata(item),
        )

    async def get_operation(self, operation: MemoryOperation) -> MemoryMutation | None:
        """The result of an earlier write or delete with this operation id, or None."""
        receipt = self._receipts.get(operation.id)
        if receipt is None:
            return None
        if receipt[0] != operation.fingerprint:
            raise MemoryOperationConflictError(f"operation id {operation.id!r} was reused with different arguments")
        return dataclasses.replace(receipt[1], replayed=True)

    async def write(
        self, path: str, content: str, *, expected_version: str | None, operation: MemoryOperation | None = None
    ) -> MemoryMutation:
        """Create or replace `path` if its version equals `expected_version`, recording no metadata."""
        return await self.write_with_metadata(
            path, content, expected_version=expected_version, metadata=None, operation=operation
        )

    async def write_with_metadata(
        self,
        path: str,
        content: str,
        *,
        expected_version: str | None,
        metadata: Mapping[str, str] | None,
        operation: MemoryOperation | None = None,
    ) -> MemoryMutation:
        """Create or replace `path` if its version equals `expected_version`, recording `metadata` with it.

        Content of white space only ends the file (agent_memory keeps no empty memory): version None."""
        validate_store_path(path)
        if "\x00" in content:
            raise ValueError("memory content must not contain NUL characters (PostgreSQL text cannot hold them)")
        body = content.strip()
        kept: dict[str, calls.JsonInput] = {
            "leading_whitespace": content[: len(content) - len(content.lstrip())],
            "trailing_whitespace": content[len(content.rstrip()) :],
            "operation_id": operation.id if operation else None,
            "write_metadata": _checked_metadata(metadata),
        }
        desired = {key: value for key, value in kept.items() if value}
        options: calls.MemoryOptions = {
            "kind": self._kind,
            "agent_id": self._agent_id,
            "key": path,
            "tags": [self._tag],
            "metadata": desired,
            "enrich": self._enrich,
        }

        async def mutate() -> MemoryMutation:
            state: dict[str, Any] = {}
            await self._memory._run_in_one_transaction(self._write_steps(path, body, options, expected_version, state))
            item: results.MemoryItem | None = state.get("item")
            version = None if item is None else str(item.memory_id)
            return MemoryMutation(version=version, replayed=False, existed=state["current"] is not None)

        return await self._mutate(operation, mutate)

    async def delete(
        self, path: str, *, expected_version: str | None, operation: MemoryOperation | None = None
    ) -> MemoryMutation:
        """Resolve the memory held under `path` (kept in history) if its version equals `expected_version`."""
        validate_store_path(path)

        async def mutate() -> MemoryMutation:
            state: dict[str, Any] = {}
            await self._memory._run_in_one_transaction(self._delete_steps(path, expected_version, state))
            return MemoryMutation(version=None, replayed=False, existed=state["current"] is not None)

        return await self._mutate(operation, mutate)

    async def list_paths(self, prefix: str = "", *, limit: int) -> list[str]:
        """The paths starting with `prefix` that hold a memory now, sorted, at most `limit`."""
        validate_store_prefix(prefix)
        if limit <= 0:
            raise ValueError("limit must be positive")
        return sorted(await self._held_files(prefix))[:limit]

    async def search(
        self, prefix: str, query: str, *, limit: int, max_files: int, max_chars: int, max_file_chars: int
    ) -> MemorySearchResult:
        """The files directly below `prefix` that answer `query`, within the harness's bounds: those recall ranks
        (full text and vectors) that contain a query word or whose cosine with the query is at least
        min_similarity, in recall's order, then the other files that contain a query word."""
        validate_store_prefix(prefix)
        terms = query.lower().split()
        if not terms or limit <= 0 or max_files <= 0 or max_chars <= 0 or max_file_chars <= 0:
            return MemorySearchResult(matches=[], scanned=0, truncated=False)
        held = await self._held_files(prefix)
        scoped = sorted(path for path in held if "/" not in path.removeprefix(prefix))
        scanned = scoped[:max_files]
        texts = {path: _text(held[path])[:max_file_chars] for path in scanned}
        by_id = {held[path].memory_id: path for path in scanned}
        hits = await self._memory.recall(query, agent_id=self._agent_id, k=_RECALLED, tags=[self._tag])
        lexical = {path: _lexical_score(texts[path], path.removeprefix(prefix), terms) for path in scanned}
        ranked = [
            (hit.score, by_id[hit.memory_id])
            for hit in hits
            if hit.memory_id in by_id and (lexical[by_id[hit.memory_id]] or _similarity(hit) >= self._min_similarity)
        ]
        seen = {path for _, path in ranked}
        ranked += sorted(((s, p) for p, s in lexical.items() if s and p not in seen), key=lambda m: (-m[0], m[1]))
        matches: list[MemorySearchMatch] = []
        remaining = max_chars
        for score, path in ranked[:limit]:
            available = remaining - len(path.removeprefix(prefix))
            if available <= 0:
                break
            snippet = _snippet(texts[path], terms, available)
            matches.append(MemorySearchMatch(path=path, snippet=snippet, score=score))
            remaining = available - len(snippet)
        truncated = (
            len(scoped) > max_files
            or len(ranked) > len(matches)
            or any(len(_text(held[path])) > max_file_chars for path in scanned)
        )
        return MemorySearchResult(matches=matches, scanned=len(scanned), truncated=truncated)

    async def _held_files(self, prefix: str) -> dict[str, results.MemoryItem]:
        """The memories the agent holds now under keys that are store paths starting with prefix, by key."""
        items = await self._memory.list_memories(agent_id=self._agent_id, key_prefix=prefix or None, k=_LISTED)
        return {item.key: item for item in items if item.key is not None and _is_path(item.key)}

    async def _mutate(
        self, operation: MemoryOperation | None, mutate: Callable[[], Awaitable[MemoryMutation]]
    ) -> MemoryMutation:
        """Runs a mutation once per operation id: a replay returns the receipt of the first run."""
        guard: AbstractAsyncContextManager[Any] = nullcontext()
        if operation is not None:
            guard = self._locks[hash(operation.id) % len(self._locks)]
        async with guard:
            if operation is not None and (receipt := await self.get_operation(operation)) is not None:
                return receipt
            mutation = await mutate()
            if operation is not None:
                self._receipts[operation.id] = (operation.fingerprint, mutation)
                if len(self._receipts) > MAX_RECEIPTS:
                    self._receipts.popitem(last=False)
            return mutation

    def _checked_current(
        self, path: str, expected_version: str | None, state: dict[str, Any], verb: str
    ) -> Iterator[calls.Call[Any]]:
        """The transaction's first steps: the key's lock, then the version check (MemoryConflictError)."""
        yield calls.Call(_LOCK, {"lock": f"agent_memory.pydantic_ai\x1f{self._agent_id}\x1f{path}"}, lambda rows: None)

        def check(held: list[results.MemoryItem]) -> None:
            current = held[0] if held else None
            state["current"] = current
            if (None if current is None else str(current.memory_id)) != expected_version:
                raise MemoryConflictError(f"memory path {path!r} changed before it could be {verb}")

        yield _then(calls.get(path, self._agent_id, None), check)

    def _write_steps(
        self,
        path: str,
        body: str,
        options: calls.MemoryOptions,
        expected_version: str | None,
        state: dict[str, Any],
    ) -> Iterator[calls.Call[Any]]:
        """A write: the new claim under the key; when remember keeps the memory held instead (the same claim
        by its normalized words, or a paraphrase), that one is resolved and the claim remembered again, so
        the file reads back exactly as written."""
        yield from self._checked_current(path, expected_version, state, "written")
        current: results.MemoryItem | None = state["current"]
        if not body:
            if current is not None:
                yield calls.move_memory("resolve", current.memory_id)
            return
        remember = _then(calls.remember(body, options), lambda item: state.__setitem__("item", item))
        yield remember
        item: results.Remembered = state["item"]
        if item.content != body or item.metadata != options.get("metadata"):
            yield calls.move_memory("resolve", item.memory_id)
            yield remember

    def _delete_steps(
        self, path: str, expected_version: str | None, state: dict[str, Any]
    ) -> Iterator[calls.Call[Any]]:
        yield from self._checked_current(path, expected_version, state, "deleted")
        if state["current"] is not None:
            yield calls.move_memory("resolve", state["current"].memory_id)


def _then(call: calls.Call[T], then: Callable[[T], object]) -> calls.Call[T]:
    """The call, with `then` run on its result before the transaction's next step."""

    def result(rows: calls.Rows) -> T:
        value = call.result(rows)
        then(value)
        return value

    return dataclasses.replace(call, result=result)


def _text(item: results.MemoryItem) -> str:
    """A file's content: the memory's words with the white space around them that the write had."""
    before, after = item.metadata.get("leading_whitespace"), item.metadata.get("trailing_whitespace")
    return (before if isinstance(before, str) else "") + item.content + (after if isinstance(after, str) else "")


def _checked_metadata(metadata: Mapping[str, str] | None) -> dict[str, calls.JsonInput] | None:
    """Write metadata as the bundled stores accept it: string keys and values, no NUL, at most 4,096 characters
    as JSON; an empty mapping is none."""
    if not metadata:
        return None
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in metadata.items()):
        raise TypeError("memory metadata keys and values must be strings")
    if any("\x00" in key or "\x00" in value for key, value in metadata.items()):
        raise ValueError("memory metadata keys and values must not contain NUL characters")
    size = len(json.dumps(dict(metadata), ensure_ascii=False, separators=(",", ":"), sort_keys=True))
    if size > MAX_METADATA_CHARS:
        raise ValueError(f"memory metadata is {size} characters as JSON; the limit is {MAX_METADATA_CHARS}")
    return dict(metadata)


def _write_metadata(item: results.MemoryItem) -> dict[str, str] | None:
    """The write metadata a memory was remembered with, or None."""
    written = item.metadata.get("write_metadata")
    if not isinstance(written, dict):
        return None
    return {key: value for key, value in written.items() if isinstance(value, str)} or None


def _similarity(hit: results.Hit) -> float:
    """The cosine of the query's vector and the memory's words (recall's dense signal; 0 without one)."""
    dense = hit.components["signals"].get("dense")
    return 0.0 if dense is None or dense["value"] is None else dense["value"]


def _lexical_score(text: str, name: str, terms: list[str]) -> float:
    """The bundled stores' score: each query word's count in the content, and twice its count in the name."""
    lower, lower_name = text.lower(), name.lower()
    return float(sum(lower.count(term) + 2 * lower_name.count(term) for term in terms))


def _is_path(key: str) -> bool:
    try:
        validate_store_path(key)
    except ValueError:
        return False
    return True


def _snippet(text: str, terms: list[str], budget: int) -> str:
    """At most budget characters of text, from a little before the first query word found."""
    lower = text.lower()
    found = [position for position in (lower.find(term) for term in terms) if position >= 0]
    start = max(0, min(found, default=0) - budget // 3)
    start = max(0, min(start, len(text) - budget))
    return text[start : start + budget]
