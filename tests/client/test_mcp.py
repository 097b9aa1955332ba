"""`agent-memory mcp` driven as an MCP host drives it: a real client session over stdio."""

import asyncio
import json
import sys
from datetime import datetime
from importlib.metadata import version
from pathlib import Path

import psycopg
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from agent_memory import Memory

CLI = str(Path(sys.executable).parent / "agent-memory")
MESSAGES = [
    {"role": "user", "name": "Ana", "id": "m1", "content": "The staging database moves to the new cluster on Monday."},
    {"role": "assistant", "id": "m2", "content": "Noted. I still have to update the connection strings."},
]
READ_ONLY = {
    "recall",
    "explain_recall",
    "context_for_task",
    "bootstrap",
    "stats",
    "list_entities",
    "entity_neighbors",
    "entity_state",
    "list_memories",
    "query",
    "get",
}


def talk(dsn, scenario, agent="bot"):
    """Runs scenario(client) against `agent-memory mcp` (with --agent-id agent unless None) over stdio."""

    async def session():
        options = ["--agent-id", agent] if agent else []
        server = StdioServerParameters(command=CLI, args=["--dsn", dsn, "mcp", *options])
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await scenario(client)

    return asyncio.run(asyncio.wait_for(session(), timeout=120))


def call(*calls, dsn, agent="bot"):
    """The results of the tool calls (name, arguments), in order, over one session."""

    async def scenario(client):
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    return talk(dsn, scenario, agent)


def payload(result):
    assert not result.is_error, result.content
    content = result.structured_content
    return content["result"] if list(content) == ["result"] else content


def error(result):
    assert result.is_error
    return result.content[0].text


def tools(dsn):
    async def scenario(client):
        return (await client.list_tools()).tools

    return {tool.name: tool for tool in talk(dsn, scenario)}


@pytest.fixture
def enrich_now(db):
    """Commits enrich at once (setting enrich), so what is committed can be recalled in the same test."""
    db.execute("insert into memory.config (key, value) values ('enrich', '\"now\"')")
    db.commit()


def test_the_tools_have_input_schemas(dsn):
    found = tools(dsn)
    writes = {
        "remember",
        "resolve",
        "retract",
        "approve",
        "share",
        "commit",
        "give_feedback",
        "forget",
        "set_entity_state",
    }
    assert set(found) == READ_ONLY | writes
    recall = found["recall"].input_schema
    assert recall["required"] == ["query"] and recall["properties"]["level"]["enum"] == ["turn", "session"]
    assert {"k", "level", "agent_id", "since", "until", "source"} <= set(recall["properties"])
    assert found["give_feedback"].input_schema["properties"]["verdict"]["enum"] == [
        "helpful",
        "unhelpful",
        "incorrect",
        "stale",
    ]
    assert found["forget"].input_schema["required"] == ["session_id"]
    assert "turn_id" in found["recall"].description


def test_tool_descriptions_are_single_lines_without_docstring_indentation(dsn):
    for tool in tools(dsn).values():
        assert "\n" not in tool.description and "  " not in tool.description, tool.name


def test_tools_say_whether_they_read_add_or_delete(dsn):
    found = tools(dsn)
    hints = {name: tool.annotations for name, tool in found.items()}
    assert {name for name, hint in hints.items() if hint.read_only_hint} == READ_ONLY
    assert {name for name, hint in hints.items() if hint.destructive_hint} == {"forget"}
    assert hints["commit"].idempotent_hint and hints["remember"].idempotent_hint
    assert not hints["give_feedback"].idempotent_hint
    assert all(hint.open_world_hint is False for hint in hints.values())


def test_the_server_reports_the_package_version(dsn):
    async def scenario(client):
        return client.server_info

    info = talk(dsn, scenario)
    assert (info.name, info.version) == ("agent-memory", version("agent-memory"))


def test_commit_describes_its_messages_and_refuses_unknown_keys_by_name(dsn):
    schema = tools(dsn)["commit"].input_schema
    message = schema["$defs"][schema["properties"]["messages"]["items"]["$ref"].split("/")[-1]]
    assert message["required"] == ["role"] and message["additionalProperties"] is False
    assert message["properties"]["role"]["enum"] == ["user", "assistant", "system", "tool"]
    assert {"content", "name", "id", "created_at", "tool_calls", "tool_call_id", "metadata"} <= set(
        message["properties"]
    )
    assert message["properties"]["tool_calls"]["items"]["type"] == "object"
    (refused,) = call(
        ("commit", {"session_id": "s", "messages": [{"role": "user", "content": "x", "timestamp": "now"}]}), dsn=dsn
    )
    assert "messages.0.timestamp" in error(refused)


def test_commit_recall_feedback_remember_bootstrap_and_stats_over_stdio(dsn, enrich_now):
    async def scenario(client):
        committed = payload(await client.call_tool("commit", {"session_id": "ops-1", "messages": MESSAGES}))
        hits = payload(await client.call_tool("recall", {"query": "when does staging move?", "k": 1}))["hits"]
        verdict = payload(
            await client.call_tool("give_feedback", {"turn_id": hits[0]["turn_id"], "verdict": "helpful"})
        )
        remembered = payload(await client.call_tool("remember", {"content": "Ana owns the database move."}))
        context = payload(await client.call_tool("bootstrap", {"max_chars": 2000}))
        stats = payload(await client.call_tool("stats", {}))
        bad = await client.call_tool("commit", {"session_id": "ops-2", "messages": [{"role": "tool", "content": 1}]})
        return committed, hits, verdict, remembered, context, stats, bad

    committed, hits, verdict, remembered, context, stats, bad = talk(dsn, scenario)
    assert committed == {"created": True, "turns_added": 2}
    assert hits[0]["speaker"] == "Ana" and hits[0]["content"] == MESSAGES[0]["content"]
    assert verdict["trust_after"] > verdict["trust_before"]
    assert remembered["outcome"] == "created" and isinstance(remembered["memory_id"], int)
    assert context.startswith("## Remembered\n- Ana owns the database move.")
    assert list(stats) == ["bot"] and stats["bot"]["turns"] == 3
    assert "messages.0.content" in error(bad)


def test_recall_sends_a_session_summary_once_and_no_nulls_scores_or_internals(dsn, enrich_now):
    chat = [
        {"role": "user", "content": "The billing job sums invoice prices as floats."},
        {"role": "assistant", "content": "Float rounding explains the invoice totals that are off by a cent."},
        {"role": "user", "content": "Decision: invoice amounts become numeric columns."},
    ]

    async def scenario(client):
        await client.call_tool("commit", {"session_id": "billing", "messages": chat})
        return await client.call_tool("recall", {"query": "invoice totals rounding", "k": 3})

    result = talk(dsn, scenario)
    answer = payload(result)
    summary = answer["sessions"]["billing"]
    assert len(answer["hits"]) == 3 and {hit["session_id"] for hit in answer["hits"]} == {"billing"}
    assert result.content[0].text.count(summary) == 1 and json.loads(result.content[0].text) == answer
    for hit in answer["hits"]:
        assert set(hit) == {"turn_id", "session_id", "speaker", "at", "content"}
        assert datetime.fromisoformat(hit["at"]).tzinfo is not None and "T" in hit["at"]
    assert None not in [value for hit in answer["hits"] for value in hit.values()]


def test_recall_filters_by_agent_time_and_source_and_defaults_to_the_server_agent(dsn):
    note = [{"role": "user", "content": "The release train leaves on Thursday.", "created_at": "2025-03-01T10:00Z"}]
    late = [{"role": "user", "content": "The train now leaves on Wednesday.", "created_at": "2025-09-01T10:00Z"}]
    with Memory(dsn) as memory:
        memory.commit("early", note, agent_id="bot", source="chat", enrich="now")
        memory.commit("later", late, agent_id="bot", source="import:notes", enrich="now")
        memory.commit("theirs", note, agent_id="other", enrich="now")

    def sessions(result):
        return [hit["session_id"] for hit in payload(result)["hits"]]

    query = {"query": "when does the release train leave?", "k": 5}
    bot, other, since, until, source = call(
        ("recall", query),
        ("recall", {**query, "agent_id": "other"}),
        ("recall", {**query, "since": "2025-06-01T00:00:00Z"}),
        ("recall", {**query, "until": "2025-06-01"}),
        ("recall", {**query, "source": "chat"}),
        dsn=dsn,
    )
    assert sorted(sessions(bot)) == ["early", "later"] and sessions(other) == ["theirs"]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("update memory.sessions set tier = 'cold' where session_id = 'early'")
    hot, everything = call(("recall", query), ("recall", {**query, "tiers": ["hot", "warm", "cold"]}), dsn=dsn)
    assert sessions(hot) == ["later"] and sorted(sessions(everything)) == ["early", "later"]
    assert (sessions(since), sessions(until), sessions(source)) == (["later"], ["early"], ["early"])
    (everyone,) = call(("recall", query), dsn=dsn, agent=None)
    assert sorted((hit["agent_id"], hit["session_id"]) for hit in payload(everyone)["hits"]) == [
        ("bot", "early"),
        ("bot", "later"),
        ("other", "theirs"),
    ]


def test_forget_removes_a_session_of_the_server_agent(dsn, enrich_now):
    forgotten, hits, again = call(
        ("commit", {"session_id": "ops-1", "messages": MESSAGES}),
        ("forget", {"session_id": "ops-1"}),
        ("recall", {"query": "when does staging move?"}),
        ("forget", {"session_id": "ops-1"}),
        dsn=dsn,
    )[1:]
    assert payload(forgotten)["turns_removed"] == 2 and payload(hits) == {"hits": []}
    assert 'no session "ops-1" for agent "bot"' in error(again) and "agent_memory:" not in error(again)


def test_context_for_task_and_explain(dsn, enrich_now):
    context, explained = call(
        ("commit", {"session_id": "ops-1", "messages": MESSAGES}),
        ("context_for_task", {"task": "move the staging database", "max_chars": 1000}),
        ("explain_recall", {"query": "when does staging move?", "k": 1}),
        dsn=dsn,
    )[1:]
    assert payload(context).startswith("- Ana (")
    (candidate,) = payload(explained)["candidates"]
    assert (candidate["rank"], candidate["speaker"], candidate["session_id"]) == (1, "Ana", "ops-1")
    assert "lexical #1" in candidate["lists"] and candidate["score"] == round(candidate["score"], 2)
    assert "components" not in candidate and "fused" not in candidate


def test_a_remembered_rule_is_recalled_at_once(dsn):
    remembered, recalled = call(
        ("remember", {"content": "The CI must test against Postgres 16.", "kind": "rule"}),
        ("recall", {"query": "which postgres version must CI test?"}),
        dsn=dsn,
    )
    assert payload(remembered)["outcome"] == "created"
    assert payload(recalled) == {
        "hits": [{**payload(recalled)["hits"][0], "content": "The CI must test against Postgres 16."}]
    }


def test_a_request_in_plain_words_lists_the_server_agents_memories(dsn):
    *_, listed = call(
        ("remember", {"content": "We ship on Fridays.", "kind": "decision", "importance": 0.9}),
        ("remember", {"content": "We review on Mondays.", "kind": "decision"}),
        ("remember", {"content": "Tabs, not spaces.", "kind": "preference", "importance": 0.9}),
        ("query", {"request": "top 5 important decisions, pretty please"}),
        dsn=dsn,
    )
    answer = payload(listed)
    assert answer["filters"]["agent_id"] == "bot" and answer["filters"]["k"] == 5
    assert [row["content"] for row in answer["rows"]] == ["We ship on Fridays."]
    assert answer["not_understood"] == ["pretty"] and "agent_id" not in answer["rows"][0]
