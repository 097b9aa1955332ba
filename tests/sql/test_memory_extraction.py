"""Extraction during enrichment: memories proposed from what users state, each with its evidence turn; none
from questions or suppositions; stored active or pending review; the llm extractor through the chat endpoint."""

import json

import psycopg
import pytest
from psycopg.types.json import Json

SESSION = [
    {"role": "user", "content": "Quick context: I'm rebuilding the billing service this month."},
    {"role": "assistant", "content": "Got it. What stack are you on?"},
    {
        "role": "user",
        "content": "Python and Postgres. I prefer small pull requests, can you keep your suggestions short?",
    },
    {"role": "assistant", "content": "Sure, I will keep each change small."},
    {"role": "user", "content": "From now on, never suggest an ORM. We decided to write plain SQL with psycopg."},
    {"role": "user", "content": "Should I always pin dependencies? What if we decided to use Django after all?"},
    {"role": "user", "content": "Remember that the staging database is read-only."},
]


def commit(db, messages=SESSION, session="billing", agent="coder"):
    db.execute("select from memory.commit(%s, %s, agent_id => %s, enrich => 'queue')", (session, Json(messages), agent))
    work(db)


def work(db):
    """Runs the queue twice (the sessions, then the turns of the memories they proposed)."""
    db.commit()
    db.autocommit = True
    try:
        db.execute("call memory.work(100)")
        db.execute("call memory.work(100)")
    finally:
        db.autocommit = False


def extracted(db):
    return db.execute(
        "select i.kind, i.content, i.status, i.origin, t.position"
        " from memory.memory_items as i join memory.turns as t on t.turn_id = i.evidence_turn_ids[1]"
        " order by t.position, i.kind"
    ).fetchall()


def test_statements_users_make_become_memories_with_their_evidence_turn(db):
    commit(db)
    rows = {(kind, content, position) for kind, content, _, _, position in extracted(db)}
    assert rows == {
        ("preference", "I prefer small pull requests", 2),
        ("rule", "From now on, never suggest an ORM.", 4),
        ("decision", "We decided to write plain SQL with psycopg.", 4),
        ("fact", "The staging database is read-only.", 6),
    }
    assert {(status, origin) for _, _, status, origin, _ in extracted(db)} == {("active", "patterns")}
    # Each memory's words are a turn of the agent's session 'remembered', enriched by the queue.
    assert db.execute(
        "select count(*) from memory.memories as m join memory.chunks as c using (tenant_id, turn_id)"
    ).fetchone() == (4,)


def test_nothing_is_proposed_from_questions_suppositions_or_the_assistant(db):
    commit(db)
    questions = db.execute(
        "select count(*) from memory.memories where content ~* 'pin dependencies|django|keep each change'"
    ).fetchone()
    assert questions == (0,)


def test_enriching_again_proposes_nothing_new_and_a_retracted_proposal_stays_retracted(db):
    commit(db)
    orm = db.execute("select memory_id from memory.memories where kind = 'rule'").fetchone()[0]
    db.execute("select from memory.retract(%s)", (orm,))
    before = db.execute("select count(*) from memory.memories").fetchone()[0]
    commit(db, [*SESSION, {"role": "user", "content": "Thanks, that is all for today."}])
    assert db.execute("select count(*) from memory.memories").fetchone()[0] == before
    assert db.execute("select status from memory.memories where memory_id = %s", (orm,)).fetchone() == ("retracted",)


def test_the_same_statement_in_another_session_adds_evidence_to_the_memory_held(db):
    commit(db)
    commit(db, [{"role": "user", "content": "Like I said: remember that the staging database is read-only."}], "ops")
    commit(db, [{"role": "user", "content": "Remember that the staging database is read-only."}], "ops2")
    evidence = db.execute(
        "select cardinality(evidence_turn_ids) from memory.memory_items where kind = 'fact'"
    ).fetchall()
    assert evidence == [(3,)]


def test_a_pending_statement_said_again_is_the_one_proposal_with_both_turns(db):
    db.execute("set memory.extracted_memory_status = 'pending'")
    commit(db)
    commit(db, [{"role": "user", "content": "Remember that the staging database is read-only."}], "ops")
    facts = db.execute(
        "select status, cardinality(evidence_turn_ids), origin from memory.memory_items where kind = 'fact'"
    ).fetchall()
    assert facts == [("pending", 2, "patterns")]


def test_pending_proposals_wait_for_review_outside_recall(db):
    db.execute("set memory.extracted_memory_status = 'pending'")
    commit(db)
    assert {status for _, _, status, _, _ in extracted(db)} == {"pending"}
    question = "what did we decide about the SQL layer?"
    kinds = "select kind from memory.recall(%s, k => 10, agent_id => 'coder')"
    assert "decision" not in [row[0] for row in db.execute(kinds, (question,)).fetchall()]
    remembered = "select count(*) from memory.bootstrap(agent_id => 'coder') where section = 'remembered'"
    assert db.execute(remembered).fetchone() == (0,)
    pending = db.execute(
        "select memory_id from memory.list_memories(status => 'pending', kind => 'decision')"
    ).fetchone()[0]
    assert db.execute("select status from memory.approve(%s)", (pending,)).fetchone() == ("active",)
    assert next(row[0] for row in db.execute(kinds, (question,)).fetchall()) == "decision"
    with pytest.raises(
        psycopg.errors.InvalidParameterValue, match=f"memory {pending} is active and cannot be approved"
    ):
        db.execute("select memory.approve(%s)", (pending,))


def test_extraction_is_off_with_setting_none(db):
    db.execute("set memory.memory_extractor = 'none'")
    commit(db)
    assert db.execute("select count(*) from memory.memories").fetchone() == (0,)


def test_a_tenant_worker_writes_extracted_memories_to_the_jobs_tenant(db, logins):
    db.commit()
    alpha, beta = logins.create(tenant="alpha"), logins.create(tenant="beta")
    for login in (alpha, beta):
        login.execute("select from memory.commit('s', %s, enrich => 'queue')", (Json(SESSION),))
    work(db)  # an administrator's worker serves every tenant
    counts = db.execute("select tenant_id, count(*) from memory.memories group by 1 order by 1").fetchall()
    assert [n for _, n in counts] == [4, 4]
    assert alpha.execute("select count(*) from memory.memory_items").fetchone() == (4,)


# The llm extractor, against an OpenAI-compatible server on loopback.

LLM_ANSWER = {
    "memories": [
        {"turn": 4, "kind": "rule", "content": "Never suggest an ORM.", "quote": "never suggest an ORM"},
        {"turn": 2, "kind": "preference", "content": "The user prefers small pull requests.", "quote": "small pull"},
    ]
}


def llm_extractor(db, stub, answer):
    stub.answer_chat_for(db, "memory_extractor", answer)


def test_the_llm_extractor_proposes_what_the_endpoint_answers(db, http_stub):
    llm_extractor(db, http_stub, json.dumps(LLM_ANSWER))
    db.execute("select from memory.commit('billing', %s, agent_id => 'coder', enrich => 'now')", (Json(SESSION),))
    rows = {(kind, content, origin, position) for kind, content, _, origin, position in extracted(db)}
    assert rows == {
        ("rule", "Never suggest an ORM.", "llm", 4),
        ("preference", "The user prefers small pull requests.", "llm", 2),
    }
    request = [body for path, body, _ in http_stub.requests if path.endswith("/chat/completions")][-1]
    assert '"memories"' in request["messages"][0]["content"]
    assert "[4] user: From now on, never suggest an ORM." in request["messages"][1]["content"]


def test_an_llm_item_that_misquotes_its_turn_is_left_out_with_a_notice(db, http_stub):
    misquoted = {"turn": 1, "kind": "fact", "content": "x", "quote": "What stack"}
    llm_extractor(db, http_stub, json.dumps({"memories": [misquoted, *LLM_ANSWER["memories"]]}))
    notices = []
    db.add_notice_handler(lambda notice: notices.append(notice.message_primary))
    db.execute("select from memory.commit('billing', %s, agent_id => 'coder', enrich => 'now')", (Json(SESSION),))
    assert len(extracted(db)) == 2
    assert any("llm memory extraction: the LLM memory 0 quotes words" in notice for notice in notices)


def test_an_llm_answer_of_another_shape_fails_enrichment_naming_the_problem(db, http_stub):
    llm_extractor(db, http_stub, "Sure! Here are the memories you asked for.")
    with pytest.raises(psycopg.Error, match="llm memory extraction failed: the LLM memories answer"):
        db.execute("select from memory.commit('billing', %s, agent_id => 'coder', enrich => 'now')", (Json(SESSION),))


def test_forgetting_a_session_removes_the_memories_extracted_from_it_alone(db):
    commit(db)
    commit(db, [{"role": "user", "content": "Remember that the staging database is read-only."}], "ops")
    fact = db.execute("select memory_id, evidence_turn_ids from memory.memory_items where kind = 'fact'").fetchone()
    assert len(fact[1]) == 2
    db.execute("select from memory.forget('billing')")
    assert db.execute("select kind, cardinality(evidence_turn_ids) from memory.memory_items").fetchall() == [
        ("fact", 1)
    ]
    # The words of the memories that went are gone from recall too.
    contents = db.execute(
        "select content from memory.turns as t join memory.sessions as s using (session_key)"
        " where s.session_id = 'remembered'"
    ).fetchall()
    assert contents == [("The staging database is read-only.",)]


def test_a_merged_proposal_is_not_proposed_again(db):
    commit(db)
    commit(db, [{"role": "user", "content": "Remember that the staging database is read only."}], "ops")
    merged = db.execute("select count(*) from memory.memory_merges").fetchone()[0]
    assert merged == 1
    commit(
        db,
        [
            {"role": "user", "content": "Remember that the staging database is read only."},
            {"role": "user", "content": "Thanks."},
        ],
        "ops",
    )
    assert db.execute("select count(*) from memory.memory_merges").fetchone()[0] == merged


def test_a_memory_holds_from_when_its_turn_was_said_and_is_recorded_when_extracted(db):
    said = "2026-09-29T10:00:00+00:00"
    commit(db, [{"role": "user", "content": "We decided to ship the beta on Friday.", "created_at": said}])
    rows = db.execute(
        "select valid_from = %s::timestamptz, recorded_at > now() - interval '1 hour' from memory.memory_items",
        (said,),
    ).fetchall()
    assert rows == [(True, True)]
    # As of the day before it was said, nothing held; the day after, it did.
    held = "select count(*) from memory.list_memories(as_of => %s::timestamptz)"
    assert db.execute(held, ("2026-09-28T10:00:00+00:00",)).fetchone() == (0,)
    assert db.execute(held, ("2026-09-30T10:00:00+00:00",)).fetchone() == (1,)


def test_a_claim_that_points_at_what_only_its_context_names_waits_for_review(db):
    commit(
        db,
        [
            {"role": "user", "content": "The staging database lives on the old cluster."},
            {"role": "user", "content": "Please never run migrations by hand there. Never push straight to main."},
        ],
    )
    statuses = dict(db.execute("select content, status from memory.memory_items").fetchall())
    assert statuses["Please never run migrations by hand there."] == "pending"
    assert statuses["Never push straight to main."] == "active"
