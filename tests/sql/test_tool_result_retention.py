"""Retention by kind: a tool_results policy clears what old tool results said (archived first) while the
conversation around them stays; a commit of the same conversation adds nothing back; the archive imports the
words back; a session that goes takes its tool results with it."""

import gzip
import json

import psycopg
import pytest
from psycopg.types.json import Json

OUTPUT = "ls: cannot open directory /srv/releases: permission denied"


def conversation(day: str) -> list[dict]:
    return [
        {"role": "user", "content": "List the releases on the server", "created_at": f"{day}T10:00:00Z"},
        {
            "role": "assistant",
            "content": "Listing the releases directory.",
            "tool_calls": [{"id": "c1", "name": "bash"}],
            "created_at": f"{day}T10:00:01Z",
        },
        {"role": "tool", "tool_call_id": "c1", "content": OUTPUT, "status": "error", "created_at": f"{day}T10:00:02Z"},
        {"role": "assistant", "content": "The releases directory needs sudo.", "created_at": f"{day}T10:00:03Z"},
    ]


@pytest.fixture
def acme(db, logins):
    conn = logins.create(tenant="acme")
    conn.execute(
        "select memory.commit('old', %s, agent_id => 'ops', enrich => 'now')", (Json(conversation("2026-01-05")),)
    )
    conn.execute(
        "select memory.commit('new', %s, agent_id => 'ops', enrich => 'now')", (Json(conversation("2099-01-05")),)
    )
    return conn


def maintain(db) -> dict:
    db.commit()
    db.autocommit = True
    db.execute("call memory.maintain()")
    (actions,) = db.execute("select actions from memory.maintenance_runs order by run_id desc limit 1").fetchone()
    return actions["retention"]


def turns(conn, session):
    return conn.execute(
        "select t.role, t.content, t.metadata ? 'content_removed_at' from memory.turns as t"
        " join memory.sessions as s using (tenant_id, session_key) where s.session_id = %s order by t.position",
        (session,),
    ).fetchall()


def test_old_tool_results_lose_their_words_and_the_conversation_stays(db, acme):
    policy = acme.execute(
        "select policy_id from memory.set_retention('tool_results', max_age => '30 days')"
    ).fetchone()[0]
    preview = acme.execute(
        "select policy_id, data, session_id, turn_id, reason from memory.retention_preview()"
    ).fetchall()
    old_result = acme.execute(
        "select result_turn_id from memory.tool_executions where session_id = 'old' and tool = 'bash'"
    ).fetchone()[0]
    assert preview == [(policy, "tool_results", "old", old_result, "unused for more than 30 days")]

    assert maintain(db)["acme"]["tool_results"] == 1
    assert [(role, content, removed) for role, content, removed in turns(acme, "old")] == [
        ("user", "List the releases on the server", False),
        ("assistant", "Listing the releases directory.", False),
        ("tool", "", True),
        ("assistant", "The releases directory needs sudo.", False),
    ]
    assert turns(acme, "new")[2] == ("tool", OUTPUT, False)
    assert acme.execute("select count(*) from memory.chunks where turn_id = %s", (old_result,)).fetchone() == (0,)
    # Recall finds the new result's words and no longer the old one's; the status stays listed.
    hits = acme.execute("select session_id from memory.recall('releases permission denied', tools => array['bash'])")
    assert hits.fetchall() == [("new",)]
    assert acme.execute(
        "select status, result from memory.tool_executions where result_turn_id = %s", (old_result,)
    ).fetchone() == ("error", "")
    # The same conversation committed again (hooks commit the whole transcript) adds nothing back.
    again = acme.execute(
        "select turns_added from memory.commit('old', %s, agent_id => 'ops')", (Json(conversation("2026-01-05")),)
    )
    assert again.fetchone() == (0,)
    assert acme.execute("select * from memory.retention_preview()").fetchall() == []
    # An export of it, committed or imported again, is the same turns.
    (exported,) = acme.execute("select session from memory.export(agent_id => 'ops', session_id => 'old')").fetchone()
    assert exported["messages"][2]["content"] == "" and "content_sha256" in exported["messages"][2]["metadata"]
    again = acme.execute(
        "select turns_added from memory.commit('old', %s, agent_id => 'ops')", (Json(exported["messages"]),)
    )
    assert again.fetchone() == (0,)
    records = [row[0] for row in acme.execute("select memory.export_tenant()").fetchall()]
    imported = acme.execute("select record_type, imported from memory.import_tenant(%s::jsonb)", (Json(records),))
    assert ("session", 0) in imported.fetchall()
    assert len(turns(acme, "old")) == 4


def test_the_archive_puts_the_words_back(db, acme):
    acme.execute("select memory.set_retention('tool_results', max_age => '30 days')")
    archive_id = maintain(db)["acme"]["archive_id"]
    data = acme.execute("select memory.archive(%s)", (archive_id,)).fetchone()[0]
    records = [json.loads(line) for line in gzip.decompress(data).decode().splitlines()]
    assert [r["record"] for r in records] == ["header", "tool_result"]
    assert records[1] == {"record": "tool_result", "turn": ["ops", "old", 3], "content": OUTPUT}

    # A record whose words are not the turn's changes nothing; the archive's own puts them back.
    forged = [records[0], {**records[1], "content": "something else"}]
    assert acme.execute("select * from memory.import_tenant(%s::jsonb)", (Json(forged),)).fetchall() == [
        ("tool_result", 0, 1, 0)
    ]
    assert acme.execute("select * from memory.import_tenant(%s::jsonb)", (Json(records),)).fetchall() == [
        ("tool_result", 1, 0, 0)
    ]
    assert turns(acme, "old")[2] == ("tool", OUTPUT, False)
    assert acme.execute("select count(*) from memory.jobs where kind = 'enrich' and status = 'queued'").fetchone() == (
        1,
    )
    with pytest.raises(psycopg.errors.InvalidParameterValue, match='a tool_result record needs "turn"'):
        acme.execute("select memory.import_tenant(%s::jsonb)", (Json([{"record": "tool_result", "turn": "x"}]),))


def test_a_session_that_goes_takes_its_tool_results(db, acme):
    acme.execute("select memory.set_retention('tool_results', max_age => '30 days')")
    acme.execute("select memory.set_retention('sessions', keep_last => 1)")
    db.execute("update memory.sessions set updated_at = '2026-01-05' where tenant_id = 'acme' and session_id = 'old'")
    db.commit()
    data = [row[1] for row in acme.execute("select session_id, data from memory.retention_preview()").fetchall()]
    assert data == ["sessions"]
    assert maintain(db)["acme"]["sessions"] == 1


def test_tool_results_take_no_statuses(acme):
    with pytest.raises(
        psycopg.errors.InvalidParameterValue, match="retention statuses are for memories, not tool_results"
    ):
        acme.execute("select memory.set_retention('tool_results', max_age => '1 day', statuses => array['active'])")
    with pytest.raises(
        psycopg.errors.InvalidParameterValue, match="covers sessions, memories or tool_results, got turns"
    ):
        acme.execute("select memory.set_retention('turns', max_age => '1 day')")
