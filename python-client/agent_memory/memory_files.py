"""A reader of markdown memory files into curated memories (`agent-memory import markdown`): the notes agents
and people keep as markdown (pg-memory's legacy memory files, a MEMORY.md), one memory per list item.

- Each list item (-, *, + or 1.) is a memory; the lines after it continue it up to a blank line, a heading or the
  next item. Other text (paragraphs, code blocks, horizontal rules) is not read.
- A heading that names a kind (Facts, Preferences, Rules, Decisions, Skills, Events, Observations, Tasks, To do,
  Todos) gives the items under it that kind; any other heading but the first level's (the file's title) is a
  subject of the items under it, until a heading of its level or higher. Items under no kind heading are facts.
- "- [ ] ..." is an open task and "- [x] ..." a task done (remembered, then resolved).
- A date opening an item ("2024-03-01: ...", "[2024-03-01] ...", "2024-03-01 - ...") or a heading that is a
  date ("## 2024-03-01") is when the memory began to hold.
- Words written as #tags are its tags (the words stay as they are written).

Reading checks every file before anything is remembered: an empty item or a date that does not exist is an
ImportProblem naming the file and line. Remembering is idempotent: the same claim is the same memory, and a claim
the agent once held and that has ended (a task resolved, a memory retracted) is not remembered again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory.importers import ImportProblem, Unreadable, read_text

if TYPE_CHECKING:
    from agent_memory.calls import Enrich
    from agent_memory.client import Memory
    from agent_memory.results import MemoryStatus

KIND_HEADINGS = {
    "fact": ("facts", "fact", "notes", "knowledge"),
    "preference": ("preferences", "preference", "likes"),
    "rule": ("rules", "rule", "conventions", "guidelines"),
    "decision": ("decisions", "decision"),
    "skill": ("skills", "skill", "how to", "how-to", "lessons", "lessons learned"),
    "event": ("events", "event", "history", "timeline"),
    "observation": ("observations", "observation"),
    "task": ("tasks", "task", "to do", "todo", "todos", "to-do", "open tasks"),
}
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
CHECKBOX = re.compile(r"^\[( |x|X)\]\s*(.*)$")
DATE_START = re.compile(r"^\[?(\d{4}-\d{1,2}-\d{1,2})\]?\s*(?::|-|\u2013|\u2014)?\s*(.*)$", re.DOTALL)  # - or dashes
ISO_DATE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")
TAG = re.compile(r"(?<![\w&/#(])#([^\W\d_][\w-]*)")  # not a link's #anchor
RULE = re.compile(r"^\s*([-*_])(?:\s*\1){2,}\s*$")  # a horizontal rule, "* * *" or "---"


@dataclass
class Item:
    """One memory as read: its words, kind, subjects, tags, when it began to hold, whether it is a task done,
    and where it was read."""

    content: str
    kind: str
    path: str
    line: int
    subjects: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    valid_from: datetime | None = None
    done: bool = False


def _kind(heading: str) -> str | None:
    words = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return next((kind for kind, names in KIND_HEADINGS.items() if words in names), None)


def _date(text: str, path: str, line: int) -> datetime:
    try:
        year, month, day = (int(part) for part in text.split("-"))
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        raise ImportProblem(path, line, f"no such date {text}") from None


class _Context:
    """The headings above a line: each level's kind, subject or date."""

    def __init__(self) -> None:
        self.levels: dict[int, tuple[str, str]] = {}  # level -> ("kind" | "subject" | "date", value)

    def enter(self, level: int, heading: str, path: str, line: int) -> None:
        self.levels = {lvl: found for lvl, found in self.levels.items() if lvl < level}
        if ISO_DATE.match(heading):
            self.levels[level] = ("date", _date(heading, path, line).isoformat())
        elif kind := _kind(heading):
            self.levels[level] = ("kind", kind)
        elif heading and level > 1:  # a first-level heading titles the file
            self.levels[level] = ("subject", heading)

    def last(self, what: str) -> str | None:
        found = [value for _, (kind, value) in sorted(self.levels.items()) if kind == what]
        return found[-1] if found else None

    def subjects(self) -> list[str]:
        return [value for _, (kind, value) in sorted(self.levels.items()) if kind == "subject"]


def _item(words: str, context: _Context, path: str, line: int) -> Item:
    checkbox = CHECKBOX.match(words)
    done = bool(checkbox and checkbox[1] != " ")
    words = checkbox[2] if checkbox else words
    heading_date = context.last("date")
    valid_from = datetime.fromisoformat(heading_date) if heading_date else None
    dated = DATE_START.match(words)
    if dated:
        valid_from, words = _date(dated[1], path, line), dated[2]
    content = " ".join(words.split())
    if not content:
        raise ImportProblem(path, line, "is an empty item")
    kind = "task" if checkbox else context.last("kind") or "fact"
    tags = list(dict.fromkeys(TAG.findall(content)))
    return Item(content, kind, path, line, context.subjects(), tags, valid_from, done)


def read_file(path: Path) -> tuple[list[Item], list[ImportProblem]]:
    """The items of one markdown file, and the problems of the lines that could not be read."""
    items: list[Item] = []
    problems: list[ImportProblem] = []
    context = _Context()
    open_item: tuple[int, int, list[str]] | None = None  # (line, indent, words)

    def close() -> None:
        if open_item is not None:
            try:
                items.append(_item(" ".join(open_item[2]), context, str(path), open_item[0]))
            except ImportProblem as exc:
                problems.append(exc)

    in_code = False
    for number, text in enumerate(read_text(path).splitlines(), start=1):
        if text.lstrip().startswith("```"):
            in_code = not in_code
            continue
        ruled = RULE.match(text)
        heading, item = (None, None) if in_code or ruled else (HEADING.match(text), ITEM.match(text))
        if heading or item or in_code or ruled or not text.strip():
            close()
            open_item = None
        if heading:
            try:
                context.enter(len(heading[1]), heading[2], str(path), number)
            except ImportProblem as exc:
                problems.append(exc)
        elif item:
            open_item = (number, len(item[1]), [item[2]])
        elif open_item is not None and text.strip():  # indented or not, the next line goes on with the item
            open_item[2].append(text.strip())
    close()
    return items, problems


def read(paths: Iterable[Path]) -> tuple[list[Item], list[ImportProblem]]:
    """The items of markdown files (a directory: its *.md files), and the problems found."""
    items: list[Item] = []
    problems: list[ImportProblem] = []
    for given in paths:
        files = sorted(given.rglob("*.md")) if given.is_dir() else [given]
        for path in files:
            try:
                found, wrong = read_file(path)
            except ImportProblem as exc:  # not readable, or not UTF-8
                problems.append(exc)
                continue
            items += found
            problems += wrong
        if given.is_dir() and not files:
            problems.append(Unreadable(str(given), 0, "holds no .md file"))
    return items, problems


# The statuses in which a claim is not held (any more, or yet).
ENDED: tuple[MemoryStatus, ...] = ("resolved", "superseded", "retracted", "pending")


def remember(memory: Memory, items: list[Item], agent_id: str | None, enrich: Enrich | None) -> dict[str, int]:
    """Remembers the items in order: how many were created, already there, and tasks resolved. A claim the
    agent once held and that ended (a task resolved, a memory retracted or superseded) or that waits for review
    is there already: importing the file again does not bring it back."""
    counts = {"created": 0, "unchanged": 0, "resolved": 0}
    ended = {
        (held.kind, held.content)
        for status in ENDED
        for held in memory.list_memories(agent_id=agent_id or "default", status=status, k=1_000_000)
    }
    for item in items:
        if (item.kind, item.content) in ended:
            counts["unchanged"] += 1
            continue
        options: dict[str, Any] = {"kind": item.kind, "subjects": item.subjects, "tags": item.tags}
        options["metadata"] = {"imported_from": f"{Path(item.path).name}:{item.line}"}
        kept = memory.remember(item.content, agent_id=agent_id, valid_from=item.valid_from, enrich=enrich, **options)
        counts["created" if kept.outcome in ("created", "updated") else "unchanged"] += 1
        if item.done and kept.status in ("active", "ongoing"):
            memory.resolve(kept.memory_id)
            counts["resolved"] += 1
    return counts
