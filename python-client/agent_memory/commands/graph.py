"""The knowledge graph: the entities conversations mention, what is mentioned together, and what holds for
an entity over time."""

from __future__ import annotations

import json
from typing import Any, get_args

from agent_memory import results
from agent_memory.commands import Args, Command, Option, Tool, answers, said, table
from agent_memory.commands.recall import AGENT_FILTER, EVERY_AGENT, moment

TYPES = get_args(results.EntityType)
ENTITY = Option(
    "entity",
    "the entity's name or an alias",
    positional=True,
    tool="the entity's name or an alias, e.g. 'Postgres' or 'Ana'",
    tool_type=str,
)
AGENT = Option("agent_id", EVERY_AGENT, tool=AGENT_FILTER)
WHEN_TRUE = "when it became true (ISO 8601; default: now)"
K: dict[str, Any] = dict(type=int, tool="how many entities", tool_type=int, tool_default=20, at_least=1, at_most=100)


def _json_or_text(text: str) -> Any:
    """A value on the command line: JSON (42, true, [1, 2], {"a": 1}, "text"), else the text itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _no_state(args: Args) -> str:
    return f"no state recorded for {args.entity}" + (f" at {args.as_of.isoformat()}" if args.as_of else "")


def _recorded(args: Args, recorded: results.StateRecorded) -> str:
    until = f" until {recorded.valid_to.isoformat()}" if recorded.valid_to else ""
    return f"{args.entity}.{args.attribute} recorded from {recorded.valid_from.isoformat()}{until}"


COMMANDS: tuple[Command, ...] = (
    Command(
        "list_entities",
        "the people, projects, tools and more that turns mention",
        (
            Option(
                "search",
                "a name or part of one (fuzzy, over names and aliases)",
                positional=True,
                optional=True,
                tool="a name or part of one; matches names and aliases loosely",
            ),
            Option(
                "type",
                f"one of {', '.join(TYPES)}",
                choices=TYPES,
                metavar="TYPE",
                tool="only entities of this type",
                tool_type=results.EntityType | None,
            ),
            AGENT,
            Option("k", "how many (default 50)", **K),
        ),
        show=table(
            ["name", "type", "mentions", "sessions", "last_mentioned_at", "aliases"],
            lambda args: "no entities found" if args.search or args.type else "no entities yet",
            {"aliases": 50},
            rows=lambda entity: {"aliases": ", ".join(entity.aliases)},
            scoped=True,
        ),
        tool=Tool(
            """The people, projects, tools, places and other entities the conversations mention, best match for
            the search first (without one, all of them): each with its type, how often and in how many sessions
            it is mentioned, when last, and its aliases. Without a filter, entities also name their agent.""",
            "reads",
            answers.entities,
            dict[str, list[answers.Entity]],
        ),
    ),
    Command(
        "entity_neighbors",
        "the entities mentioned together with one",
        (
            ENTITY,
            Option(
                "depth",
                "how many steps away, 1-5 (default 1)",
                type=int,
                tool="how many steps away to look",
                tool_type=int,
                tool_default=1,
                at_least=1,
                at_most=5,
            ),
            Option("k", "how many (default 20)", **K),
            AGENT,
        ),
        show=table(
            ["distance", "name", "type", "turns", "path"],
            lambda args: f"nothing is mentioned with {args.entity}",
            {"path": 80},
            rows=lambda neighbor: {"path": " → ".join(neighbor.path)},
            scoped=True,
        ),
        tool=Tool(
            """The entities mentioned in the same turns as an entity, nearest first, then by how many turns
            mention them together. With depth above 1 also the entities mentioned with those, each with the path
            of names that reaches it.""",
            "reads",
            answers.neighbors,
            dict[str, list[answers.Neighbor]],
        ),
    ),
    Command(
        "entity_state",
        "what holds for an entity: its attributes' values, now or then",
        (
            ENTITY,
            moment(
                "as_of",
                "the values that held then (ISO 8601)",
                "the values that held at this time (ISO 8601; default: now)",
            ),
            Option("attribute", "one attribute", tool="only this attribute"),
            AGENT,
        ),
        show=table(
            ["attribute", "value", "valid_from", "valid_to"],
            _no_state,
            {"value": 60},
            rows=lambda state: {"value": json.dumps(state.value, ensure_ascii=False)},
            scoped=True,
        ),
        tool=Tool(
            """What holds for an entity: each attribute's value now (or at as_of) and since when, as recorded
            with set_entity_state. Empty when nothing is recorded for it.""",
            "reads",
            answers.states,
            dict[str, list[answers.State]],
        ),
    ),
    Command(
        "set_entity_state",
        "record an attribute's value for an entity from now (or --valid-from) on",
        (
            ENTITY,
            Option(
                "attribute",
                positional=True,
                tool="what the value is of, e.g. 'database', 'role', 'owner'",
                tool_type=str,
            ),
            Option(
                "value",
                'the value: JSON (42, true, ["a"]), else the text as it is',
                positional=True,
                type=_json_or_text,
                tool="the value: a string, number, boolean, list or object",
                tool_type=Any,
            ),
            moment("valid_from", WHEN_TRUE, WHEN_TRUE),
            Option("agent_id", "the agent (default: 'default')"),
            Option(
                "type",
                "the entity's type, if it is new (default: other)",
                choices=TYPES,
                metavar="TYPE",
                tool="the entity's type, if it is new (default: other)",
                tool_type=results.EntityType | None,
            ),
        ),
        show=said(_recorded),
        tool=Tool(
            """Records that an attribute of an entity has a value from now (or from valid_from) on, e.g. that
            the billing service's database is Postgres. The earlier value is kept as history and ends there; a
            value at the same valid_from replaces (corrects) the one recorded there.""",
            "adds",
            answers.recorded,
            answers.Recorded,
        ),
    ),
)
