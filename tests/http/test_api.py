"""Every endpoint of `agent-memory serve`, through a real server on loopback, with a key of tenant acme: what it
answers is what the SQL function answers the same role."""

from __future__ import annotations

import json

import pytest

DEPLOYS = [
    {"role": "user", "content": "Our deploys go out on Fridays after the standup with Priya."},
    {"role": "assistant", "content": "Noted: deploys are on Fridays, after the standup."},
]


@pytest.fixture
def acme(served):
    """A client with a key of tenant acme, and one session and one memory committed through it."""
    with served.client(served.key("acme")) as client:
        answer = client.post("/v1/sessions/deploys/messages", json={"messages": DEPLOYS, "enrich": "now"})
        assert answer.status_code == 200, answer.text
        answer = client.post("/v1/memories", json={"content": "Alice drinks tea", "key": "alice.drink"})
        assert answer.status_code == 200, answer.text
        yield client


def test_openapi_describes_every_endpoint(served):
    with served.client() as client:
        described = client.get("/openapi.json").json()
    paths = set(described["paths"])
    assert {"/v1/recall", "/v1/sessions/{session_id}/messages", "/v1/memories", "/v1/export", "/health"} <= paths
    assert {"/v3/memories/add/", "/v3/memories/search/", "/v1/memories/{memory_id}/history/"} <= paths
    recall = described["paths"]["/v1/recall"]["post"]
    assert "explain" in json.dumps(described["components"]["schemas"]["RecallBody"])
    assert recall["summary"]


def test_health_the_inspectors_files_and_a_favicon_need_no_key(served):
    with served.client() as client:
        assert client.get("/health").json()["status"] == "ok"
        assert "<title>" in client.get("/inspector/").text
        assert client.get("/", follow_redirects=False).headers["location"] == "/inspector/"
        assert client.get("/favicon.ico").json()["error"] == "not_found"


def test_commit_then_recall(acme):
    answer = acme.post("/v1/sessions/deploys/messages", json={"messages": DEPLOYS})
    assert answer.json()["turns_added"] == 0  # idempotent, as memory.commit
    hits = acme.post("/v1/recall", json={"query": "when do deploys go out?", "k": 3}).json()["hits"]
    assert "Fridays" in hits[0]["content"]
    assert hits[0]["components"]["signals"]


def test_recall_explain_gives_every_candidates_signals(acme):
    candidates = acme.post("/v1/recall", json={"query": "deploys on Fridays", "explain": True}).json()["candidates"]
    assert candidates[0]["rank"] == 1
    assert {"dense", "lexical"} <= set(candidates[0]["components"]["signals"])


def test_sessions_listed_read_and_forgotten(acme):
    listed = {s["session_id"]: s for s in acme.get("/v1/sessions").json()}
    assert set(listed) == {"deploys", "remembered"}  # remembered: where memory.remember keeps the words
    assert listed["deploys"]["turns"] == 2
    session = acme.get("/v1/sessions/deploys").json()
    assert [m["content"] for m in session["messages"]] == [m["content"] for m in DEPLOYS]
    assert acme.get("/v1/sessions", params={"search": "nothing like it"}).json() == []
    forgotten = acme.delete("/v1/sessions/deploys").json()
    assert forgotten["turns_removed"] == 2
    missing = acme.get("/v1/sessions/deploys")
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"


def test_memories_remembered_listed_got_and_their_history(acme):
    newer = acme.post("/v1/memories", json={"content": "Alice drinks coffee now", "key": "alice.drink"}).json()
    assert newer["outcome"] == "updated"
    held = acme.get("/v1/memories/by-key", params={"key": "alice.drink"}).json()
    assert [m["content"] for m in held] == ["Alice drinks coffee now"]
    listed = acme.get("/v1/memories", params={"search": "alice"}).json()
    assert [m["memory_id"] for m in listed] == [newer["memory_id"]]
    history = acme.get(f"/v1/memories/{newer['memory_id']}/history").json()
    assert [(m["content"], m["status"]) for m in history] == [
        ("Alice drinks tea", "superseded"),
        ("Alice drinks coffee now", "active"),
    ]
    one = acme.get(f"/v1/memories/{history[0]['memory_id']}").json()
    assert one["status"] == "superseded"


def test_memories_resolved_and_retracted(acme):
    task = acme.post("/v1/memories", json={"content": "Renew the TLS certificate", "kind": "task"}).json()
    assert acme.post(f"/v1/memories/{task['memory_id']}/resolve").json()["status"] == "resolved"
    wrong = acme.post("/v1/memories", json={"content": "The office is in Lyon"}).json()
    assert acme.post(f"/v1/memories/{wrong['memory_id']}/retract").json()["status"] == "retracted"
    assert acme.post(f"/v1/memories/{wrong['memory_id']}/undo").status_code == 400
    proposed = acme.post("/v1/memories", json={"content": "Standups move to 10am", "status": "pending"}).json()
    assert proposed["status"] == "pending"
    assert acme.post(f"/v1/memories/{proposed['memory_id']}/approve").json()["status"] == "active"


def test_a_memory_shared_with_the_fleet_and_kept_again(acme):
    kept = acme.post("/v1/memories", json={"content": "Deploy keys live in ops/deploy", "agent_id": "planner"}).json()
    assert kept["shared"] is False
    assert acme.post(f"/v1/memories/{kept['memory_id']}/share").json()["shared"] is True
    hits = acme.post("/v1/recall", json={"query": "where do deploy keys live?", "agent_id": "coder"}).json()["hits"]
    assert hits[0]["memory_id"] == kept["memory_id"] and hits[0]["shared_by"] == "planner"
    assert acme.post(f"/v1/memories/{kept['memory_id']}/share?shared=false").json()["shared"] is False
    shared = acme.post("/v1/memories", json={"content": "Builds run on ci-large", "shared": True}).json()
    assert shared["shared"] is True


def test_feedback_moves_trust(acme):
    hit = acme.post("/v1/recall", json={"query": "deploys Fridays", "k": 1}).json()["hits"][0]
    given = acme.post("/v1/feedback", json={"verdict": "unhelpful", "turn_id": hit["turn_id"]}).json()
    assert given["trust_after"] < given["trust_before"]


def test_bootstrap_context_stats_metrics_entities(acme):
    assert any("Alice drinks tea" in item["content"] for item in acme.get("/v1/bootstrap").json()["items"])
    context = acme.post("/v1/context", json={"task": "plan the Friday deploy"}).json()
    assert any("Fridays" in item["content"] for item in context["items"])
    stats = acme.get("/v1/stats").json()
    assert stats[0]["sessions"] >= 1
    assert any(m["metric"] == "recalls" or m["metric"].startswith("commit") for m in acme.get("/v1/metrics").json())
    names = [e["name"] for e in acme.get("/v1/entities").json()]
    assert "priya" in [name.lower() for name in names]
    priya = next(name for name in names if name.lower() == "priya")
    assert acme.get(f"/v1/entities/{priya}/sessions").json()[0]["session_id"] == "deploys"
    assert isinstance(acme.get(f"/v1/entities/{priya}/neighbors").json(), list)
    assert isinstance(acme.get(f"/v1/entities/{priya}/state").json(), list)


def test_export_streams_what_import_takes(acme):
    with acme.stream("GET", "/v1/export") as answer:
        assert answer.headers["content-type"].startswith("application/x-ndjson")
        records = [json.loads(line) for line in answer.iter_lines() if line]
    kinds = [record["record"] for record in records]
    assert kinds[0] == "header"
    assert "session" in kinds and "memory" in kinds


def test_bad_input_is_a_400_with_the_servers_message(acme):
    answer = acme.post("/v1/recall", json={"query": "x", "k": 0})
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("agent_memory: ")
    assert "k must be at least 1" in acme.get("/v1/memories", params={"k": 0}).json()["detail"]
    unknown = acme.post("/v1/recall", json={"query": "x", "kk": 3})
    assert unknown.status_code == 400
    assert "kk" in unknown.json()["detail"]
    malformed = acme.post("/v1/sessions/s/messages", json={"messages": [{"role": "robot", "content": "hi"}]})
    assert malformed.status_code == 400
    assert "role" in malformed.json()["detail"]
    assert acme.get("/v1/nothing").json() == {
        "error": "not_found",
        "detail": "agent_memory: no GET /v1/nothing",
        "status": 404,
    }


def test_forgotten_session_is_a_409(acme):
    acme.delete("/v1/sessions/deploys")
    again = acme.post("/v1/sessions/deploys/messages", json={"messages": DEPLOYS})
    assert again.status_code == 409
    assert again.json()["error"] == "forgotten_session"


def test_records_name_the_keys_role_not_the_servers_login(served, acme):
    role = served.role("acme")
    remembered = acme.post("/v1/memories", json={"content": "Lunch is at noon"}).json()
    assert remembered["recorded_by"] == role
    hit = acme.post("/v1/recall", json={"query": "deploys Fridays", "k": 1}).json()["hits"][0]
    acme.post("/v1/feedback", json={"verdict": "helpful", "turn_id": hit["turn_id"]})
    assert served.db.execute("select given_by, judged_by from memory.feedback").fetchall() == [(role, role)]
    acme.delete("/v1/sessions/deploys")
    assert served.db.execute("select forgotten_by from memory.tombstones").fetchall() == [(role,)]
