"""The OpenAI Agents SDK's Session over agent_memory: a conversation's items are the turns of one session.

    from agents import Agent, Runner
    from agent_memory import AsyncMemory
    from agent_memory.integrations.openai_agents import AgentMemorySession

    async with AsyncMemory(dsn) as memory:
        session = AgentMemorySession("chat-42", memory, agent_id="support-bot")
        result = await Runner.run(agent, "Where were we?", session=session)

add_items commits each item as one turn (memory.commit) with the item kept unchanged in the turn's metadata
(key "openai_agents_item") and its words in the turn's content, so recall and enrichment read them;
get_items reads them back in order (memory.export), pop_item removes the last turn (memory.pop_turn) and
clear_session forgets the session (memory.forget). recall_filter() is a RunConfig.call_model_input_filter that
adds what the agent's other sessions say about the user's last message to the instructions.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast, get_args

from agents.items import TResponseInputItem
from agents.memory import SessionSettings
from agents.run_config import CallModelData, ModelInputData

from agent_memory.async_client import AsyncMemory
from agent_memory.calls import Enrich
from agent_memory.errors import NotFound

if TYPE_CHECKING:
    from agent_memory.results import ExportedMessage, Hit

ITEM_KEY = "openai_agents_item"  # the key of a turn's metadata that holds the SDK's item unchanged
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
CONTEXT_TITLE = "Relevant memory from earlier conversations:"
REMEMBERED = "remembered"  # the session whose turns are the words of an agent's curated memories


class AgentMemorySession:
    """A Session of the OpenAI Agents SDK (agents.memory.Session) kept in agent_memory: session_id is the
    memory's session of agent agent_id ("default" is the agent commit writes to when none is given).
    enrich is how commits enrich the new turns: queue (a job for memory.work), now, or none.
    session_settings.limit is get_items' default limit, as in SQLiteSession."""

    def __init__(
        self,
        session_id: str,
        memory: AsyncMemory,
        *,
        agent_id: str = "default",
        enrich: Enrich = "queue",
        session_settings: SessionSettings | None = None,
    ) -> None:
        if not isinstance(memory, AsyncMemory):
            raise TypeError(
                f"memory must be an AsyncMemory (the Session protocol is async), got {type(memory).__name__}"
            )
        for name, value in (("session_id", session_id), ("agent_id", agent_id)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        if session_id == REMEMBERED:
            raise ValueError(f"session {REMEMBERED!r} holds the words of curated memories, not a conversation")
        if enrich not in get_args(Enrich):
            raise ValueError(f"enrich must be one of {', '.join(get_args(Enrich))}, got {enrich!r}")
        self.session_id = session_id
        self.memory = memory
        self.agent_id = agent_id
        self.enrich: Enrich = enrich
        self.session_settings: SessionSettings | None = session_settings or SessionSettings()

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The session's items in order; with limit (else session_settings.limit), the latest limit of them,
        still in order. An unknown session has none. Turns stored by other means than add_items come back as
        messages ({"role", "content"}); their tool turns are left out."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be None or a whole number >= 0, got {limit!r}")
        sessions = await self.memory.export(session_id=self.session_id, agent_id=self.agent_id)
        messages = sessions[0]["messages"] if sessions else []
        items = [item for item in map(_item, messages) if item is not None]
        if limit is None:
            return items
        return items[max(len(items) - limit, 0) :]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Appends the items, one turn each, in one commit. A session clear_session (or memory.forget)
        removed is stored again (allow_forgotten)."""
        for index, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise ValueError(f"item {index} is not a dict (an input item of the Responses API): {item!r}")
        if not items:
            return
        now = datetime.now(UTC).isoformat()
        messages = [_message(cast(Mapping[str, Any], item), now) for item in items]
        await self.memory.commit(
            self.session_id, messages, agent_id=self.agent_id, enrich=self.enrich, allow_forgotten=True
        )

    async def pop_item(self) -> TResponseInputItem | None:
        """Removes the session's last item and returns it (None when the session is empty)."""
        while (turn := await self.memory.pop_turn(self.session_id, agent_id=self.agent_id)) is not None:
            item = _item(turn)
            if item is not None:  # a tool turn stored by other means is no item: removed, and on to the next
                return item
        return None

    async def clear_session(self) -> None:
        """Removes the session and everything derived from it (memory.forget, which leaves a tombstone)."""
        with contextlib.suppress(NotFound):  # nothing stored under this session and agent
            await self.memory.forget(self.session_id, agent_id=self.agent_id)

    def recall_filter(
        self, *, k: int = 5, max_chars: int = 2000
    ) -> Callable[[CallModelData[Any]], Awaitable[ModelInputData]]:
        """A RunConfig.call_model_input_filter: before each model call, recalls the user's last message
        (memory.recall of this agent, 3 k hits) and appends to the instructions the first k of other sessions
        that fit in max_chars characters. Nothing is stored: the session keeps only the conversation."""
        if k < 1 or max_chars < 1:
            raise ValueError(f"k and max_chars must be at least 1, got k={k!r}, max_chars={max_chars!r}")
        cache: dict[str, str] = {}

        async def with_memory(data: CallModelData[Any]) -> ModelInputData:
            query = _last_user_text(data.model_data.input)
            if not query:
                return data.model_data
            if query not in cache:
                hits = await self.memory.recall(query, agent_id=self.agent_id, k=3 * k)
                cache.clear()
                cache[query] = _context([h for h in hits if h.session_id != self.session_id][:k], max_chars)
            if not cache[query]:
                return data.model_data
            instructions = "\n\n".join(part for part in (data.model_data.instructions, cache[query]) if part)
            return ModelInputData(input=data.model_data.input, instructions=instructions)

        return with_memory


def _text(content: object) -> str:
    """The words of an item's content or output: a string, or the text (or refusal) of its parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = (part.get("text", part.get("refusal")) for part in content if isinstance(part, Mapping))
    return "\n".join(part for part in parts if isinstance(part, str))


def _message(item: Mapping[str, Any], created_at: str) -> dict[str, Any]:
    """The turn that stores an item: the item in metadata, its words as content, a tool call as tool_calls,
    a tool's output as a tool turn."""
    kind = item.get("type", "message")
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    if "role" in item and kind == "message":
        message = {"role": ROLES.get(str(item["role"]), "user"), "content": _text(item.get("content"))}
    elif kind in ("function_call", "custom_tool_call"):
        call = {"name": item.get("name"), "arguments": item.get("arguments", item.get("input", ""))}
        message["tool_calls"] = [{"id": item.get("call_id"), "type": "function", "function": call}]
    elif str(kind).endswith("_output") and "call_id" in item:
        message = {"role": "tool", "content": _text(item.get("output")), "tool_call_id": str(item["call_id"])}
    elif kind == "reasoning":
        message["content"] = _text(item.get("summary"))
    return {**message, "id": uuid.uuid4().hex, "created_at": created_at, "metadata": {ITEM_KEY: dict(item)}}


def _item(turn: ExportedMessage) -> TResponseInputItem | None:
    """The item a turn stores; a turn stored by other means as a message, None for its tool turns."""
    stored = turn.get("metadata", {}).get(ITEM_KEY)
    if isinstance(stored, dict):
        return cast(TResponseInputItem, stored)
    if turn["role"] == "tool":
        return None
    return cast(TResponseInputItem, {"role": turn["role"], "content": turn["content"]})


def _last_user_text(items: list[TResponseInputItem]) -> str:
    """The words of the last user message of a model input ('' when it has none)."""
    for item in reversed(items):
        if item.get("role") == "user":
            return _text(item.get("content")).strip()
    return ""


def _context(hits: list[Hit], max_chars: int) -> str:
    """Recalled hits as a Markdown list under CONTEXT_TITLE, as many as fit in max_chars ('' for none)."""
    lines: list[str] = []
    used = 0
    for hit in hits:
        used += len(hit.content)
        if used > max_chars:
            break
        lines.append(f"- {hit.content} ({hit.session_id}, {hit.created_at:%Y-%m-%d})")
    return "\n".join([CONTEXT_TITLE, *lines]) if lines else ""
