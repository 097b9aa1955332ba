"""`agent-memory mcp`: memory as MCP tools over stdio, with the official MCP Python SDK.

Tools: recall, remember, feedback, bootstrap, commit, stats. Each calls one Memory method; the input
schemas come from the type hints and the descriptions from the docstrings. Errors from the database come
back as tool errors carrying the server's message.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import Field

from agent_memory.client import Memory
from agent_memory.errors import AgentMemoryError
from agent_memory.formatting import plain

F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "Long-term memory in PostgreSQL. Call bootstrap at the start of a conversation for what is already "
    "known, recall before answering questions about earlier work, remember facts and decisions worth "
    "keeping, feedback when a recalled turn helped or misled, and commit to store the conversation."
)


def _plain(value: Any) -> dict[str, Any]:
    """A result as JSON-ready data (times as ISO 8601 text)."""
    return cast(dict[str, Any], json.loads(json.dumps(plain(value), default=str)))


def _reported(tool: F) -> F:
    """The database's refusals reach the model as tool errors with the server's message."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(tool)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except AgentMemoryError as exc:
            raise ToolError(str(exc)) from exc

    return cast(F, run)


def build(memory: Memory, agent_id: str | None = None) -> Any:
    """The MCP server with its tools, over one Memory."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:  # the SDK is an optional dependency: agent-memory[mcp]
        raise RuntimeError("the MCP server needs the mcp package: pip install 'agent-memory[mcp]'") from exc

    server = MCPServer("agent-memory", instructions=INSTRUCTIONS)
    agent = agent_id

    @server.tool()
    @_reported
    def recall(
        query: Annotated[str, Field(description="what to look for, in plain words")],
        k: Annotated[int, Field(ge=1, le=100, description="how many results")] = 5,
        level: Annotated[Literal["turn", "session"], Field(description="turns, or whole sessions")] = "turn",
    ) -> list[dict[str, Any]]:
        """The remembered conversation turns that best answer the query, best first, with their turn_id
        (for feedback), session, speaker, time and score."""
        hits = memory.recall(query, k=k, level=level, agent_id=agent)
        return [{key: value for key, value in _plain(hit).items() if key != "components"} for hit in hits]

    @server.tool()
    @_reported
    def remember(
        content: Annotated[str, Field(description="the fact, preference, rule or decision, in one sentence")],
        kind: Annotated[
            Literal["fact", "preference", "rule", "decision", "event", "observation", "skill"],
            Field(description="what kind of memory it is"),
        ] = "fact",
    ) -> dict[str, Any]:
        """Keeps something worth knowing in later conversations. Remembering the same text again adds nothing."""
        return _plain(memory.remember(content, kind=kind, agent_id=agent))

    @server.tool()
    @_reported
    def feedback(
        turn_id: Annotated[int, Field(description="the turn_id of a recalled result")],
        helpful: Annotated[bool, Field(description="true if it helped, false if it was wrong or useless")],
        query: Annotated[str | None, Field(description="the query it was recalled for")] = None,
    ) -> dict[str, Any]:
        """Says whether a recalled turn helped; unhelpful turns rank lower from now on, helpful ones higher."""
        return _plain(memory.feedback(turn_id, helpful, query=query))

    @server.tool()
    @_reported
    def bootstrap(
        max_chars: Annotated[int, Field(ge=100, le=100000, description="character budget")] = 4000,
    ) -> str:
        """What is already known, for the start of a conversation: remembered facts, open loops, decisions
        and summaries of recent sessions, as Markdown."""
        return memory.bootstrap(agent_id=agent, max_chars=max_chars).text() or "Nothing is remembered yet."

    @server.tool()
    @_reported
    def commit(
        session_id: Annotated[str, Field(description="the conversation's id; commit it again as it grows")],
        messages: Annotated[
            list[dict[str, Any]],
            Field(description='messages as {"role": "user"|"assistant"|"system"|"tool", "content": "...", "id"?}'),
        ],
    ) -> dict[str, Any]:
        """Stores a conversation's messages; messages already stored are skipped."""
        return _plain(memory.commit(session_id, messages, agent_id=agent))

    @server.tool()
    @_reported
    def stats() -> list[dict[str, Any]]:
        """How much is remembered: sessions, turns, indexed and embedded chunks, pending jobs, per agent."""
        return [_plain(row) for row in memory.stats(agent)]

    return server


def serve(dsn: str, tenant: str | None = None, agent_id: str | None = None) -> None:
    """Serves the tools on stdin/stdout until the host closes them."""
    with Memory(dsn, tenant=tenant, max_connections=2) as memory:
        build(memory, agent_id).run("stdio")
