"""Readers of conversation logs into sessions for memory.commit: generic JSONL, a ChatGPT export
(conversations.json) and Claude Code session logs (one JSONL file per session).

Every reader checks its whole input before anything is stored: a malformed line or conversation is an
ImportProblem naming the file and line (or conversation). Reading has no side effects; cli.py commits.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FORMATS = ("jsonl", "chatgpt", "claude-code")


@dataclass
class Session:
    """One conversation, ready for memory.commit."""

    session_id: str
    messages: list[dict[str, Any]]
    agent_id: str | None = None
    source: str | None = None
    started_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ImportProblem(Exception):
    """What is wrong and where: path, line (1-based, 0 when the whole file) and the problem."""

    path: str
    line: int
    problem: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.problem}" if self.line else f"{self.path}: {self.problem}"


@dataclass
class Read:
    """The sessions of an input and the problems of the parts that could not be read."""

    sessions: list[Session]
    problems: list[ImportProblem]


def _json_objects(path: Path, problems: list[ImportProblem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file with their line numbers; other lines go to problems."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                problems.append(ImportProblem(str(path), number, f"not valid JSON: {exc.msg} (column {exc.colno})"))
                continue
            if not isinstance(record, dict):
                problems.append(ImportProblem(str(path), number, "is not a JSON object"))
                continue
            yield number, record


def _timestamp(value: Any) -> datetime | None:
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, tz=UTC)
    return None


def read_jsonl(paths: Iterable[Path]) -> Read:
    """Lines that are messages with a "session_id" (and optional "agent_id"), grouped in order; or lines
    that are whole sessions {"session_id", "messages": [...], ...} as `agent-memory export` writes them."""
    sessions: dict[tuple[str | None, str], Session] = {}
    problems: list[ImportProblem] = []
    for path in paths:
        for number, record in _json_objects(path, problems):
            session_id = record.get("session_id")
            if not isinstance(session_id, str | int) or isinstance(session_id, bool) or str(session_id) == "":
                problems.append(ImportProblem(str(path), number, 'has no "session_id" (a string)'))
                continue
            agent = record.get("agent_id")
            key = (None if agent is None else str(agent), str(session_id))
            if "messages" in record:
                if not isinstance(record["messages"], list):
                    problems.append(ImportProblem(str(path), number, '"messages" is not a list'))
                    continue
                try:
                    started = record.get("started_at")
                    started_at = None if started is None else datetime.fromisoformat(str(started))
                except ValueError:
                    problems.append(ImportProblem(str(path), number, f'has started_at "{started}", not ISO 8601'))
                    continue
                sessions[key] = Session(
                    session_id=str(session_id),
                    messages=record["messages"],
                    agent_id=key[0],
                    source=record.get("source"),
                    started_at=started_at,
                    metadata=record.get("metadata") or {},
                )
                continue
            message = {k: v for k, v in record.items() if k not in ("session_id", "agent_id")}
            sessions.setdefault(key, Session(session_id=str(session_id), messages=[], agent_id=key[0])).messages.append(
                message
            )
    return Read(list(sessions.values()), problems)


def _chatgpt_text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(part for part in parts if isinstance(part, str)).strip()
    text = content.get("text")
    return text.strip() if isinstance(text, str) else ""


def _chatgpt_session(conversation: dict[str, Any]) -> Session:
    mapping = conversation.get("mapping")
    if not isinstance(mapping, dict):
        raise ValueError('has no "mapping" of messages')
    node_id = conversation.get("current_node")
    branch = []
    seen = set()
    # The conversation as the user last saw it: from the current node up through its parents.
    while node_id is not None and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        branch.append(node)
        node_id = node.get("parent")
    messages = []
    for node in reversed(branch):
        message = node.get("message")
        if not isinstance(message, dict):
            continue
        role = (message.get("author") or {}).get("role")
        text = _chatgpt_text(message.get("content"))
        hidden = (message.get("metadata") or {}).get("is_visually_hidden_from_conversation")
        if role not in ("user", "assistant", "system", "tool") or not text or hidden:
            continue
        turn: dict[str, Any] = {"role": role, "content": text}
        if message.get("id"):
            turn["id"] = str(message["id"])
        created = _timestamp(message.get("create_time"))
        if created is not None:
            turn["created_at"] = created.isoformat()
        name = (message.get("author") or {}).get("name")
        if isinstance(name, str) and name:
            turn["name"] = name
        messages.append(turn)
    session_id = conversation.get("conversation_id") or conversation.get("id")
    if not session_id:
        raise ValueError('has no "conversation_id" or "id"')
    title = conversation.get("title")
    return Session(
        session_id=str(session_id),
        messages=messages,
        source="chatgpt",
        started_at=_timestamp(conversation.get("create_time")),
        metadata={"title": title} if isinstance(title, str) else {},
    )


def read_chatgpt(paths: Iterable[Path]) -> Read:
    """ChatGPT's data export: conversations.json, a list of conversations whose messages form a tree;
    the branch that ends at each conversation's current node is imported."""
    sessions, problems = [], []
    for path in paths:
        try:
            conversations = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            problems.append(ImportProblem(str(path), exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})"))
            continue
        if not isinstance(conversations, list):
            problems.append(ImportProblem(str(path), 0, "is not a list of conversations"))
            continue
        for index, conversation in enumerate(conversations):
            try:
                if not isinstance(conversation, dict):
                    raise ValueError("is not a JSON object")
                session = _chatgpt_session(conversation)
            except ValueError as exc:
                problems.append(ImportProblem(f"{path} conversation {index}", 0, str(exc)))
                continue
            if session.messages:
                sessions.append(session)
    return Read(sessions, problems)


def _claude_text(content: Any) -> tuple[str, list[dict[str, Any]], str | None]:
    """Text, tool calls and the tool result's call id of one Claude Code message content."""
    if isinstance(content, str):
        return content.strip(), [], None
    texts, calls, result_of = [], [], None
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
            function = {"name": block.get("name"), "arguments": arguments}
            calls.append({"id": block.get("id"), "type": "function", "function": function})
        elif kind == "tool_result":
            result_of = block.get("tool_use_id")
            inner, _, _ = _claude_text(block.get("content"))
            texts.append(inner)
    return "\n".join(t for t in texts if t).strip(), calls, result_of


def read_claude_code(paths: Iterable[Path]) -> Read:
    """Claude Code session logs (~/.claude/projects/<project>/<session>.jsonl): user and assistant lines
    become turns (tool uses as tool_calls, tool results as tool turns); summaries, snapshots, meta lines
    and side chains (sub-agents) are left out."""
    sessions: list[Session] = []
    problems: list[ImportProblem] = []
    for path in paths:
        session = Session(session_id=path.stem, messages=[], source="claude-code")
        for number, line in _json_objects(path, problems):
            if line.get("type") not in ("user", "assistant") or line.get("isSidechain") or line.get("isMeta"):
                continue
            message = line.get("message")
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                problems.append(ImportProblem(str(path), number, 'has no "message" with a user or assistant role'))
                continue
            text, tool_calls, result_of = _claude_text(message.get("content"))
            if not text and not tool_calls:
                continue
            turn: dict[str, Any] = {"role": "tool" if result_of else message["role"], "content": text}
            if tool_calls:
                turn["tool_calls"] = tool_calls
            if result_of:
                turn["tool_call_id"] = result_of
            if line.get("uuid"):
                turn["id"] = str(line["uuid"])
            if isinstance(line.get("timestamp"), str):
                turn["created_at"] = line["timestamp"]
            session.session_id = str(line.get("sessionId") or session.session_id)
            if line.get("cwd"):
                session.metadata["cwd"] = line["cwd"]
            session.messages.append(turn)
        if session.messages:
            sessions.append(session)
    return Read(sessions, problems)


READERS = {"jsonl": read_jsonl, "chatgpt": read_chatgpt, "claude-code": read_claude_code}


def read(kind: str, paths: Iterable[Path]) -> Read:
    """The sessions of the inputs in one of FORMATS."""
    if kind not in READERS:
        raise ValueError(f"unknown import format {kind!r} (expected one of {', '.join(FORMATS)})")
    return READERS[kind](paths)
