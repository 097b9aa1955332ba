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


def test_a_memory_feature_is_null_on_a_turn_that_carries_no_memory(with_question_signal):
    with_question_signal.execute(
        "select memory.define_feature('kind_known', 'memory', 'boolean', 'tm.kind is not null', 'x')"
    )
    with_question_signal.execute(
        "create function public.signal_known(c memory.recall_candidate, s jsonb) returns double precision"
        " language sql immutable as $$ select case when (c).kind_known is null then -1 else 1 end $$"
    )
    with_question_signal.execute(
        "select memory.define_signal('known', 'boost', 'public.signal_known(memory.recall_candidate, jsonb)', 0,"
        " 'Whether the memory feature kind_known is null.')"
    )
    values = with_question_signal.execute(
        "select (components #>> '{signals,known,value}')::float from memory.explain_recall('deploy')"
    ).fetchall()
    assert values == [(-1.0,)] * 3


def test_a_feature_that_calls_code_another_role_may_change_is_refused(db, logins):
    other = logins.create(grant=None)
    db.execute("create function public.tone(words text) returns integer language sql immutable as 'select 1'")
    db.execute(f"alter function public.tone(text) owner to {other.info.user}")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match=r"function (public\.)?tone\(text\) is owned by am_"):
        db.execute("select memory.define_feature('tone', 'turn', 'integer', 'public.tone(t.content)', 'x')")
    db.rollback()
    db.execute("create domain public.score as double precision check (value > 0)")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="not a base, composite or enum type"):
        db.execute("select memory.define_feature('scored', 'turn', 'public.score', '1', 'x')")


def test_only_a_superuser_writes_the_registry_even_with_every_tables_write_privilege(db, logins):
    writer = logins.create(grant=None)
    db.execute(f"grant pg_read_all_data, pg_write_all_data to {writer.info.user}")
    db.commit()
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only a superuser may change recall's features"):
        writer.execute("update memory.recall_features set expression = '1' where name = 'trust'")
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="only a superuser may change recall's features"):
        writer.execute("delete from memory.recall_features where name = 'age_days'")


def test_a_built_in_feature_is_not_deleted_and_names_are_short(db):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match='feature "position" is built in'):
        db.execute("delete from memory.recall_features where name = 'position'")
    db.rollback()
    with pytest.raises(psycopg.errors.NameTooLong, match="longer than 63 characters"):
        db.execute("select memory.define_feature(%s, 'turn', 'integer', '1', 'x')", ("x" * 64,))
