"""What the client's methods return: one dataclass per SQL function's row, fields named as its columns;
JSON the functions return (recall's components, export's sessions) as TypedDicts of the same shape."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

# A JSON value as the database returns it (jsonb, parsed).
JsonValue: TypeAlias = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None
Role: TypeAlias = Literal["user", "assistant", "system", "tool"]
Section: TypeAlias = Literal["remembered", "open_loop", "decision", "recent_session"]
Verdict: TypeAlias = Literal["helpful", "unhelpful", "incorrect", "stale"]
MemoryStatus: TypeAlias = Literal["active", "ongoing", "resolved", "superseded", "retracted", "pending"]
# The twelve types of the knowledge graph's entities (the set memory.entities and the entities table check).
EntityType: TypeAlias = Literal[
    "person", "project", "concept", "tool", "metric", "org", "place", "event", "doc", "task", "topic", "other"
]


@dataclass(frozen=True)
class Committed:
    """memory.commit: whether the session is new, how many turns were added, the queued job, and how many
    added turns are longer than indexing reads (stored whole, indexed in part)."""

    created: bool
    turns_added: int
    job_id: int | None
    turns_indexed_in_part: int


@dataclass(frozen=True)
class Enriched:
    """memory.enrich: the session's indexed chunks, how many have vectors, its summary."""

    chunks: int
    embedded: int
    summary: str | None


class Signal(TypedDict):
    """One signal of a recall candidate's components. Fusion signals also have rank and z (None when the
    candidate is not in that list); value is None when the signal did not apply."""

    value: float | None
    weight: float
    contribution: float
    rank: NotRequired[int | None]
    z: NotRequired[float | None]


class Rerank(TypedDict):
    """The rerank stage's score for a candidate, or why it failed."""

    score: float | None
    error: str | None


class Components(TypedDict):
    """Why a candidate ranked where it did: every signal of memory.signal_definitions() by name, the fused
    score, the chunk that matched, the embedding model, the fusion method, the speakers and entities the
    query named (or was passed), what recall had to do without (degraded), the rerank stage (None when
    it is off), the route taken ("hybrid", or "memory first: <kind>" for a question about rules,
    preferences or decisions), the tiers searched, the tags recall kept to (empty: every hit), and the weights
    tuned from feedback it used (None: none; else {"agent_id": "" for the tenant's, "fitted_at": ...})."""

    signals: dict[str, Signal]
    fused: float
    chunk_no: int | None
    model: str | None
    fusion: str | None
    speakers_matched: list[str] | None
    entities_matched: list[str] | None
    degraded: list[str] | None
    rerank: Rerank | None
    route: str
    tiers: list[str]
    tags: list[str]
    tuned: dict[str, str] | None


@dataclass(frozen=True)
class Hit:
    """One memory.recall result: a turn (or, at level session, a session's best turn) or a curated memory, and
    why it ranked. kind is "turn" for what was said, or the memory's kind (rule, preference, ...) with its
    memory_id and evidence_turn_ids (the turns it came from)."""

    session_id: str
    agent_id: str
    turn_id: int
    message_id: str | None
    role: Role
    speaker: str | None
    created_at: datetime
    content: str
    summary: str | None
    score: float
    components: Components = field(repr=False)
    kind: str = "turn"
    memory_id: int | None = None
    evidence_turn_ids: list[int] | None = None
    shared_by: str | None = None  # the agent that shared it, when recall was for another agent


@dataclass(frozen=True)
class Candidate:
    """One memory.explain_recall row: a candidate in final order, its fused and final score, every component."""

    rank: int
    session_id: str
    turn_id: int
    speaker: str | None
    content: str
    score: float
    fused: float
    components: Components = field(repr=False)
    kind: str = "turn"
    memory_id: int | None = None


@dataclass(frozen=True)
class Feedback:
    """memory.feedback: the verdict's id, the trust before and after it (of the turn judged, or carrying the
    memory's words; None for a session), the verdict, whether it counted (an agent's repeat of its last
    verdict on the same target does not) and what it did."""

    feedback_id: int
    trust_before: float | None
    trust_after: float | None
    verdict: Verdict
    counted: bool
    effect: str


@dataclass(frozen=True)
class MemoryItem:
    """A curated memory (memory.memory_items): its words, kind, key and subjects, importance and confidence,
    status and the period it holds (valid_to None: still), the version it supersedes and the one that
    superseded it, the turn that carries its words, the turns it came from and the caller's metadata."""

    memory_id: int
    agent_id: str
    kind: str
    content: str
    key: str | None
    subjects: list[str]
    tags: list[str]
    importance: float
    confidence: float
    status: MemoryStatus
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    recorded_by: str
    supersedes: int | None
    superseded_by: int | None
    turn_id: int
    evidence_turn_ids: list[int]
    origin: Literal["remember", "patterns", "llm"]
    metadata: dict[str, JsonValue]
    shared: bool  # shared with every agent of the tenant (memory.share)
    run_id: str | None  # the run it was remembered in


@dataclass(frozen=True)
class Remembered(MemoryItem):
    """memory.remember: the memory, and outcome: created, updated (it superseded the version of its key),
    unchanged (the same claim was already held) or merged (a paraphrase of a memory held, which gained its
    evidence)."""

    outcome: Literal["created", "updated", "unchanged", "merged"]


@dataclass(frozen=True)
class BootstrapItem:
    """One item of memory.bootstrap: remembered, open_loop, decision or recent_session."""

    section: Section
    session_id: str
    at: datetime
    content: str
    shared_by: str | None = None  # the agent that shared it, when it is not the asking agent's own


SECTION_TITLES: dict[str, str] = {
    "remembered": "Remembered",
    "open_loop": "Open loops",
    "decision": "Decisions",
    "recent_session": "Recent sessions",
}


def _shared(agent: str | None) -> str:
    """How an item another agent shared is marked in context text."""
    return f" [shared by {agent}]" if agent else ""


@dataclass(frozen=True)
class Bootstrap:
    """The context memory.bootstrap chose for a new conversation."""

    items: list[BootstrapItem]

    def text(self) -> str:
        """The items as Markdown sections, ready to put in a system prompt."""
        lines: list[str] = []
        section = None
        for item in self.items:
            if item.section != section:
                section = item.section
                lines.append(("\n" if lines else "") + f"## {SECTION_TITLES.get(section, section)}")
            when = f" ({item.session_id}, {item.at:%Y-%m-%d})" if item.section != "remembered" else ""
            lines.append(f"- {item.content}{when}{_shared(item.shared_by)}")
        return "\n".join(lines)


@dataclass(frozen=True)
class ContextItem:
    """One turn of memory.context_for_task, best first."""

    rank: int
    session_id: str
    turn_id: int
    at: datetime
    speaker: str
    content: str
    score: float
    shared_by: str | None = None  # the agent that shared it, when it is not the asking agent's own


@dataclass(frozen=True)
class TaskContext:
    """The turns memory.context_for_task chose for a task."""

    items: list[ContextItem]

    def text(self) -> str:
        """The turns as a Markdown list with who said them and when."""
        return "\n".join(
            f"- {item.speaker} ({item.at:%Y-%m-%d}, {item.session_id}): {item.content}{_shared(item.shared_by)}"
            for item in self.items
        )


@dataclass(frozen=True)
class SessionItem:
    """memory.list_sessions: a session, when it started and was last updated, its turns, tier, summary and run."""

    session_id: str
    agent_id: str
    source: str | None
    started_at: datetime
    updated_at: datetime
    turns: int
    tier: str
    summary: str | None
    run_id: str | None = None


@dataclass(frozen=True)
class WeightTuning:
    """memory.tune_weights: whether the weights fitted to feedback were kept (and why not), the evidence used,
    each tuned signal's weight before and after ({"dense": {"before": 1.2, "after": 1.6}}), the share of
    verdict pairs ordered right before and after, and the queries whose first candidate is helpful, and
    changes."""

    agent_id: str | None
    applied: bool
    reason: str
    helpful_verdicts: int
    queries: int
    pairs: int
    weights: dict[str, dict[str, float]] | None
    ordered_before: float | None
    ordered_after: float | None
    top_helpful_before: int
    top_helpful_after: int
    top_changed: int


@dataclass(frozen=True)
class QueryAnswer:
    """memory.query: a request in plain words as it was read (filters, what each phrase set, the words not
    understood), the SQL it makes and, unless explained only, that SQL's rows (memories, sessions, turns or tool
    executions, as JSON objects)."""

    request: str
    read_by: Literal["words", "llm"]
    filters: dict[str, Any]
    understood: list[dict[str, str]]
    not_understood: list[str]
    sql: str
    rows: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Forgotten:
    """memory.forget: what was removed, and the tombstone that records it."""

    sessions_removed: int
    turns_removed: int
    chunks_removed: int
    memories_removed: int
    tombstone_id: int


@dataclass(frozen=True)
class Reindexed:
    """memory.reindex: the sessions in scope and the enrichment jobs queued for them."""

    sessions: int
    jobs: int


class ExportedMessage(TypedDict):
    """One message of an exported session, as memory.commit takes it (keys that are null are left out)."""

    id: NotRequired[str]
    role: Role
    name: NotRequired[str]
    content: str
    tool_calls: NotRequired[JsonValue]
    tool_call_id: NotRequired[str]
    tokens: NotRequired[int]
    metadata: NotRequired[dict[str, JsonValue]]
    created_at: str  # ISO 8601


class ExportedSession(TypedDict):
    """One session of memory.export: what memory.commit takes, plus the caller's summary when there is one.
    Commit it again with commit(s["session_id"], s["messages"], agent_id=s["agent_id"], ...)."""

    agent_id: str
    session_id: str
    source: NotRequired[str]
    model: NotRequired[str]
    started_at: str  # ISO 8601
    tokens_in: NotRequired[int]
    tokens_out: NotRequired[int]
    metadata: dict[str, JsonValue]
    summary: NotRequired[str]
    messages: list[ExportedMessage]


# One record of memory.export_tenant: {"record": "header" | "session" | "memory" | "memory_merge" |
# "memory_supersession" | "entity" | "entity_state" | "feedback", ...}; a session record is also what
# memory.commit takes.
ExportRecord: TypeAlias = dict[str, JsonValue]


@dataclass(frozen=True)
class Imported:
    """memory.import_tenant, per record type: how many were stored, were here already, were forgotten."""

    record_type: str
    imported: int
    unchanged: int
    forgotten: int


@dataclass(frozen=True)
class RetentionPolicy:
    """A retention policy: what it covers (data, agent_id, tier, statuses) and its limits."""

    tenant_id: str
    policy_id: int
    data: str
    agent_id: str | None
    max_age: timedelta | None
    keep_last: int | None
    tier: str | None
    statuses: list[str] | None
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class RetentionItem:
    """memory.retention_preview: a session or memory the next maintenance archives and removes, or a tool result
    (turn_id) whose words it clears, and why."""

    policy_id: int
    data: str
    agent_id: str
    session_id: str | None
    memory_id: int | None
    turn_id: int | None
    tier: str
    last_used: datetime
    reason: str


@dataclass(frozen=True)
class Archive:
    """memory.archives: what one retention run removed, and its gzipped records (bytes: null once dropped)."""

    archive_id: int
    created_at: datetime
    created_by: str
    policies: list[int]
    removed: dict[str, int]
    records: int
    bytes: int | None
    sha256: str
    dropped_at: datetime | None


@dataclass(frozen=True)
class AgentStats:
    """memory.stats: one agent's memory and enrichment progress."""

    agent_id: str
    sessions: int
    turns: int
    chunks: int
    embedded_chunks: int
    summaries: int
    remembered: int
    feedback: int
    pending_jobs: int
    dead_jobs: int
    first_turn_at: datetime | None
    last_turn_at: datetime | None


@dataclass(frozen=True)
class Metric:
    """memory.metrics: one counter or gauge of a tenant (label: the value of its one label, or '')."""

    tenant_id: str
    metric: str
    label: str
    value: float
    kind: Literal["counter", "gauge"]


@dataclass(frozen=True)
class Health:
    """memory.health: versions, the embedder, and the first problem found (None when all is well)."""

    extension_version: str
    pgvector_version: str
    python_package_version: str | None
    python_version: str | None
    embedder: str
    embedder_loads: bool | None
    embedder_dimensions: int | None
    problem: str | None
    # The version on the server's disk and the update path to it (None: none to apply, or an install older
    # than 0.4.0, whose health does not say).
    available_version: str | None = None
    update_path: str | None = None


@dataclass(frozen=True)
class Worked:
    """memory.work: jobs done and jobs that failed in one call."""

    processed: int
    failed: int


@dataclass(frozen=True)
class Entity:
    """One memory.list_entities row: an entity of one agent's memory, how often and in how many sessions it
    is mentioned and when last, and how like the search its name or an alias is (1.0 without a search)."""

    entity_id: int
    agent_id: str
    name: str
    type: EntityType
    aliases: list[str]
    mentions: int
    sessions: int
    last_mentioned_at: datetime | None
    similarity: float


@dataclass(frozen=True)
class Neighbor:
    """One memory.entity_neighbors row: an entity mentioned with the one asked about (distance 1) or with one
    of its neighbours, how many turns mention it with the previous entity of its path, and the path's names."""

    entity_id: int
    agent_id: str
    name: str
    type: EntityType
    distance: int
    turns: int
    path: list[str]


@dataclass(frozen=True)
class EntitySession:
    """One memory.entity_sessions row: a session that mentions the entity, how often, when, and its summary."""

    session_id: str
    agent_id: str
    mentions: int
    first_at: datetime
    last_at: datetime
    summary: str | None


@dataclass(frozen=True)
class Merged:
    """memory.merge_entities: the entity kept, its aliases now, and the mentions and states moved to it."""

    entity_id: int
    name: str
    aliases: list[str]
    mentions_moved: int
    states_moved: int


@dataclass(frozen=True)
class PendingState:
    """One memory.pending_entity_states row: a state change enrichment read from a conversation, awaiting
    review, with how it was found (origin patterns or llm) and the turn it came from."""

    state_id: int
    entity: str
    agent_id: str
    attribute: str
    value: JsonValue
    valid_from: datetime
    origin: str
    evidence_turn_id: int | None


@dataclass(frozen=True)
class StateApproved:
    """memory.approve_entity_state: the approved value in the attribute's history, with the period it holds."""

    entity_id: int
    attribute: str
    value: JsonValue
    valid_from: datetime
    valid_to: datetime | None


@dataclass(frozen=True)
class StateRecorded:
    """memory.set_entity_state: the value as written, with the period it holds (valid_to None: it is
    current)."""

    state_id: int
    entity_id: int
    attribute: str
    value: JsonValue
    valid_from: datetime
    valid_to: datetime | None


@dataclass(frozen=True)
class EntityState:
    """One memory.entity_state row: an attribute's value that holds (now, or at as_of) in one agent's memory."""

    entity_id: int
    agent_id: str
    attribute: str
    value: JsonValue
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime


@dataclass(frozen=True)
class StateHistoryItem:
    """One memory.entity_history row: a value the attribute had, the period it held, who recorded it and when."""

    entity_id: int
    agent_id: str
    value: JsonValue
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    recorded_by: str


@dataclass(frozen=True)
class Notification:
    """One event of the tenant's notification channel (Memory.subscribe): a commit's new turns (event
    "session": session_id, turns) or a memory remembered, shared or unshared (event "memory": memory_id, kind,
    outcome: created, updated, merged, shared or unshared); agent_id is whose it is, shared whether every
    agent of the tenant sees it."""

    event: Literal["session", "memory"]
    agent_id: str
    shared: bool
    session_id: str | None = None
    turns: int | None = None
    memory_id: int | None = None
    kind: str | None = None
    outcome: str | None = None
