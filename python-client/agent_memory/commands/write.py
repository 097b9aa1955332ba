"""Writing: committing a conversation, and judging what recall returned."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, get_args

from agent_memory import importers, results
from agent_memory.client import Memory
from agent_memory.commands import Args, Command, Option, Tool, answers, said
from agent_memory.errors import InvalidInput

AGENT_WRITES = "the agent (default: 'default')"
ENRICH = Option("enrich", "enrichment (default: setting enrich)", choices=["queue", "now", "none"])


def _messages(path: str) -> Any:
    text = sys.stdin.read() if path == "-" else importers.read_text(Path(path))
    return importers.parse_json(text, "stdin" if path == "-" else path)


def _commit(memory: Memory, given: dict[str, Any]) -> results.Committed:
    """The messages as the tool gives them, or read from the command line's file (or stdin): a JSON array,
    or an object with "messages" and the session's source, model and metadata."""
    session_id, path = given.pop("session_id"), given.pop("file", None)
    data = given.pop("messages") if path is None else _messages(path)
    if isinstance(data, dict):
        given = {key: data[key] for key in ("source", "model", "metadata") if key in data} | given
        data = data.get("messages")
    if not isinstance(data, list):
        raise InvalidInput('the input must be a JSON array of messages or an object with "messages"')
    return memory.commit(session_id, data, **given)


def _judged(args: Args, result: results.Feedback) -> str:
    target = next(name for name in ("turn_id", "memory_id", "session_id") if getattr(args, name) is not None)
    said = result.effect if result.counted else f"not counted again: {result.effect}"
    return f"{target.removesuffix('_id')} {getattr(args, target)}: {result.verdict}, {said}"


COMMANDS = (
    Command(
        "commit",
        "commit a session's messages from a JSON file (or - for stdin)",
        (
            Option(
                "session_id", positional=True, tool="the conversation's id; commit it again as it grows", tool_type=str
            ),
            Option("file", "JSON array of messages, or {messages: [...]}", positional=True, optional=True, default="-"),
            Option(
                "messages",
                positional=True,
                cli=False,
                tool="the conversation's messages, oldest first",
                tool_type="messages",
            ),
            Option("agent_id", AGENT_WRITES),
            Option("source", "where the conversation comes from"),
            Option(
                "run_id",
                "the run (one task or process) the session belongs to",
                tool="the run (one task or process) this conversation belongs to",
                tool_type=str | None,
            ),
            ENRICH,
        ),
        show=said(
            lambda args, committed: (
                f"{args.session_id}: {'new session' if committed.created else 'existing session'}, "
                f"{committed.turns_added} turns added"
            )
        ),
        call=_commit,
        tool=Tool(
            """Stores a conversation's messages; messages already stored are skipped. Its turns can be recalled
            once they are enriched: at once, or after a worker ran when enrichment is queued.""",
            "adds",
            answers.committed,
            answers.Committed,
        ),
    ),
    Command(
        "give_feedback",
        "judge a recalled turn, a memory or a session (moves trust)",
        (
            Option(
                "verdict",
                positional=True,
                choices=get_args(results.Verdict),
                tool="helpful; unhelpful; incorrect (it is wrong); stale (it was true, no longer)",
                tool_type=results.Verdict,
            ),
            Option(
                "turn_id",
                "the turn judged",
                type=int,
                one_of="judged",
                tool="the turn_id of a recalled hit",
                tool_type=int | None,
            ),
            Option(
                "memory_id",
                "the memory judged",
                type=int,
                one_of="judged",
                tool="or: the memory_id of a recalled memory",
                tool_type=int | None,
            ),
            Option("session_id", "the session judged", one_of="judged", tool="or: a whole session"),
            Option("judged_by", "the agent judging (its repeats are not counted twice)"),
            Option("query", "the query it was recalled for", tool="the query it was recalled for"),
            Option("note", "why"),
        ),
        show=said(_judged),
        tool=Tool(
            """Judges a recalled turn, a memory or a whole session; what misled ranks lower from now on, what
            helped higher. A memory called incorrect by enough judges is retracted; a stale one matters less.
            Answers with what the verdict did, and the trust before and after for a turn or memory.""",
            "judges",
            answers.judged,
            dict[str, str | bool | float],
            agent="judged_by",
        ),
    ),
)
