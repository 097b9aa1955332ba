"""Each method of the API declared once, for the command line and the MCP server both.

A Command is one SQL function (and Memory method) of that name: its options are the function's arguments,
with their help for people; a tool is the same call offered to a model, with the description and answer a
model needs. agent_memory.cli builds the `agent-memory` parser from these declarations and
agent_memory.mcp_server the MCP tools, so a name, an option or a default is written in one place. One module
per command group (recall, write, curated, graph, lifecycle, operations) holds them; COMMANDS lists them in
the order `agent-memory --help` shows them.

A command that does more than one call (a local server, an import, a loop) gives its own main(args).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from agent_memory.client import Memory
from agent_memory.formatting import plain, print_json, print_record, print_table
from agent_memory.localdb import Home, LocalServer, find_home

Effect = Literal["reads", "adds", "judges", "deletes"]
Args = argparse.Namespace


@dataclass(frozen=True)
class Option:
    """One argument of a function: how the command line takes it and, with tool set, how a tool does.

    type converts the command line's text (int, float, datetime.fromisoformat, or a checking function);
    choices, repeat (the option given once per value) and flag (present or not) shape it further; cli False
    keeps it off the command line. For the tool: tool is the description a model reads, tool_type the type
    its schema states (a name of agent_memory.mcp_server.NAMED_TYPES for one only the server knows),
    tool_default a default of its own, and at_least and at_most its bounds."""

    name: str
    help: str = ""
    type: Callable[[str], Any] | None = None
    positional: bool = False
    optional: bool = False  # a positional that may be left out
    default: Any = None
    choices: Sequence[str] | None = None
    repeat: bool = False
    flag: bool = False
    metavar: str | None = None
    short: str | None = None  # a one-letter form on the command line, as -o
    cli: bool = True  # offered on the command line
    one_of: str | None = None  # the command line needs exactly one of the options with this group name
    tool: str | None = None
    tool_type: Any = None
    tool_default: Any = None
    at_least: float | None = None
    at_most: float | None = None

    @property
    def flags(self) -> list[str]:
        """Its name on the command line: the argument's name, with hyphens (-k for k)."""
        if self.positional:
            return [self.name]
        if self.name == "k":
            return ["-k"]
        return [*([self.short] if self.short else []), "--" + self.name.replace("_", "-")]


@dataclass(frozen=True)
class Tool:
    """The call as an MCP tool: what a model reads of it, what it does (reads, adds, judges or deletes),
    which argument the server's agent fills when the model leaves it out (agent), and the answer: a JSON
    value (answer(result, show_agent), shown_as naming its shape) or Markdown text (shown_as str)."""

    doc: str
    effect: Effect
    answer: Callable[[Any, bool], Any]
    shown_as: Any
    agent: str | None = "agent_id"


@dataclass(frozen=True)
class Command:
    """One function: its name (the command is it with hyphens), a line of help, its options, how its
    result is shown to people (show) and, if it is one, its tool. call(memory, options) runs it; by default
    the Memory method of its name with the options given (None left out)."""

    name: str
    help: str
    options: tuple[Option, ...] = ()
    show: Callable[[Args, Any], int] | None = None
    call: Callable[[Memory, dict[str, Any]], Any] | None = None
    tool: Tool | None = None
    description: str = ""
    main: Callable[[Args], int] | None = None

    @property
    def command(self) -> str:
        return self.name.replace("_", "-")

    def run(self, memory: Memory, options: Mapping[str, Any]) -> Any:
        """None leaves an option out (the function's default applies), but a required one's None is its value:
        set_entity_state's JSON null."""
        required = {option.name for option in self.options if option.positional and not option.optional}
        given = {name: value for name, value in options.items() if value is not None or name in required}
        if self.call is not None:
            return self.call(memory, given)
        return getattr(memory, self.name)(**given)


# The connection every command uses: --dsn, else DATABASE_URL, else the local server's database --dbname.
def home(args: Args) -> Home:
    return Home(Path(args.dir).resolve(), "--dir") if args.dir else find_home(Path.cwd(), os.environ)


def local_server(args: Args) -> LocalServer:
    return LocalServer(directory=home(args).directory, port=args.port)


def dsn(args: Args) -> str:
    return args.dsn or os.environ.get("DATABASE_URL") or local_server(args).url(args.dbname)


def memory(args: Args) -> Memory:
    return Memory(dsn(args), tenant=args.tenant, max_connections=2)


# How a result is shown to people; --json always prints it as JSON.
def said(line: Callable[[Args, Any], str]) -> Callable[[Args, Any], int]:
    """One line for people, made from the arguments and the result."""

    def show(args: Args, result: Any) -> int:
        print_json(result) if args.json else print(line(args, result))
        return 0

    return show


def table(
    columns: Sequence[str],
    empty: str | Callable[[Args], str],
    widths: Mapping[str, int] | None = None,
    rows: Callable[[Any], Mapping[str, Any]] | None = None,
    scoped: bool = False,
) -> Callable[[Args, Any], int]:
    """Rows as an aligned table of the columns (each row through rows(item) first); with scoped, the agent
    first when the rows are of several agents; empty is what is said when there are none."""

    def show(args: Args, found: Sequence[Any]) -> int:
        if args.json:
            print_json(found)
        elif not found:
            print(empty if isinstance(empty, str) else empty(args))
        else:
            several = scoped and len({item.agent_id for item in found}) > 1
            shown = [plain(item) | dict(rows(item)) if rows else item for item in found]
            print_table(shown, ["agent_id", *columns] if several else columns, widths)
        return 0

    return show


def record(args: Args, result: Any) -> int:
    print_json(result) if args.json else print_record(result)
    return 0


def when(at: datetime) -> str:
    """A time as a tool answers it: ISO 8601 to the second."""
    return at.isoformat(timespec="seconds")


def every_command() -> tuple[Command, ...]:
    """Every command, in the order `agent-memory --help` lists them: the groups' modules, which import this
    one (hence here, when first asked)."""
    from agent_memory.commands import curated, graph, http, lifecycle, operations, recall, transfer, write

    return (
        *operations.COMMANDS,
        *write.COMMANDS,
        *recall.COMMANDS,
        *curated.COMMANDS,
        *graph.COMMANDS,
        *lifecycle.COMMANDS,
        *transfer.COMMANDS,
        *http.COMMANDS,
    )
