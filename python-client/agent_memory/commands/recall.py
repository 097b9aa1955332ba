"""Recall: the turns and memories that answer a query, why they rank as they do, and context for a new
conversation or a task."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from agent_memory import results
from agent_memory.calls import EntityMode, Level, Tier, ToolStatus
from agent_memory.client import Memory
from agent_memory.commands import Args, Command, Option, Tool, answers, said, table
from agent_memory.errors import InvalidInput
from agent_memory.formatting import plain, print_json, print_table, ranks, signals

EVERY_AGENT = "only this agent's (default: every agent of the tenant)"
AGENT_FILTER = "only this agent's memory (default: the server's agent, else every agent)"

QUERY = Option("query", positional=True, tool="what to look for, in plain words", tool_type=str)
AGENT = Option("agent_id", EVERY_AGENT, tool=AGENT_FILTER)


def moment(name: str, help: str, tool: str | None = None) -> Option:
    """An option that is a time, ISO 8601 on the command line and in a tool's arguments."""
    return Option(name, help, type=datetime.fromisoformat, tool=tool, tool_type=datetime | None)


SINCE = moment("since", "only turns at or after (ISO 8601)", "only turns at or after this time (ISO 8601)")
UNTIL = moment("until", "only turns before (ISO 8601)", "only turns before this time (ISO 8601)")
SOURCE = Option("source", "only sessions from this source", tool="only sessions from this source, e.g. 'claude-code'")
ENTITIES = Option(
    "entities",
    "an entity the query is about, lifting turns that mention it (repeat for more)",
    repeat=True,
    metavar="ENTITY",
    tool="entities the query is about (names or aliases): turns mentioning them rank higher",
    tool_type=list[str] | None,
)
ENTITY_MODE = Option(
    "entity_mode",
    "all: only sessions that mention every one of --entities",
    choices=["any", "all"],
    tool="any: turns mentioning any of entities rank higher; all: only sessions mentioning all",
    tool_type=EntityMode,
    tool_default="any",
)
RUN = Option(
    "run_id",
    "only this run's sessions and memories",
    tool="only the sessions and memories of this run (one task or process)",
    tool_type=str | None,
)
FILTERS = (AGENT, SINCE, UNTIL, SOURCE, ENTITIES, ENTITY_MODE, RUN)
WEIGHTS = Option("weights", "per-call settings as JSON, e.g. '{\"weight_dense\": 0.8}'")
AS_OF = moment(
    "as_of", "what was said and held then (ISO 8601)", "answer with what was said and held at this time (ISO 8601)"
)
INCLUDE_ENDED = Option("include_ended", "superseded and retracted memories too", flag=True)
INTENT = Option("intent", "the memory kind the question asks for (default: found in its words); none: no routing")
TIERS = Option(
    "tiers",
    "a tier to search (repeat for more; default: hot and warm, the setting recall_tiers)",
    repeat=True,
    choices=["hot", "warm", "cold"],
    tool="the tiers to search (default hot and warm; cold: sessions and memories unused for long)",
    tool_type=list[Tier] | None,
)
TAGS = Option(
    "tags",
    "only curated memories with this tag (repeat for more)",
    repeat=True,
    metavar="TAG",
    tool="only curated memories with one of these tags",
    tool_type=list[str] | None,
)
TOOLS = Option(
    "tools",
    "only tool results of this tool (repeat for more)",
    repeat=True,
    metavar="TOOL",
    tool="only tool results of these tools (e.g. bash)",
    tool_type=list[str] | None,
)
TOOL_STATUSES = Option(
    "tool_statuses",
    "only tool results with this status (repeat for more)",
    repeat=True,
    choices=["success", "error", "timeout"],
    tool="only tool results with these statuses",
    tool_type=list[ToolStatus] | None,
)
ROUTING = (WEIGHTS, AS_OF, INCLUDE_ENDED, INTENT, TIERS, TAGS, TOOLS, TOOL_STATUSES)


def _checked(options: dict[str, Any]) -> None:
    if options.get("entity_mode") == "all" and not options.get("entities"):
        raise InvalidInput("entity_mode 'all' needs entities: the names every session must mention")


def _recall(name: str) -> Any:
    """memory.recall or explain_recall, with the entity mode checked and --weights read as JSON."""

    def call(memory: Memory, given: dict[str, Any]) -> Any:
        _checked(given)
        if isinstance(given.get("weights"), str):
            try:
                given["weights"] = json.loads(given["weights"])
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"--weights is not valid JSON: {exc}") from exc
        return getattr(memory, name)(given.pop("query"), **given)

    return call


def _show_candidates(args: Args, candidates: list[results.Candidate]) -> int:
    if args.json:
        print_json(candidates)
        return 0
    rows = [
        plain(candidate) | {"lists": ranks(candidate.components), "signals": signals(candidate.components)}
        for candidate in candidates
    ]
    columns = ["rank", "score", "fused", "lists", "kind", "turn_id", "session_id", "content", "signals"]
    print_table(rows, columns, {"content": 50, "signals": 60})
    return 0


def _context(empty: str) -> Any:
    def show(args: Args, context: Any) -> int:
        print_json(context.items) if args.json else print(context.text() or empty)
        return 0

    return show


BUDGET: dict[str, Any] = dict(
    tool="character budget (default: the setting)", tool_type=int | None, at_least=100, at_most=1000000
)


def _tuning(args: Args, tuning: results.WeightTuning) -> str:
    """What tune_weights did: why, the weights it moved, and what they order differently."""
    lines = [tuning.reason]
    for name, weight in (tuning.weights or {}).items():
        lines.append(f"  weight_{name}: {weight['before']:g} -> {weight['after']:.3g}")
    if tuning.ordered_before is not None and tuning.ordered_after is not None:
        lines.append(
            f"pairs ordered right: {tuning.ordered_before:.3f} -> {tuning.ordered_after:.3f} ({tuning.pairs} pairs from"
            f" {tuning.helpful_verdicts} helpful verdicts on {tuning.queries} queries)"
        )
        lines.append(
            f"queries whose first hit is helpful: {tuning.top_helpful_before} -> {tuning.top_helpful_after}"
            f" (first hit changed in {tuning.top_changed})"
        )
    return "\n".join(lines)


COMMANDS = (
    Command(
        "recall",
        "the turns and memories that best answer a query",
        (
            QUERY,
            Option(
                "k",
                "how many results (default 10)",
                type=int,
                default=10,
                tool="how many results",
                tool_type=int,
                tool_default=5,
                at_least=1,
                at_most=100,
            ),
            Option(
                "level",
                choices=["turn", "session"],
                default="turn",
                tool="turns, or the best turn per session",
                tool_type=Level,
            ),
            *FILTERS,
            *ROUTING,
        ),
        show=table(
            ["score", "kind", "turn_id", "session_id", "created_at", "speaker", "role", "content"],
            "nothing recalled",
            {"content": 70},
        ),
        call=_recall("recall"),
        tool=Tool(
            """The remembered conversation turns and curated memories that best answer the query, best first.
            Each hit has its turn_id (for give_feedback), session_id, speaker, time and content; a memory also
            its kind, memory_id and evidence_turn_ids. Questions about rules, preferences and decisions get those
            memories first. sessions holds the summary of each session once. Without a filter, hits also name
            their agent. Cold memory (sessions and memories unused for long) is searched only when tiers names
            it.""",
            "reads",
            answers.recalled,
            answers.Recalled,
        ),
    ),
    Command(
        "explain_recall",
        "the candidates of a recall with their ranks and signals",
        (
            QUERY,
            Option(
                "k",
                "how many candidates (default: every one)",
                type=int,
                tool="how many candidates",
                tool_type=int,
                tool_default=10,
                at_least=1,
                at_most=100,
            ),
            *FILTERS,
            *ROUTING,
        ),
        show=_show_candidates,
        call=_recall("explain_recall"),
        tool=Tool(
            """Why recall ranks turns as it does: the best candidates with their score, their rank in each
            list ('dense #1, lexical #4') and the signals that moved them ('session +2.00, trust -0.69').""",
            "reads",
            answers.explained,
            answers.Explanation,
        ),
    ),
    Command(
        "context_for_task",
        "the remembered turns most relevant to a task, within a budget, as Markdown",
        (
            Option("task", positional=True, tool="the task about to be done, in plain words", tool_type=str),
            Option("max_chars", "character budget (default: setting context_max_chars)", type=int, **BUDGET),
            Option(
                "k",
                "at most this many turns (default 20)",
                type=int,
                tool="at most this many turns (default 20)",
                tool_type=int | None,
                at_least=1,
                at_most=100,
            ),
            Option("agent_id", EVERY_AGENT, tool=AGENT_FILTER),
            RUN,
        ),
        show=_context("Nothing relevant is remembered."),
        tool=Tool(
            """The remembered turns most relevant to a task, best first, within a character budget, as
            Markdown: who said each, when, and in which session. For the start of a task.""",
            "reads",
            answers.text("Nothing relevant is remembered."),
            str,
        ),
    ),
    Command(
        "bootstrap",
        "context for a new conversation, within a budget",
        (
            Option("agent_id", "one agent (default: every agent of the tenant)"),
            Option("max_chars", "character budget (default: setting bootstrap_max_chars)", type=int, **BUDGET),
            Option("sessions", "how many recent sessions to draw on (default 5)", type=int),
            Option("run_id", "only this run's memories and sessions"),
        ),
        show=_context("(nothing to bootstrap from yet)"),
        tool=Tool(
            """What is already known, for the start of a conversation: remembered facts, open loops, decisions
            and summaries of recent sessions, as Markdown.""",
            "reads",
            answers.text("Nothing is remembered yet."),
            str,
        ),
    ),
    Command(
        "tune_weights",
        "fit recall's weights to this tenant's feedback (verdicts given with a query)",
        (
            Option("agent_id", "that agent's feedback, for its recalls (default: the whole tenant)"),
            Option("dry_run", "show what it would set, keep nothing", flag=True),
        ),
        show=said(_tuning),
    ),
    Command(
        "reset_tuned_weights",
        "go back to the weights in force without tuning",
        (Option("agent_id", "that agent's tuned weights (default: the tenant's)"),),
        show=said(lambda args, removed: "tuned weights removed" if removed else "no tuned weights to remove"),
    ),
)
