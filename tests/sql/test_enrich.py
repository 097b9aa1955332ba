"""Enrichment: chunks with context, embeddings, summaries, skipping unchanged work, other providers."""

import uuid

import psycopg
import pytest
from conftest import SERVER
from psycopg.types.json import Json

CHAT = [
    {"role": "user", "content": "We decided to use Postgres for the auth service.", "name": "Ana"},
    {"role": "assistant", "content": "Great, I will set up row level security next week."},
    {"role": "user", "content": "ok thanks"},
    {"role": "user", "content": "/compact"},
    {"role": "tool", "content": "tool output that is long enough to index"},
    {"role": "user", "content": "Remind me later to rotate the signing keys."},
]


def commit(db, messages=CHAT, session="s1", enrich="now"):
    return db.execute("select * from memory.commit(%s, %s, enrich => %s)", (session, Json(messages), enrich)).fetchone()


def chunks(db):
    return db.execute(
        "select t.position, c.chunk_no, c.text from memory.chunks c join memory.turns t using (tenant_id, turn_id)"
        " order by 1, 2"
    ).fetchall()


def test_user_assistant_and_tool_turns_are_indexed_with_the_previous_turn_as_context(db):
    commit(db)
    indexed = [0, 1, 4, 5]
    assert chunks(db) == [(position, 0, CHAT[position]["content"]) for position in indexed]
    context = db.execute(
        "select t.position, p.position from memory.chunks c join memory.turns t using (tenant_id, turn_id)"
        " left join memory.turns p on p.tenant_id = c.tenant_id and p.turn_id = c.context_turn_id order by 1"
    ).fetchall()
    assert context == [(0, None), (1, 0), (4, 1), (5, 4)]


def test_own_words_and_context_are_apart_in_the_full_text_vector(db):
    commit(db)
    weights = db.execute(
        "select u.lexeme, u.weights from memory.chunks c join memory.turns t using (tenant_id, turn_id),"
        " unnest(c.tsv) u where t.position = 1 and u.lexeme in ('postgr', 'secur') order by 1"
    ).fetchall()
    assert weights == [("postgr", ["C"]), ("secur", ["D"])]
    df = dict(db.execute("select lexeme, chunks from memory.lexicon where lexeme in ('postgr', 'secur')").fetchall())
    assert df == {"postgr": 1, "secur": 1}


def test_indexed_roles_and_context_follow_the_settings(db):
    db.execute('set memory.index_roles = \'["user", "assistant"]\'')
    db.execute("set memory.index_context_turns = 0")
    commit(db)
    assert [position for position, _, _ in chunks(db)] == [0, 1, 5]
    assert chunks(db)[1][2] == CHAT[1]["content"]


def test_speaker_names_are_not_mixed_into_the_indexed_text(db):
    commit(db)
    assert all("Ana" not in text for _, _, text in chunks(db))


def test_long_turns_are_split_into_chunks_that_are_each_embedded(db):
    db.execute("set memory.chunk_chars = 100")
    long = " ".join(f"Sentence number {i} talks about the release plan." for i in range(10))
    commit(db, [{"role": "user", "content": long}])
    assert len(chunks(db)) > 3
    assert db.execute("select count(*) from memory.chunk_embeddings").fetchone()[0] == len(chunks(db))


def test_every_chunk_gets_a_local_embedding_and_the_session_a_summary_and_vector(db):
    commit(db)
    row = db.execute(
        "select (select count(*) from memory.chunk_embeddings where model = 'all-MiniLM-L6-v2'),"
        " (select vector_dims(embedding) from memory.chunk_embeddings limit 1),"
        " (select count(*) from memory.session_embeddings),"
        " (select method from memory.summaries)"
    ).fetchone()
    assert row == (4, 384, 1, "extractive")


def test_summary_lists_decisions_and_open_loops(db):
    commit(db)
    decisions, open_loops = db.execute("select decisions, open_loops from memory.summaries").fetchone()
    assert decisions == [CHAT[0]["content"]]
    assert open_loops == [CHAT[5]["content"]]


def test_the_database_embeds_exactly_as_the_package_does_outside_it(db):
    from agent_memory_db.embedder import LocalEmbedder

    text = "The deploy failed because the signing token expired."
    inside = db.execute("select (memory.embed(array[%s]))[1]::text", (text,)).fetchone()[0]
    inside = [float(x) for x in inside.strip("[]").split(",")]
    outside = LocalEmbedder().embed([text])[0]
    assert sum(a * b for a, b in zip(inside, outside, strict=True)) > 0.99999


def test_enriching_again_reembeds_nothing_unchanged(db):
    commit(db)
    before = db.execute("select array_agg(ctid::text order by turn_id) from memory.chunk_embeddings").fetchone()[0]
    summary_before = db.execute("select ctid::text from memory.summaries").fetchone()[0]
    db.execute("select * from memory.enrich('s1')")
    after = db.execute("select array_agg(ctid::text order by turn_id) from memory.chunk_embeddings").fetchone()[0]
    assert after == before
    assert db.execute("select ctid::text from memory.summaries").fetchone()[0] == summary_before


def test_new_turns_are_embedded_and_change_the_summary_source(db):
    commit(db)
    commit(db, [*CHAT, {"role": "user", "content": "Also we need to pick a new logging vendor."}])
    assert db.execute("select count(*) from memory.chunk_embeddings").fetchone()[0] == 5


def test_enrich_returns_counts(db):
    commit(db, enrich="none")
    row = db.execute("select chunks, embedded, summary is not null from memory.enrich('s1')").fetchone()
    assert row == (4, 4, True)


def test_enrich_of_an_unknown_session_names_it(db):
    with pytest.raises(psycopg.errors.NoDataFound, match='no session "nope" in tenant'):
        db.execute("select * from memory.enrich('nope')")


def test_caller_summary_is_kept_by_later_enrichment(db):
    commit(db, enrich="none")
    db.execute("select memory.set_summary('s1', 'My own summary.', '[\"d\"]')")
    db.execute("select * from memory.enrich('s1')")
    assert db.execute("select method, summary, decisions from memory.summaries").fetchone() == (
        "caller",
        "My own summary.",
        ["d"],
    )


def test_with_no_embedder_enrichment_still_indexes_full_text(db):
    db.execute("set memory.embedder = 'none'")
    commit(db)
    assert (len(chunks(db)), db.execute("select count(*) from memory.chunk_embeddings").fetchone()[0]) == (4, 0)


def test_client_embedder_uses_the_callers_vectors(db):
    db.execute("set memory.embedder = 'client'")
    db.execute("set memory.client_dimensions = 3")
    commit(db, [{"role": "user", "content": "a turn with its own vector", "embedding": [1, 0, 0]}])
    assert db.execute("select model, embedding::text from memory.chunk_embeddings").fetchall() == [
        ("client", "[1,0,0]")
    ]


def test_openai_embedder_calls_the_endpoint_with_the_key(db, http_stub):
    http_stub.embed_for(db)
    commit(db)
    assert db.execute(
        "select count(*), min(vector_dims(embedding)) from memory.chunk_embeddings where model = 'stub-embed'"
    ).fetchone() == (4, 8)
    path, body, auth = http_stub.requests[0]
    assert (path, body["model"], auth) == ("/v1/embeddings", "stub-embed", "Bearer sk-test")


def test_openai_embedder_retries_a_server_error(db, http_stub):
    http_stub.embed_for(db)
    http_stub.fail_next = [503, 429]
    commit(db)
    assert db.execute("select count(*) from memory.chunk_embeddings").fetchone()[0] == 4


def test_openai_embedder_failure_names_the_status_and_logs_the_servers_words(db, http_stub):
    # What an endpoint wrote may echo the key (masked): it goes to the server log, not to the caller.
    http_stub.embed_for(db)
    http_stub.fail_next = [500, 500, 500]
    http_stub.fail_message = f"try again {uuid.uuid4().hex}"
    logged_before = SERVER.log_file.stat().st_size
    with pytest.raises(psycopg.Error, match=r"answered 500 Internal Server Error \(after 3 attempts\)") as failed:
        commit(db)
    assert http_stub.fail_message not in str(failed.value)
    with SERVER.log_file.open("rb") as log:
        log.seek(logged_before)
        assert http_stub.fail_message in log.read().decode(errors="replace")


def test_openai_dimension_mismatch_is_an_error(db, http_stub):
    http_stub.embed_for(db)
    db.execute("set memory.openai_embedding_dimensions = 16")
    with pytest.raises(psycopg.Error, match="stub-embed returned 8 dimensions, configured 16"):
        commit(db)


def test_llm_summarizer_stores_the_structured_summary(db, http_stub):
    http_stub.embed_for(db)
    db.execute("set memory.summarizer = 'llm'")
    db.execute("set memory.openai_chat_model = 'stub-chat'")
    commit(db)
    assert db.execute("select method, summary, decisions, open_loops from memory.summaries").fetchone() == (
        "llm",
        "Ana chose Postgres.",
        ["use Postgres"],
        ["rotate keys"],
    )
    chat = [body for path, body, _ in http_stub.requests if path == "/v1/chat/completions"]
    assert chat[0]["model"] == "stub-chat" and "Ana: We decided" in chat[0]["messages"][1]["content"]


def test_llm_summary_that_is_not_json_is_an_error(db, http_stub):
    http_stub.embed_for(db)
    db.execute("set memory.summarizer = 'llm'")
    http_stub.chat_reply = "Sure! Here is a summary."
    with pytest.raises(psycopg.Error, match="llm summary failed: the LLM summary is not JSON"):
        commit(db)


def test_a_new_model_is_built_in_the_background_and_recall_switches_when_complete(db, http_stub):
    commit(db)
    assert db.execute("select memory.recall_model()").fetchone()[0] == "all-MiniLM-L6-v2"
    http_stub.embed_for(db)
    commit(db, [{"role": "user", "content": "A new session after the model changed."}], session="s2")
    assert db.execute("select state from memory.embedding_models where model = 'stub-embed'").fetchone()[0] == (
        "building"
    )
    assert db.execute("select memory.recall_model()").fetchone()[0] == "all-MiniLM-L6-v2"
    # Meanwhile recall reads the old model's vectors, the query embedded with that model (not the endpoint).
    embedded = len(http_stub.requests)
    hit = recalled(db, "which database for the auth service?")
    assert hit[0] == CHAT[0]["content"] and hit[1]["model"] == "all-MiniLM-L6-v2" and hit[1]["degraded"] == []
    assert float(hit[1]["signals"]["dense"]["value"]) > 0.3 and len(http_stub.requests) == embedded
    assert db.execute("select memory.reembed(100)").fetchone()[0] == 4
    assert db.execute("select memory.recall_model()").fetchone()[0] == "stub-embed"
    # Then the new model's, in one step: its vectors, the query embedded by the endpoint.
    hit = recalled(db, "which database for the auth service?")
    assert hit[1]["model"] == "stub-embed" and hit[1]["degraded"] == [] and hit[1]["signals"]["dense"]["value"]
    assert http_stub.requests[-1][0] == "/v1/embeddings"


def recalled(db, query):
    """The first hit's content and components."""
    return db.execute("select content, components from memory.recall(%s, k => 1)", (query,)).fetchone()


def test_embedding_with_a_model_never_registered_is_an_error_that_names_it(db):
    with pytest.raises(psycopg.Error, match="embedding failed: no embedding model nope is registered"):
        db.execute("select memory_internal._embed_texts(array['x'], memory_internal._settings_json(), 'nope')")


def test_a_conversation_has_a_session_vector_and_the_remembered_claims_none(db):
    """A session's vector is the gist of one conversation; the claims of 'remembered' are each their own."""
    said = [{"role": "user", "content": "The staging cluster runs on Kubernetes."}]
    db.execute("select memory.commit('chat', %s, enrich => 'now')", (Json(said),))
    db.execute("select memory.remember('Deploys go out on Fridays')")
    db.execute("select memory.remember('Tea at four', kind => 'preference')")
    with_vectors = db.execute(
        "select s.session_id from memory.session_embeddings as e"
        " join memory.sessions as s on s.tenant_id = e.tenant_id and s.session_key = e.session_key"
    ).fetchall()
    assert with_vectors == [("chat",)]
    assert db.execute("select count(*) from memory.recall('when do deploys go out?') where kind = 'fact'").fetchone()[0]


def grow(db, tenant, sessions, first=0, enrich="now"):
    """Sessions of twenty turns with the caller's vectors (embedder client), committed for `tenant`."""
    db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
    for number in range(first, first + sessions):
        turns = [
            {"role": "user", "content": f"turn {i} of session {number}", "embedding": [1, i, number]} for i in range(20)
        ]
        commit(db, turns, session=f"s{number}", enrich=enrich)


def planned_chunks(db, tenant):
    plan = db.execute("explain (format json) select from memory.chunks where tenant_id = %s", (tenant,)).fetchone()[0]
    return plan[0]["Plan"]["Plan Rows"]


@pytest.fixture
def unknown_tenant(db):
    """Tenant 'new', 1,100 chunks with their vectors, grown after the tables were analyzed with tenant 'known'
    alone (autovacuum off): the planner takes it for one row."""
    db.execute("set memory.embedder = 'client'")
    db.execute("set memory.client_dimensions = 3")
    for table in ("sessions", "turns", "chunks", "chunk_embeddings"):
        db.execute(f"alter table memory.{table} set (autovacuum_enabled = off)")
    grow(db, "known", 5)
    db.commit()
    db.execute("analyze memory.sessions, memory.turns, memory.chunks, memory.chunk_embeddings")
    grow(db, "new", 55)
    db.commit()
    assert planned_chunks(db, "new") == 1
    return db


def test_a_sessions_vectors_are_written_by_its_own_rows_for_a_tenant_the_statistics_do_not_know(unknown_tenant):
    """Joined by the tenant, the vectors' statements read all of a tenant the planner takes for one row for each
    chunk of the session (O(tenant^2) over its sessions: 3.4 s a session at 5,500 chunks)."""
    db = unknown_tenant
    # Rows read so far by this backend, in one transaction (the view holds what is not yet reported as well).
    reads = (
        "select relname, seq_tup_read + coalesce(idx_tup_fetch, 0) from pg_stat_xact_user_tables"
        " where schemaname = 'memory' and relname in ('turns', 'chunks', 'chunk_embeddings')"
    )
    before = dict(db.execute(reads).fetchall())
    db.execute(
        "select memory_internal._write_chunk_vectors('new', s.session_key, 'client', 'client', null, null, null, null)"
        " from memory.sessions as s where s.tenant_id = 'new' and s.session_id = 's7'"
    )
    read = {table: count - before[table] for table, count in db.execute(reads).fetchall()}
    # The session's 20 chunks, their vectors and turns; the tenant has 1,100 of each.
    assert max(read.values()) <= 60, read


def test_the_worker_analyzes_the_tables_when_a_tenant_outgrew_its_statistics(unknown_tenant):
    db = unknown_tenant
    grow(db, "new", 10, first=55, enrich="queue")
    db.commit()
    db.autocommit = True
    db.execute("select pg_stat_force_next_flush()")  # the rows written count as changes before the worker looks
    assert db.execute("call memory.work(100)").fetchone() == (10, 0)
    assert planned_chunks(db, "new") > 500


def test_the_worker_leaves_the_statistics_to_autovacuum_when_told(unknown_tenant):
    db = unknown_tenant
    db.execute("insert into memory.config (key, value) values ('analyze_growth_factor', '0')")
    grow(db, "new", 10, first=55, enrich="queue")
    db.commit()
    db.autocommit = True
    db.execute("select pg_stat_force_next_flush()")
    assert db.execute("call memory.work(100)").fetchone() == (10, 0)
    assert planned_chunks(db, "new") == 1
