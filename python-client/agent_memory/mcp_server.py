"""`agent-memory mcp`: memory as MCP tools over stdio, with the official MCP Python SDK.

Each tool is the SQL function of its name, with the same argument names, declared once for the command line
and the server both (agent_memory.commands: a command with a tool). Read-only tools: recall,
explain_recall, context_for_task, bootstrap, stats, list_memories, query, get, and the knowledge graph's
list_entities, entity_neighbors and entity_state. Tools that write: remember, resolve, retract, approve,
commit, set_entity_state, give_feedback, forget.
Each calls one Memory method and answers compactly (agent_memory.commands.answers): no null fields, times as
ISO 8601 text, a session's summary once per answer. Input schemas come from the declared options, their
descriptions and bounds. The server's agent (--agent-id) is every tool's default agent. Refusals from the
database come back as tool errors carrying the server's message.
"""

from __future__ import annotations

import inspect
import json
from importlib.metadata import version
from typing import Annotated, Any

from agent_memory import results
from agent_memory.client import Memory
from agent_memory.commands import Command, Option, every_command
from agent_memory.errors import AgentMemoryError

try:  # the SDK is an optional dependency
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field, with_config
    from typing_extensions import Required, TypedDict  # pydantic needs these below Python 3.12
except ImportError as exc:
    raise ImportError("the MCP server needs the mcp package: pip install 'agent-memory[mcp]'") from exc

INSTRUCTIONS = (
    "Long-term memory in PostgreSQL. Call bootstrap at the start of a conversation for what is already "
    "known, and context_for_task before a task; recall before answering questions about earlier work "
    "(explain_recall shows why turns ranked as they did); remember facts, preferences, rules, decisions and "
    "tasks worth keeping (with a key, a newer claim replaces the old), list_memories lists what holds, query "
    "lists what a request in plain words asks for ('top 10 recent decisions'), get the memory under a key, "
    "resolve marks a task done and retract a memory that was wrong; give_feedback "
    "when a recalled turn helped or misled; commit to store the conversation; forget a conversation only "
    "when asked to. The people, projects, tools and other entities the conversations mention: list_entities "
    "finds them by name, entity_neighbors "
    "shows what is mentioned with one, entity_state what holds for one (now or at a time); set_entity_state "
    "records a value that changes over time, such as a service's database or a person's role."
)

EFFECTS = {
    "reads": ToolAnnotations(read_only_hint=True, open_world_hint=False),
    "adds": ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
    "judges": ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    ),
    "deletes": ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    ),
}


@with_config(extra="forbid")
class Message(TypedDict, total=False):
    """One message of a conversation, as memory.commit takes it."""

    role: Required[Annotated[results.Role, Field(description="who speaks")]]
    content: Annotated[str, Field(description="the text (may be left out when tool_calls is given)")]
    name: Annotated[str, Field(description="who said it, e.g. the user's name")]
    id: Annotated[str | int, Field(description="the message's id; a message whose id is stored is skipped")]
    created_at: Annotated[str, Field(description="when it was said, ISO 8601, e.g. 2025-06-01T09:30:00Z")]
    tool_calls: Annotated[list[dict[str, Any]], Field(description="the tool calls an assistant message made")]
    tool_call_id: Annotated[str, Field(description="the tool call a tool message answers")]
    metadata: Annotated[dict[str, Any], Field(description="anything else worth keeping, as a JSON object")]


# The types of parameters only the server knows (pydantic's), by the name an option gives.
NAMED_TYPES = {"messages": list[Message]}


def _parameter(option: Option) -> inspect.Parameter:
    """An option as a parameter of the tool's signature, which the SDK reads for the input schema."""
    kind = NAMED_TYPES[option.tool_type] if isinstance(option.tool_type, str) else option.tool_type
    required = option.positional and not option.optional
    if kind is None:
        kind = str if required else str | None
    field = Field(description=option.tool, ge=option.at_least, le=option.at_most)
    default = option.tool_default if option.tool_default is not None else option.default
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if required else default,
        annotation=Annotated[kind, field],
    )


def _answer(data: Any) -> CallToolResult:
    """Structured content for the host, the same as one line of JSON for the model (the SDK would indent it)."""
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _add_tool(server: MCPServer[Any], memory: Memory, command: Command, default_agent: str | None) -> None:
    """The command's tool: the server's agent fills the argument the tool names when the model leaves it out,
    and the database's refusals reach the model as tool errors with the server's message."""
    tool = command.tool
    assert tool is not None

    def call(**given: Any) -> Any:
        try:
            if tool.agent is not None and not given.get(tool.agent):  # left out, or "" as models send
                given[tool.agent] = default_agent
            result = command.run(memory, given)
        except AgentMemoryError as exc:
            raise ToolError(str(exc).removeprefix("agent_memory: ")) from exc
        answer = tool.answer(result, tool.agent == "agent_id" and given.get("agent_id") is None)
        return answer if tool.shown_as is str else _answer(answer)

    returns = str if tool.shown_as is str else Annotated[CallToolResult, tool.shown_as]
    call.__name__ = command.name
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [_parameter(option) for option in command.options if option.tool], return_annotation=returns
    )
    description = " ".join(tool.doc.split())  # one line, without the indentation
    server.tool(name=command.name, description=description, annotations=EFFECTS[tool.effect])(call)


def build(memory: Memory, agent_id: str | None = None) -> MCPServer[Any]:
    """The MCP server with its tools, over one Memory. agent_id is every tool's default agent; without one,
    reads and forget cover every agent and remember and commit write to the database's default agent."""
    server: MCPServer[Any] = MCPServer("agent-memory", version=version("agent-memory"), instructions=INSTRUCTIONS)
    for command in every_command():
        if command.tool is not None:
            _add_tool(server, memory, command, agent_id)
    return server


def serve(dsn: str, tenant: str | None = None, agent_id: str | None = None) -> None:
    """Serves the tools on stdin/stdout until the host closes them."""
    with Memory(dsn, tenant=tenant, max_connections=2) as memory:
        build(memory, agent_id).run("stdio")
