"""LlamaIndex adapter: a memory block that recalls from agent_memory and commits what leaves the short-term window.

    from llama_index.core.memory import Memory as ChatMemory
    from agent_memory import Memory
    from agent_memory.integrations.llama_index import AgentMemoryBlock

    block = AgentMemoryBlock(client=Memory(dsn), agent_id="support-bot")
    chat_memory = ChatMemory.from_defaults(session_id="chat-1", memory_blocks=[block], token_limit=4000)

AgentMemoryBlock is a llama_index BaseMemoryBlock: when LlamaIndex's Memory builds the prompt (get/aget) it
recalls with the text of the last chat messages as the query and renders the hits, turns said in any earlier
conversation and curated memories, as the block's text; when Memory flushes messages out of its short-term
window (put/aput over the token limit) it commits them to agent_memory under the Memory's session_id (or the
block's own). commit_chat_history / acommit_chat_history commit a whole chat history explicitly. Both give each
message a stable id (a hash of the message and the one before it), so committing the same history again adds
nothing and a longer one adds only its new messages.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from agent_memory.async_client import AsyncMemory
from agent_memory.client import Memory
from agent_memory.results import Bootstrap, Committed, ExportedSession, Hit

Client: TypeAlias = Memory | AsyncMemory

# LlamaIndex's message roles onto agent_memory's four.
ROLES = {
    "user": "user",
    "assistant": "assistant",
    "chatbot": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}
# additional_kwargs the mapping turns into fields of the message (session_id is what Memory stamps on flushed
# messages); the other JSON values become the message's metadata.
CONSUMED_KWARGS = {"session_id", "tool_calls", "tool_call_id", "name"}
ID_PREFIX = "llama-index:"
REMEMBERED = "remembered"  # the session whose turns are the words of an agent's curated memories


def _is_json(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _openai_tool_calls(value: object) -> list[Any]:
    """additional_kwargs["tool_calls"] as OpenAI's LLM classes keep them (dicts or pydantic models)."""
    if not isinstance(value, list):
        return []
    calls = [item.model_dump() if hasattr(item, "model_dump") else item for item in value]
    return [call for call in calls if isinstance(call, dict) and _is_json(call)]


def _tool_call(block: ToolCallBlock) -> dict[str, Any]:
    arguments = block.tool_kwargs if isinstance(block.tool_kwargs, str) else json.dumps(block.tool_kwargs, default=str)
    call: dict[str, Any] = {"type": "function", "function": {"name": block.tool_name, "arguments": arguments}}
    if block.tool_call_id is not None:
        call["id"] = block.tool_call_id
    return call


def _turn(message: ChatMessage) -> dict[str, Any] | None:
    """A ChatMessage as an agent_memory message without its id; None when it has neither text nor tool calls."""
    role = ROLES.get(str(message.role.value))
    if role is None:
        raise ValueError(f"a ChatMessage has role {message.role.value!r}, which agent_memory has no role for")
    texts: list[str] = []
    tool_calls: list[Any] = []
    omitted: list[str] = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ToolCallBlock):
            tool_calls.append(_tool_call(block))
        else:
            omitted.append(str(getattr(block, "block_type", type(block).__name__)))
    kwargs = message.additional_kwargs
    tool_calls = tool_calls or _openai_tool_calls(kwargs.get("tool_calls"))
    text = "\n".join(text for text in texts if text)
    if not text and not tool_calls:
        return None
    turn: dict[str, Any] = {"role": role, "content": text or None}
    if tool_calls:
        turn["tool_calls"] = tool_calls
    for field in ("tool_call_id", "name"):
        if isinstance(kwargs.get(field), str):
            turn[field] = kwargs[field]
    metadata = {key: value for key, value in kwargs.items() if key not in CONSUMED_KWARGS and _is_json(value)}
    if omitted:
        metadata["omitted_blocks"] = omitted
    if metadata:
        turn["metadata"] = metadata
    return turn


def _with_id(turn: dict[str, Any], previous_id: str) -> dict[str, Any]:
    """The turn with its id: a hash of the turn's role, text, tool fields and name, and the id before it."""
    identity = [previous_id, *(turn.get(key) for key in ("role", "content", "tool_calls", "tool_call_id", "name"))]
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return {"id": ID_PREFIX + digest[:32], **turn}


def to_agent_memory_messages(messages: Sequence[ChatMessage], *, previous_id: str = "") -> list[dict[str, Any]]:
    """LlamaIndex ChatMessages as the messages agent_memory's commit takes, each with a stable id.

    Roles: user; assistant (chatbot, model too); system (developer too); tool (function too). Text blocks are
    the content (joined by newlines); ToolCallBlocks, or additional_kwargs["tool_calls"] in OpenAI's shape,
    become tool_calls; additional_kwargs tool_call_id and name become those fields, the other JSON values
    metadata. Other blocks (images, audio, documents, thinking) are left out and named in
    metadata["omitted_blocks"]; a message with neither text nor tool calls is left out. previous_id is the id
    of the message before the first one (a history's start: "")."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        turn = _turn(message)
        if turn is not None:
            converted.append(_with_id(turn, previous_id))
            previous_id = converted[-1]["id"]
    return converted


def commit_chat_history(
    client: Memory,
    session_id: str,
    messages: Sequence[ChatMessage],
    *,
    agent_id: str | None = None,
    enrich: Literal["queue", "now", "none"] | None = None,
) -> Committed:
    """Commits a LlamaIndex chat history (e.g. a Memory's get_all()) as one agent_memory session; only the
    messages the session does not hold yet are added (memory.commit). enrich: queue (default), now or none."""
    if not isinstance(client, Memory):
        raise TypeError(
            f"commit_chat_history needs an agent_memory Memory, not {type(client).__name__}: "
            "with an AsyncMemory await acommit_chat_history"
        )
    return client.commit(session_id, to_agent_memory_messages(messages), agent_id=agent_id, enrich=enrich)


async def acommit_chat_history(
    client: Client,
    session_id: str,
    messages: Sequence[ChatMessage],
    *,
    agent_id: str | None = None,
    enrich: Literal["queue", "now", "none"] | None = None,
) -> Committed:
    """commit_chat_history, awaited; the client is an AsyncMemory or a Memory (called in a thread)."""
    committed: Committed = await _call(
        client, "commit", session_id, to_agent_memory_messages(messages), agent_id=agent_id, enrich=enrich
    )
    return committed


async def _call(client: Client, method: str, *args: Any, **kwargs: Any) -> Any:
    """Runs one client method: awaited on an AsyncMemory, in a worker thread on a Memory."""
    if isinstance(client, AsyncMemory):
        return await getattr(client, method)(*args, **kwargs)
    if isinstance(client, Memory):
        return await asyncio.to_thread(getattr(client, method), *args, **kwargs)
    raise TypeError(f"expected an agent_memory Memory or AsyncMemory, not {type(client).__name__}")


def _text(messages: Sequence[ChatMessage]) -> str:
    return " ".join(block.text for message in messages for block in message.blocks if isinstance(block, TextBlock))


class AgentMemoryBlock(BaseMemoryBlock[str]):
    """A LlamaIndex memory block over agent_memory: recalls for the prompt, commits what Memory flushes.

    client is a Memory or an AsyncMemory the caller opened and closes (an AsyncMemory only with LlamaIndex's
    async entry points, achat / aget / agent workflows: the sync ones run coroutines on other event loops).
    session_id None: the LlamaIndex Memory's own. agent_id None: commits go to agent "default" and recall
    covers every agent of the tenant. The hits render with render_hits (override it to change the text)."""

    name: str = Field(default="agent_memory", description="The name of the memory block.")
    client: Client = Field(exclude=True, description="The agent_memory client: Memory or AsyncMemory.")
    agent_id: str | None = Field(default=None, description="The agent whose memory is read and written.")
    session_id: str | None = Field(default=None, description="The session committed to (None: the Memory's).")
    k: int = Field(default=5, ge=1, description="How many hits to render.")
    retrieval_context_window: int = Field(default=5, ge=1, description="The last messages whose text is the query.")
    tags: list[str] | None = Field(default=None, description="Only curated memories with one of these tags.")
    enrich: Literal["queue", "now", "none"] = Field(default="queue", description="commit's enrich for flushes.")
    bootstrap_chars: int = Field(default=0, ge=0, description="Above 0: bootstrap context of this size first.")
    _last_ids: dict[str, str] = PrivateAttr(default_factory=dict)

    async def _aget(
        self, messages: list[ChatMessage] | None = None, session_id: str | None = None, **block_kwargs: Any
    ) -> str:
        """The bootstrap context (with bootstrap_chars) and the hits recalled for the last messages' text."""
        window = messages or []
        parts: list[str] = []
        if self.bootstrap_chars:
            context: Bootstrap = await _call(
                self.client, "bootstrap", agent_id=self.agent_id, max_chars=self.bootstrap_chars
            )
            parts.append(context.text())
        query = _text(window[-self.retrieval_context_window :]).strip()
        if query:
            parts.append(self.render_hits(await self.arecall(query, window, self.session_id or session_id)))
        return "\n\n".join(part for part in parts if part)

    async def arecall(self, query: str, window: Sequence[ChatMessage] = (), session_id: str | None = None) -> list[Hit]:
        """The k best hits for query, without the turns of session_id that are in window (the short-term
        messages, already in the prompt): recall has no session filter, so a few more are asked for."""
        said = {turn["content"] for turn in map(_turn, window) if turn is not None and turn["content"]}
        hits: list[Hit] = await _call(
            self.client, "recall", query, agent_id=self.agent_id, k=self.k + min(len(said), 20), tags=self.tags
        )
        fresh = [hit for hit in hits if hit.kind != "turn" or hit.session_id != session_id or hit.content not in said]
        return fresh[: self.k]

    def render_hits(self, hits: Sequence[Hit]) -> str:
        """One line per hit: a turn with who said it, when and in which session; a curated memory with its kind."""
        lines = []
        for hit in hits:
            if hit.kind == "turn":
                who = hit.speaker or hit.role
                lines.append(f"- {who} ({hit.created_at:%Y-%m-%d}, session {hit.session_id}): {hit.content}")
            else:
                lines.append(f"- {hit.kind}: {hit.content}")
        return "\n".join(lines)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Commits the messages Memory flushed out of its short-term window, after what the session holds."""
        if not messages:
            return
        session_id = self.session_id or messages[0].additional_kwargs.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            raise ValueError(
                "AgentMemoryBlock has no session to commit to: give it session_id=, or use it in a LlamaIndex "
                "Memory (which passes its own)"
            )
        if session_id == REMEMBERED:
            raise ValueError(f"session {REMEMBERED!r} holds the words of curated memories, not a chat history")
        previous_id = self._last_ids.get(session_id)
        if previous_id is None:
            previous_id = await self._previous_id(session_id, messages)
        turns = to_agent_memory_messages(messages, previous_id=previous_id)
        if turns:
            await _call(self.client, "commit", session_id, turns, agent_id=self.agent_id, enrich=self.enrich)
            self._last_ids[session_id] = turns[-1]["id"]

    async def _previous_id(self, session_id: str, messages: Sequence[ChatMessage]) -> str:
        """The id the flushed messages follow: that of the stored message before the first of them when the
        session holds them already (commit_chat_history committed them), else the session's last id."""
        sessions: list[ExportedSession] = await _call(
            self.client, "export", agent_id=self.agent_id or "default", session_id=session_id
        )
        stored = [str(message.get("id", "")) for session in sessions for message in session["messages"]]
        first = next((turn for turn in map(_turn, messages) if turn is not None), None)
        for position, stored_id in enumerate(stored):
            before = stored[position - 1] if position else ""
            if first is not None and _with_id(first, before)["id"] == stored_id:
                return before
        return stored[-1] if stored else ""
