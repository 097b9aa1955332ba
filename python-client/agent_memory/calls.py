"""Each client method as one SQL call: the statement, its parameters, and how rows become results.

Memory and AsyncMemory both run these, so the SQL lives in one place. Arguments the caller leaves as
None are not passed at all, so the database's own defaults (and settings) apply, agent_id's included
(the rule is in agent_memory.client's docstring).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeAlias, TypedDict, TypeVar, cast

from pgvector import Vector
from psycopg import sql
from psycopg.types.json import Json, Jsonb

from agent_memory import results
from agent_memory.results import EntityType

# The closed sets the SQL functions check, as types (a wrong value fails the type check, not only the call).
Level: TypeAlias = Literal["turn", "session"]
Enrich: TypeAlias = Literal["queue", "now", "none"]
Kind: TypeAlias = Literal["fact", "preference", "rule", "decision", "skill", "event", "observation", "task"]
EntityMode: TypeAlias = Literal["any", "all"]
Tier: TypeAlias = Literal["hot", "warm", "cold"]
ToolStatus: TypeAlias = Literal["success", "error", "timeout"]
RetainedData: TypeAlias = Literal["sessions", "memories", "tool_results"]
# JSON the caller passes (metadata, weights): any mapping or sequence of JSON values.
JsonInput: TypeAlias = Mapping[str, "JsonInput"] | Sequence["JsonInput"] | str | int | float | bool | None
# A message for memory.commit: {role, content, id?, created_at?, name?, tool_calls?, tool_call_id?, tokens?,
# metadata?, embedding?}; the database checks it and names the first problem. ExportedMessage is one.
Message: TypeAlias = Mapping[str, object]

T = TypeVar("T")
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One statement to run, its parameters, and the conversion of its rows."""

    statement: sql.Composed
    params: dict[str, Any]
    result: Callable[[Rows], T]
    procedure: bool = False  # a procedure that commits as it goes: run outside a transaction block


def _all(cls: Callable[..., T]) -> Callable[[Rows], list[T]]:
    return lambda rows: [cls(**row) for row in rows]


def _one(cls: Callable[..., T]) -> Callable[[Rows], T]:
    return lambda rows: cls(**rows[0])


def _collected(container: Callable[[list[Any]], T], item: Callable[..., Any]) -> Callable[[Rows], T]:
    return lambda rows: container([item(**row) for row in rows])


def function(name: str, result: Callable[[Rows], T], /, **args: Any) -> Call[T]:
    """select * from memory.<name>(arg => value, ...) with the arguments that are not None (an argument may
    itself be called name: the first two are positional only)."""
    given = {key: value for key, value in args.items() if value is not None}
    arguments = sql.SQL(", ").join(
        sql.SQL("{} => {}").format(sql.Identifier(key), sql.Placeholder(key)) for key in given
    )
    statement = sql.SQL("select * from memory.{}({})").format(sql.Identifier(name), arguments)
    return Call(statement, given, result)


# Options of the functions with many; None (or leaving one out) means the database's default.
class CommitOptions(TypedDict, total=False):
    agent_id: str | None
    source: str | None
    started_at: datetime | str | None  # a datetime, or an ISO 8601 string as export gives it
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    metadata: Mapping[str, JsonInput] | None
    enrich: Enrich | None
    allow_forgotten: bool | None  # store again a session memory.forget removed
    run_id: str | None  # the run (one task or process of the agent) the session belongs to


class RecallFilters(TypedDict, total=False):
    agent_id: str | None
    since: datetime | None
    until: datetime | None
    source: str | None
    entities: Sequence[str] | None
    entity_mode: EntityMode | None
    weights: Mapping[str, JsonInput] | None  # settings for this call, e.g. {"weight_dense": 0.5}
    query_vector: Sequence[float] | None
    as_of: datetime | None  # what was said by then, and the memories that held then
    include_ended: bool | None  # superseded and retracted memories too
    intent: Kind | Literal["none"] | None  # the memory kind asked for (default: from the query); none: no routing
    tiers: Sequence[Tier] | None  # the tiers searched (default: the setting recall_tiers, hot and warm)
    tags: Sequence[str] | None  # only curated memories with one of these tags (default: the setting recall_tags)
    tools: Sequence[str] | None  # only tool results of these tools (default: the setting recall_tools)
    tool_statuses: Sequence[ToolStatus] | None  # only tool results with these statuses (recall_tool_statuses)
    run_id: str | None  # only the sessions and memories of this run (default: the setting recall_run_id)


class RecallOptions(RecallFilters, total=False):
    k: int | None
    level: Level | None


class ExplainOptions(RecallFilters, total=False):
    k: int | None  # the first k candidates (default: every one)


def _jsonb(value: Mapping[str, JsonInput] | None) -> Jsonb | None:
    return None if value is None else Jsonb(dict(value))


def _json(value: JsonInput) -> Jsonb:
    """Any JSON value as jsonb; None is JSON null (so a value is always passed)."""

    def plain(item: JsonInput) -> object:
        if isinstance(item, Mapping):
            return {key: plain(inner) for key, inner in item.items()}
        if isinstance(item, Sequence) and not isinstance(item, str):
            return [plain(inner) for inner in item]
        return item

    return Jsonb(plain(value))


def _filters(options: RecallFilters) -> dict[str, Any]:
    args: dict[str, Any] = dict(options)
    args["weights"] = _jsonb(options.get("weights"))
    for name in ("entities", "tiers", "tags", "tools", "tool_statuses"):
        listed = cast("Sequence[str] | None", args.get(name))
        args[name] = None if listed is None else list(listed)
    vector = options.get("query_vector")
    args["query_vector"] = None if vector is None else Vector(list(vector))
    return args


def commit(session_id: str, messages: Sequence[Message], options: CommitOptions) -> Call[results.Committed]:
    args: dict[str, Any] = dict(options)
    args["metadata"] = _jsonb(options.get("metadata"))
    # commit's messages parameter is json (it looks for NUL characters in the text before parsing).
    return function("commit", _one(results.Committed), session_id=session_id, messages=Json(list(messages)), **args)


def enrich(session_id: str, agent_id: str | None) -> Call[results.Enriched]:
    return function("enrich", _one(results.Enriched), session_id=session_id, agent_id=agent_id)


def recall(query: str, options: RecallOptions) -> Call[list[results.Hit]]:
    return function("recall", _all(results.Hit), query=query, **_filters(options))


def explain_recall(query: str, options: ExplainOptions) -> Call[list[results.Candidate]]:
    return function("explain_recall", _all(results.Candidate), query=query, **_filters(options))


class FeedbackOptions(TypedDict, total=False):
    """What is judged (one of turn_id, memory_id, session_id), by whom and why."""

    turn_id: int | None  # judge a recalled turn
    memory_id: int | None  # judge a curated memory
    session_id: str | None  # judge a whole session
    judged_by: str | None  # the agent judging: its repeat of its last verdict on a target is not counted
    query: str | None  # the query it was recalled for
    note: str | None


def give_feedback(verdict: results.Verdict, options: FeedbackOptions) -> Call[results.Feedback]:
    return function("give_feedback", _one(results.Feedback), verdict=verdict, **options)


class MemoryOptions(TypedDict, total=False):
    """What memory.remember takes besides the words (each None or left out: the database's default)."""

    kind: Kind | None
    agent_id: str | None
    metadata: Mapping[str, JsonInput] | None
    enrich: Enrich | None
    key: str | None
    subjects: Sequence[str] | None
    tags: Sequence[str] | None
    importance: float | None
    confidence: float | None
    valid_from: datetime | None
    evidence: Sequence[int] | None
    status: Literal["active", "ongoing", "pending"] | None
    shared: bool | None  # shared with every agent of the tenant (None: as the version of its key it supersedes)
    run_id: str | None  # the run (one task or process of the agent) it is remembered in


class MemoryFilters(TypedDict, total=False):
    """memory.list_memories' filters (each None or left out: no filter, or the database's default)."""

    kind: Kind | None
    agent_id: str | None
    subject: str | None
    tag: str | None
    search: str | None
    status: results.MemoryStatus | None
    as_of: datetime | None
    k: int | None
    key_prefix: str | None  # keys that begin with it
    memory_ids: Sequence[int] | None  # those memories alone (recall's hits' memory_id)
    run_id: str | None  # those remembered in this run


def remember(content: str, options: MemoryOptions) -> Call[results.Remembered]:
    given: dict[str, Any] = dict(options)
    for name in ("subjects", "tags", "evidence"):
        if given.get(name) is not None:
            given[name] = list(given[name])
    given["metadata"] = _jsonb(options.get("metadata"))
    return function("remember", _one(results.Remembered), content=content, **given)


def get(key: str, agent_id: str | None, as_of: datetime | None) -> Call[list[results.MemoryItem]]:
    return function("get", _all(results.MemoryItem), key=key, agent_id=agent_id, as_of=as_of)


def list_memories(filters: MemoryFilters) -> Call[list[results.MemoryItem]]:
    args: dict[str, Any] = dict(filters)
    ids = filters.get("memory_ids")
    args["memory_ids"] = None if ids is None else list(ids)
    return function("list_memories", _all(results.MemoryItem), **args)


def move_memory(verb: Literal["resolve", "retract", "approve"], memory_id: int) -> Call[results.MemoryItem]:
    """memory.resolve, memory.retract or memory.approve of one memory: its row after the move."""
    return function(verb, _one(results.MemoryItem), memory_id=memory_id)


def share(memory_id: int, shared: bool) -> Call[results.MemoryItem]:
    return function("share", _one(results.MemoryItem), memory_id=memory_id, shared=shared)


def memory_history(memory_id: int) -> Call[list[results.MemoryItem]]:
    return function("memory_history", _all(results.MemoryItem), memory_id=memory_id)


def bootstrap(
    agent_id: str | None, max_chars: int | None, sessions: int | None, run_id: str | None
) -> Call[results.Bootstrap]:
    collected = _collected(results.Bootstrap, results.BootstrapItem)
    return function("bootstrap", collected, agent_id=agent_id, max_chars=max_chars, sessions=sessions, run_id=run_id)


def context_for_task(
    task: str, max_chars: int | None, agent_id: str | None, k: int | None, run_id: str | None
) -> Call[results.TaskContext]:
    collected = _collected(results.TaskContext, results.ContextItem)
    return function(
        "context_for_task", collected, task=task, max_chars=max_chars, agent_id=agent_id, k=k, run_id=run_id
    )


def list_sessions(
    agent_id: str | None, search: str | None, k: int | None, before: datetime | None, run_id: str | None
) -> Call[list[results.SessionItem]]:
    return function(
        "list_sessions", _all(results.SessionItem), agent_id=agent_id, search=search, k=k, before=before, run_id=run_id
    )


def tune_weights(agent_id: str | None, dry_run: bool) -> Call[results.WeightTuning]:
    return function("tune_weights", _one(results.WeightTuning), agent_id=agent_id, dry_run=dry_run)


def reset_tuned_weights(agent_id: str | None) -> Call[bool]:
    return function("reset_tuned_weights", lambda rows: rows[0]["reset_tuned_weights"], agent_id=agent_id)


def forget(session_id: str, agent_id: str | None) -> Call[results.Forgotten]:
    return function("forget", _one(results.Forgotten), session_id=session_id, agent_id=agent_id)


def pop_turn(session_id: str, agent_id: str | None) -> Call[results.ExportedMessage | None]:
    return function("pop_turn", lambda rows: rows[0]["pop_turn"], session_id=session_id, agent_id=agent_id)


def forget_agent(agent_id: str) -> Call[results.Forgotten]:
    return function("forget_agent", _one(results.Forgotten), agent_id=agent_id)


def forget_range(since: datetime, until: datetime, agent_id: str | None) -> Call[results.Forgotten]:
    return function("forget_range", _one(results.Forgotten), since=since, until=until, agent_id=agent_id)


def forget_entity(entity: str, agent_id: str | None) -> Call[results.Forgotten]:
    return function("forget_entity", _one(results.Forgotten), entity=entity, agent_id=agent_id)


def stats(agent_id: str | None) -> Call[list[results.AgentStats]]:
    return function("stats", _all(results.AgentStats), agent_id=agent_id)


def metrics() -> Call[list[results.Metric]]:
    statement = sql.Composed([sql.SQL("select * from memory.metrics order by tenant_id, metric, label")])
    return Call(statement, {}, _all(results.Metric))


def reindex(agent_id: str | None, session_id: str | None) -> Call[results.Reindexed]:
    return function("reindex", _one(results.Reindexed), agent_id=agent_id, session_id=session_id)


def _sessions(rows: Rows) -> list[results.ExportedSession]:
    return [cast(results.ExportedSession, row["session"]) for row in rows]


def export(agent_id: str | None, session_id: str | None) -> Call[list[results.ExportedSession]]:
    return function("export", _sessions, agent_id=agent_id, session_id=session_id)


def export_tenant(agent_id: str | None) -> Call[list[results.ExportRecord]]:
    return function(
        "export_tenant",
        lambda rows: [cast(results.ExportRecord, row["export_tenant"]) for row in rows],
        agent_id=agent_id,
    )


def import_tenant(
    records: Iterable[Mapping[str, Any]],
    allow_forgotten: bool | None,
    batch_size: int,
    on_batch: Callable[[int], None] | None,
) -> Iterator[Call[list[results.Imported]]]:
    """One memory.import_tenant call per batch of records (run them in one transaction: memories are mapped
    to their new ids there); on_batch hears how many records each batch sent."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    for batch in _batches(records, batch_size):
        yield function("import_tenant", _all(results.Imported), records=Jsonb(batch), allow_forgotten=allow_forgotten)
        if on_batch is not None:
            on_batch(len(batch))


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """The items in lists of size (the last one shorter), read as they are needed."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def imported_totals(batches: Iterable[list[results.Imported]]) -> list[results.Imported]:
    """The counts of several import_tenant calls added up per record type, in the order first seen."""
    totals: dict[str, results.Imported] = {}
    for counts in batches:
        for count in counts:
            seen = totals.get(count.record_type, results.Imported(count.record_type, 0, 0, 0))
            totals[count.record_type] = results.Imported(
                count.record_type,
                seen.imported + count.imported,
                seen.unchanged + count.unchanged,
                seen.forgotten + count.forgotten,
            )
    return list(totals.values())


def set_retention(
    data: RetainedData,
    max_age: timedelta | None,
    keep_last: int | None,
    tier: Tier | None,
    agent_id: str | None,
    statuses: Sequence[results.MemoryStatus] | None,
) -> Call[results.RetentionPolicy]:
    return function(
        "set_retention",
        _one(results.RetentionPolicy),
        data=data,
        max_age=max_age,
        keep_last=keep_last,
        tier=tier,
        agent_id=agent_id,
        statuses=None if statuses is None else list(statuses),
    )


def list_retention_policies() -> Call[list[results.RetentionPolicy]]:
    return function("list_retention_policies", _all(results.RetentionPolicy))


def drop_retention(policy_id: int) -> Call[bool]:
    return function("drop_retention", lambda rows: bool(rows[0]["drop_retention"]), policy_id=policy_id)


def retention_preview(at: datetime | None) -> Call[list[results.RetentionItem]]:
    return function("retention_preview", _all(results.RetentionItem), at=at)


def list_archives() -> Call[list[results.Archive]]:
    return function("list_archives", _all(results.Archive))


def archive(archive_id: int) -> Call[bytes | None]:
    return function(
        "archive", lambda rows: None if rows[0]["archive"] is None else bytes(rows[0]["archive"]), archive_id=archive_id
    )


def drop_archive(archive_id: int) -> Call[bool]:
    return function("drop_archive", lambda rows: bool(rows[0]["drop_archive"]), archive_id=archive_id)


def list_entities(
    search: str | None, type: EntityType | None, agent_id: str | None, k: int | None
) -> Call[list[results.Entity]]:
    return function("list_entities", _all(results.Entity), search=search, type=type, agent_id=agent_id, k=k)


def entity_neighbors(
    entity: str, depth: int | None, k: int | None, agent_id: str | None
) -> Call[list[results.Neighbor]]:
    return function("entity_neighbors", _all(results.Neighbor), entity=entity, depth=depth, k=k, agent_id=agent_id)


def entity_sessions(entity: str, agent_id: str | None, k: int | None) -> Call[list[results.EntitySession]]:
    return function("entity_sessions", _all(results.EntitySession), entity=entity, agent_id=agent_id, k=k)


def merge_entities(keep: str, merge: str, agent_id: str | None) -> Call[results.Merged]:
    return function("merge_entities", _one(results.Merged), keep=keep, merge=merge, agent_id=agent_id)


def set_entity_state(
    entity: str,
    attribute: str,
    value: JsonInput,
    valid_from: datetime | None,
    agent_id: str | None,
    type: EntityType | None,
) -> Call[results.StateRecorded]:
    return function(
        "set_entity_state",
        _one(results.StateRecorded),
        entity=entity,
        attribute=attribute,
        value=_json(value),
        valid_from=valid_from,
        agent_id=agent_id,
        type=type,
    )


def entity_state(
    entity: str, as_of: datetime | None, attribute: str | None, agent_id: str | None
) -> Call[list[results.EntityState]]:
    return function(
        "entity_state", _all(results.EntityState), entity=entity, as_of=as_of, attribute=attribute, agent_id=agent_id
    )


def pending_entity_states(agent_id: str | None) -> Call[list[results.PendingState]]:
    return function("pending_entity_states", _all(results.PendingState), agent_id=agent_id)


def approve_entity_state(state_id: int) -> Call[results.StateApproved]:
    return function("approve_entity_state", _one(results.StateApproved), state_id=state_id)


def reject_entity_state(state_id: int) -> Call[None]:
    return function("reject_entity_state", lambda rows: None, state_id=state_id)


def entity_history(entity: str, attribute: str, agent_id: str | None) -> Call[list[results.StateHistoryItem]]:
    return function(
        "entity_history", _all(results.StateHistoryItem), entity=entity, attribute=attribute, agent_id=agent_id
    )


def query(request: str, agent_id: str | None, explain: bool, llm: bool) -> Call[results.QueryAnswer]:
    return function(
        "query",
        lambda rows: results.QueryAnswer(**rows[0]["query"]),
        request=request,
        agent_id=agent_id,
        explain=explain,
        llm=llm,
    )


def health() -> Call[results.Health]:
    return function("health", _one(results.Health))


def work(max_jobs: int) -> Call[results.Worked]:
    statement = sql.SQL("call memory.work(max_jobs => {})").format(sql.Placeholder("max_jobs"))
    return Call(statement, {"max_jobs": max_jobs}, _one(results.Worked), procedure=True)
