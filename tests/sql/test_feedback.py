"""memory.feedback: trust moves asymmetrically, every verdict is kept, and recall ranks by it."""

import psycopg
import pytest
from psycopg.types.json import Json

MESSAGES = [
    {"role": "user", "content": "We deploy to production every Friday afternoon after the freeze."},
    {"role": "assistant", "content": "Noted, production deploys happen on Friday afternoons."},
    {"role": "user", "content": "Change of plan: production deploys move to Tuesday mornings."},
]


@pytest.fixture
def turns(db):
    db.execute("select memory.commit('deploys', %s, enrich => 'now')", (Json(MESSAGES),))
    return [row[0] for row in db.execute("select turn_key from memory.turns order by position")]


def give(db, turn, helpful, **extra):
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select * from memory.feedback(%(turn)s, %(helpful)s{names})", {"turn": turn, "helpful": helpful, **extra}
    ).fetchone()


def test_unhelpful_halves_trust_and_helpful_adds_a_step(db, turns):
    assert give(db, turns[0], False)[1:] == (1.0, 0.5)
    assert give(db, turns[0], True)[1:] == (0.5, pytest.approx(0.6))
    assert db.execute("select trust from memory.turns where turn_key = %s", (turns[0],)).fetchone()[0] == (
        pytest.approx(0.6)
    )


def test_trust_stays_between_its_bounds(db, turns):
    db.execute("insert into memory.config (key, value) values ('trust_max', '1.15'), ('trust_min', '0.2')")
    for _ in range(5):
        after_up = give(db, turns[1], True)[2]
        after_down = give(db, turns[2], False)[2]
    assert after_up == pytest.approx(1.15)
    assert after_down == pytest.approx(0.2)


def test_every_verdict_is_kept_with_query_note_and_trust(db, turns):
    give(db, turns[0], False, query="when do we deploy?", note="outdated")
    give(db, turns[0], True)
    rows = db.execute(
        "select helpful, query, note, trust_before, trust_after, given_by from memory.feedback order by feedback_id"
    ).fetchall()
    assert rows == [
        (False, "when do we deploy?", "outdated", 1.0, 0.5, "postgres"),
        (True, None, None, 0.5, pytest.approx(0.6), "postgres"),
    ]
    summary = db.execute("select helpful, unhelpful, trust from memory.feedback_summary").fetchone()
    assert summary == (1, 1, pytest.approx(0.6))


def test_unhelpful_feedback_lowers_the_turn_in_recall(db, turns):
    def ranked():
        rows = db.execute("select turn_id, score from memory.recall('when do we deploy to production?', k => 3)")
        return {turn: score for turn, score in rows}

    before = ranked()
    give(db, turns[0], False)
    after = ranked()
    assert after[turns[0]] < before[turns[0]]
    assert after[turns[2]] == pytest.approx(before[turns[2]])


def test_an_unknown_turn_is_an_error_naming_it(db, turns):
    with pytest.raises(psycopg.errors.NoDataFound, match='no turn 999999 in tenant "default"'):
        give(db, 999999, True)


def test_another_tenants_turn_cannot_be_judged(db, turns):
    db.execute("set memory.tenant_id = 'other'")
    with pytest.raises(psycopg.errors.NoDataFound, match='tenant "other"'):
        give(db, turns[0], False)


def test_a_verdict_needs_helpful(db, turns):
    with pytest.raises(psycopg.errors.NullValueNotAllowed, match="helpful => true or false"):
        give(db, turns[0], None)
