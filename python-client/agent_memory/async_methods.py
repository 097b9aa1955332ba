"""The methods of AsyncMemory, one per SQL function: each builds its call (agent_memory.calls) and runs it.

Written here once; agent_memory/methods.py, Memory's, is generated from this file by
python-client/tools/sync_methods.py (`make client`), and a test fails when it is not current. A method's
docstring says what the function does; the connection, the pool and the tenant are the client's (see
agent_memory.client).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar, Unpack

from agent_memory import calls, results
from agent_memory.calls import JsonInput, Message
from agent_memory.results import EntityType

T = TypeVar("T")


class AsyncMethods:
    """The API of AsyncMemory over the two ways it runs calls."""

    async def _run(self, call: calls.Call[T]) -> T:
        raise NotImplementedError

    async def _run_in_one_transaction(self, steps: Iterable[calls.Call[T]]) -> list[T]:
        raise NotImplementedError

    async def commit(
        self, session_id: str, messages: Sequence[Message], **options: Unpack[calls.CommitOptions]
    ) -> results.Committed:
        """Stores a session's messages; only new ones are added (memory.commit). enrich: queue, now or none."""
        return await self._run(calls.commit(session_id, messages, options))

    async def enrich(self, session_id: str, agent_id: str | None = None) -> results.Enriched:
        """Enriches one session now: chunks, vectors, summary (memory.enrich)."""
        return await self._run(calls.enrich(session_id, agent_id))

    async def recall(self, query: str, **options: Unpack[calls.RecallOptions]) -> list[results.Hit]:
        """The turns and curated memories (or sessions, level='session') that best answer the query
        (memory.recall); as_of, include_ended and intent choose which memories and how they are routed, tiers
        which tiers are searched (default hot and warm), tags which curated memories alone are kept, tools and
        tool_statuses which tool results alone are (e.g. tools=["bash"], tool_statuses=["error"])."""
        return await self._run(calls.recall(query, options))

    async def explain_recall(self, query: str, **options: Unpack[calls.ExplainOptions]) -> list[results.Candidate]:
        """The first k candidates (every one by default) with their rank in each list and every component
        (memory.explain_recall)."""
        return await self._run(calls.explain_recall(query, options))

    async def give_feedback(
        self, verdict: results.Verdict, **options: Unpack[calls.FeedbackOptions]
    ) -> results.Feedback:
        """A verdict, helpful, unhelpful, incorrect or stale, on a recalled turn (turn_id=), a curated memory
        (memory_id=) or a whole session (session_id=). It moves trust; on a memory, incorrect from enough judges
        retracts it and stale lowers its importance (memory.give_feedback)."""
        return await self._run(calls.give_feedback(verdict, options))

    async def tune_weights(self, *, agent_id: str | None = None, dry_run: bool = False) -> results.WeightTuning:
        """Fits recall's signal weights to this tenant's feedback given with a query (agent_id: that agent's
        only) and keeps them for recall unless dry_run; nothing moves below tune_min_verdicts helpful verdicts
        (memory.tune_weights)."""
        return await self._run(calls.tune_weights(agent_id, dry_run))

    async def reset_tuned_weights(self, *, agent_id: str | None = None) -> bool:
        """Removes the tuned weights of the tenant (or one agent): recall goes back to the weights in force
        without them; True if there were any (memory.reset_tuned_weights)."""
        return await self._run(calls.reset_tuned_weights(agent_id))

    async def remember(self, content: str, **options: Unpack[calls.MemoryOptions]) -> results.Remembered:
        """Keeps a memory: a fact, preference, rule, decision, skill, event, observation or task, with an
        optional key, subjects, tags, importance, confidence, valid_from, evidence turns and status
        (memory.remember). The same claim again is the same memory (outcome 'unchanged'); a new claim under a
        key supersedes the current one ('updated'). Enriched at once unless enrich says otherwise."""
        return await self._run(calls.remember(content, options))

    async def get(
        self, key: str, *, agent_id: str | None = None, as_of: datetime | None = None
    ) -> list[results.MemoryItem]:
        """The memory held under a key now, or at as_of; one per agent that holds it (memory.get)."""
        return await self._run(calls.get(key, agent_id, as_of))

    async def list_memories(self, **filters: Unpack[calls.MemoryFilters]) -> list[results.MemoryItem]:
        """Memories that hold now (or at as_of, or of one status), filtered, most important first
        (memory.list_memories)."""
        return await self._run(calls.list_memories(filters))

    async def query(
        self, request: str, *, agent_id: str | None = None, explain: bool = False, llm: bool = False
    ) -> results.QueryAnswer:
        """A request in plain words ("top 10 recent decisions", "failed bash calls") read as filters over
        memories, sessions, turns or tool executions and run: the filters, the words not understood, the SQL and
        its rows (explain: not run; agent_id: when the request names no agent; llm: the chat endpoint reads
        it, if the setting query_reader allows) (memory.query)."""
        return await self._run(calls.query(request, agent_id, explain, llm))

    async def memory_history(self, memory_id: int) -> list[results.MemoryItem]:
        """Every version of a memory's claim, oldest first, whatever their status (memory.memory_history)."""
        return await self._run(calls.memory_history(memory_id))

    async def resolve(self, memory_id: int) -> results.MemoryItem:
        """Marks a current memory resolved: it stops holding now and stays in the history (memory.resolve)."""
        return await self._run(calls.move_memory("resolve", memory_id))

    async def retract(self, memory_id: int) -> results.MemoryItem:
        """Marks a memory retracted, never true: recall and as_of leave it out (memory.retract)."""
        return await self._run(calls.move_memory("retract", memory_id))

    async def approve(self, memory_id: int) -> results.MemoryItem:
        """Approves a memory enrichment proposed for review (status pending): active from now on, recalled
        (memory.approve). Reject one with retract."""
        return await self._run(calls.move_memory("approve", memory_id))

    async def share(self, memory_id: int, *, shared: bool = True) -> results.MemoryItem:
        """Shares a memory with every agent of the tenant (shared=False: keeps it to its agent again): their
        recall, bootstrap and context_for_task include it, with shared_by naming its agent (memory.share)."""
        return await self._run(calls.share(memory_id, shared))

    async def bootstrap(
        self,
        *,
        agent_id: str | None = None,
        max_chars: int | None = None,
        sessions: int | None = None,
        run_id: str | None = None,
    ) -> results.Bootstrap:
        """Context for a new conversation within a character budget, of one run if given (memory.bootstrap);
        .text() renders it."""
        return await self._run(calls.bootstrap(agent_id, max_chars, sessions, run_id))

    async def context_for_task(
        self,
        task: str,
        *,
        max_chars: int | None = None,
        agent_id: str | None = None,
        k: int | None = None,
        run_id: str | None = None,
    ) -> results.TaskContext:
        """The turns most relevant to a task, within a character budget, of one run if given
        (memory.context_for_task)."""
        return await self._run(calls.context_for_task(task, max_chars, agent_id, k, run_id))

    async def forget(self, session_id: str, *, agent_id: str | None = None) -> results.Forgotten:
        """Removes a session and everything derived from it, leaving a tombstone (memory.forget). Committing
        it again is refused (ForgottenSession) unless allow_forgotten."""
        return await self._run(calls.forget(session_id, agent_id))

    async def pop_turn(self, session_id: str, *, agent_id: str | None = None) -> results.ExportedMessage | None:
        """Removes the last turn of a session with what derives from it and returns it as commit takes it;
        None when the session does not exist or is empty (memory.pop_turn). The session stays."""
        return await self._run(calls.pop_turn(session_id, agent_id))

    async def forget_agent(self, agent_id: str) -> results.Forgotten:
        """Removes all of an agent's memory under one tombstone (memory.forget_agent)."""
        return await self._run(calls.forget_agent(agent_id))

    async def forget_range(self, since: datetime, until: datetime, *, agent_id: str | None = None) -> results.Forgotten:
        """Removes everything said in [since, until) under one tombstone (memory.forget_range)."""
        return await self._run(calls.forget_range(since, until, agent_id))

    async def forget_entity(self, entity: str, *, agent_id: str | None = None) -> results.Forgotten:
        """Removes everything about an entity: the turns that mention it, the memories about it, the entity
        with its states and edges, under one tombstone (memory.forget_entity)."""
        return await self._run(calls.forget_entity(entity, agent_id))

    async def stats(self, agent_id: str | None = None) -> list[results.AgentStats]:
        """Per agent: sessions, turns, chunks, vectors, summaries, feedback, pending jobs (memory.stats)."""
        return await self._run(calls.stats(agent_id))

    async def metrics(self) -> list[results.Metric]:
        """Counters and gauges of this tenant (every tenant's for memory_admin): recalls and their latency
        histogram, commits, turns, feedback, the queue, the tiers (memory.metrics)."""
        return await self._run(calls.metrics())

    async def list_sessions(
        self,
        *,
        agent_id: str | None = None,
        search: str | None = None,
        k: int | None = None,
        before: datetime | None = None,
        run_id: str | None = None,
    ) -> list[results.SessionItem]:
        """Sessions, most recently updated first; before: the next page; run_id: that run's
        (memory.list_sessions)."""
        return await self._run(calls.list_sessions(agent_id, search, k, before, run_id))

    async def export(
        self, *, agent_id: str | None = None, session_id: str | None = None
    ) -> list[results.ExportedSession]:
        """Sessions in the shape commit takes (memory.export)."""
        return await self._run(calls.export(agent_id, session_id))

    async def export_tenant(self, *, agent_id: str | None = None) -> list[results.ExportRecord]:
        """The whole memory of the tenant (or one agent) as records: sessions with their state, memories,
        merges, entities, entity states, feedback (memory.export_tenant). import_tenant takes them back."""
        return await self._run(calls.export_tenant(agent_id))

    async def import_tenant(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        allow_forgotten: bool | None = None,
        batch_size: int = 500,
        on_batch: Callable[[int], None] | None = None,
    ) -> list[results.Imported]:
        """Stores export records in this tenant, all or nothing: batch_size records per memory.import_tenant
        call, every call in one transaction, records read from the iterable as they are sent (an error it
        raises undoes the import too); on_batch hears each batch's size. Sessions are queued for enrichment.
        What is here already is left as it is."""
        return calls.imported_totals(
            await self._run_in_one_transaction(calls.import_tenant(records, allow_forgotten, batch_size, on_batch))
        )

    async def set_retention(
        self,
        data: calls.RetainedData,
        *,
        max_age: timedelta | None = None,
        keep_last: int | None = None,
        tier: calls.Tier | None = None,
        agent_id: str | None = None,
        statuses: Sequence[results.MemoryStatus] | None = None,
    ) -> results.RetentionPolicy:
        """Adds a retention policy: sessions or memories (of an agent, a tier, statuses) go, or what tool results
        said is cleared (tool_results), when unused for longer than max_age and not among their agent's keep_last
        newest (memory.set_retention)."""
        return await self._run(calls.set_retention(data, max_age, keep_last, tier, agent_id, statuses))

    async def list_retention_policies(self) -> list[results.RetentionPolicy]:
        """The tenant's retention policies (memory.list_retention_policies)."""
        return await self._run(calls.list_retention_policies())

    async def drop_retention(self, policy_id: int) -> bool:
        """Removes a retention policy; whether there was one (memory.drop_retention)."""
        return await self._run(calls.drop_retention(policy_id))

    async def retention_preview(self, *, at: datetime | None = None) -> list[results.RetentionItem]:
        """What the next maintenance (or one at at) archives and removes, and why (memory.retention_preview)."""
        return await self._run(calls.retention_preview(at))

    async def list_archives(self) -> list[results.Archive]:
        """What retention removed, one archive per run (memory.list_archives)."""
        return await self._run(calls.list_archives())

    async def archive(self, archive_id: int) -> bytes | None:
        """An archive's gzipped JSON lines, which import_tenant reads back; None once dropped (memory.archive)."""
        return await self._run(calls.archive(archive_id))

    async def drop_archive(self, archive_id: int) -> bool:
        """Drops an archive's data, keeping its record; whether it held data (memory.drop_archive)."""
        return await self._run(calls.drop_archive(archive_id))

    async def reindex(self, *, agent_id: str | None = None, session_id: str | None = None) -> results.Reindexed:
        """Queues re-enrichment of the sessions in scope, after index settings changed (memory.reindex)."""
        return await self._run(calls.reindex(agent_id, session_id))

    async def list_entities(
        self,
        search: str | None = None,
        *,
        type: EntityType | None = None,
        agent_id: str | None = None,
        k: int | None = None,
    ) -> list[results.Entity]:
        """The entities whose name or an alias is like search (all without one), of a type, best match
        first, with how often and where they are mentioned (memory.list_entities)."""
        return await self._run(calls.list_entities(search, type, agent_id, k))

    async def entity_neighbors(
        self, entity: str, *, depth: int | None = None, k: int | None = None, agent_id: str | None = None
    ) -> list[results.Neighbor]:
        """The entities mentioned with an entity, within depth (1-5) steps, nearest first, each with its path
        (memory.entity_neighbors). NotFound when no entity has that name or alias."""
        return await self._run(calls.entity_neighbors(entity, depth, k, agent_id))

    async def entity_sessions(
        self, entity: str, *, agent_id: str | None = None, k: int | None = None
    ) -> list[results.EntitySession]:
        """The sessions that mention an entity, most recent first, with their summaries (memory.entity_sessions)."""
        return await self._run(calls.entity_sessions(entity, agent_id, k))

    async def merge_entities(self, keep: str, merge: str, *, agent_id: str | None = None) -> results.Merged:
        """Makes two entities of an agent's memory one: merge's names become keep's aliases, its mentions and
        states move to keep (memory.merge_entities)."""
        return await self._run(calls.merge_entities(keep, merge, agent_id))

    async def set_entity_state(
        self,
        entity: str,
        attribute: str,
        value: JsonInput,
        *,
        valid_from: datetime | None = None,
        agent_id: str | None = None,
        type: EntityType | None = None,
    ) -> results.StateRecorded:
        """Records that an entity's attribute has a value from valid_from (default now) on; the value before
        it ends there (memory.set_entity_state). A new entity is created, of type (default 'other')."""
        return await self._run(calls.set_entity_state(entity, attribute, value, valid_from, agent_id, type))

    async def entity_state(
        self,
        entity: str,
        *,
        as_of: datetime | None = None,
        attribute: str | None = None,
        agent_id: str | None = None,
    ) -> list[results.EntityState]:
        """An entity's attribute values that hold now, or held at as_of (memory.entity_state)."""
        return await self._run(calls.entity_state(entity, as_of, attribute, agent_id))

    async def pending_entity_states(self, *, agent_id: str | None = None) -> list[results.PendingState]:
        """The state changes enrichment read from conversations that wait for review, oldest first
        (memory.pending_entity_states; setting extracted_memory_status pending)."""
        return await self._run(calls.pending_entity_states(agent_id))

    async def approve_entity_state(self, state_id: int) -> results.StateApproved:
        """Places a pending state change in its attribute's history from when it was said
        (memory.approve_entity_state)."""
        return await self._run(calls.approve_entity_state(state_id))

    async def reject_entity_state(self, state_id: int) -> None:
        """Rejects a pending state change: it never holds and is not proposed again (memory.reject_entity_state)."""
        await self._run(calls.reject_entity_state(state_id))

    async def entity_history(
        self, entity: str, attribute: str, *, agent_id: str | None = None
    ) -> list[results.StateHistoryItem]:
        """Every value an entity's attribute has had, oldest first (memory.entity_history)."""
        return await self._run(calls.entity_history(entity, attribute, agent_id))

    async def health(self) -> results.Health:
        """Versions and whether the embedder works (memory.health)."""
        return await self._run(calls.health())

    async def work(self, max_jobs: int = 10) -> results.Worked:
        """Runs up to max_jobs queued enrichment jobs, each committed on its own (call memory.work)."""
        return await self._run(calls.work(max_jobs))
