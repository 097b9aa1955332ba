"""A readable markdown copy of each session the Claude Code hooks save (pg-memory's backup), kept for a number
of days and pruned by itself: `agent-memory hook --backup DIR [--backup-days N]`.

One file per agent and session, <DIR>/<agent>/<session>.md, written again whole (through a temporary file and a
rename) each time the hook saves the session, whether the database took it or the spool did. Files not written
for more than the days kept are removed at each save. Folders are mode 0700 and files 0600: they hold
conversations.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory.spool import file_name

DEFAULT_DAYS = 30


def _heading(message: Mapping[str, Any]) -> str:
    who = message.get("name") or message.get("role", "?")
    when = f" · {message['created_at']}" if message.get("created_at") else ""
    if message.get("role") == "tool":
        how = ", ".join(
            str(part)
            for part in (message.get("status"), f"{message['duration_ms']} ms" if "duration_ms" in message else None)
            if part
        )
        return f"## tool result{f' ({how})' if how else ''}{when}"
    return f"## {who}{when}"


def _call(call: Mapping[str, Any]) -> str:
    function: Mapping[str, Any] = call["function"] if isinstance(call.get("function"), Mapping) else call
    arguments = function.get("arguments", function.get("input", ""))
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return f"- calls `{function.get('name', '?')}` with `{text}`"


def render(session_id: str, agent_id: str, source: str, messages: Sequence[Mapping[str, Any]], saved: datetime) -> str:
    """A session as markdown: a heading per message (speaker, time; a tool result's status and duration), its
    words, its tool calls, a tool result's output in a code block."""
    lines = [f"# Session {session_id}", "", f"agent {agent_id} · source {source} · saved {saved.isoformat()}", ""]
    for message in messages:
        lines += [_heading(message), ""]
        content = message.get("content") or ""
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if message.get("role") == "tool":
            fence = "````" if "```" in text else "```"
            lines += [fence, text, fence, ""]
        elif text:
            lines += [text, ""]
        lines += [_call(call) for call in message.get("tool_calls") or [] if isinstance(call, Mapping)]
        if message.get("tool_calls"):
            lines.append("")
    return "\n".join(lines)


def write(directory: Path, agent_id: str, session_id: str, text: str) -> Path:
    """Writes one session's copy whole (a reader sees the old copy or the new one)."""
    folder = directory / file_name(agent_id)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / f"{file_name(session_id)}.md"
    temporary = path.with_name(path.name + ".new")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
    temporary.replace(path)
    return path


def prune(directory: Path, days: float, now: float | None = None) -> int:
    """Removes the copies not written for more than days; how many went."""
    cutoff = (time.time() if now is None else now) - days * 86400
    removed = 0
    for path in directory.glob("*/*.md"):
        if path.stat().st_mtime < cutoff:
            path.unlink()
            removed += 1
    return removed


class Backup:
    """The copies of one hook's folder: keep() writes the sessions it saves and prunes the old copies."""

    def __init__(self, directory: Path | str, days: float = DEFAULT_DAYS) -> None:
        self.directory = Path(directory).expanduser()
        self.days = days

    def keep(self, sessions: Sequence[Any], agent_id: str | None, source: str) -> list[Path]:
        """Writes a copy of each session (an importer's Session: session_id, messages, agent_id); prunes."""
        saved = datetime.now().astimezone()
        written = [
            write(
                self.directory,
                session.agent_id or agent_id or "default",
                session.session_id,
                render(session.session_id, session.agent_id or agent_id or "default", source, session.messages, saved),
            )
            for session in sessions
        ]
        prune(self.directory, self.days)
        return written
