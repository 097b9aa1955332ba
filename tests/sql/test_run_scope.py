"""Runs, as a tenant-bound role: sessions and memories carry the run (one task or process of an agent) they were
written in, and recall, explain_recall, bootstrap, context_for_task, list_sessions and list_memories keep to one
run when asked; a session belongs to one run; export and import keep it."""

import psycopg
import pytest
from psycopg.types.json import Json


def said(words: str) -> Json:
    return Json([{"role": "user", "content": words}])


@pytest.fixture
def acme(db, logins):
    """Agent builder ran two tasks; what it remembered in each, and a memory of no run."""
    conn = logins.create(tenant="acme")
    for session, run, words in (
        ("s1", "task-1", "The nightly build of the first task uses cache v3"),
        ("s2", "task-2", "The nightly build of the second task uses cache v4"),
    ):
        conn.execute(
            "select memory.commit(%s, %s, agent_id => 'builder', run_id => %s, enrich => 'now')",
            (session, said(words), run),
        )
    conn.execute(
        "select memory.remember('Nightly build caches live in bucket one', agent_id => 'builder', run_id => 'task-1')"
    )
    conn.execute("select memory.remember('Nightly builds start at 2am', agent_id => 'builder')")
    return conn


def recalled(conn, run, function="recall"):
    return sorted(
        content
        for (content,) in conn.execute(
            f"select content from memory.{function}('nightly build cache', agent_id => 'builder', run_id => %s)", (run,)
        ).fetchall()
    )


def test_recall_keeps_to_the_run_asked_for(acme):
    assert recalled(acme, "task-1") == [
        "Nightly build caches live in bucket one",
        "The nightly build of the first task uses cache v3",
    ]
    assert recalled(acme, "task-2") == ["The nightly build of the second task uses cache v4"]
    assert recalled(acme, "task-2", "explain_recall") == ["The nightly build of the second task uses cache v4"]
    assert len(recalled(acme, None)) == 4
    assert recalled(acme, "task-9") == []
    # Per session, as a setting: every recall of the session keeps to the run.
    acme.execute("set memory.recall_run_id = 'task-2'")
    assert [c for (c,) in acme.execute("select content from memory.recall('nightly build cache')").fetchall()] == [
        "The nightly build of the second task uses cache v4"
    ]


def test_bootstrap_context_and_lists_keep_to_the_run(acme):
    bootstrap = acme.execute("select section, content from memory.bootstrap('builder', run_id => 'task-1')").fetchall()
    assert bootstrap == [
        ("remembered", "Nightly build caches live in bucket one"),
        ("recent_session", "user: The nightly build of the first task uses cache v3"),
    ]
    assert all("second task" not in content for _, content in bootstrap)
    context = acme.execute(
        "select content from memory.context_for_task('nightly build cache', run_id => 'task-2')"
    ).fetchall()
    assert context == [("The nightly build of the second task uses cache v4",)]
    assert acme.execute("select session_id, run_id from memory.list_sessions(run_id => 'task-2')").fetchall() == [
        ("s2", "task-2")
    ]
    assert acme.execute("select content, run_id from memory.list_memories(run_id => 'task-1')").fetchall() == [
        ("Nightly build caches live in bucket one", "task-1")
    ]


def test_a_session_belongs_to_one_run_and_a_run_has_a_name(acme):
    # Committed again without a run, or with its own, the session keeps its run.
    acme.execute("select memory.commit('s1', %s, agent_id => 'builder')", (said("more"),))
    acme.execute("select memory.commit('s1', %s, agent_id => 'builder', run_id => 'task-1')", (said("again"),))
    with pytest.raises(
        psycopg.errors.InvalidParameterValue, match="session s1 of agent builder belongs to run task-1, not x"
    ):
        acme.execute("select memory.commit('s1', %s, agent_id => 'builder', run_id => 'x')", (said("no"),))
    # A session first committed without a run joins the first run named.
    acme.execute("select memory.commit('s3', %s, agent_id => 'builder')", (said("later"),))
    acme.execute("select memory.commit('s3', %s, agent_id => 'builder', run_id => 'task-3')", (said("joined"),))
    assert acme.execute("select run_id from memory.list_sessions(run_id => 'task-3')").fetchall() == [("task-3",)]
    for call in (
        "select memory.commit('s4', '[]', run_id => ' ')",
        "select memory.remember('x', run_id => '')",
    ):
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="run_id cannot be blank"):
            acme.execute(call)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="run_id is 1001 characters long"):
        acme.execute("select memory.remember('x', run_id => repeat('r', 1001))")


def test_export_and_import_keep_the_run(acme, logins):
    records = [row[0] for row in acme.execute("select memory.export_tenant()").fetchall()]
    globex = logins.create(tenant="globex")
    globex.execute("select from memory.import_tenant(%s::jsonb)", (Json(records),))
    sessions = "select session_id, run_id from memory.list_sessions() where session_id <> 'remembered' order by 1"
    assert globex.execute(sessions).fetchall() == [
        ("s1", "task-1"),
        ("s2", "task-2"),
    ]
    assert globex.execute("select content from memory.list_memories(run_id => 'task-1')").fetchall() == [
        ("Nightly build caches live in bucket one",)
    ]


def test_a_request_in_plain_words_keeps_to_a_run(acme):
    answer = acme.execute("select memory.query('memories in run task-1')").fetchone()[0]
    assert answer["filters"]["run_id"] == "task-1"
    assert [row["content"] for row in answer["rows"]] == ["Nightly build caches live in bucket one"]
    sessions = acme.execute("select memory.query('sessions during run task-2') -> 'rows'").fetchone()[0]
    assert [row["session_id"] for row in sessions] == ["s2"]


def test_memories_extracted_from_a_runs_conversation_are_in_the_run(acme):
    acme.execute(
        "select memory.commit('s5', %s, agent_id => 'builder', run_id => 'task-5', enrich => 'now')",
        (said("I prefer incremental builds over clean ones."),),
    )
    extracted = acme.execute("select kind, run_id from memory.list_memories(run_id => 'task-5')").fetchall()
    assert extracted == [("preference", "task-5")]
