"""The agent-memory command: a command per function of the API (its name with hyphens), an option per
argument, built from the declarations in agent_memory.commands."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import psycopg

from agent_memory import importers
from agent_memory.commands import Args, Command, Option, every_command, memory, record
from agent_memory.errors import AgentMemoryError
from agent_memory.localdb import DEFAULT_PORT, LocalServerError


def _global_options(parser: argparse._ActionsContainer, defaults: bool) -> None:
    """The options every command takes, before or after its name. The main parser has their defaults; each
    command's parser has none (argparse.SUPPRESS), so a value given after the command wins and one given
    before it is kept."""

    def default(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument(
        "--dsn", default=default(None), help="connection string (default: $DATABASE_URL, else the local server)"
    )
    parser.add_argument("--dir", default=default(None), help="local server directory (default: see `db --help`)")
    parser.add_argument(
        "--port",
        type=int,
        default=default(int(os.environ.get("AGENT_MEMORY_PORT", DEFAULT_PORT))),
        help=f"local server port (default: $AGENT_MEMORY_PORT or {DEFAULT_PORT})",
    )
    parser.add_argument("--dbname", default=default("agent_memory"), help="database on the local server")
    parser.add_argument(
        "--tenant", default=default(None), help="the tenant to act as (memory.tenant_id; default: 'default')"
    )
    parser.add_argument("--json", action="store_true", default=default(False), help="print JSON for scripts")


def _add(parser: argparse.ArgumentParser, option: Option, groups: dict[str, Any]) -> None:
    """One option as argparse takes it: positional or --name, converted, repeated or a flag."""
    kwargs: dict[str, Any] = {"help": option.help or None, "type": option.type, "choices": option.choices}
    if option.metavar:
        kwargs["metavar"] = option.metavar
    if option.flag:
        kwargs = {"help": option.help, "action": "store_true", "default": None}
    elif option.repeat:
        kwargs |= {"nargs": "+"} if option.positional else {"action": "append"}
    elif option.optional:
        kwargs |= {"nargs": "?"} | ({"default": option.default} if option.positional else {"const": option.default})
    else:
        kwargs["default"] = option.default
    if option.positional:
        parser.add_argument(option.name, **kwargs)
        return
    if option.one_of and option.one_of not in groups:
        groups[option.one_of] = parser.add_mutually_exclusive_group(required=True)
    (groups[option.one_of] if option.one_of else parser).add_argument(*option.flags, dest=option.name, **kwargs)


def _runs(command: Command) -> Any:
    """What the command does: its own main, or one call of its function and the result shown."""
    if command.main is not None:
        return command.main

    def run(args: Args) -> int:
        options = {option.name: getattr(args, option.name) for option in command.options if option.cli}
        with memory(args) as client:
            result = command.run(client, options)
        return (command.show or record)(args, result)

    return run


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-memory", description="Long-term memory for AI agents in PostgreSQL.", allow_abbrev=False
    )
    _global_options(parser, defaults=True)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in every_command():
        description = f"{command.help}. {command.description}" if command.description else command.help
        sub = subparsers.add_parser(command.command, help=command.help, description=description, allow_abbrev=False)
        sub.set_defaults(func=_runs(command))
        groups: dict[str, Any] = {}
        for option in command.options:
            if option.cli:
                _add(sub, option, groups)
        _global_options(sub.add_argument_group("global options (also before the command)"), defaults=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except ImportError as exc:  # an optional dependency missing: its message says what to install
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        problem = f"cannot open {exc.filename}: {importers.os_reason(exc)}" if exc.filename else str(exc)
        print(f"agent-memory: {problem}", file=sys.stderr)
        return 1
    except (LocalServerError, psycopg.Error, AgentMemoryError, importers.ImportProblem) as exc:
        message = str(exc).removeprefix("agent_memory: ")  # the server's own prefix, once is enough
        print(f"agent-memory: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
