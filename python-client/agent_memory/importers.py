"""Readers of conversation logs into sessions for memory.commit: generic JSONL, a ChatGPT export
(conversations.json), Claude Code session logs (one JSONL file per session) and OpenCode's session store
(agent_memory.opencode); and of the records of
memory.export_tenant (`agent-memory export`, retention archives) for memory.import_tenant. Any of them may
be gzipped.

Every reader checks its whole input before anything is stored: a malformed line or conversation is an
ImportProblem naming the file and line (or conversation), and a file in another format is named once with
the command that reads it. Reading has no side effects; commit() stores a session, leaving out (with
skip_invalid) each message the database refuses, named by its file and line.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from agent_memory.errors import InvalidInput

if TYPE_CHECKING:
    from agent_memory.calls import CommitOptions, Enrich
    from agent_memory.client import Memory

FORMATS = ("jsonl", "chatgpt", "claude-code", "opencode")
DESCRIPTIONS = {
    "jsonl": "JSON lines of messages with a session_id",
    "chatgpt": "a ChatGPT export (conversations.json)",
    "claude-code": "a Claude Code transcript",
    "opencode": "OpenCode's session store (or a session file in it)",
}
SNIFF_BYTES = 65536
# How memory.commit names a message it refuses: its 0-based index in the array, then the problem.
REFUSED_MESSAGE = re.compile(r"(?:agent_memory: )?message (\d+) (.*)", re.DOTALL)


@dataclass  # not frozen: raising sets the exception's traceback (an exception leaving a context manager)
class ImportProblem(Exception):
    """What is wrong and where: path, line (1-based, 0 when the whole file) and the problem."""

    path: str
    line: int
    problem: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.problem}" if self.line else f"{self.path}: {self.problem}"


class Unreadable(ImportProblem):
    """A file that cannot be opened: missing, a directory, not readable."""

    def __str__(self) -> str:
        return f"cannot read {self.path}: {self.problem}"


def os_reason(exc: OSError) -> str:
    """An OSError in a few words, without errno and file name: 'no such file or directory', 'is a directory'."""
    return (exc.strerror or str(exc)).lower()


@dataclass(frozen=True)
class Origin:
    """Where a message was read: the file (or conversation), its 1-based line (0 for a whole file) and,
    when one line or conversation holds many messages, its 1-based position there."""

    path: str
    line: int = 0
    message: int = 0

    def problem(self, text: str) -> ImportProblem:
        return ImportProblem(self.path, self.line, f"message {self.message} {text}" if self.message else text)


@dataclass
class Session:
    """One conversation, ready for memory.commit, with where each message was read."""

    session_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    agent_id: str | None = None
    source: str | None = None
    started_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    origins: list[Origin] = field(default_factory=list)

    def add(self, message: dict[str, Any], origin: Origin) -> None:
        self.messages.append(message)
        self.origins.append(origin)

    def without(self, index: int) -> Session:
        """The session less one message."""
        keep = range(len(self.messages))
        return replace(
            self,
            messages=[self.messages[i] for i in keep if i != index],
            origins=[self.origins[i] for i in keep if i != index],
        )


@dataclass
class Read:
    """The sessions of an input and the problems of the parts that could not be read."""

    sessions: list[Session]
    problems: list[ImportProblem]


def _not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    return f"not UTF-8 text (byte {data[exc.start]:#04x})"


GZIP_MAGIC = b"\x1f\x8b"


def open_bytes(path: Path) -> IO[bytes]:
    """A file to read, gunzipped as it is read when it is a gzip file (whatever its name)."""
    with path.open("rb") as probe:
        gzipped = probe.read(2) == GZIP_MAGIC
    if gzipped:
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def open_for_writing(path: str) -> IO[str]:
    """A UTF-8 text file to write, gzipped when its name ends in .gz."""
    if path.endswith(".gz"):
        return gzip.open(path, "wt", encoding="utf-8")
    return open(path, "w", encoding="utf-8")


def read_text(path: Path) -> str:
    """A whole UTF-8 file; an ImportProblem naming it (and the line of a bad byte) when it cannot be read."""
    try:
        with open_bytes(path) as file:
            data = file.read()
    except OSError as exc:
        raise Unreadable(str(path), 0, os_reason(exc)) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportProblem(str(path), data.count(b"\n", 0, exc.start) + 1, _not_utf8(data, exc)) from exc


def parse_json(text: str, where: str, line: int = 0) -> Any:
    """JSON text; an ImportProblem naming where it comes from (and the line) when it is not valid."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportProblem(where, line or exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})") from exc


def _json_objects(path: Path, problems: list[ImportProblem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON objects of a JSON-lines file with their line numbers; other lines go to problems."""
    with open_bytes(path) as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(ImportProblem(str(path), number, _not_utf8(raw, exc)))
                continue
            if not line.strip():
                continue
            try:
                record = parse_json(line.rstrip("\r\n"), str(path), number)
            except ImportProblem as problem:
                problems.append(problem)
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
                session = Session(
                    session_id=str(session_id),
                    agent_id=key[0],
                    source=record.get("source"),
                    started_at=started_at,
                    metadata=record.get("metadata") or {},
                )
                for position, message in enumerate(record["messages"], start=1):
                    session.add(message, Origin(str(path), number, position))
                sessions[key] = session
                continue
            message = {k: v for k, v in record.items() if k not in ("session_id", "agent_id")}
            sessions.setdefault(key, Session(session_id=str(session_id), agent_id=key[0])).add(
                message, Origin(str(path), number)
            )
    return Read(list(sessions.values()), problems)


def is_export(path: Path) -> bool:
    """Whether a JSON-lines file holds export records (its first line has "record"), as `agent-memory export`
    and retention archives write them."""
    with open_bytes(path) as file:
        for raw in file:
            if raw.strip():
                try:
                    first = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    return False
                return isinstance(first, dict) and "record" in first
    return False


def iter_records(paths: Iterable[Path], origins: list[Origin]) -> Iterator[dict[str, Any]]:
    """Every JSON-object line of the files, in order, as it is read, for memory.import_tenant (which checks
    each record); where each was read is appended to origins. A line that is not a JSON object raises its
    ImportProblem."""
    for path in paths:
        problems: list[ImportProblem] = []
        for number, record in _json_objects(path, problems):
            if problems:
                raise problems[0]
            origins.append(Origin(str(path), number))
            yield record
        if problems:
            raise problems[0]


def count_lines(paths: Iterable[Path]) -> int:
    """How many lines that are not blank the files hold (gzipped or not)."""
    total = 0
    for path in paths:
        with open_bytes(path) as file:
            total += sum(1 for line in file if line.strip())
    return total


def _chatgpt_text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(part for part in parts if isinstance(part, str)).strip()
    text = content.get("text")
    return text.strip() if isinstance(text, str) else ""


def _chatgpt_session(conversation: dict[str, Any], where: str) -> Session:
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
    session = Session(session_id="", source="chatgpt", started_at=_timestamp(conversation.get("create_time")))
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
        session.add(turn, Origin(where, 0, len(session.messages) + 1))
    session_id = conversation.get("conversation_id") or conversation.get("id")
    if not session_id:
        raise ValueError('has no "conversation_id" or "id"')
    session.session_id = str(session_id)
    title = conversation.get("title")
    if isinstance(title, str):
        session.metadata["title"] = title
    return session


def read_chatgpt(paths: Iterable[Path]) -> Read:
    """ChatGPT's data export: conversations.json, a list of conversations whose messages form a tree;
    the branch that ends at each conversation's current node is imported."""
    sessions: list[Session] = []
    problems: list[ImportProblem] = []
    for path in paths:
        try:
            conversations = parse_json(read_text(path), str(path))
        except ImportProblem as problem:
            problems.append(problem)
            continue
        if not isinstance(conversations, list):
            problems.append(ImportProblem(str(path), 0, "is not a list of conversations"))
            continue
        for number, conversation in enumerate(conversations, start=1):
            where = f"{path} conversation {number}"
            try:
                if not isinstance(conversation, dict):
                    raise ValueError("is not a JSON object")
                session = _chatgpt_session(conversation, where)
            except ValueError as exc:
                problems.append(ImportProblem(where, 0, str(exc)))
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


def _iso_time(value: Any) -> datetime | None:
    """An ISO 8601 time as Claude Code writes it ("2026-11-02T10:00:05.000Z"), or None."""
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
    except ValueError:
        return None


def _claude_error(content: Any) -> bool:
    """Whether a Claude Code tool result says the tool failed (is_error)."""
    blocks = content if isinstance(content, list) else []
    return any(isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error") is True for b in blocks)


CLAUDE_SKIPPED = ("isSidechain", "isMeta", "isCompactSummary")  # sub-agents, meta lines, compaction summaries


def read_claude_code(paths: Iterable[Path]) -> Read:
    """Claude Code session logs (~/.claude/projects/<project>/<session>.jsonl): user and assistant lines
    become turns (tool uses as tool_calls, tool results as tool turns with their status, error when is_error,
    and their duration, from the use's line to the result's); summaries, snapshots, meta lines
    and side chains (sub-agents) are left out, and so are the summaries Claude Code writes when it compacts."""
    sessions: list[Session] = []
    problems: list[ImportProblem] = []
    for path in paths:
        session = Session(session_id=path.stem, source="claude-code")
        called_at: dict[str, datetime] = {}  # when each tool use was asked for, for its result's duration
        for number, line in _json_objects(path, problems):
            if line.get("type") not in ("user", "assistant") or any(line.get(flag) for flag in CLAUDE_SKIPPED):
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
            when = _iso_time(line.get("timestamp"))
            for call in tool_calls:
                if when is not None:
                    called_at[str(call["id"])] = when
            if result_of:
                turn["tool_call_id"] = result_of
                turn["status"] = "error" if _claude_error(message.get("content")) else "success"
                if when is not None and result_of in called_at and when >= called_at[result_of]:
                    turn["duration_ms"] = round((when - called_at[result_of]).total_seconds() * 1000)
            if line.get("uuid"):
                turn["id"] = str(line["uuid"])
            if isinstance(line.get("timestamp"), str):
                turn["created_at"] = line["timestamp"]
            session.session_id = str(line.get("sessionId") or session.session_id)
            if line.get("cwd"):
                session.metadata["cwd"] = line["cwd"]
            session.add(turn, Origin(str(path), number))
        if session.messages:
            sessions.append(session)
    return Read(sessions, problems)


def _read_opencode(paths: Iterable[Path]) -> Read:
    from agent_memory.opencode import read_opencode  # it builds on this module's sessions and problems

    return read_opencode(paths)


READERS = {"jsonl": read_jsonl, "chatgpt": read_chatgpt, "claude-code": read_claude_code, "opencode": _read_opencode}


def sniff(path: Path) -> str | None:
    """The format a file looks like from its start, None when it is not clear: a JSON array is a ChatGPT
    export; the first JSON-object line with "session_id" is JSON lines, one with "sessionId" or with "type"
    and "message" a Claude Code transcript."""
    with open_bytes(path) as file:
        head = file.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    if head.lstrip().startswith("["):
        return "chatgpt"
    for line in head.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "session_id" in record:
            return "jsonl"
        if isinstance(record, dict) and ("sessionId" in record or {"type", "message"} <= record.keys()):
            return "claude-code"
    return None


def read(kind: str, paths: Iterable[Path]) -> Read:
    """The sessions of the inputs in one of FORMATS. A file that cannot be opened, or that looks like
    another format, is one problem (naming the command that reads it) and is not read further."""
    if kind not in READERS:
        raise ValueError(f"unknown import format {kind!r} (expected one of {', '.join(FORMATS)})")
    problems: list[ImportProblem] = []
    readable = []
    for path in paths:
        if kind == "opencode":  # a store is a directory: its reader names what it cannot read
            readable.append(path)
            continue
        try:
            looks = sniff(path)
        except OSError as exc:
            problems.append(Unreadable(str(path), 0, os_reason(exc)))
            continue
        if looks not in (None, kind):
            advice = f"looks like {DESCRIPTIONS[looks]}: use `agent-memory import {looks} {path}`"
            problems.append(ImportProblem(str(path), 0, advice))
            continue
        readable.append(path)
    found = READERS[kind](readable)
    return Read(found.sessions, problems + found.problems)


def commit(
    memory: Memory,
    session: Session,
    *,
    agent_id: str | None,
    source: str,
    enrich: Enrich | None,
    skip_invalid: bool,
    allow_forgotten: bool = False,
) -> tuple[int, list[ImportProblem]]:
    """Commits a session (agent_id and source for a session that names none): the turns added, and the
    messages the database refused, each named by its file and line. A refused message raises its
    ImportProblem, or with skip_invalid is left out and the rest committed (one more call per refused
    message). A refusal of the whole session raises InvalidInput; a session memory.forget removed raises
    ForgottenSession unless allow_forgotten."""
    options: CommitOptions = {
        "agent_id": session.agent_id or agent_id,
        "source": session.source or source,
        "started_at": session.started_at,
        "metadata": session.metadata or None,
        "enrich": enrich,
        "allow_forgotten": allow_forgotten or None,  # left out unless asked for (servers before 0.3.0)
    }
    refused: list[ImportProblem] = []
    while session.messages:
        try:
            return memory.commit(session.session_id, session.messages, **options).turns_added, refused
        except InvalidInput as exc:
            match = REFUSED_MESSAGE.fullmatch(str(exc))
            if match is None or int(match[1]) >= len(session.origins):
                raise
            problem = session.origins[int(match[1])].problem(match[2])
            if not skip_invalid:
                raise problem from exc
            refused.append(problem)
            session = session.without(int(match[1]))
    return 0, refused
