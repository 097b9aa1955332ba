"""What the MCP tools answer: compact JSON with no null fields, times as ISO 8601 text, a session's summary
once per answer. Each TypedDict is an answer's shape (its output schema); each function makes one from a
Memory result. show_agent: the answer covers every agent, so each item names its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal, TypeVar

from typing_extensions import NotRequired, TypedDict  # pydantic reads these below Python 3.12

from agent_memory import results
from agent_memory.commands import when
from agent_memory.formatting import ranks, signals

EXPLAIN_CONTENT_CHARS = 200
Found = TypeVar("Found")
Shown = TypeVar("Shown")
# memory.remember's session: its summary only strings remembered facts together, so recall leaves it out.
REMEMBERED = "remembered"


class Hit(TypedDict):
    """A recalled turn (its session's summary is in the answer's sessions), or a curated memory: kind (rule,
    preference, ...), memory_id and evidence_turn_ids, the turns it came from; shared_by: the agent that shared
    it with the one recalling."""

    turn_id: int
    session_id: str
    speaker: str
    at: str
    content: str
    agent_id: NotRequired[str]
    kind: NotRequired[str]
    memory_id: NotRequired[int]
    evidence_turn_ids: NotRequired[list[int]]
    shared_by: NotRequired[str]


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
    """A memory: its id, kind, words, status, key and the period it holds (valid_to: when it stopped); shared
    when every agent of the tenant sees it."""

    memory_id: int
    kind: str
    content: str
    status: results.MemoryStatus
    valid_from: str
    key: NotRequired[str]
    valid_to: NotRequired[str]
    shared: NotRequired[bool]


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


class Queried(TypedDict):
    """A request in plain words as read: its filters, the words not understood, and the rows (memories,
    sessions, turns or tool executions, no null fields; text cut to EXPLAIN_CONTENT_CHARS)."""

    filters: dict[str, Any]
    not_understood: NotRequired[list[str]]
    rows: list[dict[str, Any]]


class Recorded(TypedDict):
    """When the recorded value holds from, and until (when a later value is already recorded)."""

    valid_from: str
    valid_to: NotRequired[str]


def _hit(hit: results.Hit, show_agent: bool) -> Hit:
    shown: Hit = {
        "turn_id": hit.turn_id,
        "session_id": hit.session_id,
        "speaker": hit.speaker or hit.role,
        "at": when(hit.created_at),
        "content": hit.content,
    }
    if show_agent:
        shown["agent_id"] = hit.agent_id
    if hit.memory_id is not None:
        shown["kind"] = hit.kind
        shown["memory_id"] = hit.memory_id
        shown["evidence_turn_ids"] = hit.evidence_turn_ids or []
    if hit.shared_by is not None:
        shown["shared_by"] = hit.shared_by
    return shown


def recalled(hits: list[results.Hit], show_agent: bool) -> Recalled:
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


def explained(candidates: list[results.Candidate], show_agent: bool) -> Explanation:
    """Candidates as ranks and signals in words instead of their components; degraded once."""
    answer: Explanation = {"candidates": [_candidate(candidate) for candidate in candidates]}
    if candidates and (degraded := candidates[0].components.get("degraded")):
        answer["degraded"] = degraded
    return answer


def text(empty: str) -> Any:
    """Context as Markdown (bootstrap, context_for_task), or what to say when there is none."""
    return lambda context, show_agent: context.text() or empty


def stats(rows: list[results.AgentStats], show_agent: bool) -> dict[str, dict[str, Any]]:
    return {
        row.agent_id: {
            key: when(value) if isinstance(value, datetime) else value
            for key, value in asdict(row).items()
            if key != "agent_id" and value is not None
        }
        for row in rows
    }


def _entity(entity: results.Entity, show_agent: bool) -> Entity:
    shown: Entity = {"name": entity.name, "type": entity.type, "mentions": entity.mentions, "sessions": entity.sessions}
    if entity.last_mentioned_at is not None:
        shown["last_mentioned_at"] = when(entity.last_mentioned_at)
    if entity.aliases:
        shown["aliases"] = entity.aliases
    if show_agent:
        shown["agent_id"] = entity.agent_id
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
    shown: State = {"attribute": state.attribute, "value": state.value, "valid_from": when(state.valid_from)}
    if state.valid_to is not None:
        shown["valid_to"] = when(state.valid_to)
    if show_agent:
        shown["agent_id"] = state.agent_id
    return shown


def recorded(result: results.StateRecorded, show_agent: bool) -> Recorded:
    answer: Recorded = {"valid_from": when(result.valid_from)}
    if result.valid_to is not None:
        answer["valid_to"] = when(result.valid_to)
    return answer


def memory(item: results.MemoryItem, show_agent: bool = False) -> MemoryShown:
    shown: MemoryShown = {
        "memory_id": item.memory_id,
        "kind": item.kind,
        "content": item.content,
        "status": item.status,
        "valid_from": when(item.valid_from),
    }
    if item.key is not None:
        shown["key"] = item.key
    if item.valid_to is not None:
        shown["valid_to"] = when(item.valid_to)
    if item.shared:
        shown["shared"] = True
    return shown


def listed(key: str, shown: Callable[[Found, bool], Shown]) -> Callable[[list[Found], bool], dict[str, list[Shown]]]:
    """The answer of a call that returns a list: {key: [each item as shown]}."""

    def answer(found: list[Found], show_agent: bool) -> dict[str, list[Shown]]:
        return {key: [shown(item, show_agent) for item in found]}

    return answer


entities = listed("entities", _entity)
neighbors = listed("neighbors", _neighbor)
states = listed("states", _state)
memories = listed("memories", memory)


def remembered(kept: results.Remembered, show_agent: bool) -> dict[str, int | str]:
    answer: dict[str, int | str] = {"memory_id": kept.memory_id, "outcome": kept.outcome}
    if kept.supersedes is not None:
        answer["supersedes"] = kept.supersedes
    return answer


def committed(stored: results.Committed, show_agent: bool) -> Committed:
    answer: Committed = {"created": stored.created, "turns_added": stored.turns_added}
    if stored.job_id is not None:
        answer["enrichment"] = "queued"
    if stored.turns_indexed_in_part:
        answer["turns_indexed_in_part"] = stored.turns_indexed_in_part
    return answer


def judged(given: results.Feedback, show_agent: bool) -> dict[str, str | bool | float]:
    answer: dict[str, str | bool | float] = {"counted": given.counted, "effect": given.effect}
    if given.trust_before is not None and given.trust_after is not None:
        answer.update(trust_before=round(given.trust_before, 3), trust_after=round(given.trust_after, 3))
    return answer


def forgotten(gone: results.Forgotten, show_agent: bool) -> dict[str, int]:
    return {
        "turns_removed": gone.turns_removed,
        "chunks_removed": gone.chunks_removed,
        "tombstone_id": gone.tombstone_id,
    }


def queried(answer: results.QueryAnswer, show_agent: bool) -> Queried:
    shown: Queried = {
        "filters": answer.filters,
        "rows": [
            {
                key: value[:EXPLAIN_CONTENT_CHARS] if key in ("content", "summary", "result") else value
                for key, value in row.items()
                if value is not None and (show_agent or key != "agent_id")
            }
            for row in answer.rows or []
        ],
    }
    if answer.not_understood:
        shown["not_understood"] = answer.not_understood
    return shown
