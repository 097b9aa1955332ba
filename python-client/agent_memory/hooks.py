"""Claude Code hooks: `agent-memory hook EVENT` with the JSON Claude Code sends on stdin.

- PreCompact and SessionEnd commit the session's transcript (transcript_path) through the Claude Code
  importer, enrichment queued. Committing is idempotent, so however often the hook fires, each turn is
  stored once, under the same session and agent as `agent-memory import claude-code` stores it.
- With the server out of reach, the sessions are spooled (agent_memory.spool) and committed, in order, by the
  next hook that reaches it, or by `agent-memory spool replay`.
- With --backup DIR, each saved session is also written as a readable markdown file, kept --backup-days days.
- SessionStart prints what memory.bootstrap chooses as hookSpecificOutput.additionalContext, the JSON
  Claude Code adds to the new (or compacted, resumed, cleared) session's context.

A hook never blocks or fails its host: the connection has a connect_timeout and a statement_timeout, an
alarm bounds the whole run, every error is one line (time, event, error) in a log file, and the exit
status is 0.
"""

from __future__ import annotations

import json
import math
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_memory import importers
from agent_memory.backup import Backup
from agent_memory.client import Memory
from agent_memory.errors import ConnectionFailed
from agent_memory.spool import Spool

SAVE_EVENTS = ("PreCompact", "SessionEnd")
START_EVENT = "SessionStart"
EVENTS = (*SAVE_EVENTS, START_EVENT)
DEFAULT_LOG = "~/.agent-memory/hooks.log"
CONTEXT_HEADING = "# What agent-memory remembers from earlier sessions\n\n"


class HookError(Exception):
    """The input or the event is not what a hook expects."""


def payload(text: str) -> dict[str, Any]:
    """The JSON object on stdin."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookError(f"the input is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise HookError("the input is not a JSON object")
    return value


def bounded(dsn: str, seconds: float) -> str:
    """The connection string with libpq's connect_timeout (at least 2 s, libpq's minimum) and the server's
    statement_timeout set to the time bound, added to any options it has."""
    params = conninfo_to_dict(dsn)
    params["connect_timeout"] = max(2, math.ceil(seconds))
    params["options"] = f"{params.get('options') or ''} -c statement_timeout={math.ceil(seconds * 1000)}".strip()
    return make_conninfo("", **params)


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raises TimeoutError in the block once the seconds are up (SIGALRM: the main thread only)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"gave up after {seconds:g} s (--timeout)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def save(
    connect: Callable[[], Memory],
    data: dict[str, Any],
    agent_id: str | None,
    spool: Spool | None,
    tenant: str | None,
    backup: Backup | None = None,
) -> tuple[str, list[Exception]]:
    """Commits the transcript, after what the spool holds for the tenant: a summary line, and the problems of
    the lines that were left out. With the server out of reach, the sessions are spooled instead. With a
    backup, a markdown copy of each session is written first, whatever the server does."""
    transcript = data.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        raise HookError('the input has no "transcript_path"')
    read = importers.read("claude-code", [Path(transcript)])
    problems: list[Exception] = list(read.problems)
    if not read.sessions:
        return "", problems
    if backup is not None:
        try:
            backup.keep(read.sessions, agent_id, "claude-code")
        except OSError as exc:  # a copy that cannot be written is logged; the commit goes on
            problems.append(exc)
    added = 0
    try:
        with connect() as memory:
            if spool is not None and spool.replay_tenant(memory, tenant).waiting:
                raise ConnectionFailed("the server went away while the spool was replayed")
            for session in read.sessions:
                turns, refused = importers.commit(
                    memory, session, agent_id=agent_id, source="claude-code", enrich="queue", skip_invalid=True
                )
                added += turns
                problems += refused
    except (ConnectionFailed, TimeoutError) as exc:  # out of reach, or too slow to answer within --timeout
        if spool is None:
            raise
        for session in read.sessions:
            options = {"agent_id": agent_id, "source": "claude-code", "metadata": session.metadata or None}
            spool.add(tenant, session.session_id, session.messages, {**options, "enrich": "queue"})
        problems.append(exc)
        return f"agent-memory: the server is out of reach: {len(read.sessions)} session(s) spooled", problems
    return f"agent-memory: {', '.join(s.session_id for s in read.sessions)}: {added} turns added", problems


def context(memory: Memory, agent_id: str | None, max_chars: int | None) -> str:
    """SessionStart's output: the bootstrap text as additionalContext (nothing when memory is empty)."""
    text = memory.bootstrap(agent_id=agent_id, max_chars=max_chars).text()
    if not text:
        return ""
    output = {"hookEventName": START_EVENT, "additionalContext": CONTEXT_HEADING + text}
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)


def log_line(event: str, error: Exception, now: datetime) -> str:
    message = " ".join(str(error).split()) or type(error).__name__
    return f"{now.isoformat(timespec='seconds')} {event} error: {message}\n"


def run(
    event: str | None,
    stdin: TextIO,
    connect: Callable[[float], Memory],
    *,
    agent_id: str | None,
    max_chars: int | None,
    timeout: float,
    log: Path,
    spool: Spool | None = None,
    tenant: str | None = None,
    backup: Backup | None = None,
) -> int:
    """Handles one event (given, else hook_event_name of the input); prints what the host should read and
    logs what went wrong. Always 0: a hook must not fail its host. With a spool, a transcript the server cannot
    take now is spooled, and what is spooled is committed first the next time it can."""
    name = event or "hook"
    output = ""
    problems: list[Exception] = []
    try:
        with deadline(timeout):
            data = payload(stdin.read())
            name = event or str(data.get("hook_event_name") or "hook")
            if name not in EVENTS:
                raise HookError(f"unknown event {name!r} (expected one of {', '.join(EVENTS)})")
            if name == START_EVENT:
                with connect(timeout) as memory:
                    output = context(memory, agent_id, max_chars)
            else:
                output, problems = save(lambda: connect(timeout), data, agent_id, spool, tenant, backup)
        if output:
            print(output, flush=True)
    except Exception as exc:  # whatever it is, the host must go on
        problems.append(exc)
    if problems:
        lines = "".join(log_line(name, problem, datetime.now().astimezone()) for problem in problems)
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as file:
                file.write(lines)
        except OSError:
            sys.stderr.write(lines)
    return 0
