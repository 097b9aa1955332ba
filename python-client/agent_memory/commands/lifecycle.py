"""The lifecycle of memory: forgetting (a session, an agent, a time range, an entity), retention policies and
the archives of what they removed."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, get_args

from agent_memory import results
from agent_memory.calls import RetainedData
from agent_memory.client import Memory
from agent_memory.commands import Args, Command, Option, Tool, answers, memory, said, table
from agent_memory.errors import NotFound

STATUSES = ["active", "ongoing", "resolved", "superseded", "retracted", "pending"]
TIERS = ["hot", "warm", "cold"]


def _forgotten(result: results.Forgotten) -> str:
    removed = (
        f"{result.turns_removed} turns, {result.chunks_removed} indexed chunks, {result.memories_removed} memories"
    )
    return f"{removed} (tombstone {result.tombstone_id})"


def age(text: str) -> timedelta:
    """A retention age: a whole number and a unit, as 90d, 12h, 2w or '90 days'."""
    units = {"h": "hours", "d": "days", "w": "weeks"}
    match = re.fullmatch(r"\s*(\d+)\s*(h|hours?|d|days?|w|weeks?)\s*", text.lower())
    if match is None or int(match[1]) == 0:
        raise argparse.ArgumentTypeError(
            f"must be a positive whole number of hours, days or weeks (90d, 12h, 2w), got {text!r}"
        )
    return timedelta(**{units[match[2][0]]: int(match[1])})


def _dropped(what: Callable[[Memory, dict[str, Any]], bool], missing: str) -> Any:
    """A drop: NotFound when there was nothing to drop."""

    def call(client: Memory, given: dict[str, Any]) -> dict[str, bool]:
        if not what(client, given):
            raise NotFound(missing.format(**given))
        return {"dropped": True}

    return call


def _archive_gone(archive_id: int) -> NotFound:
    return NotFound(f"archive {archive_id} holds no data (dropped, or no such archive)")


def save_archive(args: Args) -> int:
    """Saves an archive's gzipped JSON lines to a file."""
    with memory(args) as client:
        data = client.archive(args.archive_id)
    if data is None:
        raise _archive_gone(args.archive_id)
    output = args.output or f"agent-memory-archive-{args.archive_id}.jsonl.gz"
    Path(output).write_bytes(data)
    return said(lambda args, _: f"wrote {output} ({len(data)} bytes)")(args, {"file": output, "bytes": len(data)})


COMMANDS: tuple[Command, ...] = (
    Command(
        "list_sessions",
        "sessions, most recently updated first (their turns: export --session-id)",
        (
            Option("agent_id", "one agent's"),
            Option("search", "words in the session id or summary (any case)"),
            Option("k", "at most this many (default 50)", type=int),
            Option("before", "updated before this time (ISO 8601): the next page", type=datetime.fromisoformat),
            Option("run_id", "that run's"),
        ),
        show=table(
            ["session_id", "updated_at", "turns", "tier", "summary"],
            "no sessions found",
            {"summary": 60},
            scoped=True,
        ),
    ),
    Command(
        "forget",
        "remove a session and everything derived from it, leaving a tombstone",
        (
            Option("session_id", positional=True, tool="the session to remove", tool_type=str),
            Option(
                "agent_id",
                "the agent (default: whichever agent has the session)",
                tool="the session's agent (default: the server's agent, else whichever agent has it)",
            ),
        ),
        show=said(lambda args, result: f"forgot {args.session_id}: {_forgotten(result)}"),
        tool=Tool(
            """Removes a conversation and everything derived from it (turns, chunks, vectors, summary,
            feedback) for good. Only when the user asks for it.""",
            "deletes",
            answers.forgotten,
            dict[str, int],
        ),
    ),
    Command(
        "forget_agent",
        "remove all of an agent's memory, leaving a tombstone",
        (Option("agent_id", positional=True),),
        show=said(
            lambda args, result: (
                f"forgot agent {args.agent_id}: {result.sessions_removed} sessions, {_forgotten(result)}"
            )
        ),
    ),
    Command(
        "forget_range",
        "remove everything said in a time range, leaving a tombstone",
        (
            Option("since", "from (ISO 8601, included)", positional=True, type=datetime.fromisoformat),
            Option("until", "to (ISO 8601, left out)", positional=True, type=datetime.fromisoformat),
            Option("agent_id", "only this agent's (default: every agent's)"),
        ),
        show=said(
            lambda args, result: (
                f"forgot {args.since.isoformat()} to {args.until.isoformat()}: "
                f"{result.sessions_removed} whole sessions, {_forgotten(result)}"
            )
        ),
    ),
    Command(
        "forget_entity",
        "remove everything about an entity, leaving a tombstone",
        (
            Option("entity", "its name or an alias", positional=True),
            Option("agent_id", "only this agent's entity (default: every agent's of that name)"),
        ),
        show=said(
            lambda args, result: f"forgot {args.entity}: {result.sessions_removed} whole sessions, {_forgotten(result)}"
        ),
    ),
    Command(
        "set_retention",
        "add a retention policy: what maintenance archives and removes",
        (
            Option("data", positional=True, choices=get_args(RetainedData)),
            Option("max_age", "unused for longer than this: 90d, 12h, 2w", type=age),
            Option("keep_last", "keep each agent's newest N (by last use)", type=int),
            Option("tier", "only items in this tier", choices=TIERS),
            Option("agent_id", "only this agent's (default: every agent)"),
            Option("statuses", "memories only: only of this status (repeatable)", repeat=True, choices=STATUSES),
        ),
        show=said(lambda args, policy: f"retention policy {policy.policy_id} added"),
        description="An item goes when it is over every limit its policy sets. tool_results: what tool results said is"
        " cleared (archived first), sooner than the conversation around them if the policy says so.",
    ),
    Command(
        "drop_retention",
        "remove a retention policy",
        (Option("policy_id", positional=True, type=int),),
        show=said(lambda args, _: f"retention policy {args.policy_id} dropped"),
        call=_dropped(lambda client, given: client.drop_retention(**given), "no retention policy {policy_id}"),
    ),
    Command(
        "list_retention_policies",
        "the tenant's retention policies",
        show=table(
            ["policy_id", "data", "agent_id", "tier", "statuses", "max_age", "keep_last"],
            "no retention policies (add one: agent-memory set-retention sessions --max-age 365d)",
        ),
    ),
    Command(
        "retention_preview",
        "what the next `call memory.maintain()` archives and removes",
        (Option("at", "as if maintenance ran then (ISO 8601)", type=datetime.fromisoformat),),
        show=table(
            ["policy_id", "data", "agent_id", "session_id", "memory_id", "turn_id", "tier", "last_used", "reason"],
            "nothing would go",
        ),
    ),
    Command(
        "archive",
        "save an archive of what retention removed to a file",
        (
            Option("archive_id", positional=True, type=int),
            Option("output", "the file (default: agent-memory-archive-ID.jsonl.gz)", short="-o"),
        ),
        description="The file holds the gzipped JSON lines that `agent-memory import jsonl FILE` reads back.",
        main=save_archive,
    ),
    Command(
        "drop_archive",
        "drop an archive's data, keeping its record",
        (Option("archive_id", positional=True, type=int),),
        show=said(lambda args, _: f"archive {args.archive_id}: data dropped, record kept"),
        call=_dropped(
            lambda client, given: client.drop_archive(**given),
            "archive {archive_id} holds no data (dropped, or no such archive)",
        ),
    ),
    Command(
        "list_archives",
        "what retention removed, one archive per run",
        show=table(
            ["archive_id", "created_at", "policies", "removed", "records", "bytes", "dropped_at"],
            "no archives (retention has removed nothing)",
        ),
    ),
)
