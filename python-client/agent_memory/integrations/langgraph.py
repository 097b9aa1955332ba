"""LangGraph's long-term memory seam, BaseStore, over agent_memory: `pip install "agent-memory[langgraph]"`.

    from agent_memory import Memory
    from agent_memory.integrations.langgraph import AgentMemoryStore

    store = AgentMemoryStore(Memory(dsn, tenant="acme"), agent_id="support-bot")
    graph = builder.compile(store=store)

An item is a curated memory of the store's agent. Its namespace and key make the memory's key (the parts
joined by "/", a "/" or "%" within a part written %2F or %25); its value is kept whole in the memory's
metadata (under "langgraph", with namespace, key and when it was first put); its words, what recall
searches, are the value's text (the fields of `fields`, or the whole value). Each namespace prefix the item
lives under is a tag ("langgraph:" then the prefix), so a search is a recall kept to those tags. Putting
again under a key supersedes the version before (memory.get(key, as_of=...) still reads it); delete
resolves it. AsyncAgentMemoryStore is the same over AsyncMemory. docs/integrations.md has the whole mapping.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path

from agent_memory import calls, results
from agent_memory.async_client import AsyncMemory
from agent_memory.client import Memory

T = TypeVar("T")
# A store operation as the calls it makes: it yields each call and is sent the call's result.
Steps = Generator[calls.Call[Any], Any, T]
TAG = "langgraph:"
# How many of the agent's items list_namespaces and a filtered search read at most.
READ_AT_MOST = 100_000
# A filtered search asks recall for this many times the hits it returns (a filter drops some).
FILTERED_OVERFETCH = 4


def _part(label: str) -> str:
    """A label or key as a part of a memory key: "%", "/" and white space at either end escaped (a memory
    key is trimmed)."""
    escaped = label.replace("%", "%25").replace("/", "%2F")
    return re.sub(r"^\s+|\s+$", lambda ends: "".join(f"%{ord(c):02X}" for c in ends.group()), escaped)


def memory_key(namespace: tuple[str, ...], key: str) -> str:
    """The memory key of an item: its namespace and key, each part escaped, joined by "/"."""
    return "/".join(_part(label) for label in (*namespace, key))


def namespace_tag(prefix: tuple[str, ...]) -> str:
    """The tag every item under a namespace prefix has ("langgraph:" alone for the empty prefix)."""
    return TAG + "/".join(_part(label) for label in prefix)


def words(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The text of a value recall searches: the fields' text, one per line; the whole value without fields
    (a lone string field is that string, otherwise a "field: value" line each)."""
    if fields is not None and list(fields) != ["$"]:
        return "\n".join(text for path in fields for text in get_text_at_path(value, path) if text.strip())
    if len(value) == 1 and isinstance(next(iter(value.values())), str):
        return str(next(iter(value.values())))
    return "\n".join(
        f"{name}: {text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)}"
        for name, text in value.items()
    )


def matches(value: Any, wanted: Any) -> bool:
    """Whether a value meets a filter: equal values, nested objects field by field, and the comparison
    operators $eq, $ne, $gt, $gte, $lt and $lte."""
    if isinstance(wanted, Mapping) and any(str(name).startswith("$") for name in wanted):
        return all(_compare(value, operator, operand) for operator, operand in wanted.items())
    if isinstance(wanted, Mapping):
        return isinstance(value, Mapping) and all(matches(value.get(name), inner) for name, inner in wanted.items())
    return bool(value == wanted)


def _compare(value: Any, operator: str, operand: Any) -> bool:
    if operator in ("$eq", "$ne"):
        return bool(value == operand) == (operator == "$eq")
    if operator not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"AgentMemoryStore: unknown filter operator {operator}; use $eq, $ne, $gt, $gte, $lt or $lte")
    try:
        if operator == "$gt":
            return bool(value > operand)
        if operator == "$gte":
            return bool(value >= operand)
        return bool(value < operand) if operator == "$lt" else bool(value <= operand)
    except TypeError:  # None, or values of kinds that do not compare: no match
        return False


def namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    """Whether a namespace meets a prefix or suffix condition ("*" matches any one label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    ends = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(wanted in ("*", label) for label, wanted in zip(ends, path, strict=True))


def _stored(item: results.MemoryItem) -> dict[str, Any]:
    kept = item.metadata.get("langgraph")
    return kept if isinstance(kept, dict) else {}


def _item(item: results.MemoryItem, score: float | None = None) -> SearchItem:
    kept = _stored(item)
    updated = datetime.fromisoformat(str(kept.get("updated_at", item.valid_from.isoformat())))
    created = datetime.fromisoformat(str(kept.get("created_at", updated.isoformat())))
    value = kept.get("value")
    return SearchItem(
        tuple(kept.get("namespace", ())),
        str(kept.get("key")),
        value if isinstance(value, dict) else {},
        created,
        updated,
        score,
    )


def _said(hit: results.Hit) -> SearchItem:
    """A hit that is no item of the store: a turn of a conversation, or a memory enrichment took from one."""
    if hit.memory_id is not None:
        value: dict[str, Any] = {"content": hit.content, "kind": hit.kind, "evidence_turn_ids": hit.evidence_turn_ids}
        return SearchItem(("memories", hit.kind), str(hit.memory_id), value, hit.created_at, hit.created_at, hit.score)
    value = {"content": hit.content, "role": hit.role, "speaker": hit.speaker, "session_id": hit.session_id}
    key = hit.message_id or str(hit.turn_id)
    return SearchItem(("turns", hit.session_id), key, value, hit.created_at, hit.created_at, hit.score)


class _Operations:
    """The store's operations as the calls they make, for either client."""

    def __init__(
        self,
        agent_id: str,
        fields: Sequence[str] | None,
        search_turns: bool,
        weights: Mapping[str, calls.JsonInput] | None,
    ) -> None:
        if not agent_id or not agent_id.strip():
            raise ValueError("AgentMemoryStore: agent_id must not be empty")
        self.agent_id = agent_id
        self.fields = None if fields is None else list(fields)
        self.search_turns = search_turns
        self.weights = weights

    def steps(self, op: Op) -> Steps[Result]:
        """The calls of one operation."""
        if isinstance(op, GetOp):
            return self.get(op)
        if isinstance(op, PutOp):
            return self.put(op)
        if isinstance(op, SearchOp):
            return self.search(op)
        if isinstance(op, ListNamespacesOp):
            return self.list_namespaces(op)
        raise ValueError(f"AgentMemoryStore: unknown operation {type(op).__name__}")

    def _current(self, namespace: tuple[str, ...], key: str) -> Steps[results.MemoryItem | None]:
        held = yield calls.get(memory_key(namespace, key), self.agent_id, None)
        return held[0] if held else None

    def get(self, op: GetOp) -> Steps[Item | None]:
        held = yield from self._current(op.namespace, op.key)
        return None if held is None else _item(held)

    def put(self, op: PutOp) -> Steps[None]:
        held = yield from self._current(op.namespace, op.key)
        if op.value is None:
            if held is not None:
                yield calls.move_memory("resolve", held.memory_id)
            return None
        value = dict(op.value)
        if held is not None and _stored(held).get("value") == value:
            return None
        fields = self.fields if op.index is None else (op.index or None)
        # The words: the fields', else the whole value's, else (nothing to say) the item's key.
        text = next(
            text
            for text in (words(value, fields), words(value, None), memory_key(op.namespace, op.key))
            if text.strip()
        )
        now = datetime.now().astimezone().isoformat()
        created = _stored(held).get("created_at") if held is not None else None
        kept: dict[str, calls.JsonInput] = {"namespace": list(op.namespace), "key": op.key, "value": value}
        kept.update(created_at=created or now, updated_at=now, indexed=op.index is not False)
        tags = [namespace_tag(op.namespace[:depth]) for depth in range(len(op.namespace) + 1)]
        options: calls.MemoryOptions = {
            "agent_id": self.agent_id,
            "key": memory_key(op.namespace, op.key),
            "tags": tags,
            "metadata": {"langgraph": kept},
            "enrich": "none" if op.index is False else None,
        }
        yield calls.remember(text, options)
        return None

    def search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        tag = namespace_tag(op.namespace_prefix)
        wanted = op.offset + op.limit
        if op.query is None:
            k = READ_AT_MOST if op.filter else max(wanted, 1)
            items = yield calls.list_memories({"agent_id": self.agent_id, "tag": tag, "k": k})
            found = [_item(item) for item in items]
        else:
            # Recall ranks other namespaces' items too with search_turns, and a filter drops some: ask for more.
            k = max(wanted * (FILTERED_OVERFETCH if op.filter else 1) * (2 if self.search_turns else 1), 1)
            recall: calls.RecallOptions = {"agent_id": self.agent_id, "k": k, "weights": self.weights}
            if not self.search_turns:
                recall["tags"] = [tag]
            hits = yield calls.recall(op.query, recall)
            ids = [hit.memory_id for hit in hits if hit.memory_id is not None]
            items = yield calls.list_memories({"memory_ids": ids, "k": max(len(ids), 1)})
            by_id = {item.memory_id: item for item in items}
            found = [
                _item(by_id[hit.memory_id], hit.score)
                if hit.memory_id in by_id and TAG in by_id[hit.memory_id].tags
                else _said(hit)
                for hit in hits
                if self._found(hit, by_id.get(hit.memory_id), tag)
            ]
        if op.filter:
            found = [item for item in found if matches(item.value, op.filter)]
        return found[op.offset : wanted]

    def _found(self, hit: results.Hit, item: results.MemoryItem | None, tag: str) -> bool:
        """Whether a hit answers a search of a prefix: an item under it that is indexed, or (search_turns)
        a turn of a conversation or a memory that holds and is no item of the store."""
        if item is not None and TAG in item.tags:
            return tag in item.tags and _stored(item).get("indexed", True) is not False
        if hit.memory_id is not None:
            return self.search_turns and item is not None
        return self.search_turns and hit.session_id != "remembered"

    def list_namespaces(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        items = yield calls.list_memories({"agent_id": self.agent_id, "tag": TAG, "k": READ_AT_MOST})
        namespaces = set()
        for item in items:
            namespace = tuple(_stored(item).get("namespace", ()))
            if all(namespace_matches(namespace, condition) for condition in op.match_conditions or ()):
                namespaces.add(namespace if op.max_depth is None else namespace[: op.max_depth])
        return sorted(namespaces)[op.offset : op.offset + op.limit]


def _run_sync(steps: Steps[T], run: Callable[[calls.Call[Any]], Any]) -> T:
    try:
        call = next(steps)
        while True:
            call = steps.send(run(call))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


class AgentMemoryStore(BaseStore):
    """A LangGraph BaseStore over agent_memory's Memory: items are curated memories of one agent, search is
    recall (search_turns: the agent's conversations too, as items of namespace ("turns", session_id)).
    fields: the value fields whose text is searched, as LangGraph's index config names them (default: the
    whole value). weights: recall settings for the store's searches (e.g. {"weight_recency": 1}: newer first).
    The client is the caller's, opened and closed by it."""

    def __init__(
        self,
        memory: Memory,
        *,
        agent_id: str = "default",
        fields: Sequence[str] | None = None,
        search_turns: bool = False,
        weights: Mapping[str, calls.JsonInput] | None = None,
    ) -> None:
        if not isinstance(memory, Memory):
            raise TypeError(f"AgentMemoryStore takes an agent_memory Memory, got {type(memory).__name__}")
        self.memory = memory
        self._operations = _Operations(agent_id, fields, search_turns, weights)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs the operations in order, each as its calls of the SQL API."""
        return [_run_sync(self._operations.steps(op), self.memory._run) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """batch in a worker thread (the client is synchronous; AsyncAgentMemoryStore is not)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))


class AsyncAgentMemoryStore(BaseStore):
    """AgentMemoryStore over AsyncMemory: abatch is native; batch, from a thread other than the event
    loop's, runs on that loop."""

    def __init__(
        self,
        memory: AsyncMemory,
        *,
        agent_id: str = "default",
        fields: Sequence[str] | None = None,
        search_turns: bool = False,
        weights: Mapping[str, calls.JsonInput] | None = None,
    ) -> None:
        if not isinstance(memory, AsyncMemory):
            raise TypeError(f"AsyncAgentMemoryStore takes an agent_memory AsyncMemory, got {type(memory).__name__}")
        self.memory = memory
        self._operations = _Operations(agent_id, fields, search_turns, weights)
        self._loop = _running_loop()

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs the operations in order, each as its calls of the SQL API."""
        self._loop = asyncio.get_running_loop()
        done: list[Result] = []
        for op in ops:
            steps = self._operations.steps(op)
            try:
                call = next(steps)
                while True:
                    call = steps.send(await self.memory._run(call))
            except StopIteration as finished:
                done.append(finished.value)
        return done

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """abatch on the event loop the store was made or last ran on, from another thread (as LangGraph runs a
        sync node of an async graph in a worker thread); in the loop's own thread use abatch."""
        loop = self._loop
        if loop is None or not loop.is_running():
            raise RuntimeError(
                "AsyncAgentMemoryStore: its event loop is not running; call its async methods (aget, aput, "
                "asearch), or use AgentMemoryStore over Memory for synchronous code"
            )
        if _running_loop() is loop:
            raise RuntimeError("AsyncAgentMemoryStore: in the event loop's own thread, use aget, aput, asearch")
        return asyncio.run_coroutine_threadsafe(self.abatch(list(ops)), loop).result()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
