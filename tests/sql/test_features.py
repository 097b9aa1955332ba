"""Recall's features: what a signal reads of a candidate, declared once in memory.recall_features with the
stage that computes it and its SQL expression; recall's scoring statement is built from them. Adding a signal
that needs new data is one feature and one signal, as docs/recall.md says ("Adding a signal")."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types.json import Json

ASKS = "strpos(t.content, '?') > 0"


@pytest.fixture
def with_question_signal(db):
    """docs/recall.md's example: a feature (does the turn ask a question?) and a signal that reads it."""
    db.execute(
        "select memory.define_feature('asks', 'turn', 'boolean', %s, 'Whether the turn asks a question.')", (ASKS,)
    )
    db.execute(
        "create function public.signal_question(c memory.recall_candidate, s jsonb) returns double precision"
        " language sql immutable as $$ select case when (c).asks then 1 else 0 end $$"
    )
    db.execute(
        "select memory.define_signal('question', 'boost', 'public.signal_question(memory.recall_candidate, jsonb)',"
        " 0.2, 'Prefers a turn that asks a question.')"
    )
    db.execute("set memory.embedder = 'none'")
    said = ["the deploy runs on friday.", "does the deploy run on friday?", "the deploy ran on monday."]
    turns = Json([{"role": "user", "content": text} for text in said])
    db.execute("select memory.commit('s', %s, enrich => 'now')", (turns,))
    return db


def test_a_signal_that_needs_a_new_feature_takes_part_in_recall(with_question_signal):
    hits = with_question_signal.execute("select content, components from memory.recall('deploy friday')").fetchall()
    question = {content: components["signals"]["question"] for content, components in hits}
    assert question["does the deploy run on friday?"] == {"value": 1, "weight": 0.2, "contribution": 0.2}
    assert question["the deploy runs on friday."] == {"value": 0, "weight": 0.2, "contribution": 0}
    assert hits[0][0] == "does the deploy run on friday?"


def test_a_new_feature_shows_in_explain_and_in_the_registry(with_question_signal):
    with_question_signal.execute("set memory.weight_question = 3")
    rows = with_question_signal.execute(
        "select content, components #> '{signals,question}' from memory.explain_recall('deploy')"
    ).fetchall()
    assert {content: part["contribution"] for content, part in rows} == {
        "the deploy runs on friday.": 0,
        "does the deploy run on friday?": 3,
        "the deploy ran on monday.": 0,
    }
    assert with_question_signal.execute(
        "select stage, type, expression, builtin from memory.feature_definitions() where name = 'asks'"
    ).fetchone() == ("turn", "boolean", ASKS, False)


def test_a_feature_is_null_before_its_stage(with_question_signal):
    """A fusion-stage signal sees the chunk's features; a turn-stage feature is null there by construction."""
    with_question_signal.execute(
        "create function public.signal_early(c memory.recall_candidate, s jsonb) returns double precision"
        " language sql immutable as $$ select case when (c).asks is null then 1 else 0 end $$"
    )
    with_question_signal.execute(
        "select memory.define_signal('early', 'fusion', 'public.signal_early(memory.recall_candidate, jsonb)', 1,"
        " 'Whether the turn-stage feature asks is null at the chunk stage.')"
    )
    values = with_question_signal.execute(
        "select (components #>> '{signals,early,value}')::float from memory.explain_recall('deploy')"
    ).fetchall()
    assert values == [(1.0,)] * 3


def test_every_attribute_of_a_candidate_is_a_feature(db):
    attributes = db.execute(
        "select attname::text from pg_attribute"
        " where attrelid = 'memory.recall_candidate'::regclass and attnum > 0 and not attisdropped order by 1"
    ).fetchall()
    features = db.execute("select name from memory.feature_definitions() order by 1").fetchall()
    assert features == attributes
    stages = dict(db.execute("select stage, count(*) from memory.feature_definitions() group by 1").fetchall())
    assert set(stages) == {"chunk", "fusion", "turn", "memory"}


def test_a_feature_whose_expression_does_not_work_is_refused_and_nothing_is_written(db):
    db.commit()
    db.autocommit = True
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=r'feature "broken": recall.s statement .*no_such'):
        db.execute("select memory.define_feature('broken', 'turn', 'integer', 't.no_such_column', 'x')")
    assert db.execute("select count(*) from memory.recall_features where name = 'broken'").fetchone() == (0,)
    assert db.execute(
        "select count(*) from pg_attribute where attrelid = 'memory.recall_candidate'::regclass and attname = 'broken'"
    ).fetchone() == (0,)
    db.execute("set memory.embedder = 'none'")
    db.execute(
        "select memory.commit('s', %s, enrich => 'now')",
        (Json([{"role": "user", "content": "the deploy still runs"}]),),
    )
    assert db.execute("select content from memory.recall('deploy')").fetchall() == [("the deploy still runs",)]


@pytest.mark.parametrize(
    ("stage", "type", "expression", "error", "message"),
    [
        ("fusion", "integer", "1", psycopg.errors.InvalidParameterValue, "stage must be chunk, turn or memory"),
        ("turn", "integer", " ", psycopg.errors.InvalidParameterValue, 'feature "odd" needs an expression'),
        ("turn", "no_such_type", "1", psycopg.errors.UndefinedObject, 'type "no_such_type" does not exist'),
    ],
)
def test_bad_features_are_refused(db, stage, type, expression, error, message):
    with pytest.raises(error, match=message):
        db.execute("select memory.define_feature('odd', %s, %s, %s, 'x')", (stage, type, expression))


def test_a_feature_keeps_the_type_of_its_attribute(db):
    db.execute("select memory.define_feature('asks', 'turn', 'boolean', %s, 'x')", (ASKS,))
    mismatch = r'feature "asks" is a boolean in memory.recall_candidate, not a text'
    with pytest.raises(psycopg.errors.DatatypeMismatch, match=mismatch):
        db.execute("select memory.define_feature('asks', 'turn', 'text', 't.role', 'x')")


def test_a_built_in_feature_is_not_redefined(db):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match='feature "trust" is built in'):
        db.execute("select memory.define_feature('trust', 'turn', 'double precision', '1', 'x')")
