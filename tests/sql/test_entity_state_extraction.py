"""Entity state read from conversations: enrichment writes the state changes users state into the entity's
history from when they were said, with their turn; pending ones wait for review; the llm option reads the
llm extractor's claims."""

import json

import psycopg
import pytest
from psycopg.types.json import Json


def said(db, session, content, at, agent="ops"):
    messages = [{"role": "user", "content": content, "created_at": at}]
    db.execute("select from memory.commit(%s, %s, agent_id => %s, enrich => 'now')", (session, Json(messages), agent))


def leads(db, entity):
    """The history of an entity's attribute lead: (value, from, to)."""
    return db.execute(
        "select value #>> '{}', valid_from::date::text, valid_to::date::text"
        " from memory.entity_history(%s, 'lead', 'ops')",
        (entity,),
    ).fetchall()


def test_a_state_change_users_state_enters_the_entitys_history_with_its_turn(db):
    said(db, "march", "Ana leads the billing team, right?", "2026-03-01T09:00:00Z")
    said(db, "may", "Quick update: Ana now leads billing. Also the deploy freeze is over.", "2026-05-04T09:00:00Z")
    said(db, "june", "Ana now leads payments.", "2026-06-01T09:00:00Z")
    assert leads(db, "Ana") == [("billing", "2026-05-04", "2026-06-01"), ("payments", "2026-06-01", None)]
    freeze = db.execute(
        "select s.attribute, s.value #>> '{}', t.content, x.origin"
        " from memory.entity_state('deploy freeze', agent_id => 'ops') as s"
        " join memory.entity_states as x using (entity_id, attribute, valid_from)"
        " join memory.turns as t on t.turn_id = x.evidence_turn_id"
    ).fetchall()
    assert freeze == [
        ("state", "over", "Quick update: Ana now leads billing. Also the deploy freeze is over.", "patterns")
    ]


def test_enriching_again_proposes_nothing_new(db):
    said(db, "may", "Ana now leads billing.", "2026-05-04T09:00:00Z")
    db.execute("select memory.enrich('may', 'ops')")
    assert db.execute("select count(*) from memory.entity_states").fetchone() == (1,)


def test_pending_changes_wait_for_review_and_hold_once_approved(db):
    db.execute("set memory.extracted_memory_status = 'pending'")
    said(db, "may", "Ana now leads billing.", "2026-05-04T09:00:00Z")
    said(db, "june", "The deploy freeze is over.", "2026-06-01T09:00:00Z")
    assert leads(db, "Ana") == []
    pending = db.execute(
        "select state_id, entity, attribute, value #>> '{}', origin from memory.pending_entity_states('ops')"
    ).fetchall()
    assert [row[1:] for row in pending] == [
        ("Ana", "lead", "billing", "patterns"),
        ("deploy freeze", "state", "over", "patterns"),
    ]
    db.execute("select from memory.approve_entity_state(%s)", (pending[0][0],))
    db.execute("select memory.reject_entity_state(%s)", (pending[1][0],))
    assert leads(db, "Ana") == [("billing", "2026-05-04", None)]
    assert db.execute("select count(*) from memory.entity_state('deploy freeze')").fetchone() == (0,)
    assert db.execute("select count(*) from memory.pending_entity_states()").fetchone() == (0,)
    with (
        pytest.raises(psycopg.errors.InvalidParameterValue, match="is rejected and cannot be reviewed"),
        db.transaction(),
    ):
        db.execute("select from memory.approve_entity_state(%s)", (pending[1][0],))
    db.execute("select memory.enrich('june', 'ops')")  # a rejected change is not proposed again
    assert db.execute("select count(*) from memory.pending_entity_states()").fetchone() == (0,)


def test_questions_denials_and_the_speakers_own_facts_are_no_state_changes(db):
    for n, content in enumerate(
        ["Is the deploy freeze over?", "Ana no longer leads billing.", "My editor is now helix.", "The build is slow."]
    ):
        said(db, f"s{n}", content, "2026-05-04T09:00:00Z")
    assert db.execute("select count(*) from memory.entity_states").fetchone() == (0,)


def test_the_setting_turns_it_off(db):
    db.execute("set memory.entity_state_extraction = false")
    said(db, "may", "Ana now leads billing.", "2026-05-04T09:00:00Z")
    assert db.execute("select count(*) from memory.entity_states").fetchone() == (0,)


def test_the_llm_option_reads_the_llm_extractors_claims(db, http_stub):
    answer = {"memories": [{"turn": 0, "kind": "fact", "content": "Ana now leads billing.", "quote": "Ana took over"}]}
    http_stub.answer_chat_for(db, "memory_extractor", json.dumps(answer))
    said(db, "may", "Ana took over billing last week.", "2026-05-04T09:00:00Z")
    rows = db.execute("select attribute, value #>> '{}', origin from memory.entity_states").fetchall()
    assert rows == [("lead", "billing", "llm")]


def test_a_forgotten_session_takes_its_state_changes_with_it_and_the_value_before_holds_again(db):
    said(db, "may", "Ana now leads billing.", "2026-05-04T09:00:00Z")
    said(db, "june", "Ana now leads payments.", "2026-06-01T09:00:00Z")
    db.execute("select memory.forget(session_id => 'june', agent_id => 'ops')")
    assert leads(db, "Ana") == [("billing", "2026-05-04", None)]
    db.execute("select memory.forget(session_id => 'may', agent_id => 'ops')")
    assert db.execute("select count(*) from memory.entity_states").fetchone() == (0,)


def test_two_changes_said_at_one_instant_keep_the_later_one_when_enriched_again(db):
    messages = [
        {"role": "user", "content": "Ana now leads billing."},
        {"role": "user", "content": "Correction: Ana now leads payments."},
    ]
    db.execute("select from memory.commit('may', %s, agent_id => 'ops', enrich => 'now')", (Json(messages),))
    db.execute("select memory.enrich('may', 'ops')")
    assert [value for value, _, _ in leads(db, "Ana")] == ["payments"]
