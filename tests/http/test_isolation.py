"""Tenant isolation over HTTP, as tests/sql/test_tenant_isolation.py checks it in SQL: a key of tenant acme,
through every endpoint of the server, never reads, changes or learns of tenant globex's memory, even when it
names globex's sessions, memories and entities."""

from __future__ import annotations

import json

import pytest

SECRET = "zanzibar"  # a word only globex's memory holds


@pytest.fixture
def tenants(served):
    """acme's and globex's clients; globex's session, memory and entity hold the secret word."""
    acme = served.client(served.key("acme"))
    globex = served.client(served.key("globex"))
    said = [{"role": "user", "content": f"Globex hides the {SECRET} launch codes with Ingrid Varga."}]
    assert globex.post("/v1/sessions/plans/messages", json={"messages": said, "enrich": "now"}).status_code == 200
    memory = globex.post("/v1/memories", json={"content": f"The {SECRET} vault opens at dawn", "key": "vault"})
    assert acme.post("/v1/sessions/mine/messages", json={"messages": [{"role": "user", "content": "hello"}]})
    globex.post("/v3/memories/add/", json={"messages": f"I keep the {SECRET} key", "user_id": "ingrid"})
    try:
        yield acme, globex, memory.json()["memory_id"]
    finally:
        acme.close()
        globex.close()


# Every endpoint, as acme calls it, aimed at globex's data where it names any ({memory_id}: globex's memory).
CALLS = [
    ("GET", "/v1/whoami", None),
    ("GET", "/v1/sessions", None),
    ("GET", "/v1/sessions/plans", None),
    ("DELETE", "/v1/sessions/plans", None),
    ("POST", "/v1/sessions/plans/messages", {"messages": [{"role": "user", "content": "acme's own words"}]}),
    ("POST", "/v1/recall", {"query": f"{SECRET} launch codes"}),
    ("POST", "/v1/recall", {"query": f"{SECRET} launch codes", "explain": True}),
    ("POST", "/v1/memories", {"content": "acme's own memory", "key": "vault"}),
    ("GET", "/v1/memories", None),
    ("GET", "/v1/memories/by-key?key=vault", None),
    ("GET", "/v1/memories/{memory_id}", None),
    ("GET", "/v1/memories/{memory_id}/history", None),
    ("POST", "/v1/memories/{memory_id}/resolve", None),
    ("POST", "/v1/memories/{memory_id}/retract", None),
    ("POST", "/v1/memories/{memory_id}/approve", None),
    ("POST", "/v1/memories/{memory_id}/share", None),
    ("POST", "/v1/feedback", {"verdict": "incorrect", "memory_id": "{memory_id}"}),
    ("GET", "/v1/bootstrap", None),
    ("POST", "/v1/context", {"task": f"find the {SECRET} codes"}),
    ("GET", "/v1/stats", None),
    ("GET", "/v1/metrics", None),
    ("GET", "/v1/export", None),
    ("GET", "/v1/entities", None),
    ("GET", "/v1/entities/ingrid varga/neighbors", None),
    ("GET", "/v1/entities/ingrid varga/sessions", None),
    ("GET", "/v1/entities/ingrid varga/state", None),
    ("GET", "/v1/ping/", None),
    ("POST", "/v3/memories/add/", {"messages": "acme's own words", "user_id": "ingrid"}),
    ("POST", "/v3/memories/search/", {"query": f"{SECRET} key", "filters": {"user_id": "ingrid"}}),
    ("POST", "/v3/memories/", {"filters": {"user_id": "ingrid"}}),
    ("GET", "/v1/memories/{mem0_id}/", None),
    ("PUT", "/v1/memories/{mem0_id}/", {"text": "acme's words"}),
    ("GET", "/v1/memories/{mem0_id}/history/", None),
    ("DELETE", "/v1/memories/{mem0_id}/", None),
    ("DELETE", "/v1/memories/?user_id=ingrid", None),
]


def test_every_endpoint_is_in_the_isolation_suite(served):
    with served.client() as client:
        described = client.get("/openapi.json").json()["paths"]
    called = {(method, path.split("?")[0]) for method, path, _ in CALLS}
    templates = {
        (method.upper(), path)
        for path, methods in described.items()
        for method in methods
        if path not in ("/health", "/openapi.json")
    }

    def covered(method: str, template: str) -> bool:
        parts = template.strip("/").split("/")
        return any(
            m == method
            and len(p.strip("/").split("/")) == len(parts)
            and all(a == b or a.startswith("{") for a, b in zip(parts, p.strip("/").split("/"), strict=True))
            for m, p in called
        )

    assert [t for t in sorted(templates) if not covered(*t)] == []


def globex_state(served) -> str:
    rows = served.db.execute(
        "select m.memory_id, m.status, m.content, m.metadata::text from memory.memories as m"
        " where tenant_id = 'globex' order by 1"
    ).fetchall()
    sessions = served.db.execute(
        "select session_id, (select count(*) from memory.turns as t where t.tenant_id = s.tenant_id"
        " and t.session_key = s.session_key) from memory.sessions as s where tenant_id = 'globex' order by 1"
    ).fetchall()
    feedback = served.db.execute("select count(*) from memory.feedback where tenant_id = 'globex'").fetchone()
    return json.dumps([rows, sessions, feedback], default=str)


@pytest.mark.parametrize(("method", "path", "body"), CALLS, ids=[f"{m} {p}" for m, p, _ in CALLS])
def test_acme_never_reads_or_changes_globex(served, tenants, method, path, body):
    acme, globex, memory_id = tenants
    mem0_id = globex.post("/v3/memories/", json={"filters": {"user_id": "ingrid"}}).json()["results"][0]["id"]
    before = globex_state(served)
    path = path.format(memory_id=memory_id, mem0_id=mem0_id)
    if body is not None:
        body = json.loads(json.dumps(body).replace('"{memory_id}"', str(memory_id)))
    answer = acme.request(method, path, json=body)
    assert SECRET not in answer.text.lower()
    assert "launch codes" not in answer.text.lower() and "dawn" not in answer.text.lower()
    assert answer.status_code < 500, answer.text
    assert globex_state(served) == before
