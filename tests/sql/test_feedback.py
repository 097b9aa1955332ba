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
    return [row[0] for row in db.execute("select turn_id from memory.turns order by position")]


def give(db, turn, helpful, **extra):
    verdict = {True: "helpful", False: "unhelpful", None: None}[helpful]
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select * from memory.give_feedback(%(verdict)s, turn_id => %(turn)s{names})",
        {"turn": turn, "verdict": verdict, **extra},
    ).fetchone()


def test_unhelpful_halves_trust_and_helpful_adds_a_step(db, turns):
    assert give(db, turns[0], False)[1:3] == (1.0, 0.5)
    assert give(db, turns[0], True)[1:3] == (0.5, pytest.approx(0.6))
    assert db.execute("select trust from memory.turns where turn_id = %s", (turns[0],)).fetchone()[0] == (
        pytest.approx(0.6)
    )


def test_trust_stays_between_its_bounds(db, turns):
    db.execute("insert into memory.config (key, value) values ('trust_max', '1.15'), ('trust_min', '0.2')")
    for judge in ("a", "b", "c", "d", "e"):  # one verdict each: a judge's repeat moves nothing
        after_up = give(db, turns[1], True, judged_by=judge)[2]
        after_down = give(db, turns[2], False, judged_by=judge)[2]
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


def test_a_verdict_is_needed(db, turns):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="verdict must be helpful, unhelpful, incorrect"):
        give(db, turns[0], None)


def judge(db, **target):
    names = ", ".join(f"{key} => %({key})s" for key in target)
    return db.execute(
        f"select trust_before, trust_after, verdict, counted, effect from memory.give_feedback({names})", target
    ).fetchone()


def remembered(db, content, **extra):
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select memory_id from memory.remember(%(content)s{names})", {"content": content, **extra}
    ).fetchone()[0]


def test_incorrect_from_enough_agents_retracts_a_memory_and_a_repeat_counts_once(db, turns):
    wrong = remembered(db, "Production deploys happen on Sundays.", kind="fact")
    first = judge(db, memory_id=wrong, verdict="incorrect", judged_by="planner")
    assert first[2:4] == ("incorrect", True) and "1 of 2 agents" in first[4]
    repeat = judge(db, memory_id=wrong, verdict="incorrect", judged_by="planner")
    assert repeat[:4] == (first[1], first[1], "incorrect", False)
    assert db.execute("select status from memory.memories where memory_id = %s", (wrong,)).fetchone() == ("active",)
    second = judge(db, memory_id=wrong, verdict="incorrect", judged_by="reviewer")
    assert "retracted (2 agents said incorrect)" in second[4]
    assert db.execute("select status from memory.memories where memory_id = %s", (wrong,)).fetchone() == ("retracted",)
    hits = db.execute("select content from memory.recall('when do production deploys happen?', k => 10)").fetchall()
    assert ("Production deploys happen on Sundays.",) not in hits


def test_stale_lowers_a_memorys_importance_once_per_agent(db, turns):
    old = remembered(db, "The freeze starts on Thursdays.", kind="rule", importance=0.8)
    judge(db, memory_id=old, verdict="stale", judged_by="planner")
    judge(db, memory_id=old, verdict="stale", judged_by="planner")
    assert db.execute("select importance from memory.memories where memory_id = %s", (old,)).fetchone() == (
        pytest.approx(0.4),
    )
    # Changing one's mind counts, and so does saying it again after that.
    judge(db, memory_id=old, verdict="helpful", judged_by="planner")
    judge(db, memory_id=old, verdict="stale", judged_by="planner")
    assert db.execute("select importance from memory.memories where memory_id = %s", (old,)).fetchone() == (
        pytest.approx(0.2),
    )


def test_a_verdict_on_a_session_moves_every_turns_trust(db, turns):
    said = judge(db, session_id="deploys", verdict="unhelpful", judged_by="planner")
    assert said[:4] == (None, None, "unhelpful", True) and "3 turns lowered" in said[4]
    assert db.execute("select array_agg(trust order by position) from memory.turns").fetchone() == ([0.5, 0.5, 0.5],)
    judge(db, session_id="deploys", verdict="unhelpful", judged_by="planner")
    judge(db, session_id="deploys", verdict="helpful", judged_by="reviewer")
    assert db.execute("select array_agg(trust order by position) from memory.turns").fetchone() == (
        [pytest.approx(0.6)] * 3,
    )


def test_every_verdict_is_audited_with_its_judge_target_and_effect(db, turns):
    memory = remembered(db, "Deploys need two approvals.", kind="rule")
    judge(db, turn_id=turns[0], verdict="stale", judged_by="planner", note="moved to Tuesdays")
    judge(db, memory_id=memory, verdict="helpful")
    judge(db, session_id="deploys", verdict="incorrect")
    rows = db.execute(
        "select verdict, helpful, judged_by, turn_id is not null, memory_id is not null, session_key is not null,"
        " counted, effect is not null, note from memory.feedback order by feedback_id"
    ).fetchall()
    assert rows == [
        ("stale", False, "planner", True, False, False, True, True, "moved to Tuesdays"),
        ("helpful", True, "postgres", False, True, False, True, True, None),
        ("incorrect", False, "postgres", False, False, True, True, True, None),
    ]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"turn_id": 1, "session_id": "deploys", "verdict": "stale"}, "needs one of turn_id, memory_id or session_id"),
        ({"verdict": "stale"}, "needs one of turn_id, memory_id or session_id, got 0"),
        ({"turn_id": 1, "verdict": "wrong"}, "verdict must be helpful, unhelpful, incorrect or stale, got wrong"),
        ({"memory_id": 999999, "verdict": "stale"}, "no memory 999999"),
        ({"session_id": "nope", "verdict": "stale"}, 'no session "nope"'),
    ],
)
def test_bad_verdicts_are_refused_by_name_and_nothing_is_written(db, turns, target, message):
    with pytest.raises(psycopg.Error, match=message):
        judge(db, **target)
    db.rollback()
    assert db.execute("select count(*) from memory.feedback").fetchone() == (0,)
