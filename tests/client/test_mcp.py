"""`agent-memory mcp` driven as an MCP host drives it: a real client session over stdio."""

import asyncio
import json
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

CLI = str(Path(sys.executable).parent / "agent-memory")
MESSAGES = [
    {"role": "user", "name": "Ana", "id": "m1", "content": "The staging database moves to the new cluster on Monday."},
    {"role": "assistant", "id": "m2", "content": "Noted. I still have to update the connection strings."},
]


def talk(dsn, scenario):
    async def session():
        server = StdioServerParameters(command=CLI, args=["--dsn", dsn, "mcp", "--agent", "bot"])
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await scenario(client)

    return asyncio.run(asyncio.wait_for(session(), timeout=120))


def payload(result):
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content)
    return result.content[0].text


def test_the_tools_have_input_schemas(dsn):
    async def scenario(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in talk(dsn, scenario)}
    assert set(tools) == {"recall", "remember", "feedback", "bootstrap", "commit", "stats"}
    recall = tools["recall"].input_schema
    assert recall["required"] == ["query"] and recall["properties"]["level"]["enum"] == ["turn", "session"]
    assert tools["feedback"].input_schema["properties"]["helpful"]["type"] == "boolean"
    assert "turn_id" in tools["recall"].description


def test_commit_recall_feedback_remember_bootstrap_and_stats_over_stdio(dsn, db):
    db.execute("insert into memory.config (key, value) values ('enrich', '\"now\"')")
    db.commit()

    async def scenario(client):
        committed = payload(await client.call_tool("commit", {"session_id": "ops-1", "messages": MESSAGES}))
        hits = payload(await client.call_tool("recall", {"query": "when does staging move?", "k": 1}))
        verdict = payload(await client.call_tool("feedback", {"turn_id": hits[0]["turn_id"], "helpful": True}))
        remembered = payload(await client.call_tool("remember", {"content": "Ana owns the database move."}))
        context = payload(await client.call_tool("bootstrap", {"max_chars": 2000}))
        stats = payload(await client.call_tool("stats", {}))
        bad = await client.call_tool("commit", {"session_id": "ops-2", "messages": [{"role": "robot", "content": "x"}]})
        return committed, hits, verdict, remembered, context, stats, bad

    committed, hits, verdict, remembered, context, stats, bad = talk(dsn, scenario)
    assert committed["turns_added"] == 2 and committed["created"] is True
    assert hits[0]["message_id"] == "m1" and hits[0]["speaker"] == "Ana" and "components" not in hits[0]
    assert verdict["trust_after"] > verdict["trust_before"]
    assert remembered["added"] is True
    assert context.startswith("## Remembered\n- Ana owns the database move.")
    assert [(row["agent_id"], row["turns"]) for row in stats] == [("bot", 3)]
    assert bad.is_error and "message 0 has unknown role" in json.dumps(bad.model_dump(mode="json"))
