"""memory.query: requests in plain words read as filters and run over a tenant's memories, sessions and turns,
as a tenant-bound role (row-level security on); the SQL it shows is the SQL it ran; the chat endpoint reads a
request only when the configuration allows it."""

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Json

CLI = str(Path(sys.executable).with_name("agent-memory"))
LAST_WEEK = date.today() - timedelta(days=date.today().weekday() + 4)  # the Thursday of last week


def remember(conn, content, kind, **options):
    names = "".join(f", {name} => %({name})s" for name in options)
    conn.execute(
        f"select memory.remember(%(content)s, kind => %(kind)s, enrich => 'none'{names})",
        {"content": content, "kind": kind, **options},
    )


@pytest.fixture
def acme(db, logins):
    """A role bound to tenant acme with memories, two conversations and an entity of type project; tenant globex
    holds the same words, which acme must never see."""
    acme = logins.create(tenant="acme")
    globex = logins.create(tenant="globex")
    for conn, marker in ((globex, " globex"), (acme, "")):
        remember(conn, f"We decided to move the queue to Redis{marker}", "decision", tags=["infra"], importance=0.9)
        remember(conn, f"Use short code reviews{marker}", "decision", importance=0.4)
        remember(conn, f"Docker build fails on arm64{marker}", "observation", tags=["docker", "error"])
        remember(conn, f"Docker cache is cold{marker}", "observation", tags=["docker"])
        remember(conn, f"Ship the Atlas beta{marker}", "task", subjects=["Atlas"], importance=0.8)
        remember(conn, f"Old Atlas plan{marker}", "task", subjects=["Atlas"], valid_from=LAST_WEEK)
        messages = [
            {"role": "user", "content": f"Should we use Redis for the queue?{marker}"},
            {
                "role": "assistant",
                "content": "Yes, Redis streams work.",
                "tool_calls": [{"id": "c1", "name": "search"}],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "redis.io: streams",
                "status": "error",
                "duration_ms": 1500,
            },
        ]
        conn.execute("select memory.commit('queue', %s, enrich => 'none')", (Json(messages),))
        conn.execute(
            "select memory.commit('lunch', %s, enrich => 'none')",
            (Json([{"role": "user", "content": "Where shall we eat?"}]),),
        )
        conn.execute("select memory.set_entity_state('Atlas', 'stage', '\"beta\"', type => 'project')")
    acme.execute("select memory.resolve(memory_id) from memory.list_memories(search => 'Old Atlas plan')")
    return acme


def query(conn, request, **options):
    names = "".join(f", {name} => %({name})s" for name in options)
    return conn.execute(f"select memory.query(%(request)s{names})", {"request": request, **options}).fetchone()[0]


def contents(answer, column="content"):
    return [row[column] for row in answer["rows"]]


def test_requests_in_plain_words_list_what_they_ask_for(acme):
    assert contents(query(acme, "top 10 recent decisions")) == [
        "Use short code reviews",
        "We decided to move the queue to Redis",
    ]
    assert contents(query(acme, "most important decisions")) == [
        "We decided to move the queue to Redis",
        "Use short code reviews",
    ]
    assert contents(query(acme, "observations tagged docker and error")) == ["Docker build fails on arm64"]
    assert contents(query(acme, "observations tagged docker or error")) == [  # as important: newest first
        "Docker cache is cold",
        "Docker build fails on arm64",
    ]
    assert contents(query(acme, "high-importance unresolved projects")) == ["Ship the Atlas beta"]
    assert contents(query(acme, "completed tasks about Atlas from last week")) == ["Old Atlas plan"]
    assert contents(query(acme, "1 decision")) == ["We decided to move the queue to Redis"]


def test_turns_and_sessions_are_the_conversations_alone(acme):
    assert contents(query(acme, "user messages mentioning Redis")) == ["Should we use Redis for the queue?"]
    assert contents(query(acme, "tool results mentioning streams")) == ["redis.io: streams"]
    calls = query(acme, "failed search calls slower than 1 s")["rows"]
    assert [(c["tool"], c["status"], c["duration_ms"], c["result"]) for c in calls] == [
        ("search", "error", 1500, "redis.io: streams")
    ]
    assert query(acme, "successful tool calls")["rows"] == [] and query(acme, "calls of grep")["rows"] == []
    # the session 'remembered' holds memories' words: a request for conversations leaves it out
    assert contents(query(acme, "sessions about redis"), "session_id") == ["queue"]
    assert contents(query(acme, "oldest conversations"), "session_id") == ["queue", "lunch"]
    assert query(acme, "sessions by agent nobody")["rows"] == []
    assert contents(query(acme, "turns about redis", agent_id="default")) == [
        "redis.io: streams",
        "Yes, Redis streams work.",
        "Should we use Redis for the queue?",
    ]


def test_the_sql_shown_is_the_sql_that_ran(acme):
    answer = query(acme, "observations tagged docker from this year")
    assert answer["sql"].startswith("select i.memory_id") and "i.tags @> '{docker}'::text[]" in answer["sql"]
    cursor = acme.execute(answer["sql"])
    columns = [c.name for c in cursor.description]
    again = [{k: v for k, v in zip(columns, row, strict=True) if v is not None} for row in cursor.fetchall()]
    assert [row["memory_id"] for row in again] == [row["memory_id"] for row in answer["rows"]]
    explained = query(acme, "observations tagged docker from this year", explain=True)
    assert "rows" not in explained and explained["sql"] == answer["sql"]
    assert explained["filters"] == answer["filters"] and answer["read_by"] == "words"


def test_words_not_understood_are_named_and_the_rest_still_runs(acme):
    answer = query(acme, "flibbertigibbet decisions tagged infra")
    assert answer["not_understood"] == ["flibbertigibbet"]
    assert contents(answer) == ["We decided to move the queue to Redis"]
    assert {"words": "tagged infra", "as": "tags (all): infra"} in answer["understood"]


def test_a_quoted_value_cannot_change_the_statement(acme):
    answer = query(acme, "decisions mentioning \"x') or true or ('\"")
    assert answer["rows"] == []
    assert "strpos(lower(i.content), lower('x'') or true or (''')) > 0" in answer["sql"]


@pytest.mark.parametrize(
    ("request_", "error"),
    [("", "the request is empty"), ("top 5000 decisions", "1 to 1000 rows, got 5000")],
)
def test_a_request_that_cannot_run_is_refused_with_the_reason(acme, request_, error):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=error):
        query(acme, request_)


def test_the_llm_reads_a_request_only_when_the_configuration_allows(db, acme, http_stub):
    with pytest.raises(psycopg.Error, match="llm query reading is not configured: setting query_reader is 'words'"):
        query(acme, "what we said about redis", llm=True)
    http_stub.answer_chat_for(db, "query_reader", json.dumps({"target": "turns", "roles": ["user"], "k": 5}))
    db.execute("set memory.tenant_id = 'acme'")
    answer = query(db, "what did the user ask?", llm=True)
    assert answer["read_by"] == "llm" and answer["filters"]["roles"] == ["user"]
    assert contents(answer) == ["Where shall we eat?", "Should we use Redis for the queue?"]
    asked = [body for path, body, _ in http_stub.requests if path.endswith("/chat/completions")][-1]
    assert asked["messages"][1]["content"].endswith("Request: what did the user ask?")
    http_stub.chat_reply = json.dumps({"target": "turns", "sql": "drop table memory.turns"})
    with pytest.raises(psycopg.Error, match="llm query reading failed: unknown filter 'sql'"):
        query(db, "anything", llm=True)


def test_the_command_line_shows_the_reading_the_sql_and_the_rows(acme, logins, db):
    info = db.info
    dsn = f"postgresql://{logins.names[-2]}@/{info.dbname}?host={info.host}&port={info.port}"
    shown = subprocess.run(
        [CLI, "--dsn", dsn, "query", "--sql", "observations tagged docker and error"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "'tagged docker and error': tags (all): docker, error" in shown
    assert "from memory.memory_items as i" in shown and "Docker build fails on arm64" in shown
    explained = subprocess.run(
        [CLI, "--dsn", dsn, "--json", "query", "--explain", "top 3 rules by agent x"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(explained)["filters"]["agent_id"] == "x" and json.loads(explained)["rows"] is None
