"""The Python client (Memory, AsyncMemory) against the real server with the real extension."""

import asyncio
import inspect
import re
import typing
from datetime import datetime

import pytest
from psycopg_pool import ConnectionPool

from agent_memory import (
    AgentStats,
    AsyncMemory,
    Bootstrap,
    Committed,
    Components,
    ConnectionFailed,
    Enrich,
    EntityMode,
    ExportedMessage,
    ExportedSession,
    Hit,
    InvalidInput,
    Kind,
    Level,
    Memory,
    NotFound,
    NotInstalled,
    Reindexed,
    Signal,
    calls,
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
    assert committed == Committed(created=True, turns_added=2, job_id=None, turns_indexed_in_part=0)
    assert memory.commit("chat-1", CHAT, agent_id="bot").turns_added == 0
    hits = memory.recall("what happened to the auth service?", k=1, agent_id="bot")
    assert len(hits) == 1 and isinstance(hits[0], Hit)
    hit = hits[0]
    assert (hit.message_id, hit.speaker, hit.session_id, hit.agent_id) == ("a1", "Ana", "chat-1", "bot")
    assert isinstance(hit.created_at, datetime) and hit.score > 0 and "lexical" in hit.components["signals"]


def test_components_have_the_keys_of_their_typed_dicts(memory):
    memory.commit("chat-1", CHAT, enrich="now")
    for found in (memory.recall("signing keys")[0], memory.explain_recall("signing keys")[0]):
        assert found.components.keys() == Components.__annotations__.keys()
        for signal in found.components["signals"].values():
            assert Signal.__required_keys__ <= signal.keys() <= Signal.__annotations__.keys()


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


def test_recall_searches_the_tiers_asked_for(memory, db):
    memory.commit("chat-1", CHAT, agent_id="bot", enrich="now")
    db.execute("update memory.sessions set tier = 'cold' where session_id = 'chat-1'")
    db.commit()
    assert memory.recall("signing keys", weights={"tier_promote_on_recall": False}) == []
    (hit, *_) = memory.recall("signing keys", tiers=["hot", "cold"])
    assert hit.session_id == "chat-1" and hit.components["tiers"] == ["hot", "cold"]
    assert memory.recall("signing keys", tiers=["hot"])[0].session_id == "chat-1"  # recall moved it to hot


def test_a_run_is_written_and_kept_to(memory):
    memory.commit("chat-1", CHAT, agent_id="bot", enrich="now", run_id="rotation")
    memory.commit(
        "chat-2",
        [{"role": "user", "content": "Signing keys are in the HSM."}],
        agent_id="bot",
        run_id="audit",
        enrich="now",
    )
    kept = memory.remember("Rotate signing keys yearly.", agent_id="bot", run_id="rotation")
    assert kept.run_id == "rotation"
    assert {hit.session_id for hit in memory.recall("signing keys", run_id="rotation")} == {"chat-1", "remembered"}
    assert [s.session_id for s in memory.list_sessions(run_id="audit")] == ["chat-2"]
    assert [m.memory_id for m in memory.list_memories(run_id="rotation")] == [kept.memory_id]
    assert [i.session_id for i in memory.bootstrap(agent_id="bot", run_id="audit").items] == ["chat-2"]
    assert [i.content for i in memory.context_for_task("signing keys", agent_id="bot", run_id="audit").items] == [
        "Signing keys are in the HSM."
    ]


def test_explain_feedback_remember_bootstrap_forget_and_export(memory):
    memory.commit("chat-1", CHAT, agent_id="bot", enrich="now")
    candidates = memory.explain_recall("signing keys", agent_id="bot")
    assert candidates[0].rank == 1 and candidates[0].components["signals"]["lexical"]["rank"] == 1
    verdict = memory.give_feedback("unhelpful", turn_id=candidates[0].turn_id, query="signing keys", note="stale")
    assert (verdict.trust_before, verdict.trust_after) == (1.0, 0.5)
    remembered = memory.remember("Ana is the security lead.", kind="fact", agent_id="bot")
    assert remembered.outcome == "created" and remembered.kind == "fact" and remembered.agent_id == "bot"
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
    with pytest.raises(NotFound, match='no session "nope"'):
        memory.forget("nope")
    with pytest.raises(InvalidInput, match='unknown setting "weight_magic"'):
        memory.recall("x", weights={"weight_magic": 1})
    assert memory.stats() == []  # nothing half-written


def test_a_database_without_the_extension_says_so(bare_db):
    info = bare_db.info
    url = f"postgresql://{info.user}@/{info.dbname}?host={info.host}&port={info.port}"
    with Memory(url) as client, pytest.raises(NotInstalled, match="`agent-memory install`"):
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


def test_bad_client_arguments_are_refused_before_connecting(dsn, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    for client in (Memory, AsyncMemory):
        with pytest.raises(ValueError, match=r"no connection string, no pool and no \$DATABASE_URL: pass one"):
            client()
    with ConnectionPool(dsn, min_size=1, max_size=1) as pool, pytest.raises(ValueError, match="not both"):
        Memory(dsn, pool=pool)
    with pytest.raises(ValueError, match="tenant must not be empty"):
        Memory(dsn, tenant=" ")


def test_without_a_dsn_the_client_reads_database_url(dsn, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", dsn)
    with Memory() as memory:
        assert memory.commit("chat-1", CHAT).turns_added == 2

    async def scenario():
        async with AsyncMemory() as memory:
            return [row.turns for row in await memory.stats()]

    assert asyncio.run(scenario()) == [2]


def test_async_memory_does_the_same_calls(dsn):
    async def scenario():
        async with AsyncMemory(dsn, tenant="acme") as memory:
            await memory.commit("chat-1", CHAT, agent_id="bot")
            assert (await memory.work(5)).processed == 1
            hits = await memory.recall("signing keys", k=1)
            verdict = await memory.give_feedback("helpful", turn_id=hits[0].turn_id)
            with pytest.raises(NotFound):
                await memory.forget("nope", agent_id="bot")
            return hits[0].message_id, verdict.trust_after, (await memory.health()).problem

    assert asyncio.run(scenario()) == ("a2", pytest.approx(1.1), None)


def test_unreachable_database_fails_at_once_with_the_reason_and_what_to_do():
    with pytest.raises(ConnectionFailed, match=r"/nonexistent/\.s\.PGSQL\.1.*`agent-memory db start`"):
        Memory("postgresql://postgres@/x?host=/nonexistent&port=1")

    async def open_async():
        async with AsyncMemory("postgresql://postgres@/x?host=/nonexistent&port=1"):
            pass

    with pytest.raises(ConnectionFailed, match=r"No such file or directory.*`agent-memory db start`"):
        asyncio.run(open_async())


def test_an_unknown_host_names_it_and_says_to_check_the_connection_string():
    with pytest.raises(ConnectionFailed, match=r"'nohost'.*check the connection string \(`agent-memory db url`"):
        Memory("postgresql://nohost:1/x")


def test_a_malformed_connection_string_is_invalid_input_naming_the_problem():
    for client in (Memory, lambda dsn: asyncio.run(AsyncMemory(dsn).open())):
        with pytest.raises(
            InvalidInput, match=r'not a connection string \(missing "=" after "not".*agent-memory db url'
        ):
            client("not a dsn")


def test_async_memory_used_without_opening_says_how_to_open_it(dsn):
    async def scenario():
        memory = AsyncMemory(dsn)
        with pytest.raises(ConnectionFailed, match=r"use `async with AsyncMemory\(...\) as memory:` or .*open\(\)"):
            await memory.recall("auth")
        await memory.open()
        assert await memory.recall("auth") == []
        await memory.close()

    asyncio.run(scenario())


def test_a_closed_client_or_pool_says_what_to_do(dsn):
    memory = Memory(dsn)
    memory.close()
    with pytest.raises(ConnectionFailed, match="this Memory is closed: create a new one"):
        memory.stats()
    pool = ConnectionPool(dsn, open=False)
    with pytest.raises(ConnectionFailed, match=r"the pool given to Memory\(pool=...\) is not open"):
        Memory(pool=pool).stats()


def test_memory_and_async_memory_have_the_same_methods():
    def methods(cls):
        return {
            name: inspect.signature(member)
            for name, member in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")
        }

    sync, async_ = methods(Memory), methods(AsyncMemory)
    assert sync.keys() - {"close"} == async_.keys() - {"close", "open"}
    for name, signature in sync.items():
        if name != "close":
            # An iterator of Memory's is an async iterator of AsyncMemory's.
            expected = signature.replace(
                return_annotation=str(signature.return_annotation).replace("Iterator", "AsyncIterator")
            )
            assert async_[name] == expected, name


def test_every_agent_id_defaults_to_none():
    for cls in (Memory, AsyncMemory):
        for name, method in inspect.getmembers(cls, inspect.isfunction):
            agent = inspect.signature(method).parameters.get("agent_id")
            if name != "forget_agent":  # the agent it removes, which has no default
                assert agent is None or agent.default is None, f"{cls.__name__}.{name}"


READS = {  # the calls that read or address stored data, with no agent given
    "recall": ("q", {}),
    "explain_recall": ("q", {}),
    "bootstrap": (None, None, None, None),
    "context_for_task": ("t", None, None, None, None),
    "stats": (None,),
    "export": (None, None),
    "export_tenant": (None,),
    "forget": ("s", None),
    "enrich": ("s", None),
    "reindex": (None, None),
}
WRITES = {"commit": ("s", [], {}), "remember": ("fact", {})}


@pytest.mark.parametrize(("name", "arguments"), [*READS.items(), *WRITES.items()])
def test_an_agent_id_left_out_is_not_sent(name, arguments):
    """The database's rule for a missing agent applies: every agent for reads, "default" for writes."""
    assert "agent_id" not in getattr(calls, name)(*arguments).params


@pytest.mark.parametrize(
    ("closed_set", "call", "refusal"),
    [
        (Level, lambda m, bad: m.recall("x", level=bad), r"level must be (.*), got"),
        (EntityMode, lambda m, bad: m.recall("x", entity_mode=bad), r"entity_mode must be (.*), got"),
        (
            Enrich,
            lambda m, bad: m.commit("s", [{"role": "user", "content": "x"}], enrich=bad),
            r"enrich must be (.*), got",
        ),
        (Kind, lambda m, bad: m.remember("x", kind=bad), r"kind must be one of (.*), got"),
    ],
)
def test_the_literal_types_are_the_sets_the_database_checks(memory, closed_set, call, refusal):
    with pytest.raises(InvalidInput) as refused:
        call(memory, "bogus")
    allowed = re.search(refusal, str(refused.value)).group(1)
    assert set(re.split(r", | or ", allowed)) == set(typing.get_args(closed_set))


def test_export_gives_typed_sessions_that_commit_takes_back(dsn):
    chat = [
        {**CHAT[0], "created_at": "2025-03-01T10:00:00Z", "metadata": {"lang": "en"}, "tokens": 12},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "rotate"}}]},
        {"role": "tool", "content": "rotated", "tool_call_id": "c1"},
    ]
    with Memory(dsn, tenant="acme") as acme, Memory(dsn, tenant="globex") as globex:
        acme.commit("chat-1", chat, agent_id="bot", source="slack", model="m1", tokens_in=5, metadata={"team": "x"})
        (session,) = acme.export()
        assert ExportedSession.__required_keys__ <= session.keys() <= ExportedSession.__annotations__.keys()
        for message in session["messages"]:
            assert ExportedMessage.__required_keys__ <= message.keys() <= ExportedMessage.__annotations__.keys()
        assert (session["source"], session["tokens_in"], session["metadata"]) == ("slack", 5, {"team": "x"})
        assert session["messages"][0]["metadata"] == {"lang": "en"} and session["messages"][2]["tool_call_id"] == "c1"
        committed = globex.commit(
            session["session_id"],
            session["messages"],
            agent_id=session["agent_id"],
            source=session.get("source"),
            model=session.get("model"),
            started_at=session["started_at"],
            tokens_in=session.get("tokens_in"),
            tokens_out=session.get("tokens_out"),
            metadata=session["metadata"],
        )
        assert committed.turns_added == 3
        assert globex.export() == [session]


def test_a_tenant_goes_to_another_in_one_transaction_of_batches(dsn):
    with Memory(dsn, tenant="acme") as acme, Memory(dsn, tenant="globex") as globex:
        acme.commit("chat-1", CHAT, agent_id="bot", enrich="now")
        acme.remember("Ana leads the security work.", kind="fact", agent_id="bot", key="security.lead")
        records = acme.export_tenant()
        assert list(acme.iter_export_tenant(batch_size=2))[1:] == records[1:]  # all but the header's time
        with pytest.raises(InvalidInput, match=rf"import record {len(records) + 1} \(memory\): a memory record needs"):
            globex.import_tenant([*records, {"record": "memory"}], batch_size=2)
        assert globex.export_tenant()[1:] == []  # all or nothing: the batches before the bad one are gone too
        batches: list[int] = []
        counts = globex.import_tenant(records, batch_size=2, on_batch=batches.append)
        assert set(batches[:-1]) <= {2} and sum(batches) == len(records)
        assert [(c.record_type, c.imported) for c in counts] == [
            ("session", 2),
            ("memory", 1),
            ("entity", 2),
        ]
        globex.work(10)

        def without_ids(exported: list) -> list:  # memory ids are the database's own
            return [{key: value for key, value in r.items() if key != "id"} for r in exported[1:]]

        assert without_ids(globex.export_tenant()) == without_ids(records)
        query = "who leads security?"
        assert [h.content for h in globex.recall(query)] == [h.content for h in acme.recall(query)]


def test_retention_through_the_async_client(dsn):
    async def main() -> tuple[list[str], int]:
        async with AsyncMemory(dsn) as memory:
            await memory.commit("old", CHAT, agent_id="bot")
            policy = await memory.set_retention("sessions", keep_last=0, agent_id="bot")
            assert (policy.data, policy.keep_last, await memory.list_retention_policies()) == ("sessions", 0, [policy])
            preview = [item.session_id or "" for item in await memory.retention_preview()]
            assert await memory.list_archives() == [] and await memory.archive(1) is None
            assert await memory.drop_retention(policy.policy_id) and not await memory.drop_archive(1)
            streamed = [record async for record in memory.iter_export_tenant(batch_size=1)]
            assert streamed[1:] == (await memory.export_tenant())[1:]
            counts = await memory.import_tenant(streamed)
            return preview, sum(c.unchanged for c in counts)

    assert asyncio.run(main()) == (["old"], 1)


# These need the SQL rule for agent_id (memory_internal._session_key): a session named without an agent
# is found under whichever agent has it, if only one does.
def test_forget_and_enrich_without_an_agent_find_the_session_under_its_agent(memory):
    committed = memory.commit("chat-1", CHAT, agent_id="coder", enrich="none")
    assert committed.created and memory.enrich("chat-1").chunks == 2
    assert memory.forget("chat-1").turns_removed == 2
    assert memory.stats() == []


def test_a_session_under_two_agents_must_be_named_with_its_agent(memory):
    memory.commit("chat-1", CHAT, agent_id="bot")
    memory.commit("chat-1", CHAT, agent_id="coder")
    with pytest.raises(InvalidInput, match='session "chat-1" exists for agents "bot", "coder"'):
        memory.forget("chat-1")
    with pytest.raises(InvalidInput, match='exists for agents "bot", "coder"'):
        memory.enrich("chat-1")
    assert memory.forget("chat-1", agent_id="coder").turns_removed == 2


def test_not_found_says_which_agent_has_the_session(memory):
    memory.commit("chat-1", CHAT, agent_id="coder")
    with pytest.raises(NotFound, match='no session "chat-1" for agent "default"; it exists for agent "coder"'):
        memory.forget("chat-1", agent_id="default")


def test_a_remembered_fact_is_recallable_at_once(memory):
    assert memory.remember("Deploys go out on Fridays.", kind="rule").outcome == "created"
    assert [hit.content for hit in memory.recall("when do deploys go out?", k=1)] == ["Deploys go out on Fridays."]
    assert memory.remember("Staging resets nightly.", enrich="queue").outcome == "created"
    assert memory.work(5).processed == 1


def test_reindex_queues_the_sessions_in_scope_once(memory, dsn):
    memory.commit("chat-1", CHAT, agent_id="bot", enrich="now")
    memory.commit("chat-2", CHAT, agent_id="coder", enrich="now")
    assert memory.reindex(agent_id="bot") == Reindexed(sessions=1, jobs=1)
    assert memory.reindex() == Reindexed(sessions=2, jobs=1)  # chat-1 is queued already
    assert memory.reindex(session_id="chat-2") == Reindexed(sessions=1, jobs=0)
    assert memory.work(10).processed == 2

    async def scenario():
        async with AsyncMemory(dsn) as client:
            return await client.reindex(session_id="chat-2")

    assert asyncio.run(scenario()) == Reindexed(sessions=1, jobs=1)
