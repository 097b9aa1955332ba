"""What gets indexed for a turn: noise filtering, chunking, and context from preceding turns.

A chunk holds a turn's own words; its context (the preceding indexed turns) travels beside it as a
separate field, so that recall can weigh a turn's own words above the words of the turn before it.

Pure functions over plain dicts so they are tested without a database.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory_db import sentences

CONFIRMATIONS = frozenset(
    [
        "ok",
        "okay",
        "k",
        "kk",
        "yes",
        "yep",
        "yeah",
        "no",
        "nope",
        "thanks",
        "thank",
        "you",
        "thx",
        "ty",
        "cool",
        "great",
        "nice",
        "got",
        "it",
        "sure",
        "sounds",
        "good",
        "perfect",
        "done",
        "noted",
        "understood",
        "alright",
        "right",
        "np",
        "lgtm",
        "ack",
    ]
)
HEARTBEAT = re.compile(r"^\s*(\[?heartbeat\]?|ping|pong|HEARTBEAT_OK|keep-?alive)\b", re.IGNORECASE)
SLASH_COMMAND = re.compile(r"^\s*/[a-z][\w-]*(\s|$)", re.IGNORECASE)


@dataclass(frozen=True)
class IndexPolicy:
    roles: frozenset[str] = frozenset({"user", "assistant", "tool"})
    context_turns: int = 1
    min_chars: int = 12
    chunk_chars: int = 1500
    max_chunks: int = 16
    # Each turn a claim of its own (the words of curated memories): indexed whatever its length or form,
    # without the turns before it as context.
    claims: bool = False

    @property
    def max_chars(self) -> int:
        """Indexing reads this many characters of a turn at most: max_chunks chunks' worth."""
        return self.max_chunks * self.chunk_chars


@dataclass(frozen=True)
class Chunk:
    turn_id: int
    chunk_no: int
    text: str
    context: str = ""
    context_turn_id: int | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def is_noise(text: str, min_chars: int) -> bool:
    """Slash commands, bare confirmations, heartbeat lines and very short turns carry no memory."""
    stripped = text.strip()
    if SLASH_COMMAND.match(stripped) or HEARTBEAT.match(stripped):
        return True
    words = re.sub(r"[^\w\s]", " ", stripped.lower()).split()
    if words and all(word in CONFIRMATIONS for word in words):
        return True
    return len(stripped) < min_chars


def _fitting(text: str, start: int, end: int, chunk_chars: int) -> list[tuple[int, int]]:
    """A span cut into pieces of at most chunk_chars: at the last line break, else the last space, in the
    second half of the limit, else hard."""
    pieces = []
    while end - start > chunk_chars:
        limit = start + chunk_chars
        cut = text.rfind("\n", start + chunk_chars // 2, limit)
        if cut < 0:
            cut = text.rfind(" ", start + chunk_chars // 2, limit)
        cut = cut + 1 if cut > start else limit
        pieces.append((start, cut))
        start = cut
    pieces.append((start, end))
    return pieces


def split_chunks(text: str, chunk_chars: int) -> list[str]:
    """Splits between sentences and code blocks (sentences.py), cutting inside one only when it is longer
    than a chunk; a chunk keeps the text between its sentences as written."""
    text = text.strip()
    if len(text) <= chunk_chars:
        return [text]
    chunks: list[str] = []
    first = last = -1
    for span in sentences.spans(text):
        for start, end in _fitting(text, span.start, span.end, chunk_chars):
            if first >= 0 and end - first > chunk_chars:
                chunks.append(text[first:last].strip())
                first = -1
            if first < 0:
                first = start
            last = end
    if first >= 0:
        chunks.append(text[first:last].strip())
    return [chunk for chunk in chunks if chunk]


def _argument_text(value: object) -> str:
    if isinstance(value, dict):
        return " ".join(f"{key}: {_argument_text(item)}" for key, item in value.items())
    if isinstance(value, list):
        return " ".join(_argument_text(item) for item in value)
    return "" if value is None else str(value)


def tool_call_text(tool_calls: object) -> str:
    """The tool calls of a turn as text to index, one line each: the tool's name, then each argument's name
    and value (a command, a path, a query). Takes OpenAI's shape ({function: {name, arguments: JSON
    text}}) and the plain one ({name, arguments or input: object})."""
    lines = []
    for call in tool_calls if isinstance(tool_calls, list) else []:
        if not isinstance(call, dict):
            continue
        function = call["function"] if isinstance(call.get("function"), dict) else call
        arguments = function.get("arguments", function.get("input"))
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments)
        lines.append(f"{function.get('name') or ''} {_argument_text(arguments)}".strip())
    return "\n".join(line for line in lines if line)


def indexed_text(turn: dict) -> str:
    """What is indexed of a turn: its content, then its tool calls."""
    calls = tool_call_text(turn.get("tool_calls"))
    return f"{turn['content']}\n{calls}".strip() if calls else turn["content"]


def index_chunks(turns: Sequence[dict], policy: IndexPolicy) -> list[Chunk]:
    """Chunks to index for the turns of one session, given in order as dicts with turn_id, role, content
    and tool_calls. A turn's first chunk carries the previous `context_turns` indexable turns as its context
    (a turn alone often lacks the words of the question it answers) and the key of the turn just before
    it. Only the first policy.max_chars characters of a turn are indexed."""
    chunks: list[Chunk] = []
    context: list[tuple[int, str]] = []
    for turn in turns:
        own = indexed_text(turn)
        if turn["role"] not in policy.roles or (not policy.claims and is_noise(own, policy.min_chars)):
            continue
        recent = context[-policy.context_turns :] if policy.context_turns > 0 and not policy.claims else []
        prefix = "\n".join(text for _, text in recent)
        before = recent[-1][0] if recent else None
        for number, piece in enumerate(split_chunks(own[: policy.max_chars], policy.chunk_chars)):
            if number == 0:
                chunks.append(Chunk(turn["turn_id"], number, piece, prefix, before))
            else:
                chunks.append(Chunk(turn["turn_id"], number, piece))
        context.append((turn["turn_id"], own.strip()[: policy.chunk_chars]))
    return chunks


def policy_from_settings(settings: dict, claims: bool = False) -> IndexPolicy:
    return IndexPolicy(
        claims=claims,
        roles=frozenset(settings["index_roles"]),
        context_turns=int(settings["index_context_turns"]),
        min_chars=int(settings["index_min_chars"]),
        chunk_chars=int(settings["chunk_chars"]),
        max_chunks=int(settings["index_max_chunks"]),
    )
