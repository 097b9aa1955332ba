"""What a person browsing memory reads: memory.list_sessions and memory.memory_history, as a role bound to a
tenant (row-level security on)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types.json import Json


@pytest.fixture
def acme(db, logins):
    """A login of tenant acme with three sessions of two agents, and globex with one of its own."""
    db.commit()
    db.autocommit = True
    db.execute("select set_config('memory.tenant_id', 'globex', false)")
    db.execute("select memory.commit('globex-plans', %s)", (Json([{"role": "user", "content": "globex only"}]),))
    conn = logins.create(tenant="acme")
    for n, (agent, session) in enumerate([("bot", "s1"), ("bot", "s2"), ("helper", "deploy-notes")]):
        said = [{"role": "user", "content": f"message {i} of {session}"} for i in range(n + 1)]
        conn.execute("select memory.commit(%s, %s, agent_id => %s)", (session, Json(said), agent))
    conn.execute("select memory.set_summary('s1', 'Talked about the Friday deploy', agent_id => 'bot')")
    return conn


def sessions(conn, **args) -> list[tuple]:
    given = ", ".join(f"{name} => %({name})s" for name in args)
    return conn.execute(f"select session_id, agent_id, turns from memory.list_sessions({given})", args).fetchall()


def test_sessions_newest_first_with_their_turns(acme):
    assert sessions(acme) == [("deploy-notes", "helper", 3), ("s2", "bot", 2), ("s1", "bot", 1)]
    assert sessions(acme, agent_id="bot") == [("s2", "bot", 2), ("s1", "bot", 1)]
    assert sessions(acme, search="DEPLOY") == [("deploy-notes", "helper", 3), ("s1", "bot", 1)]  # id or summary
    first = acme.execute("select updated_at from memory.list_sessions(k => 1)").fetchone()[0]
    assert [row[0] for row in sessions(acme, before=first)] == ["s2", "s1"]
    summary = acme.execute("select summary from memory.list_sessions(search => 'friday')").fetchone()[0]
    assert summary == "Talked about the Friday deploy"


def test_sessions_k_out_of_range_is_refused(acme):
    for k in (0, 1001):
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="k must be 1 to 1000"):
            acme.execute("select * from memory.list_sessions(k => %s)", (k,))


def test_memory_history_is_every_version_whatever_its_status(acme):
    first = acme.execute("select memory_id from memory.remember('Deploys on Fridays', key => 'deploy.day')").fetchone()
    second = acme.execute("select memory_id from memory.remember('Deploys on Thursdays', key => 'deploy.day')")
    second = second.fetchone()
    acme.execute("select memory.retract(%s)", second)
    for asked in (first[0], second[0]):
        versions = acme.execute("select memory_id, status, content from memory.memory_history(%s)", (asked,)).fetchall()
        assert versions == [
            (first[0], "superseded", "Deploys on Fridays"),
            (second[0], "retracted", "Deploys on Thursdays"),
        ]
    alone = acme.execute("select memory_id from memory.remember('Tea at four', kind => 'preference')").fetchone()
    assert [row[0] for row in acme.execute("select memory_id from memory.memory_history(%s)", alone)] == [alone[0]]


def test_another_tenants_sessions_and_memories_are_not_there(acme, db):
    db.execute("select set_config('memory.tenant_id', 'globex', false)")
    theirs = db.execute("select memory_id from memory.remember('globex secret')").fetchone()
    assert "globex-plans" not in [row[0] for row in sessions(acme)]
    with pytest.raises(psycopg.errors.NoDataFound, match=f"no memory {theirs[0]} in this tenant"):
        acme.execute("select * from memory.memory_history(%s)", theirs)
