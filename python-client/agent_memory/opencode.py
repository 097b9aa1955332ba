"""A reader of OpenCode's session store into sessions for memory.commit (`agent-memory import opencode`).

OpenCode keeps each session as JSON files under its data directory (~/.local/share/opencode/storage):
session/<project>/<session>.json (id, title, directory, time.created in ms), message/<session>/<message>.json
(role, time.created) and part/<message>/<part>.json, the message's content in parts: text, tool (tool, callID,
state: status, input, output or error, time.start and time.end), and parts that are no words of the
conversation (reasoning, step-start, step-finish, snapshot, patch, file, agent, compaction, retry, and any
type this reader does not know), left out. A tool call still pending or running is left out: importing the
session again once it has finished adds it.

A user message is a user turn of its text parts (OpenCode's synthetic ones, the text of attached files, left
out). An assistant message is an assistant turn of its text with its tool parts as tool_calls, then one tool
turn per call with its output (or error), its status (success, or error) and its duration in milliseconds.
Messages are ordered by time, parts by id (OpenCode's ids ascend). Message and part ids are the turns' ids, so
importing a session again adds only what is new.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent_memory.importers import ImportProblem, Origin, Read, Session, Unreadable, parse_json, read_text


def _when(milliseconds: Any) -> datetime | None:
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, (int, float)):
        return None
    return datetime.fromtimestamp(milliseconds / 1000, UTC)


def _object(path: Path) -> dict[str, Any]:
    """A file's JSON object; an ImportProblem when it cannot be read or holds something else."""
    value = parse_json(read_text(path), str(path))
    if not isinstance(value, dict):
        raise ImportProblem(str(path), 0, "is not a JSON object")
    return value


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def session_files(path: Path) -> list[Path]:
    """The session files a path names: itself, or those of a store (the storage directory or its parent)."""
    if path.is_file():
        path = path.resolve()
        if path.parent.parent.name != "session":
            raise ImportProblem(str(path), 0, "is no session file of an OpenCode store (<store>/session/<project>/)")
        return [path]
    for root in (path, path / "storage"):
        if (root / "session").is_dir():
            return sorted((root / "session").glob("*/*.json"))
    raise Unreadable(str(path), 0, "is no OpenCode store (no session/ directory) nor a session file")


def _finished(part: dict[str, Any]) -> bool:
    state = part.get("state")
    return not isinstance(state, dict) or state.get("status") not in ("pending", "running")


def _tool_turns(part: dict[str, Any], where: Origin) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tool call a tool part makes, and the tool turn of its result."""
    state = part.get("state")
    if not isinstance(part.get("tool"), str) or not isinstance(state, dict) or not part.get("callID"):
        raise where.problem('is a tool part without "tool", "callID" or "state"')
    arguments = json.dumps(state.get("input", {}), ensure_ascii=False)
    call = {"id": part["callID"], "type": "function", "function": {"name": part["tool"], "arguments": arguments}}
    output = state.get("output") if state.get("status") == "completed" else state.get("error")
    result: dict[str, Any] = {
        "role": "tool",
        "content": output if isinstance(output, str) else json.dumps(output, ensure_ascii=False),
        "tool_call_id": part["callID"],
        "id": str(part.get("id") or part["callID"]),
        "metadata": {"tool": part["tool"]},
        "status": "success" if state.get("status") == "completed" else "error",
    }
    time = state.get("time")
    time = time if isinstance(time, dict) else {}
    start, end = _when(time.get("start")), _when(time.get("end"))
    if start and end:
        result["duration_ms"] = max(0, round((end - start).total_seconds() * 1000))
    if end:
        result["created_at"] = end.isoformat()
    return call, result


def _message_turns(message: dict[str, Any], parts: list[tuple[Path, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The turns of one message: its words (with its tool calls), then its tool results."""
    texts, calls, results = [], [], []
    for path, part in sorted(parts, key=lambda found: str(found[1].get("id", ""))):
        kind = part.get("type")
        if kind == "text" and not part.get("synthetic") and isinstance(part.get("text"), str):
            texts.append(part["text"].strip())
        elif kind == "tool" and message["role"] == "assistant" and _finished(part):
            call, result = _tool_turns(part, Origin(str(path)))
            calls.append(call)
            results.append(result)
    turns: list[dict[str, Any]] = []
    if any(texts) or calls:
        turn: dict[str, Any] = {"role": message["role"], "content": "\n\n".join(t for t in texts if t)}
        turn["id"] = str(message["id"])
        if calls:
            turn["tool_calls"] = calls
        created = _when((message.get("time") or {}).get("created"))
        if created:
            turn["created_at"] = created.isoformat()
        turns.append(turn)
    return turns + results


def _session(path: Path, store: Path) -> Session:
    info = _object(path)
    if not isinstance(info.get("id"), str):
        raise ImportProblem(str(path), 0, 'is no OpenCode session: no "id"')
    session = Session(
        session_id=info["id"], source="opencode", started_at=_when((info.get("time") or {}).get("created"))
    )
    session.metadata = {key: info[key] for key in ("title", "directory", "projectID") if isinstance(info.get(key), str)}
    messages = []
    for message_path in _files(store / "message" / info["id"]):
        message = _object(message_path)
        if message.get("role") not in ("user", "assistant") or not message.get("id"):
            raise ImportProblem(str(message_path), 0, 'is no message: needs "id" and role user or assistant')
        messages.append((message_path, message))
    messages.sort(key=lambda found: ((found[1].get("time") or {}).get("created") or 0, str(found[1]["id"])))
    for message_path, message in messages:
        parts = [(part, _object(part)) for part in _files(store / "part" / str(message["id"]))]
        for turn in _message_turns(message, parts):
            session.add(turn, Origin(str(message_path)))
    return session


def read_opencode(paths: Iterable[Path]) -> Read:
    """The sessions of OpenCode stores or session files; a session with a file that cannot be read is one
    problem naming that file, and is left out."""
    sessions: list[Session] = []
    problems: list[ImportProblem] = []
    for given in paths:
        try:
            files = session_files(given)
        except ImportProblem as exc:
            problems.append(exc)
            continue
        for path in files:
            store = path.parents[2]  # <store>/session/<project>/<session>.json
            try:
                session = _session(path, store)
            except ImportProblem as exc:
                problems.append(exc)
                continue
            if session.messages:
                sessions.append(session)
    return Read(sessions, problems)
