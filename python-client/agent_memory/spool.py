"""A safety net for when PostgreSQL is down: what would be committed is spooled to local files and replayed,
in order, when the server answers again (`agent-memory spool status|replay`; the Claude Code hooks use it).

    from agent_memory.spool import Spool
    spool = Spool()                        # $AGENT_MEMORY_SPOOL, else ~/.local/state/agent-memory/spool
    spool.commit(dsn, "s1", messages, agent_id="bot")   # Committed, or Spooled when the server is out of reach
    spool.replay(dsn)                      # what was spooled, committed in order: Replayed

One append-only file of JSON lines per tenant and agent (<spool>/<tenant>/<agent>.jsonl, names quoted), each
entry a line of its own, fsynced before commit() returns, under an exclusive lock that replay takes too. commit()
replays what is spooled for its tenant before its own session, so the order of commits is kept. A replay stops
at the first entry the server cannot take for want of a connection and keeps it and those after it; whatever
stops it, what was done leaves the file. What the database refuses goes to <agent>.rejected.jsonl with the
reason (a refused message alone, the rest of its session committed; a session refused whole, or a line cut
short, whole), and the rest goes on. memory.commit skips messages it has, so an entry replayed twice (a crash
between the commit and the rewrite of the file) stores nothing twice.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote, unquote

from agent_memory import results
from agent_memory.client import Memory
from agent_memory.errors import AgentMemoryError, ConnectionFailed, InvalidInput
from agent_memory.importers import REFUSED_MESSAGE

# The directory of entries committed without a tenant (the login's own): a name quoting never makes.
DEFAULT_TENANT = "%login"


def default_directory(environ: Mapping[str, str] = os.environ) -> Path:
    if environ.get("AGENT_MEMORY_SPOOL"):
        return Path(environ["AGENT_MEMORY_SPOOL"]).expanduser()
    state = Path(environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "agent-memory" / "spool"


@dataclass(frozen=True)
class Spooled:
    """A commit kept in the spool because the server was out of reach: the file, its entries now, and why."""

    path: Path
    entries: int
    reason: str


@dataclass(frozen=True)
class SpoolFile:
    """One agent's spool: its tenant (None: the login's own), agent, entries waiting, the oldest's time, and
    entries the database refused (kept aside with the reason)."""

    tenant: str | None
    agent_id: str
    entries: int
    oldest: datetime | None
    rejected: int
    path: Path


@dataclass(frozen=True)
class Replayed:
    """A replay: entries committed, turns they added, entries still waiting (the server went away), and what
    the database refused, set aside (entries, or messages of an entry committed without them)."""

    committed: int
    turns_added: int
    waiting: int
    rejected: int

    def __add__(self, other: Replayed) -> Replayed:
        return Replayed(*(a + b for a, b in zip(vars(self).values(), vars(other).values(), strict=True)))


def file_name(value: str) -> str:
    """A tenant's, agent's or session's name as a file name: quoted, dots too (no "..", no ".rejected"), never
    empty (the markdown copies of agent_memory.backup are named so too)."""
    return quote(value, safe="").replace(".", "%2E") or "%00"


def _append(file: IO[str], entry: Mapping[str, Any]) -> None:
    file.write(json.dumps(entry, ensure_ascii=False) + "\n")
    file.flush()
    os.fsync(file.fileno())


def _lines(path: Path) -> list[str]:
    """The entries of a file, one a line (split at newlines alone: JSON keeps other line breaks in strings)."""
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()] if path.exists() else []


def _ends_a_line(path: Path) -> bool:
    """Whether the file is empty or ends with a newline (not with a line a crash cut short)."""
    if not path.exists() or path.stat().st_size == 0:
        return True
    with path.open("rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


class Spool:
    """The spool in a directory (created with mode 0700: it holds conversations)."""

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_directory()

    def path(self, tenant: str | None, agent_id: str | None) -> Path:
        folder = file_name(tenant) if tenant else DEFAULT_TENANT
        return self.directory / folder / f"{file_name(agent_id or 'default')}.jsonl"

    @contextmanager
    def _locked(self, path: Path) -> Iterator[IO[str]]:
        """The file opened for appending, under an exclusive lock on its .lock file (never replaced, unlike the
        file a replay rewrites); its folders made, private, on first use."""
        created = not path.parent.exists()
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700, exist_ok=True)
        if created:
            self._sync_directory(path.parent.parent)
        with path.with_suffix(".lock").open("a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            with path.open("a", encoding="utf-8") as file:
                yield file

    @staticmethod
    def _sync_directory(directory: Path) -> None:
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def add(
        self, tenant: str | None, session_id: str, messages: Sequence[Mapping[str, Any]], options: Mapping[str, Any]
    ) -> int:
        """Appends one commit, fsynced; the entries its agent's file holds now."""
        path = self.path(tenant, options.get("agent_id"))
        entry: dict[str, Any] = {
            "spooled_at": datetime.now(UTC).isoformat(),
            "session_id": session_id,
            "messages": list(messages),
        }
        entry["options"] = {
            key: value.isoformat() if isinstance(value, datetime) else value
            for key, value in options.items()
            if value is not None
        }
        with self._locked(path) as file:
            if not _ends_a_line(path):  # a line cut short stays one bad line, apart from this entry
                file.write("\n")
            _append(file, entry)
            self._sync_directory(path.parent)
            return len(_lines(path))

    def commit(
        self,
        dsn: str,
        session_id: str,
        messages: Sequence[Mapping[str, Any]],
        *,
        tenant: str | None = None,
        **options: Any,
    ) -> results.Committed | Spooled:
        """memory.commit through a connection of its own, after what is spooled for the tenant; spooled instead
        when the server is out of reach."""
        try:
            with Memory(dsn, tenant=tenant, max_connections=1) as memory:
                if self.replay_tenant(memory, tenant).waiting == 0:
                    return memory.commit(session_id, list(messages), **options)
                reason = "the server went away during the replay"
        except ConnectionFailed as exc:
            reason = str(exc)
        entries = self.add(tenant, session_id, messages, options)
        return Spooled(self.path(tenant, options.get("agent_id")), entries, reason)

    def files(self) -> list[SpoolFile]:
        """Every agent's spool that holds entries or rejected ones, by tenant and agent."""
        found = []
        for path in sorted(self.directory.glob("*/*.jsonl")):
            if path.name.endswith(".rejected.jsonl"):
                continue
            lines = _lines(path)
            rejected = len(_lines(path.with_name(path.stem + ".rejected.jsonl")))
            if not lines and not rejected:
                continue
            try:
                oldest = datetime.fromisoformat(json.loads(lines[0])["spooled_at"]) if lines else None
            except (ValueError, KeyError, TypeError):  # a line cut short: replay sets it aside
                oldest = None
            tenant = None if path.parent.name == DEFAULT_TENANT else unquote(path.parent.name)
            found.append(SpoolFile(tenant, unquote(path.stem), len(lines), oldest, rejected, path))
        return found

    def replay(self, dsn: str) -> Replayed:
        """Every tenant's entries committed in order; a tenant whose server cannot be reached waits."""
        total = Replayed(0, 0, 0, 0)
        tenants = {file.tenant: file.path.parent for file in self.files() if file.entries}
        for tenant, folder in sorted(tenants.items(), key=lambda item: item[1]):
            try:
                with Memory(dsn, tenant=tenant, max_connections=1) as memory:
                    done = self.replay_tenant(memory, tenant)
            except ConnectionFailed:
                waiting = sum(file.entries for file in self.files() if file.path.parent == folder)
                done = Replayed(0, 0, waiting, 0)
            total += done
        return total

    def replay_tenant(self, memory: Memory, tenant: str | None) -> Replayed:
        """The tenant's entries, agent by agent, each file in order, through memory."""
        total = Replayed(0, 0, 0, 0)
        for path in sorted(self.path(tenant, "x").parent.glob("*.jsonl")):
            if not path.name.endswith(".rejected.jsonl"):
                done = self._replay_file(memory, path)
                total += done
        return total

    def _replay_file(self, memory: Memory, path: Path) -> Replayed:
        """The file's entries in order; what was done leaves the file whatever stops the replay (the server
        going away, a hook's time running out)."""
        committed = added = rejected = done = 0
        with self._locked(path):
            lines = _lines(path)
            try:
                for line in lines:
                    turns, set_aside, stored = self._replay_entry(memory, path, line)
                    committed, added, rejected, done = committed + stored, added + turns, rejected + set_aside, done + 1
            except ConnectionFailed:
                pass
            finally:
                self._rewrite(path, lines[done:])
        return Replayed(committed, added, len(lines) - done, rejected)

    def _replay_entry(self, memory: Memory, path: Path, line: str) -> tuple[int, int, int]:
        """Commits one entry: the turns it added, what was set aside (the entry refused whole, or each message
        refused alone: the rest is committed, as an import with --skip-invalid does), and 1 if it was committed."""
        aside = 0
        try:
            entry = json.loads(line)
            session_id, messages, options = entry["session_id"], list(entry["messages"]), dict(entry["options"])
            if "started_at" in options:
                options["started_at"] = datetime.fromisoformat(options["started_at"])
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self._set_aside(path, line, f"not a spool entry (cut short?): {exc!r}")
            return 0, 1, 0
        while True:
            try:
                return memory.commit(session_id, messages, **options).turns_added, aside, 1
            except ConnectionFailed:
                raise
            except AgentMemoryError as exc:  # refused: a message, the session (forgotten, say), the caller
                refused = REFUSED_MESSAGE.fullmatch(str(exc)) if isinstance(exc, InvalidInput) else None
                if refused is None or len(messages) < 2 or int(refused[1]) >= len(messages):
                    self._set_aside(path, line, str(exc))
                    return 0, aside + 1, 0
                aside += 1
                message = messages.pop(int(refused[1]))
                self._set_aside(path, json.dumps({"session_id": session_id, "message": message}), str(exc))

    @staticmethod
    def _set_aside(path: Path, line: str, reason: str) -> None:
        with path.with_name(path.stem + ".rejected.jsonl").open("a", encoding="utf-8") as aside:
            _append(aside, {"rejected_at": datetime.now(UTC).isoformat(), "reason": reason, "line": line})

    def _rewrite(self, path: Path, lines: list[str]) -> None:
        """The file holding just these lines, replaced whole (a crash leaves the old file or the new one)."""
        temporary = path.with_name(path.name + ".new")
        with temporary.open("w", encoding="utf-8") as file:
            file.write("".join(line + "\n" for line in lines))
            file.flush()
            os.fsync(file.fileno())
        temporary.replace(path)
        self._sync_directory(path.parent)
