"""The Python client (Memory, AsyncMemory) against the real server with the real extension."""

import asyncio
from datetime import datetime

import pytest
from psycopg_pool import ConnectionPool

from agent_memory import (
    AgentStats,
    AsyncMemory,
    Bootstrap,
    Committed,
    ConnectionFailed,
    Hit,
    InvalidInput,
    Memory,
    NotFound,
    NotInstalled,
)

CHAT = [
    {
        "role": "user",
        "name": "Ana",
        "id": "a1",
        "content": "We moved the auth service to Postgres with row level security.",
    },
    {"role": "assistant", "id": "a2", "content": "Good. I still need to rotate the signing keys before Friday."},
]


@pytest.fixture
def memory(dsn):
    with Memory(dsn) as client:
        yield client


def test_commit_then_recall_returns_typed_hits(memory):
    committed = memory.commit("chat-1", CHAT, agent_id="bot", enrich="now")
    assert committed == Committed(
        session_key=committed.session_key, created=True, turns_added=2, job_id=None, turns_indexed_in_part=0
    )
    assert memory.commit("chat-1", CHAT, agent_id="bot").turns_added == 0
    hits = memory.recall("what happened to the auth service?", k=1, agent_id="bot")
    assert len(hits) == 1 and isinstance(hits[0], Hit)
    hit = hits[0]
    assert (hit.message_id, hit.speaker, hit.session_id, hit.agent) == ("a1", "Ana", "chat-1", "bot")
    assert isinstance(hit.created_at, datetime) and hit.score > 0 and "lexical" in hit.components["signals"]


def test_options_left_out_keep_the_databases_defaults(memory):
    committed = memory.commit("chat-1", CHAT)  # agent 'default', enrichment queued (setting enrich)
    assert committed.job_id is not None
    assert memory.work(5).processed == 1
    assert [row.agent_id for row in memory.stats()] == ["default"]


def test_recall_with_weights_filters_and_a_query_vector(memory, db):
    memory.commit("chat-1", CHAT, agent_id="bot", enrich="now")
    vector = db.execute("select (memory.embed(array['signing keys']))[1]::real[]").fetchone()[0]
    hits = memory.recall(
        "signing keys",
        k=2,
        agent_id="bot",
        since=datetime(2000, 1, 1),
        weights={"weight_dense": 1.5},
        query_vector=vector,
    )
    assert hits[0].message_id == "a2"
    assert hits[0].components["signals"]["dense"]["rank"] == 1
    assert memory.recall("signing keys", until=datetime(2000, 1, 1)) == []


def test_explain_feedback_remember_bootstrap_forget_and_export(memory):
    memory.commit("chat-1", CHAT, agent_id="bot", enrich="now")
    candidates = memory.explain_recall("signing keys", agent_id="bot")
    assert candidates[0].rank == 1 and candidates[0].components["signals"]["lexical"]["rank"] == 1
    verdict = memory.feedback(candidates[0].turn_id, False, query="signing keys", note="stale")
    assert (verdict.trust_before, verdict.trust_after) == (1.0, 0.5)
    remembered = memory.remember("Ana is the security lead.", kind="fact", agent_id="bot")
    assert remembered.added and remembered.session_id == "remembered"
    context = memory.bootstrap(agent_id="bot", max_chars=2000)
    assert isinstance(context, Bootstrap) and context.items[0].content == "Ana is the security lead."
    assert context.text().startswith("## Remembered\n- Ana is the security lead.")
    task = memory.context_for_task("rotate the signing keys", max_chars=500, agent_id="bot")
    assert task.items[0].content == CHAT[1]["content"] and task.items[0].speaker == "assistant"
    assert task.text().startswith("- assistant (")
    exported = memory.export(agent_id="bot", session_id="chat-1")
    assert [m["id"] for m in exported[0]["messages"]] == ["a1", "a2"]
    assert memory.forget("chat-1", agent_id="bot").turns_removed == 2
    (stats,) = memory.stats("bot")
    assert isinstance(stats, AgentStats) and (stats.sessions, stats.remembered) == (1, 1)


def test_database_errors_become_client_errors_with_the_servers_message(memory):
    with pytest.raises(InvalidInput, match="message 0 has unknown role"):
        memory.commit("bad", [{"role": "robot", "content": "beep"}])
    with pytest.raises(NotFound, match='no session "nope" for agent "default"'):
        memory.forget("nope")
    with pytest.raises(InvalidInput, match='unknown setting "weight_magic"'):
        memory.recall("x", weights={"weight_magic": 1})
    assert memory.stats() == []  # nothing half-written


def test_a_database_without_the_extension_says_so(bare_db):
    info = bare_db.info
    url = f"postgresql://{info.user}@/{info.dbname}?host={info.host}&port={info.port}"
    with Memory(url) as client, pytest.raises(NotInstalled, match="is the agent_memory extension installed"):
        client.stats()


def test_tenants_see_only_their_own_memory(dsn):
    with Memory(dsn, tenant="acme") as acme, Memory(dsn, tenant="globex") as globex:
        acme.commit("chat-1", CHAT, enrich="now")
        assert globex.recall("auth service") == []
        assert [hit.message_id for hit in acme.recall("auth service", k=1)] == ["a1"]
        assert globex.stats() == [] and acme.stats()[0].turns == 2


def test_a_callers_pool_is_used_and_left_open(dsn):
    with ConnectionPool(dsn, min_size=1, max_size=1) as pool:
        with Memory(pool=pool, tenant="acme") as client:
            client.commit("chat-1", CHAT)
            assert client.work(5).processed == 1
        with pool.connection() as conn:  # still open; the tenant did not stick to the connection
            assert conn.execute("select memory.current_tenant()").fetchone()[0] == "default"
            assert conn.execute("select count(*) from memory.turns where tenant_id = 'acme'").fetchone()[0] == 2


def test_bad_client_arguments_are_refused_before_connecting(dsn):
    with pytest.raises(ValueError, match="either a connection string"):
        Memory()
    with pytest.raises(ValueError, match="tenant must not be empty"):
        Memory(dsn, tenant=" ")


def test_async_memory_does_the_same_calls(dsn):
    async def scenario():
        async with AsyncMemory(dsn, tenant="acme") as memory:
            await memory.commit("chat-1", CHAT, agent_id="bot")
            assert (await memory.work(5)).processed == 1
            hits = await memory.recall("signing keys", k=1)
            verdict = await memory.feedback(hits[0].turn_id, True)
            with pytest.raises(NotFound):
                await memory.forget("nope", agent_id="bot")
            return hits[0].message_id, verdict.trust_after, (await memory.health()).problem

    assert asyncio.run(scenario()) == ("a2", pytest.approx(1.1), None)


def test_unreachable_database_fails_at_once_with_the_reason():
    with pytest.raises(ConnectionFailed, match=r"/nonexistent/\.s\.PGSQL\.1"):
        Memory("postgresql://postgres@/x?host=/nonexistent&port=1")

    async def open_async():
        async with AsyncMemory("postgresql://postgres@/x?host=/nonexistent&port=1"):
            pass

    with pytest.raises(ConnectionFailed, match="No such file or directory"):
        asyncio.run(open_async())
