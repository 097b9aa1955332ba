"""`agent-memory mcp`: memory as MCP tools over stdio, with the official MCP Python SDK.

Each tool is the SQL function of its name, with the same argument names. Read-only tools: recall,
explain_recall, context_for_task, bootstrap, stats, list_memories, get, and the knowledge graph's
list_entities, entity_neighbors and entity_state. Tools that write: remember, resolve, retract, approve,
commit, set_entity_state, give_feedback, forget.
Each calls one Memory method and answers compactly: no null fields, times as ISO 8601 text, a session's
summary once per answer. Input schemas come from the typed parameters, descriptions from the docstrings.
The server's agent (--agent-id) is every tool's default agent. Refusals from the database come back as tool
errors carrying the server's message.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from importlib.metadata import version
from typing import Annotated, Any, Literal, TypeVar, cast

from agent_memory import results
from agent_memory.calls import EntityMode, Kind, Level, Tier
from agent_memory.client import Memory
from agent_memory.errors import AgentMemoryError, InvalidInput
from agent_memory.formatting import ranks, signals

try:  # the SDK is an optional dependency
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field, with_config
    from typing_extensions import NotRequired, Required, TypedDict  # pydantic needs these below Python 3.12
except ImportError as exc:
    raise ImportError("the MCP server needs the mcp package: pip install 'agent-memory[mcp]'") from exc

F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "Long-term memory in PostgreSQL. Call bootstrap at the start of a conversation for what is already "
    "known, and context_for_task before a task; recall before answering questions about earlier work "
    "(explain_recall shows why turns ranked as they did); remember facts, preferences, rules, decisions and "
    "tasks worth keeping (with a key, a newer claim replaces the old), list_memories lists what holds and get "
    "the memory under a key, resolve marks a task done and retract a memory that was wrong; give_feedback "
    "when a recalled turn helped or misled; commit to store the conversation; forget a conversation only "
    "when asked to. The people, projects, tools and other entities the conversations mention: list_entities "
    "finds them by name, entity_neighbors "
    "shows what is mentioned with one, entity_state what holds for one (now or at a time); set_entity_state "
    "records a value that changes over time, such as a service's database or a person's role."
)

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
JUDGES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

EXPLAIN_CONTENT_CHARS = 200
# memory.remember's session: its summary only strings remembered facts together, so recall leaves it out.
REMEMBERED = "remembered"

# Parameters several tools share.
Query = Annotated[str, Field(description="what to look for, in plain words")]
AgentFilter = Annotated[
    str | None, Field(description="only this agent's memory (default: the server's agent, else every agent)")
]
Since = Annotated[datetime | None, Field(description="only turns at or after this time (ISO 8601)")]
Until = Annotated[datetime | None, Field(description="only turns before this time (ISO 8601)")]
Source = Annotated[str | None, Field(description="only sessions from this source, e.g. 'claude-code'")]
Entities = Annotated[
    list[str] | None,
    Field(description="entities the query is about (names or aliases): turns mentioning them rank higher"),
]
EntityModeOption = Annotated[
    EntityMode,
    Field(description="any: turns mentioning any of entities rank higher; all: only sessions mentioning all"),
]
Budget = Annotated[int | None, Field(ge=100, le=1000000, description="character budget (default: the setting)")]
EntityName = Annotated[str, Field(description="the entity's name or an alias, e.g. 'Postgres' or 'Ana'")]


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


class Hit(TypedDict):
    """A recalled turn (its session's summary is in the answer's sessions), or a curated memory: kind (rule,
    preference, ...), memory_id and evidence_turn_ids, the turns it came from."""

    turn_id: int
    session_id: str
    speaker: str
    at: str
    content: str
    agent_id: NotRequired[str]
    kind: NotRequired[str]
    memory_id: NotRequired[int]
    evidence_turn_ids: NotRequired[list[int]]


class Recalled(TypedDict):
    """Recall's hits, best first, and the summary of each of their sessions by session_id."""

    hits: list[Hit]
    sessions: NotRequired[dict[str, str]]


class Candidate(TypedDict):
    """A recall candidate: its rank in each list (lists) and the signals that moved its score."""

    rank: int
    turn_id: int
    session_id: str
    score: float
    lists: str
    signals: NotRequired[str]
    speaker: NotRequired[str]
    content: str


class Explanation(TypedDict):
    """The best recall candidates; degraded says when recall ran on full text only, and why."""

    candidates: list[Candidate]
    degraded: NotRequired[list[str]]


class Committed(TypedDict):
    """What commit stored."""

    created: bool
    turns_added: int
    enrichment: NotRequired[Literal["queued"]]
    turns_indexed_in_part: NotRequired[int]


class Entity(TypedDict):
    """An entity: its name, type, how often and in how many sessions it is mentioned, and when last."""

    name: str
    type: results.EntityType
    mentions: int
    sessions: int
    last_mentioned_at: NotRequired[str]
    aliases: NotRequired[list[str]]
    agent_id: NotRequired[str]


class MemoryShown(TypedDict):
    """A memory: its id, kind, words, status, key and the period it holds (valid_to: when it stopped)."""

    memory_id: int
    kind: str
    content: str
    status: results.MemoryStatus
    valid_from: str
    key: NotRequired[str]
    valid_to: NotRequired[str]


class Neighbor(TypedDict):
    """An entity mentioned with the one asked about (distance 1) or with one of its neighbours: turns counts
    the turns that mention it with the entity before it on its path, which is given from distance 2 on."""

    name: str
    type: results.EntityType
    distance: int
    turns: int
    path: NotRequired[list[str]]
    agent_id: NotRequired[str]


class State(TypedDict):
    """An attribute's value and the period it holds; valid_to is there once a later value ended it."""

    attribute: str
    value: Any
    valid_from: str
    valid_to: NotRequired[str]
    agent_id: NotRequired[str]


class Recorded(TypedDict):
    """When the recorded value holds from, and until (when a later value is already recorded)."""

    valid_from: str
    valid_to: NotRequired[str]


def _time(at: datetime) -> str:
    return at.isoformat(timespec="seconds")


def _hit(hit: results.Hit, show_agent: bool) -> Hit:
    shown: Hit = {
        "turn_id": hit.turn_id,
        "session_id": hit.session_id,
        "speaker": hit.speaker or hit.role,
        "at": _time(hit.created_at),
        "content": hit.content,
    }
    if show_agent:
        shown["agent_id"] = hit.agent_id
    if hit.memory_id is not None:
        shown["kind"] = hit.kind
        shown["memory_id"] = hit.memory_id
        shown["evidence_turn_ids"] = hit.evidence_turn_ids or []
    return shown


def _recalled(hits: list[results.Hit], show_agent: bool) -> Recalled:
    """Hits without their components, scores or nulls; each session's summary once."""
    agents: dict[str, set[str]] = {}
    for hit in hits:
        agents.setdefault(hit.session_id, set()).add(hit.agent_id)
    answer: Recalled = {"hits": [_hit(hit, show_agent) for hit in hits]}
    # A session id two agents share in one answer would name two summaries: it gets none.
    sessions = {
        hit.session_id: hit.summary
        for hit in hits
        if hit.summary and hit.session_id != REMEMBERED and len(agents[hit.session_id]) == 1
    }
    if sessions:
        answer["sessions"] = sessions
    return answer


def _candidate(candidate: results.Candidate) -> Candidate:
    content = candidate.content
    shown: Candidate = {
        "rank": candidate.rank,
        "turn_id": candidate.turn_id,
        "session_id": candidate.session_id,
        "score": round(candidate.score, 2),
        "lists": ranks(candidate.components),
        "content": content if len(content) <= EXPLAIN_CONTENT_CHARS else content[:EXPLAIN_CONTENT_CHARS] + "…",
    }
    if moved := signals(candidate.components):
        shown["signals"] = moved
    if candidate.speaker:
        shown["speaker"] = candidate.speaker
    return shown


def _explained(candidates: list[results.Candidate]) -> Explanation:
    """Candidates as ranks and signals in words instead of their components; degraded once."""
    answer: Explanation = {"candidates": [_candidate(candidate) for candidate in candidates]}
    if candidates and (degraded := candidates[0].components.get("degraded")):
        answer["degraded"] = degraded
    return answer


def _entity(entity: results.Entity, show_agent: bool) -> Entity:
    shown: Entity = {
        "name": entity.name,
        "type": entity.type,
        "mentions": entity.mentions,
        "sessions": entity.sessions,
    }
    if entity.last_mentioned_at is not None:
        shown["last_mentioned_at"] = _time(entity.last_mentioned_at)
    if entity.aliases:
        shown["aliases"] = entity.aliases
    if show_agent:
        shown["agent_id"] = entity.agent_id
    return shown


def _memory_item(item: results.MemoryItem) -> MemoryShown:
    shown: MemoryShown = {
        "memory_id": item.memory_id,
        "kind": item.kind,
        "content": item.content,
        "status": item.status,
        "valid_from": _time(item.valid_from),
    }
    if item.key is not None:
        shown["key"] = item.key
    if item.valid_to is not None:
        shown["valid_to"] = _time(item.valid_to)
    return shown


def _neighbor(neighbor: results.Neighbor, show_agent: bool) -> Neighbor:
    shown: Neighbor = {
        "name": neighbor.name,
        "type": neighbor.type,
        "distance": neighbor.distance,
        "turns": neighbor.turns,
    }
    if neighbor.distance > 1:  # at distance 1 the path is only the entity asked about and this one
        shown["path"] = neighbor.path
    if show_agent:
        shown["agent_id"] = neighbor.agent_id
    return shown


def _state(state: results.EntityState, show_agent: bool) -> State:
    shown: State = {"attribute": state.attribute, "value": state.value, "valid_from": _time(state.valid_from)}
    if state.valid_to is not None:
        shown["valid_to"] = _time(state.valid_to)
    if show_agent:
        shown["agent_id"] = state.agent_id
    return shown


def _answer(data: Any) -> CallToolResult:
    """Structured content for the host, the same as one line of JSON for the model (the SDK would indent it)."""
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _reported(tool: F) -> F:
    """The database's refusals reach the model as tool errors with the server's message."""

    @functools.wraps(tool)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except AgentMemoryError as exc:
            raise ToolError(str(exc).removeprefix("agent_memory: ")) from exc

    return cast(F, run)


def build(memory: Memory, agent_id: str | None = None) -> MCPServer[Any]:
    """The MCP server with its tools, over one Memory. agent_id is every tool's default agent; without one,
    reads and forget cover every agent and remember and commit write to the database's default agent."""
    server: MCPServer[Any] = MCPServer("agent-memory", version=version("agent-memory"), instructions=INSTRUCTIONS)
    default_agent = agent_id

    def tool(annotations: ToolAnnotations) -> Callable[[F], F]:
        def register(function: F) -> F:
            description = " ".join((function.__doc__ or "").split())  # one line, without the indentation
            server.tool(description=description, annotations=annotations)(_reported(function))
            return function

        return register

    @tool(READ_ONLY)
    def recall(
        query: Query,
        k: Annotated[int, Field(ge=1, le=100, description="how many results")] = 5,
        level: Annotated[Level, Field(description="turns, or the best turn per session")] = "turn",
        agent_id: AgentFilter = None,
        since: Since = None,
        until: Until = None,
        source: Source = None,
        entities: Entities = None,
        entity_mode: EntityModeOption = "any",
        as_of: Annotated[
            datetime | None, Field(description="answer with what was said and held at this time (ISO 8601)")
        ] = None,
        tiers: Annotated[
            list[Tier] | None,
            Field(
                description="the tiers to search (default hot and warm; cold: sessions and memories unused for long)"
            ),
        ] = None,
    ) -> Annotated[CallToolResult, Recalled]:
        """The remembered conversation turns and curated memories that best answer the query, best first.
        Each hit has its turn_id (for give_feedback), session_id, speaker, time and content; a memory also its
        kind, memory_id and evidence_turn_ids. Questions about rules, preferences and decisions get those
        memories first. sessions holds the summary of each session once. Without a filter, hits also name
        their agent. Cold memory (sessions and memories unused for long) is searched only when tiers names it."""
        if entity_mode == "all" and not entities:
            raise InvalidInput("entity_mode all needs entities: the names every session must mention")
        agent = agent_id or default_agent
        hits = memory.recall(
            query,
            k=k,
            level=level,
            agent_id=agent,
            since=since,
            until=until,
            source=source,
            entities=entities,
            entity_mode=entity_mode,
            as_of=as_of,
            tiers=tiers,
        )
        return _answer(_recalled(hits, show_agent=agent is None))

    @tool(READ_ONLY)
    def explain_recall(
        query: Query,
        k: Annotated[int, Field(ge=1, le=100, description="how many candidates")] = 10,
        agent_id: AgentFilter = None,
        since: Since = None,
        until: Until = None,
        source: Source = None,
    ) -> Annotated[CallToolResult, Explanation]:
        """Why recall ranks turns as it does: the best candidates with their score, their rank in each
        list ('dense #1, lexical #4') and the signals that moved them ('session +2.00, trust -0.69')."""
        agent = agent_id or default_agent
        candidates = memory.explain_recall(query, k=k, agent_id=agent, since=since, until=until, source=source)
        return _answer(_explained(candidates))

    @tool(READ_ONLY)
    def context_for_task(
        task: Annotated[str, Field(description="the task about to be done, in plain words")],
        max_chars: Budget = None,
        k: Annotated[int | None, Field(ge=1, le=100, description="at most this many turns (default 20)")] = None,
        agent_id: AgentFilter = None,
    ) -> str:
        """The remembered turns most relevant to a task, best first, within a character budget, as Markdown:
        who said each, when, and in which session. For the start of a task."""
        context = memory.context_for_task(task, max_chars=max_chars, k=k, agent_id=agent_id or default_agent)
        return context.text() or "Nothing relevant is remembered."

    @tool(READ_ONLY)
    def bootstrap(max_chars: Budget = None) -> str:
        """What is already known, for the start of a conversation: remembered facts, open loops, decisions
        and summaries of recent sessions, as Markdown."""
        return memory.bootstrap(agent_id=default_agent, max_chars=max_chars).text() or "Nothing is remembered yet."

    @tool(READ_ONLY)
    def stats() -> Annotated[CallToolResult, dict[str, dict[str, Any]]]:
        """How much is remembered, per agent: sessions, turns, indexed and embedded chunks, summaries,
        remembered facts, feedback, pending and failed enrichment jobs, first and last turn."""
        return _answer(
            {
                row.agent_id: {
                    key: _time(value) if isinstance(value, datetime) else value
                    for key, value in asdict(row).items()
                    if key != "agent_id" and value is not None
                }
                for row in memory.stats(default_agent)
            }
        )

    @tool(READ_ONLY)
    def list_entities(
        search: Annotated[
            str | None, Field(description="a name or part of one; matches names and aliases loosely")
        ] = None,
        type: Annotated[results.EntityType | None, Field(description="only entities of this type")] = None,
        k: Annotated[int, Field(ge=1, le=100, description="how many entities")] = 20,
        agent_id: AgentFilter = None,
    ) -> Annotated[CallToolResult, dict[str, list[Entity]]]:
        """The people, projects, tools, places and other entities the conversations mention, best match
        for the search first (without one, all of them): each with its type, how often and in how many
        sessions it is mentioned, when last, and its aliases. Without a filter, entities also name their
        agent."""
        agent = agent_id or default_agent
        found = memory.list_entities(search, type=type, agent_id=agent, k=k)
        return _answer({"entities": [_entity(entity, show_agent=agent is None) for entity in found]})

    @tool(READ_ONLY)
    def entity_neighbors(
        entity: EntityName,
        depth: Annotated[int, Field(ge=1, le=5, description="how many steps away to look")] = 1,
        k: Annotated[int, Field(ge=1, le=100, description="how many entities")] = 20,
        agent_id: AgentFilter = None,
    ) -> Annotated[CallToolResult, dict[str, list[Neighbor]]]:
        """The entities mentioned in the same turns as an entity, nearest first, then by how many turns
        mention them together. With depth above 1 also the entities mentioned with those, each with the
        path of names that reaches it."""
        agent = agent_id or default_agent
        found = memory.entity_neighbors(entity, depth=depth, k=k, agent_id=agent)
        return _answer({"neighbors": [_neighbor(neighbor, show_agent=agent is None) for neighbor in found]})

    @tool(READ_ONLY)
    def entity_state(
        entity: EntityName,
        as_of: Annotated[
            datetime | None, Field(description="the values that held at this time (ISO 8601; default: now)")
        ] = None,
        attribute: Annotated[str | None, Field(description="only this attribute")] = None,
        agent_id: AgentFilter = None,
    ) -> Annotated[CallToolResult, dict[str, list[State]]]:
        """What holds for an entity: each attribute's value now (or at as_of) and since when, as recorded
        with set_entity_state. Empty when nothing is recorded for it."""
        agent = agent_id or default_agent
        found = memory.entity_state(entity, as_of=as_of, attribute=attribute, agent_id=agent)
        return _answer({"states": [_state(state, show_agent=agent is None) for state in found]})

    @tool(ADDS)
    def set_entity_state(
        entity: EntityName,
        attribute: Annotated[str, Field(description="what the value is of, e.g. 'database', 'role', 'owner'")],
        value: Annotated[Any, Field(description="the value: a string, number, boolean, list or object")],
        valid_from: Annotated[
            datetime | None, Field(description="when it became true (ISO 8601; default: now)")
        ] = None,
        type: Annotated[
            results.EntityType | None, Field(description="the entity's type, if it is new (default: other)")
        ] = None,
    ) -> Annotated[CallToolResult, Recorded]:
        """Records that an attribute of an entity has a value from now (or from valid_from) on, e.g. that
        the billing service's database is Postgres. The earlier value is kept as history and ends there;
        a value at the same valid_from replaces (corrects) the one recorded there."""
        recorded = memory.set_entity_state(
            entity, attribute, value, valid_from=valid_from, agent_id=default_agent, type=type
        )
        answer: Recorded = {"valid_from": _time(recorded.valid_from)}
        if recorded.valid_to is not None:
            answer["valid_to"] = _time(recorded.valid_to)
        return _answer(answer)

    @tool(ADDS)
    def remember(
        content: Annotated[str, Field(description="the fact, preference, rule, decision or task, in one sentence")],
        kind: Annotated[Kind, Field(description="what kind of memory it is")] = "fact",
        key: Annotated[
            str | None,
            Field(description="a stable name for what it is about, e.g. 'deploy.day': a new claim replaces the old"),
        ] = None,
        importance: Annotated[float, Field(ge=0, le=1, description="how much it matters")] = 0.5,
    ) -> Annotated[CallToolResult, dict[str, int | str]]:
        """Keeps something worth knowing in later conversations; it can be recalled at once. The same claim
        again, or a paraphrase of one held, changes nothing; a new claim under a key replaces the current one,
        which is kept as history. Answers with its memory_id, the outcome (created, updated, unchanged or
        merged) and, when it replaced one, supersedes."""
        kept = memory.remember(content, kind=kind, agent_id=default_agent, key=key, importance=importance)
        answer: dict[str, int | str] = {"memory_id": kept.memory_id, "outcome": kept.outcome}
        if kept.supersedes is not None:
            answer["supersedes"] = kept.supersedes
        return _answer(answer)

    @tool(READ_ONLY)
    def list_memories(
        search: Annotated[str | None, Field(description="words the memory contains")] = None,
        kind: Annotated[Kind | None, Field(description="only memories of this kind")] = None,
        as_of: Annotated[datetime | None, Field(description="what held at this time (ISO 8601)")] = None,
        status: Annotated[
            results.MemoryStatus | None,
            Field(description="only memories of this status, e.g. pending: proposed from the conversation, to review"),
        ] = None,
        k: Annotated[int, Field(ge=1, le=100, description="how many memories")] = 20,
    ) -> Annotated[CallToolResult, dict[str, list[MemoryShown]]]:
        """The remembered facts, preferences, rules, decisions and tasks that hold now (or held at as_of, or
        have one status), most important first: each with its memory_id, kind, key, status and since when."""
        found = memory.list_memories(search=search, kind=kind, agent_id=default_agent, as_of=as_of, status=status, k=k)
        return _answer({"memories": [_memory_item(item) for item in found]})

    @tool(READ_ONLY)
    def get(
        key: Annotated[str, Field(description="the key a memory was remembered under, e.g. 'deploy.day'")],
        as_of: Annotated[datetime | None, Field(description="what held at this time (ISO 8601)")] = None,
    ) -> Annotated[CallToolResult, dict[str, list[MemoryShown]]]:
        """The memory held under a key now (or at as_of): its memory_id, kind, content, status and since
        when."""
        found = memory.get(key, agent_id=default_agent, as_of=as_of)
        return _answer({"memories": [_memory_item(item) for item in found]})

    @tool(JUDGES)
    def resolve(memory_id: Annotated[int, Field(description="the memory's memory_id")]) -> CallToolResult:
        """Marks a task done or a question settled: the memory stops holding now and is kept as history."""
        return _answer(_memory_item(memory.resolve(memory_id)))

    @tool(JUDGES)
    def retract(memory_id: Annotated[int, Field(description="the memory's memory_id")]) -> CallToolResult:
        """Marks a memory as never true (a mistake), or rejects a proposed one: recall leaves it out."""
        return _answer(_memory_item(memory.retract(memory_id)))

    @tool(JUDGES)
    def approve(memory_id: Annotated[int, Field(description="the memory's memory_id")]) -> CallToolResult:
        """Approves a memory proposed from the conversation for review (status pending): it holds from now
        on and is recalled."""
        return _answer(_memory_item(memory.approve(memory_id)))

    @tool(ADDS)
    def commit(
        session_id: Annotated[str, Field(description="the conversation's id; commit it again as it grows")],
        messages: Annotated[list[Message], Field(description="the conversation's messages, oldest first")],
    ) -> Annotated[CallToolResult, Committed]:
        """Stores a conversation's messages; messages already stored are skipped. Its turns can be recalled
        once they are enriched: at once, or after a worker ran when enrichment is queued."""
        stored = memory.commit(session_id, messages, agent_id=default_agent)
        answer: Committed = {"created": stored.created, "turns_added": stored.turns_added}
        if stored.job_id is not None:
            answer["enrichment"] = "queued"
        if stored.turns_indexed_in_part:
            answer["turns_indexed_in_part"] = stored.turns_indexed_in_part
        return _answer(answer)

    @tool(JUDGES)
    def give_feedback(
        verdict: Annotated[
            results.Verdict,
            Field(description="helpful; unhelpful; incorrect (it is wrong); stale (it was true, no longer)"),
        ],
        turn_id: Annotated[int | None, Field(description="the turn_id of a recalled hit")] = None,
        memory_id: Annotated[int | None, Field(description="or: the memory_id of a recalled memory")] = None,
        session_id: Annotated[str | None, Field(description="or: a whole session")] = None,
        query: Annotated[str | None, Field(description="the query it was recalled for")] = None,
    ) -> Annotated[CallToolResult, dict[str, str | bool | float]]:
        """Judges a recalled turn, a memory or a whole session; what misled ranks lower from now on, what
        helped higher. A memory called incorrect by enough judges is retracted; a stale one matters less.
        Answers with what the verdict did, and the trust before and after for a turn or memory."""
        given = memory.give_feedback(
            verdict,
            turn_id=turn_id,
            memory_id=memory_id,
            session_id=session_id,
            judged_by=default_agent,
            query=query,
        )
        answer: dict[str, str | bool | float] = {"counted": given.counted, "effect": given.effect}
        if given.trust_before is not None and given.trust_after is not None:
            answer.update(trust_before=round(given.trust_before, 3), trust_after=round(given.trust_after, 3))
        return _answer(answer)

    @tool(DELETES)
    def forget(
        session_id: Annotated[str, Field(description="the session to remove")],
        agent_id: Annotated[
            str | None,
            Field(description="the session's agent (default: the server's agent, else whichever agent has it)"),
        ] = None,
    ) -> Annotated[CallToolResult, dict[str, int]]:
        """Removes a conversation and everything derived from it (turns, chunks, vectors, summary,
        feedback) for good. Only when the user asks for it."""
        gone = memory.forget(session_id, agent_id=agent_id or default_agent)
        return _answer(
            {
                "turns_removed": gone.turns_removed,
                "chunks_removed": gone.chunks_removed,
                "tombstone_id": gone.tombstone_id,
            }
        )

    return server


def serve(dsn: str, tenant: str | None = None, agent_id: str | None = None) -> None:
    """Serves the tools on stdin/stdout until the host closes them."""
    with Memory(dsn, tenant=tenant, max_connections=2) as memory:
        build(memory, agent_id).run("stdio")
