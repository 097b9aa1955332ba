"""Curated memory: remembering facts, preferences, rules, decisions and tasks, reading what holds, and moving
a memory through its statuses."""

from __future__ import annotations

from typing import get_args

from agent_memory import results
from agent_memory.calls import Kind
from agent_memory.commands import Args, Command, Option, Tool, answers, said, table
from agent_memory.commands.recall import EVERY_AGENT, moment
from agent_memory.formatting import print_json, print_table

KINDS = ", ".join(get_args(Kind))
AS_OF = moment("as_of", "what held then (ISO 8601)", "what held at this time (ISO 8601)")
REMEMBERED = {
    "created": "remembered",
    "updated": "remembered, replacing memory {supersedes}",
    "unchanged": "already remembered",
    "merged": "a paraphrase of what is remembered",
}
MEMORIES = table(
    ["memory_id", "kind", "key", "status", "importance", "valid_from", "content"],
    "no memories found",
    {"content": 60},
    scoped=True,
)


def _remembered(args: Args, result: results.Remembered) -> str:
    said = REMEMBERED[result.outcome].format(supersedes=result.supersedes)
    return f"{said} as memory {result.memory_id} (turn {result.turn_id})"


# The columns a query's rows are shown in, by what it lists.
QUERY_COLUMNS = {
    "memories": ["memory_id", "kind", "status", "importance", "valid_from", "content"],
    "sessions": ["session_id", "started_at", "turns", "summary"],
    "turns": ["turn_id", "session_id", "role", "created_at", "content"],
    "tool_executions": ["called_at", "tool", "status", "duration_ms", "result"],
}


def _queried(args: Args, answer: results.QueryAnswer) -> int:
    """A request as read (each phrase and what it set, the words not understood), the SQL with --sql or
    --explain, then the rows."""
    if args.json:
        print_json(answer)
        return 0
    for phrase in answer.understood:
        print(f"{phrase['words']!r}: {phrase['as']}")
    if answer.not_understood:
        print("not understood: " + ", ".join(answer.not_understood))
    if args.sql or args.explain:
        print(answer.sql)
    if answer.rows is not None:
        print()
        rows = answer.rows
        if not rows:
            print(f"no {answer.filters['target']} found")
        else:
            columns = QUERY_COLUMNS[answer.filters["target"]]
            several = len({row["agent_id"] for row in rows}) > 1
            print_table(
                rows, ["agent_id", *columns] if several else columns, {"content": 60, "summary": 60, "result": 60}
            )
    return 0


def _moved(args: Args, moved: results.MemoryItem) -> str:
    return f"memory {moved.memory_id}: {moved.status}"


def _shared(args: Args, memory: results.MemoryItem) -> str:
    whose = "shared with every agent" if memory.shared else f"{memory.agent_id}'s alone"
    return f"memory {memory.memory_id}: {whose}"


def _move(name: str, help: str, doc: str) -> Command:
    return Command(
        name,
        help,
        (Option("memory_id", positional=True, type=int, tool="the memory's memory_id", tool_type=int),),
        show=said(_moved),
        tool=Tool(doc, "judges", answers.memory, answers.MemoryShown, agent=None),
    )


COMMANDS: tuple[Command, ...] = (
    Command(
        "remember",
        "keep a fact, preference, rule, decision or task",
        (
            Option(
                "content",
                positional=True,
                tool="the fact, preference, rule, decision or task, in one sentence",
                tool_type=str,
            ),
            Option(
                "kind",
                f"one of {KINDS} (default fact)",
                tool="what kind of memory it is",
                tool_type=Kind,
                tool_default="fact",
            ),
            Option("agent_id", "the agent (default: 'default')"),
            Option(
                "key",
                "a stable key: a new claim under it replaces the current one",
                tool="a stable name for what it is about, e.g. 'deploy.day': a new claim replaces the old",
            ),
            Option("subjects", "an entity it is about (repeatable)", repeat=True, metavar="SUBJECT"),
            Option("tags", "a tag (repeatable)", repeat=True, metavar="TAG"),
            Option(
                "importance",
                "0 to 1 (default 0.5)",
                type=float,
                tool="how much it matters",
                tool_type=float,
                tool_default=0.5,
                at_least=0,
                at_most=1,
            ),
            Option("status", "ongoing: work in progress; pending: to review", choices=["active", "ongoing", "pending"]),
            Option(
                "shared",
                "share it with every agent of the tenant",
                flag=True,
                tool="true: every agent of the fleet sees it too (default: you alone)",
                tool_type=bool | None,
            ),
            Option("run_id", "the run (one task or process) it is remembered in"),
        ),
        show=said(_remembered),
        tool=Tool(
            """Keeps something worth knowing in later conversations; it can be recalled at once. The same claim
            again, or a paraphrase of one held, changes nothing; a new claim under a key replaces the current
            one, which is kept as history. Answers with its memory_id, the outcome (created, updated, unchanged
            or merged) and, when it replaced one, supersedes.""",
            "adds",
            answers.remembered,
            dict[str, int | str],
        ),
    ),
    Command(
        "list_memories",
        "the memories that hold now (or then), most important first",
        (
            Option(
                "search",
                "words the content contains (any case)",
                positional=True,
                optional=True,
                tool="words the memory contains",
            ),
            Option("kind", f"one of {KINDS}", tool="only memories of this kind", tool_type=Kind | None),
            Option("agent_id", EVERY_AGENT),
            Option("subject", "memories about this entity"),
            Option("tag", "memories with this tag"),
            Option(
                "status",
                "active, ongoing, resolved, superseded, retracted or pending (not with --as-of)",
                tool="only memories of this status, e.g. pending: proposed from the conversation, to review",
                tool_type=results.MemoryStatus | None,
            ),
            AS_OF,
            Option(
                "k",
                "how many (default 100)",
                type=int,
                tool="how many memories",
                tool_type=int,
                tool_default=20,
                at_least=1,
                at_most=100,
            ),
            Option("run_id", "those remembered in this run"),
        ),
        show=MEMORIES,
        tool=Tool(
            """The remembered facts, preferences, rules, decisions and tasks that hold now (or held at as_of,
            or have one status), most important first: each with its memory_id, kind, key, status and since
            when.""",
            "reads",
            answers.memories,
            dict[str, list[answers.MemoryShown]],
        ),
    ),
    Command(
        "query",
        "memories, sessions, turns or tool calls a request in plain words asks for, e.g. 'top 10 recent decisions'",
        (
            Option(
                "request",
                positional=True,
                tool="what to list, in plain words: e.g. 'top 10 recent decisions', 'observations tagged docker "
                "and error', 'high-importance unresolved tasks from last week', 'user messages mentioning Redis'",
                tool_type=str,
            ),
            Option("agent_id", "the agent when the request names none (default: every agent)"),
            Option("explain", "show how the request is read and its SQL, without running it", flag=True),
            Option("sql", "show the SQL it runs", flag=True),
            Option("llm", "have the chat endpoint read the request (setting query_reader llm)", flag=True),
        ),
        show=_queried,
        call=lambda memory, options: memory.query(**{k: v for k, v in options.items() if k != "sql"}),
        tool=Tool(
            """Lists memories, sessions, turns or tool calls as a request in plain words asks: kinds (decisions, tasks,
            observations ...), statuses (unresolved, done), importance (high-importance), tags ("tagged docker
            and error"), "about X", "mentioning X", roles ("user messages"), tool calls by tool, status and
            duration ("failed bash calls", "slowest tool calls"), an agent, a period ("last week", "since
            March"), an order ("recent", "oldest") and a number ("top 10"). Answers with the filters it read,
            the words it did not understand, and the rows.""",
            "reads",
            answers.queried,
            answers.Queried,
        ),
    ),
    Command(
        "memory_history",
        "every version of a memory's claim, oldest first, whatever their status",
        (Option("memory_id", positional=True, type=int),),
        show=MEMORIES,
    ),
    Command(
        "get",
        "the memory held under a key, now or then (one per agent that holds it)",
        (
            Option(
                "key",
                positional=True,
                tool="the key a memory was remembered under, e.g. 'deploy.day'",
                tool_type=str,
            ),
            Option("agent_id", EVERY_AGENT),
            AS_OF,
        ),
        show=MEMORIES,
        tool=Tool(
            """The memory held under a key now (or at as_of): its memory_id, kind, content, status and since
            when.""",
            "reads",
            answers.memories,
            dict[str, list[answers.MemoryShown]],
        ),
    ),
    Command(
        "share",
        "share a memory with every agent of the tenant (--unshare: keep it to its agent)",
        (
            Option("memory_id", positional=True, type=int, tool="the memory's memory_id", tool_type=int),
            Option("unshare", "keep it to its agent again", flag=True),
        ),
        call=lambda memory, given: memory.share(given["memory_id"], shared=not given.get("unshare")),
        show=said(_shared),
        tool=Tool(
            """Shares a memory with every agent of the fleet: their recall and bootstrap include it, marked
            with who shared it.""",
            "judges",
            answers.memory,
            answers.MemoryShown,
            agent=None,
        ),
    ),
    _move(
        "resolve",
        "mark a memory resolved (a task done)",
        "Marks a task done or a question settled: the memory stops holding now and is kept as history.",
    ),
    _move(
        "retract",
        "mark a memory never true (or reject a proposal)",
        "Marks a memory as never true (a mistake), or rejects a proposed one: recall leaves it out.",
    ),
    _move(
        "approve",
        "approve a memory enrichment proposed (status pending)",
        """Approves a memory proposed from the conversation for review (status pending): it holds from now on
        and is recalled.""",
    ),
)
