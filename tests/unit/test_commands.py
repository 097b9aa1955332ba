"""The command line and the MCP tools are built from one declaration per function (agent_memory.commands)."""

import argparse
import asyncio

import pytest

from agent_memory import Memory, cli
from agent_memory.commands import every_command


def _parsers():
    parser = cli.build_parser()
    (subparsers,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return subparsers.choices


def test_each_declaration_is_one_command_with_its_options():
    parsers = _parsers()
    assert sorted(parsers) == sorted(command.command for command in every_command())
    for command in every_command():
        dests = {action.dest for action in parsers[command.command]._actions if action.option_strings or action.dest}
        assert {option.name for option in command.options if option.cli} <= dests, command.name


def test_a_command_without_its_own_main_is_one_memory_method():
    for command in every_command():
        if command.main is None and command.call is None:
            assert callable(getattr(Memory, command.name, None)), command.name


def test_each_tool_is_its_command_with_the_options_a_model_needs():
    mcp_server = pytest.importorskip("agent_memory.mcp_server")
    tools = {tool.name: tool for tool in asyncio.run(mcp_server.build(object()).list_tools())}
    declared = {command.name: command for command in every_command() if command.tool}
    assert set(tools) == set(declared)
    for name, tool in tools.items():
        options = {option.name: option for option in declared[name].options}
        assert set(tool.input_schema["properties"]) == {key for key, option in options.items() if option.tool}
        required = {key for key, option in options.items() if option.tool and option.positional and not option.optional}
        assert set(tool.input_schema.get("required", [])) == required, name


def test_a_tool_and_its_command_share_a_default_unless_the_tool_declares_its_own():
    mcp_server = pytest.importorskip("agent_memory.mcp_server")
    recall = next(tool for tool in asyncio.run(mcp_server.build(object()).list_tools()) if tool.name == "recall")
    assert recall.input_schema["properties"]["k"]["default"] == 5  # tool_default: a model reads fewer
    assert recall.input_schema["properties"]["level"]["default"] == "turn"  # the command's
    assert cli.build_parser().parse_args(["recall", "q"]).k == 10


class Recorder:
    """A Memory that answers every method with nothing and remembers how it was called."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *positional, **arguments: self.calls.append((name, arguments)) or []


def test_none_leaves_an_option_out_but_is_the_value_of_a_required_one():
    (command,) = [command for command in every_command() if command.name == "set_entity_state"]
    memory = Recorder()
    command.run(memory, {"entity": "billing", "attribute": "owner", "value": None, "valid_from": None})
    assert memory.calls == [("set_entity_state", {"entity": "billing", "attribute": "owner", "value": None})]


@pytest.mark.parametrize("sent", [None, ""])
def test_the_servers_agent_fills_an_agent_the_model_leaves_out_or_empty(sent):
    mcp_server = pytest.importorskip("agent_memory.mcp_server")
    memory = Recorder()
    server = mcp_server.build(memory, "bot")
    arguments = {"query": "deploys"} | ({} if sent is None else {"agent_id": sent})
    asyncio.run(server.call_tool("recall", arguments))
    assert memory.calls[0][1]["agent_id"] == "bot"


def test_graphs_runs_no_index_name_but_a_tenant_graphs():
    from agent_memory.commands.operations import graph_statement
    from agent_memory.errors import InvalidInput

    with pytest.raises(InvalidInput, match="named an index 'chunks_pkey; drop table x' that is no tenant's graph"):
        graph_statement("drop", "chunks_pkey; drop table x", None, None, None)
    drop = graph_statement("drop", "chunk_embeddings_hnsw_tenant_" + "0" * 32, None, None, None)
    assert (
        drop.as_string(None)
        == 'drop index concurrently if exists memory."chunk_embeddings_hnsw_tenant_' + "0" * 32 + '"'
    )
