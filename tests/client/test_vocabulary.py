"""One vocabulary (docs/architecture.md, "Vocabulary"): the SQL catalog, the Python client, the CLI and the
MCP tools use the names its table gives and none of those it retires."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import inspect
import re
import typing
from pathlib import Path

import pytest

from agent_memory import AsyncMemory, Memory, calls, cli, results

DOC = Path(__file__).parents[2] / "docs" / "architecture.md"


def _table(heading: str) -> list[list[str]]:
    """The rows of the first table under a heading of docs/architecture.md, as their cells."""
    lines = DOC.read_text().split(f"\n{heading}\n", 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[start + 2 : end]]


def _quoted(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


class Retired(typing.NamedTuple):
    anywhere: set[str]  # `x`
    operations: set[str]  # `x()`: functions, methods, commands, tools
    api: set[str]  # `x=`: arguments, result columns and fields, options, parameters
    columns: set[tuple[str, str]]  # `table.x`


def retired() -> Retired:
    names = Retired(set(), set(), set(), set())
    for row in _table("## Vocabulary"):
        for name in _quoted(row[2]):
            if name.endswith("()"):
                names.operations.add(name[:-2])
            elif name.endswith("="):
                names.api.add(name[:-1])
            elif "." in name:
                table, column = name.split(".")
                names.columns.add((table, column))
            else:
                names.anywhere.add(name)
    return names


def outside_sql() -> dict[str, set[str]]:
    return {
        row[0]: {name for name in _quoted(row[1]) if re.fullmatch(r"[a-z_]+", name)}
        for row in _table("### Names outside SQL")
    }


RETIRED = retired()
OUTSIDE = outside_sql()


def test_the_tables_are_read():
    assert {"turn_key", "scope", "agent"} <= RETIRED.anywhere and {"explain", "feedback"} <= RETIRED.operations
    assert {"helpful", "limit"} <= RETIRED.api and ("turns", "name") in RETIRED.columns
    assert {"client methods", "client parameters", "CLI commands", "CLI options"} == set(OUTSIDE)


@pytest.fixture
def catalog(db):
    """Schema memory's functions (their arguments and result columns) and relations (their columns)."""
    functions: dict[str, tuple[set[str], set[str]]] = {}
    rows = db.execute(
        """
        select p.proname, coalesce(p.proargnames, '{}'), coalesce(p.proargmodes::text[], '{}'),
               array(select a.attname from pg_attribute as a
                     where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped)
        from pg_proc as p
        join pg_type as t on t.oid = p.prorettype
        where p.pronamespace = 'memory'::regnamespace and p.prokind in ('f', 'p')
        """
    ).fetchall()
    for name, argnames, modes, returned in rows:
        modes = modes or ["i"] * len(argnames)
        inputs = {arg for arg, mode in zip(argnames, modes, strict=True) if mode in ("i", "b", "v")}
        outputs = {arg for arg, mode in zip(argnames, modes, strict=True) if mode in ("o", "b", "t")} | set(returned)
        known = functions.setdefault(name, (set(), set()))
        known[0].update(inputs)
        known[1].update(outputs)
    relations = {
        name: set(columns)
        for name, columns in db.execute(
            """
            select c.relname, array(select a.attname from pg_attribute as a
                                    where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped)
            from pg_class as c
            where c.relnamespace = 'memory'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'c')
            """
        ).fetchall()
    }
    return functions, relations


def test_no_function_shares_a_name_with_a_table_or_view(catalog):
    functions, relations = catalog
    assert set(functions) & set(relations) == set()


def test_the_sql_api_uses_no_retired_name(catalog):
    functions, relations = catalog
    found = set()
    for name, (inputs, outputs) in functions.items():
        found |= {f"{name}()"} & {f"{x}()" for x in RETIRED.operations | RETIRED.anywhere}
        found |= {f"{name}({x})" for x in (inputs | outputs) & (RETIRED.api | RETIRED.anywhere)}
    for relation, columns in relations.items():
        found |= {f"{relation}.{x}" for x in columns & RETIRED.anywhere}
        found |= {f"{relation}.{x}" for x in columns if (relation, x) in RETIRED.columns}
    assert found == set()


def _parameters(method: typing.Callable[..., object]) -> set[str]:
    """A method's parameter names, with the keys of the TypedDict its **options unpack."""
    names = set()
    for name, parameter in inspect.signature(method).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            (options,) = re.fullmatch(r"Unpack\[calls\.(\w+)\]", parameter.annotation).groups()
            typed = getattr(calls, options)
            names |= typed.__required_keys__ | typed.__optional_keys__
        elif name != "self":
            names.add(name)
    return names


def _methods(cls: type) -> dict[str, set[str]]:
    return {
        name: _parameters(method)
        for name, method in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def test_the_client_is_the_sql_api(catalog):
    functions, _ = catalog
    methods = _methods(Memory)
    assert {name: params for name, params in _methods(AsyncMemory).items() if name != "open"} == methods
    unknown = set(methods) - set(functions) - OUTSIDE["client methods"]
    assert unknown == set(), "client methods that are no SQL function"
    for name, params in methods.items():
        allowed = functions[name][0] if name in functions else set().union(*(args for args, _ in functions.values()))
        assert params - allowed - OUTSIDE["client parameters"] == set(), f"{name}: parameters that are no argument"
        assert params & (RETIRED.api | RETIRED.anywhere) == set(), name
    assert set(methods) & (RETIRED.operations | RETIRED.anywhere) == set()


def test_result_fields_use_no_retired_name():
    fields = {
        f"{cls.__name__}.{field.name}"
        for _, cls in inspect.getmembers(results, dataclasses.is_dataclass)
        for field in dataclasses.fields(cls)
        if field.name in RETIRED.api | RETIRED.anywhere
    }
    assert fields == set()


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.build_parser()
    (subparsers,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(subparsers.choices)


def test_each_cli_command_is_a_function_and_its_options_its_arguments(catalog):
    functions, _ = catalog
    every_argument = set().union(*(args for args, _ in functions.values()))
    for command, parser in _commands().items():
        name = command.replace("-", "_")
        assert name in functions or command in OUTSIDE["CLI commands"], f"{command} is no SQL function"
        assert name not in RETIRED.operations | RETIRED.anywhere
        allowed = functions[name][0] if name in functions else every_argument
        dests = {action.dest for action in parser._actions if action.dest not in ("help", argparse.SUPPRESS)}
        assert dests - allowed - OUTSIDE["CLI options"] == set(), f"{command}: options that are no argument"
        for action in parser._actions:
            flags = [flag for flag in action.option_strings if flag.startswith("--")]
            assert all(flag == "--" + action.dest.replace("_", "-") for flag in flags), (command, flags)
        assert not parser.allow_abbrev, f"{command}: a retired flag would still work as an abbreviation"


def test_a_retired_flag_is_refused(capsys):
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["recall", "q", "--agent", "bot"])
    assert "unrecognized arguments: --agent bot" in capsys.readouterr().err


def test_each_mcp_tool_is_a_function_and_its_parameters_its_arguments(catalog, dsn):
    from agent_memory import mcp_server

    functions, _ = catalog
    with Memory(dsn) as memory:
        tools = asyncio.run(mcp_server.build(memory).list_tools())
    for tool in tools:
        assert tool.name in functions and tool.name not in RETIRED.operations, tool.name
        parameters = set(tool.input_schema["properties"])
        assert parameters - functions[tool.name][0] == set(), f"{tool.name}: parameters that are no argument"


def test_mcp_answers_use_no_retired_name():
    from typing_extensions import is_typeddict  # the MCP server's TypedDicts are typing_extensions' (for pydantic)

    from agent_memory import mcp_server
    from agent_memory.commands import answers as shapes

    answers = [
        cls
        for module in (mcp_server, shapes)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if is_typeddict(cls)
    ]
    assert len(answers) > 5
    keys = {f"{cls.__name__}.{key}" for cls in answers for key in cls.__annotations__}
    assert {key for key in keys if key.split(".")[1] in RETIRED.api | RETIRED.anywhere} == set()
