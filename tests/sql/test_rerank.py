"""The optional rerank stage against a real rerank endpoint on loopback (tests/http_stub.py)."""

import pytest
from psycopg.types.json import Json, Jsonb

TURNS = [
    "We moved the nightly backup to 02:00 UTC.",
    "The backup of the billing database failed twice last week.",
    "Backup retention is thirty days for billing and seven for logs.",
    "Lunch on Friday is at the usual place.",
]


@pytest.fixture
def memory(db, http_stub):
    db.execute("set memory.embedder = 'none'")
    db.execute(
        "select memory.commit('s', %s, enrich => 'now')", (Json([{"role": "user", "content": t} for t in TURNS]),)
    )
    db.execute("set memory.rerank = 'http'")
    db.execute("select set_config('memory.rerank_url', %s, false)", (http_stub.rerank_url,))
    return db


def recall(db, query):
    return db.execute("select content, score, components from memory.recall(%s, k => 3)", (query,)).fetchall()


def test_rerank_orders_the_best_candidates_by_the_endpoints_relevance(memory, http_stub):
    hits = recall(memory, "billing backup retention days")
    assert hits[0][0] == TURNS[2]  # every query word: relevance 1.0
    relevance = [hit[2]["rerank"]["score"] for hit in hits]
    assert relevance == sorted(relevance, reverse=True) and relevance[0] == pytest.approx(1.0)
    path, body, _ = http_stub.requests[-1]
    assert path == "/rerank" and body["query"] == "billing backup retention days" and "model" not in body


def test_rerank_sends_the_configured_model_and_at_most_rerank_candidates(memory, http_stub):
    memory.execute("set memory.rerank_model = 'bge-reranker'")
    memory.execute("set memory.rerank_candidates = 2")
    recall(memory, "backup")
    _, body, _ = http_stub.requests[-1]
    assert body["model"] == "bge-reranker" and len(body["documents"]) == 2 and body["top_n"] == 2


def test_a_failing_endpoint_leaves_the_fused_order_and_says_why(memory, http_stub):
    memory.execute("set memory.rerank = 'none'")
    fused = recall(memory, "billing backup retention days")
    memory.execute("set memory.rerank = 'http'")
    http_stub.fail_next = [500]
    hits = recall(memory, "billing backup retention days")
    assert [h[0] for h in hits] == [h[0] for h in fused]
    assert "answered 500" in hits[0][2]["rerank"]["error"] and hits[0][2]["rerank"]["score"] is None


def test_a_slow_endpoint_times_out_and_recall_still_answers(memory, http_stub):
    memory.execute("set memory.rerank_timeout_seconds = 0.2")
    http_stub.delay = 2
    hits = recall(memory, "backup")
    assert hits and "timed out" in hits[0][2]["rerank"]["error"]


def test_a_non_http_rerank_url_is_refused_by_name(memory):
    memory.execute("set memory.rerank_url = 'file:///etc/passwd'")
    hits = recall(memory, "backup")
    assert "scheme 'file' is not allowed" in hits[0][2]["rerank"]["error"]


def test_without_rerank_components_say_nothing_of_it(memory):
    memory.execute("set memory.rerank = 'none'")
    assert recall(memory, "backup")[0][2]["rerank"] is None


def test_an_application_role_reranks_with_the_configured_endpoint_and_its_key(memory, http_stub, logins):
    # The administrator configures the endpoint and stores its key; the application only recalls.
    configure = "insert into memory.config values ('rerank', '\"http\"'), ('rerank_url', %s)"
    memory.execute(configure, (Jsonb(http_stub.rerank_url),))
    memory.execute("select memory.set_secret('rerank_api_key', 'rk-1')")  # for the origin of rerank_url
    memory.commit()
    app = logins.create()
    assert app.execute("select components from memory.recall('backup', k => 1)").fetchone()[0]["rerank"]["score"] > 0
    assert http_stub.requests[-1][2] == "Bearer rk-1"
