"""Fleet sharing, as tenant-bound roles (row-level security on): a memory one agent shares reaches the recall,
bootstrap and context of the other agents of its tenant, marked with who shared it; share_sessions does the same
for what was said; a tenant's notifications reach its own channel only, once the transaction commits, with ids
and no content; another tenant sees and hears nothing."""

import json

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Json

SHARED = "The deploy key lives in vault path ops/deploy"
PRIVATE = "My favourite shell is fish"
SAID = "The staging database listens on port 6543"


def remember(conn, content, agent, **options):
    names = "".join(f", {name} => %({name})s" for name in options)
    return conn.execute(
        f"select memory_id, shared, outcome from memory.remember(%(content)s, agent_id => %(agent)s{names})",
        {"content": content, "agent": agent, **options},
    ).fetchone()


def recalled(conn, query, agent):
    return conn.execute(
        "select content, agent_id, shared_by from memory.recall(%s, agent_id => %s)", (query, agent)
    ).fetchall()


@pytest.fixture
def acme(db, logins):
    """Tenant acme: agent planner shares one memory and keeps one, and said something in a conversation."""
    conn = logins.create(tenant="acme")
    remember(conn, SHARED, "planner", shared=True)
    remember(conn, PRIVATE, "planner")
    conn.execute(
        "select memory.commit('standup', %s, agent_id => 'planner', enrich => 'now')",
        (Json([{"role": "user", "content": SAID}]),),
    )
    return conn


def test_a_shared_memory_reaches_the_other_agents_recall_marked_with_who_shared_it(acme):
    assert recalled(acme, "where does the deploy key live?", "coder")[0] == (SHARED, "planner", "planner")
    # The agent's own recall does not mark its own memory; every agent's recall marks nothing.
    assert recalled(acme, "where does the deploy key live?", "planner")[0] == (SHARED, "planner", None)
    assert recalled(acme, "where does the deploy key live?", None)[0] == (SHARED, "planner", None)


def test_what_an_agent_keeps_and_says_stays_its_own(acme):
    assert PRIVATE not in [c for c, _, _ in recalled(acme, "favourite shell fish", "coder")]
    assert SAID not in [c for c, _, _ in recalled(acme, "staging database port", "coder")]
    assert PRIVATE in [c for c, _, _ in recalled(acme, "favourite shell fish", "planner")]


def test_share_sessions_shares_what_was_said_but_not_the_memories_kept(acme):
    acme.execute("set memory.share_sessions = true")
    assert (SAID, "planner", "planner") in recalled(acme, "staging database port", "coder")
    assert PRIVATE not in [c for c, _, _ in recalled(acme, "favourite shell fish", "coder")]
    sessions = acme.execute(
        "select section, session_id, shared_by from memory.bootstrap('coder') where section = 'recent_session'"
    ).fetchall()
    assert sessions == [("recent_session", "standup", "planner")]


def test_bootstrap_and_task_context_include_what_the_fleet_shares(acme):
    remember(acme, "Coder's own rule: run the linter first", "coder", kind="rule")
    remembered = acme.execute(
        "select content, shared_by from memory.bootstrap('coder') where section = 'remembered'"
    ).fetchall()
    assert sorted(remembered) == sorted([("Coder's own rule: run the linter first", None), (SHARED, "planner")])
    context = acme.execute(
        "select content, shared_by from memory.context_for_task('rotate the deploy key', agent_id => 'coder')"
    ).fetchall()
    assert (SHARED, "planner") in context
    assert PRIVATE not in [content for content, _ in context]


def test_share_and_unshare_a_memory_and_its_next_version_keeps_it_shared(acme):
    memory_id = remember(acme, PRIVATE, "planner")[0]
    assert acme.execute("select shared from memory.share(%s)", (memory_id,)).fetchone() == (True,)
    assert PRIVATE in [c for c, _, _ in recalled(acme, "favourite shell fish", "coder")]
    assert acme.execute("select shared from memory.share(%s, false)", (memory_id,)).fetchone() == (False,)
    assert PRIVATE not in [c for c, _, _ in recalled(acme, "favourite shell fish", "coder")]

    first = remember(acme, "Deploys go out on Fridays", "planner", key="deploy.day", shared=True)
    second = remember(acme, "Deploys go out on Thursdays", "planner", key="deploy.day")
    assert (first[1], second[1:]) == (True, (True, "updated"))
    third = remember(acme, "Deploys go out on Mondays", "planner", key="deploy.day", shared=False)
    assert third[1:] == (False, "updated")
    # The same claim again with shared => true shares it; left out, it stays as it is.
    assert remember(acme, "Deploys go out on Mondays", "planner", key="deploy.day", shared=True)[1:] == (
        True,
        "unchanged",
    )
    assert remember(acme, "Deploys go out on Mondays", "planner", key="deploy.day")[1:] == (True, "unchanged")


def test_share_refuses_what_it_cannot_do_by_name(acme, logins):
    with pytest.raises(psycopg.errors.NoDataFound, match='no memory 999999 in tenant "acme"'):
        acme.execute("select memory.share(999999)")
    with pytest.raises(psycopg.errors.NullValueNotAllowed, match="shared must be true or false"):
        acme.execute("select memory.share(1, null)")
    globex = logins.create(tenant="globex")
    memory_id = remember(acme, "acme's own", "planner")[0]
    with pytest.raises(psycopg.errors.NoDataFound, match=f'no memory {memory_id} in tenant "globex"'):
        globex.execute("select memory.share(%s)", (memory_id,))


def test_another_tenant_sees_nothing_shared(acme, logins):
    # globex's agents share too, with words of their own; neither tenant's agents see the other's.
    globex = logins.create(tenant="globex")
    remember(globex, "The globex deploy key lives in the blue safe", "planner", shared=True)
    for conn in (acme, globex):
        conn.execute("set memory.share_sessions = true")
    assert [c for c, _, _ in recalled(globex, "where does the deploy key live?", "coder")] == [
        "The globex deploy key lives in the blue safe"
    ]
    assert {SHARED, SAID, f"user: {SAID}"}.isdisjoint(
        c for c, _, _ in recalled(globex, "staging database port", "coder")
    )
    assert "The globex deploy key lives in the blue safe" not in [
        c for c, _, _ in recalled(acme, "where does the deploy key live?", "coder")
    ]
    bootstrap = "select content from memory.bootstrap('coder') where section = 'remembered'"
    assert globex.execute(bootstrap).fetchall() == [("The globex deploy key lives in the blue safe",)]


def listening(conn):
    channel = conn.execute("select memory.notification_channel()").fetchone()[0]
    conn.execute(sql.SQL("listen {}").format(sql.Identifier(channel)))
    return channel


def received(conn, seconds=0.5):
    return [json.loads(note.payload) for note in conn.notifies(timeout=seconds)]


def test_notifications_reach_the_tenants_channel_when_the_transaction_commits(db, logins):
    acme_writer = logins.create(tenant="acme")
    acme_listener = logins.create(tenant="acme")
    globex = logins.create(tenant="globex")
    acme_channel = listening(acme_listener)
    assert listening(globex) != acme_channel
    # A channel is not another tenant's to guess: the key that names it is the owner's alone.
    for reading in ("select value from memory_internal._secrets", "select memory_internal._channel('acme')"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            globex.execute(reading)

    with acme_writer.transaction():
        memory_id = remember(acme_writer, SHARED, "planner", shared=True, enrich="none")[0]
        acme_writer.execute(
            "select memory.commit('standup', %s, agent_id => 'planner', enrich => 'none')",
            (Json([{"role": "user", "content": SAID}, {"role": "assistant", "content": "Noted."}]),),
        )
        assert received(acme_listener, 0.3) == []  # not before the commit
    events = received(acme_listener)
    assert events == [
        {
            "event": "memory",
            "memory_id": memory_id,
            "agent_id": "planner",
            "kind": "fact",
            "shared": True,
            "outcome": "created",
        },
        {"event": "session", "session_id": "standup", "agent_id": "planner", "turns": 2, "shared": False},
    ]
    assert SHARED not in json.dumps(events) and SAID not in json.dumps(events)

    # Rolled back: nothing is announced. The same claim again is no news; unsharing is.
    with pytest.raises(psycopg.errors.RaiseException), acme_writer.transaction():
        remember(acme_writer, "never kept", "planner", shared=True, enrich="none")
        acme_writer.execute("do $$ begin raise exception 'roll back'; end $$")
    remember(acme_writer, SHARED, "planner", shared=True, enrich="none")
    acme_writer.execute("select memory.share(%s, false)", (memory_id,))
    assert [(e["memory_id"], e["outcome"], e["shared"]) for e in received(acme_listener)] == [
        (memory_id, "unshared", False)
    ]
    assert received(globex) == []


def test_an_export_keeps_what_is_shared(acme, logins):
    records = [row[0] for row in acme.execute("select memory.export_tenant()").fetchall()]
    memories = {r["content"]: r.get("shared") for r in records if r["record"] == "memory"}
    assert (memories[SHARED], memories[PRIVATE]) == (True, None)
    globex = logins.create(tenant="globex")
    globex.execute("select from memory.import_tenant(%s::jsonb)", (Json(records),))
    assert globex.execute("select content from memory.memory_items where shared").fetchall() == [(SHARED,)]
    bad = [records[0], {**next(r for r in records if r["record"] == "memory"), "shared": "yes"}]
    with pytest.raises(psycopg.errors.InvalidParameterValue, match='"shared" must be true or false, got "yes"'):
        logins.create(tenant="initech").execute("select from memory.import_tenant(%s::jsonb)", (Json(bad),))
