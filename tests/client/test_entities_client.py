"""The knowledge graph through the client (Memory, AsyncMemory), the command (entities, graph, entity) and
the MCP tools (entities, entity_neighbors, entity_state, set_entity_state), against the real database."""

import asyncio
import json
import math
import os
import re
import subprocess
import sys
import typing
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from agent_memory import (
    AsyncMemory,
    Entity,
    EntitySession,
    EntityState,
    EntityType,
    InvalidInput,
    Memory,
    Merged,
    Neighbor,
    NotFound,
    PendingState,
    StateApproved,
    StateHistoryItem,
    StateRecorded,
    calls,
)

CLI = str(Path(sys.executable).parent / "agent-memory")
CHAT = [
    {"role": "user", "name": "Maria", "content": "We moved the billing service from MySQL to Postgres last week."},
    {"role": "assistant", "content": "Good. Docker builds the Postgres image; Kubernetes runs it next to Redis."},
    {"role": "user", "name": "Maria", "content": "Redis and MySQL both stay for the legacy reports."},
]
JAN, APR, JUN = (datetime(2026, month, day, tzinfo=timezone.utc) for month, day in ((1, 1), (4, 15), (6, 1)))
GRAPH_TOOLS = {"list_entities", "entity_neighbors", "entity_state", "set_entity_state"}


@pytest.fixture
def memory(dsn):
    """A client over a database where agent "coder" talked about MySQL, Postgres, Redis, Docker and Kubernetes."""
    with Memory(dsn) as client:
        client.commit("s1", CHAT, agent_id="coder", enrich="now")
        yield client


def billing_database_history(memory, **agent):
    memory.set_entity_state("billing service", "database", "mysql", valid_from=JAN, type="project", **agent)
    return memory.set_entity_state("billing service", "database", "postgres", valid_from=JUN, **agent)


# The client


def test_entities_are_typed_rows_with_their_mentions(memory):
    found = {entity.name: entity for entity in memory.list_entities(agent_id="coder")}
    assert {"Maria", "Postgres", "MySQL", "Redis", "Docker", "Kubernetes"} <= set(found)
    postgres = found["Postgres"]
    assert isinstance(postgres, Entity) and (postgres.type, postgres.agent_id) == ("tool", "coder")
    assert (postgres.mentions, postgres.sessions, postgres.similarity) == (2, 1, 1.0)
    assert isinstance(postgres.aliases, list) and isinstance(postgres.last_mentioned_at, datetime)


def test_entities_are_searched_by_name_and_filtered_by_type_and_agent(memory):
    assert memory.list_entities("kubernets")[0].name == "Kubernetes"
    assert [entity.name for entity in memory.list_entities(type="person")] == ["Maria"]
    assert memory.list_entities(agent_id="nobody") == []
    assert len(memory.list_entities(k=2)) == 2


def test_neighbors_are_nearest_first_with_their_paths(memory):
    near = memory.entity_neighbors("redis", agent_id="coder")
    assert all(isinstance(neighbor, Neighbor) and neighbor.distance == 1 for neighbor in near)
    mysql = next(neighbor for neighbor in near if neighbor.name == "MySQL")
    assert (mysql.path, mysql.turns) == (["Redis", "MySQL"], 1)
    far = [neighbor for neighbor in memory.entity_neighbors("Docker", depth=2) if neighbor.distance == 2]
    assert "MySQL" in {neighbor.name for neighbor in far}
    assert all(len(neighbor.path) == 3 and neighbor.path[0] == "Docker" for neighbor in far)
    assert len(memory.entity_neighbors("Docker", depth=2, k=1)) == 1


def test_entity_sessions_say_where_an_entity_was_talked_about(memory):
    (session,) = memory.entity_sessions("POSTGRES")
    assert isinstance(session, EntitySession)
    assert (session.session_id, session.agent_id, session.mentions) == ("s1", "coder", 2)
    assert session.first_at <= session.last_at
    assert memory.entity_sessions("postgres", agent_id="other") == []


def test_merge_makes_two_entities_one(memory):
    merged = memory.merge_entities("Postgres", "MySQL", agent_id="coder")
    assert isinstance(merged, Merged) and merged.name == "Postgres" and "mysql" in merged.aliases
    assert merged.mentions_moved == 2 and merged.states_moved == 0
    assert memory.list_entities("mysql", agent_id="coder")[0].name == "Postgres"


def test_entity_state_now_then_and_its_history(memory):
    recorded = billing_database_history(memory, agent_id="coder")
    assert isinstance(recorded, StateRecorded) and (recorded.valid_from, recorded.valid_to) == (JUN, None)
    (now,) = memory.entity_state("billing service")
    assert isinstance(now, EntityState)
    assert (now.agent_id, now.attribute, now.value, now.valid_from, now.valid_to) == (
        "coder",
        "database",
        "postgres",
        JUN,
        None,
    )
    assert [state.value for state in memory.entity_state("Billing Service", as_of=APR)] == ["mysql"]
    assert memory.entity_state("billing service", attribute="owner") == []
    history = memory.entity_history("billing service", "database")
    assert all(isinstance(item, StateHistoryItem) for item in history)
    assert [(item.value, item.valid_from, item.valid_to) for item in history] == [
        ("mysql", JAN, JUN),
        ("postgres", JUN, None),
    ]
    assert history[0].recorded_by


def test_state_changes_read_from_a_conversation_are_reviewed_through_the_client(dsn):
    # The setting for this connection alone: changes stay for review.
    with Memory(dsn + "&options=-c%20memory.extracted_memory_status%3Dpending") as memory:
        said = [{"role": "user", "content": "Ana now leads billing.", "created_at": JUN.isoformat()}]
        memory.commit("june", said, agent_id="ops", enrich="now")
        memory.commit("july", [{"role": "user", "content": "The deploy freeze is over."}], agent_id="ops", enrich="now")
        pending = memory.pending_entity_states(agent_id="ops")
        assert all(isinstance(p, PendingState) for p in pending)
        assert [(p.entity, p.attribute, p.value, p.origin) for p in pending] == [
            ("Ana", "lead", "billing", "patterns"),
            ("deploy freeze", "state", "over", "patterns"),
        ]
        approved = memory.approve_entity_state(pending[0].state_id)
        assert approved == StateApproved(approved.entity_id, "lead", "billing", JUN, None)
        assert memory.reject_entity_state(pending[1].state_id) is None
        assert memory.pending_entity_states() == []
        with pytest.raises(InvalidInput, match="is rejected and cannot be reviewed"):
            memory.reject_entity_state(pending[1].state_id)


def test_a_state_is_any_json_value_and_goes_to_agent_default_without_one(memory):
    memory.set_entity_state("Maria", "team", {"name": "billing", "since": 2024, "leads": [True, None]})
    memory.set_entity_state("Maria", "manager", None)
    states = {state.attribute: state for state in memory.entity_state("maria")}
    assert states["team"].value == {"name": "billing", "since": 2024, "leads": [True, None]}
    assert states["manager"].value is None
    assert {state.agent_id for state in states.values()} == {"default"}


def test_async_memory_reads_and_writes_the_graph_the_same_way(dsn, memory):
    async def run():
        async with AsyncMemory(dsn) as client:
            found = await client.list_entities("postgres", agent_id="coder")
            near = await client.entity_neighbors("redis", agent_id="coder")
            sessions = await client.entity_sessions("redis")
            await client.set_entity_state("billing service", "database", "mysql", valid_from=JAN, agent_id="coder")
            await client.set_entity_state("billing service", "database", "postgres", valid_from=JUN, agent_id="coder")
            state = await client.entity_state("billing service", as_of=APR)
            history = await client.entity_history("billing service", "database")
            merged = await client.merge_entities("Postgres", "MySQL", agent_id="coder")
            return found, near, sessions, state, history, merged

    found, near, sessions, state, history, merged = asyncio.run(run())
    assert found[0].name == "Postgres" and {"MySQL", "Docker"} <= {neighbor.name for neighbor in near}
    assert sessions[0].session_id == "s1" and [item.value for item in state] == ["mysql"]
    assert len(history) == 2 and merged.name == "Postgres"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("list_entities", (None, None, None, None)),
        ("entity_neighbors", ("x", None, None, None)),
        ("entity_sessions", ("x", None, None)),
        ("merge_entities", ("a", "b", None)),
        ("set_entity_state", ("x", "a", 1, None, None, None)),
        ("entity_state", ("x", None, None, None)),
        ("entity_history", ("x", "a", None)),
    ],
)
def test_arguments_left_out_are_not_sent(name, arguments):
    """The database's defaults apply: every agent for reads, "default" for writes, its k and depth."""
    sent = getattr(calls, name)(*arguments).params
    assert "agent_id" not in sent and not {"k", "depth", "type", "as_of", "valid_from"} & set(sent)


# Errors


def test_entity_type_is_the_set_the_database_checks(memory):
    with pytest.raises(InvalidInput) as refused:
        memory.list_entities(type="bogus")
    allowed = re.search(r"entity type must be one of (.*); got", str(refused.value)).group(1)
    assert set(allowed.split(", ")) == set(typing.get_args(EntityType))


def test_an_unknown_entity_is_not_found(memory):
    with pytest.raises(NotFound, match='no entity "nobody"'):
        memory.entity_neighbors("nobody")
    with pytest.raises(NotFound, match='no entity "nobody" for agent "coder"'):
        memory.merge_entities("Postgres", "nobody", agent_id="coder")


@pytest.mark.parametrize(
    "call",
    [
        lambda memory: memory.entity_neighbors("redis", depth=6),
        lambda memory: memory.entity_neighbors("redis", k=0),
        lambda memory: memory.list_entities(k=0),
        lambda memory: memory.merge_entities("Postgres", "postgresql", agent_id="coder"),
        lambda memory: memory.set_entity_state("billing", " ", "x"),
    ],
    ids=["depth", "neighbors k", "entities k", "merge itself", "blank attribute"],
)
def test_bad_arguments_are_invalid_input(memory, call):
    with pytest.raises(InvalidInput):
        call(memory)


def test_recall_is_entity_aware_by_name_alias_and_passed_entities(memory):
    memory.commit("s2", [{"role": "user", "content": "Lunch is at noon on Friday."}], agent_id="coder", enrich="now")
    (hit,) = memory.recall("what happened to postgresql?", k=1, agent_id="coder")
    assert "Postgres" in hit.content and hit.components["entities_matched"] == ["Postgres"]
    # Postgres is said in 2 of the agent's 4 chunks: its weight is ln(1 + 4/2) / ln(1 + 4).
    assert hit.components["signals"]["entity"]["value"] == pytest.approx(math.log(3) / math.log(5), abs=1e-5)
    every = memory.recall("what stays", entities=["redis", "MySQL"], entity_mode="all", agent_id="coder", k=10)
    assert {hit.session_id for hit in every} == {"s1"}
    assert memory.recall("what stays", entities=["Redis", "Atlantis"], entity_mode="all") == []


# The command


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=dict(os.environ))


def test_cli_entities_is_a_table_and_json(memory, dsn):
    table = run("--dsn", dsn, "list-entities", "--agent-id", "coder")
    assert table.returncode == 0, table.stderr
    header, _, *lines = table.stdout.splitlines()
    assert header.split() == ["name", "type", "mentions", "sessions", "last_mentioned_at", "aliases"]
    assert any(line.split()[:4] == ["Postgres", "tool", "2", "1"] for line in lines)
    found = json.loads(run("--dsn", dsn, "list-entities", "kubernets", "--type", "tool", "-k", "1", "--json").stdout)
    assert [(entity["name"], entity["agent_id"], entity["similarity"] > 0) for entity in found] == [
        ("Kubernetes", "coder", True)
    ]


def test_cli_entities_refuses_an_unknown_type_and_says_when_none_is_found(memory, dsn):
    refused = run("--dsn", dsn, "list-entities", "--type", "bogus")
    assert refused.returncode == 2 and "invalid choice: 'bogus'" in refused.stderr
    assert run("--dsn", dsn, "list-entities", "zzzz").stdout.strip() == "no entities found"


def test_cli_graph_shows_distance_and_path(memory, dsn):
    result = run("--dsn", dsn, "entity-neighbors", "Docker", "--depth", "2", "--agent-id", "coder")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:5] == ["distance", "name", "type", "turns", "path"]
    assert re.search(r"^2 +MySQL +\w+ +\d+ +Docker → \w+ → MySQL$", result.stdout, re.MULTILINE), result.stdout
    near = json.loads(run("--dsn", dsn, "--json", "entity-neighbors", "redis", "-k", "2").stdout)
    assert len(near) == 2 and {"distance", "turns", "path", "entity_id"} <= set(near[0])


def test_cli_graph_of_an_unknown_entity_is_an_error(memory, dsn):
    result = run("--dsn", dsn, "entity-neighbors", "nobody")
    assert result.returncode == 1
    assert result.stderr.startswith('agent-memory: no entity "nobody"') and "agent_memory:" not in result.stderr


def test_cli_entity_shows_its_state_now_and_then(memory, dsn):
    billing_database_history(memory, agent_id="coder")
    now = run("--dsn", dsn, "entity-state", "billing service")
    assert now.returncode == 0, now.stderr
    assert now.stdout.split()[:4] == ["attribute", "value", "valid_from", "valid_to"]
    assert re.search(r'^database +"postgres" +2026-', now.stdout, re.MULTILINE), now.stdout
    then = json.loads(run("--dsn", dsn, "entity-state", "billing service", "--as-of", "2026-04-15", "--json").stdout)
    assert [(state["attribute"], state["value"]) for state in then] == [("database", "mysql")]
    none = run("--dsn", dsn, "entity-state", "billing service", "--attribute", "owner")
    assert none.stdout.strip() == "no state recorded for billing service"


def test_cli_recall_names_entities_and_can_require_every_one(memory, dsn):
    found = json.loads(
        run(
            "--dsn",
            dsn,
            "recall",
            "what stays",
            "--entities",
            "Redis",
            "--entities",
            "mysql",
            "--entity-mode",
            "all",
            "--json",
        ).stdout
    )
    assert found and {hit["session_id"] for hit in found} == {"s1"}
    assert found[0]["components"]["entities_matched"] == ["MySQL", "Redis"]
    none = run("--dsn", dsn, "recall", "what stays", "--entities", "Atlantis", "--entity-mode", "all")
    assert none.returncode == 0 and none.stdout.strip() == "nothing recalled"
    alone = run("--dsn", dsn, "recall", "what stays", "--entity-mode", "all")
    assert alone.returncode == 1 and "entity_mode 'all' needs entities" in alone.stderr


# The MCP tools


def mcp(dsn, *tool_calls, agent="coder"):
    """The tools the server lists and the results of the tool calls (name, arguments), over one session."""

    async def session():
        server = StdioServerParameters(
            command=CLI, args=["--dsn", dsn, "mcp", *(["--agent-id", agent] if agent else [])]
        )
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            return listed, [await client.call_tool(name, arguments) for name, arguments in tool_calls]

    return asyncio.run(asyncio.wait_for(session(), timeout=120))


def payload(result):
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def no_nulls(value):
    if isinstance(value, dict):
        return all(item is not None and no_nulls(item) for item in value.values())
    if isinstance(value, list):
        return all(no_nulls(item) for item in value)
    return True


def test_the_graph_tools_are_listed_with_annotations_and_schemas(dsn):
    listed, _ = mcp(dsn)
    assert set(listed) >= GRAPH_TOOLS
    for name in ("list_entities", "entity_neighbors", "entity_state"):
        assert listed[name].annotations.read_only_hint, name
    written = listed["set_entity_state"].annotations
    assert not written.read_only_hint and written.idempotent_hint and not written.destructive_hint
    for name in GRAPH_TOOLS:
        assert listed[name].annotations.open_world_hint is False
        assert "\n" not in listed[name].description and "  " not in listed[name].description
    types = listed["list_entities"].input_schema["properties"]["type"]["anyOf"][0]["enum"]
    assert set(types) == set(typing.get_args(EntityType))
    assert listed["entity_neighbors"].input_schema["required"] == ["entity"]
    assert listed["set_entity_state"].input_schema["required"] == ["entity", "attribute", "value"]


def test_entities_and_neighbors_over_stdio_are_compact(memory, dsn):
    _, (found, near, far) = mcp(
        dsn,
        ("list_entities", {"search": "postgres", "k": 1}),
        ("entity_neighbors", {"entity": "redis"}),
        ("entity_neighbors", {"entity": "Docker", "depth": 2}),
    )
    (postgres,) = payload(found)["entities"]
    assert postgres["name"] == "Postgres" and (postgres["type"], postgres["mentions"], postgres["sessions"]) == (
        "tool",
        2,
        1,
    )
    assert datetime.fromisoformat(postgres["last_mentioned_at"]).tzinfo is not None
    assert "entity_id" not in postgres and "similarity" not in postgres and "agent_id" not in postgres
    neighbors = payload(near)["neighbors"]
    assert {"name", "type", "distance", "turns"} == set(neighbors[0]) and neighbors[0]["distance"] == 1
    distant = [neighbor for neighbor in payload(far)["neighbors"] if neighbor["distance"] == 2]
    assert distant and all(neighbor["path"][0] == "Docker" for neighbor in distant)
    assert no_nulls(payload(found)) and no_nulls(payload(far))


def test_without_an_agent_entities_name_their_agent(memory, dsn):
    _, (found,) = mcp(dsn, ("list_entities", {"type": "person"}), agent=None)
    assert payload(found) == {"entities": [{**payload(found)["entities"][0], "name": "Maria", "agent_id": "coder"}]}


def test_set_entity_state_then_entity_state_over_stdio(dsn):
    _, (old, new, now, then, unknown) = mcp(
        dsn,
        (
            "set_entity_state",
            {
                "entity": "billing service",
                "attribute": "database",
                "value": "mysql",
                "valid_from": "2026-01-01T00:00:00Z",
                "type": "project",
            },
        ),
        (
            "set_entity_state",
            {
                "entity": "billing service",
                "attribute": "database",
                "value": {"engine": "postgres"},
                "valid_from": "2026-06-01T00:00:00Z",
            },
        ),
        ("entity_state", {"entity": "Billing Service"}),
        ("entity_state", {"entity": "billing service", "as_of": "2026-04-15"}),
        ("entity_neighbors", {"entity": "nobody"}),
    )

    def times(answer):
        return {key: datetime.fromisoformat(value) for key, value in answer.items() if key.startswith("valid_")}

    assert times(payload(old)) == {"valid_from": JAN} and times(payload(new)) == {"valid_from": JUN}
    (current,) = payload(now)["states"]
    assert current == {"attribute": "database", "value": {"engine": "postgres"}, "valid_from": current["valid_from"]}
    (earlier,) = payload(then)["states"]
    assert (earlier["attribute"], earlier["value"], times(earlier)) == (
        "database",
        "mysql",
        {"valid_from": JAN, "valid_to": JUN},
    )
    assert unknown.is_error and 'no entity "nobody" for agent "coder"' in unknown.content[0].text
    assert "agent_memory:" not in unknown.content[0].text
    with Memory(dsn) as memory:
        assert [(entity.agent_id, entity.type) for entity in memory.list_entities("billing service")] == [
            ("coder", "project")
        ]


def test_a_bad_type_is_refused_by_the_schema(dsn):
    _, (refused,) = mcp(dsn, ("set_entity_state", {"entity": "x", "attribute": "a", "value": 1, "type": "bogus"}))
    assert refused.is_error and "type" in refused.content[0].text


def test_recall_over_stdio_takes_entities(memory, dsn):
    memory.commit("s2", [{"role": "user", "content": "What stays is lunch at noon."}], agent_id="coder", enrich="now")
    _, (docker, unknown, none) = mcp(
        dsn,
        ("recall", {"query": "what stays", "entities": ["docker"], "entity_mode": "all", "k": 10}),
        ("recall", {"query": "what stays", "entities": ["Docker", "Atlantis"], "entity_mode": "all"}),
        ("recall", {"query": "what stays", "entity_mode": "all"}),
    )
    assert {hit["session_id"] for hit in payload(docker)["hits"]} == {"s1"}
    assert payload(unknown) == {"hits": []}
    assert none.is_error and "entity_mode 'all' needs entities" in none.content[0].text
