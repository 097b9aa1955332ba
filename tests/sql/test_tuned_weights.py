"""memory.tune_weights: recall's weights fitted to a tenant's feedback, opt-in, bounded, after enough evidence,
with a dry run and a reset; other tenants and agents without their own keep theirs. Real model, real recall."""

import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from conftest import Logins
from psycopg.types.json import Json, Jsonb

from agent_memory.client import Memory

CLI = str(Path(sys.executable).with_name("agent-memory"))

# Each question's answer is about what it asks in other words; each distractor has its words about something else.
CASES = [
    (
        "Where can my dog run off leash?",
        "Riverside park has a fenced meadow where dogs roam freely.",
        "The CI job will run the leash linter off the main branch; dog-fooding starts Monday.",
    ),
    (
        "What should I eat for dinner tonight?",
        "Grilled salmon with rice and steamed broccoli makes a healthy meal.",
        "Tonight's server migration window starts at dinner time: eat the downtime, it should finish by nine.",
    ),
    (
        "Which laptop should I buy for programming?",
        "A ThinkPad with 32 GB of memory handles compilers and IDEs well.",
        "Programming the buy button: which laptop breakpoint should the CSS use?",
    ),
    (
        "How do I get to the office?",
        "Take the 14 bus from central station, then walk two blocks north to our building.",
        "Office 365 licences: how do I get the admin to renew them?",
    ),
]


def load(db: psycopg.Connection, agent: str = "helper") -> None:
    for n, case in enumerate(CASES):
        for said in case[1:]:  # each in a session of its own: no context, no neighbour
            said = [{"role": "user", "content": said}]
            db.execute(
                "select memory.commit(%s, %s, agent_id => %s, enrich => 'now')",
                (f"s{n}-{len(said[0]['content'])}", Json(said), agent),
            )


def judge(db: psycopg.Connection, agent: str = "helper") -> None:
    """Each question's answer helpful, every other hit unhelpful, with the question as the query."""
    for question, answer, _ in CASES:
        for turn_id, content in db.execute(
            "select turn_id, content from memory.recall(%s, k => 4, agent_id => %s)", (question, agent)
        ).fetchall():
            verdict = "helpful" if content == answer else "unhelpful"
            db.execute("select memory.give_feedback(%s, turn_id => %s, query => %s)", (verdict, turn_id, question))


def weights_used(db: psycopg.Connection, agent: str = "helper", weights: dict | None = None) -> dict:
    components = db.execute(
        "select components from memory.recall('office', k => 1, agent_id => %s, weights => %s)",
        (agent, Jsonb(weights) if weights else None),
    ).fetchone()[0]
    return {
        "dense": components["signals"]["dense"]["weight"],
        "lexical": components["signals"]["lexical"]["weight"],
        "tuned": components["tuned"],
    }


@pytest.fixture
def judged(db):
    db.execute("insert into memory.config (key, value) values ('tune_min_verdicts', '3')")
    load(db)
    judge(db)
    return db


def test_the_fit_follows_the_verdicts_and_recall_uses_it(judged):
    report = judged.execute("select * from memory.tune_weights()").fetchone()
    (agent, applied, reason, helpful, queries, pairs, weights, before, after, *_) = report
    assert (agent, applied, reason, helpful, queries) == (None, True, "fitted and kept", 4, 4)
    assert pairs > 0 and after > before
    assert weights["dense"]["after"] / weights["dense"]["before"] > weights["lexical"]["after"] / 1.0
    used = weights_used(judged)
    assert used["dense"] == pytest.approx(weights["dense"]["after"])
    assert used["tuned"]["agent_id"] == ""
    # Per call, and from a session, the weights in force without tuning.
    assert weights_used(judged, weights={"use_tuned_weights": False}) == {"dense": 1.2, "lexical": 1.0, "tuned": None}
    judged.execute("set memory.weight_dense = 0.7")
    assert weights_used(judged)["dense"] == 0.7
    judged.execute("reset memory.weight_dense")
    stored = judged.execute("select agent_id, helpful_verdicts, fitted_by from memory.tuned_weights").fetchall()
    assert stored == [("", 4, "postgres")]


def test_a_dry_run_keeps_nothing_and_a_reset_goes_back(judged):
    dry = judged.execute("select applied, reason, weights from memory.tune_weights(dry_run => true)").fetchone()
    assert dry[:2] == (False, "fitted; dry run, not kept") and dry[2]["dense"]["after"] != 1.2
    assert judged.execute("select count(*) from memory.tuned_weights").fetchone()[0] == 0
    judged.execute("select memory.tune_weights()")
    assert weights_used(judged)["dense"] != 1.2
    assert judged.execute("select memory.reset_tuned_weights()").fetchone()[0] is True
    assert weights_used(judged) == {"dense": 1.2, "lexical": 1.0, "tuned": None}
    assert judged.execute("select memory.reset_tuned_weights()").fetchone()[0] is False


def test_without_enough_evidence_nothing_moves(db):
    load(db)
    judge(db)
    report = db.execute("select applied, reason, weights from memory.tune_weights()").fetchone()
    assert report == (False, "not enough evidence: 4 helpful verdicts on recalled turns, 20 needed", None)
    assert weights_used(db) == {"dense": 1.2, "lexical": 1.0, "tuned": None}


def test_an_agents_own_weights_come_before_the_tenants(judged):
    load(judged, agent="other")
    judged.execute("select memory.tune_weights(agent_id => 'helper')")
    assert weights_used(judged)["tuned"]["agent_id"] == "helper"
    assert weights_used(judged, agent="other")["tuned"] is None  # no feedback of its own, no tenant row
    judged.execute("select memory.tune_weights()")
    assert weights_used(judged, agent="other")["tuned"]["agent_id"] == ""
    assert weights_used(judged)["tuned"]["agent_id"] == "helper"
    other = judged.execute("select applied, reason from memory.tune_weights(agent_id => 'other')").fetchone()
    assert other == (False, "not enough evidence: 0 helpful verdicts on recalled turns, 3 needed")


def test_a_tenant_tunes_its_own_and_no_other(db, logins: Logins):
    db.execute("insert into memory.config (tenant_id, key, value) values ('', 'tune_min_verdicts', '3')")
    db.commit()
    acme, globex = logins.create(tenant="acme"), logins.create(tenant="globex")
    for conn in (acme, globex):
        load(conn)
    judge(acme)
    assert acme.execute("select applied, reason from memory.tune_weights()").fetchone() == (True, "fitted and kept")
    assert weights_used(acme)["tuned"] is not None
    assert weights_used(globex) == {"dense": 1.2, "lexical": 1.0, "tuned": None}
    assert globex.execute("select count(*) from memory.tuned_weights").fetchone()[0] == 0
    assert globex.execute("select memory.reset_tuned_weights()").fetchone()[0] is False
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        acme.execute("update memory.tuned_weights set weights = '{\"weight_dense\": 100}'")
    assert weights_used(acme)["tuned"] is not None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("memory.tune_weights(dry_run => null)", "dry_run must be true or false"),
        ("memory.tune_weights(agent_id => '')", "agent_id must not be empty (null tunes the whole tenant)"),
        ("memory.tune_weights(agent_id => 'nobody')", 'no agent "nobody" in tenant "default"'),
        ("memory.reset_tuned_weights(agent_id => '')", "agent_id must not be empty (null resets the whole tenant's)"),
    ],
)
def test_bad_calls_name_the_problem(db, call, message):
    load(db)
    with pytest.raises(psycopg.Error, match=re.escape(message)):
        db.execute(f"select {call}")


def test_reciprocal_rank_fusion_is_refused_and_leaves_tuned_factors_out(judged):
    judged.execute("select memory.tune_weights()")
    judged.execute("set memory.fusion = 'rrf'")
    assert weights_used(judged) == {"dense": 1.2, "lexical": 1.0, "tuned": None}
    judged.execute("reset memory.fusion")
    judged.execute("insert into memory.config (key, value) values ('fusion', '\"rrf\"')")
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="tune_weights fits z-score fusion"):
        judged.execute("select memory.tune_weights()")


def test_the_fit_reads_the_configuration_not_the_session(db, logins: Logins):
    """A tenant's session cannot pick the base weights or loosen the bounds of what every session will use."""
    db.execute("insert into memory.config (tenant_id, key, value) values ('', 'tune_min_verdicts', '3')")
    db.commit()
    acme = logins.create(tenant="acme")
    load(acme)
    judge(acme)
    acme.execute("set memory.weight_dense = 100")
    dry = acme.execute("select weights from memory.tune_weights(dry_run => true)").fetchone()[0]
    assert dry["dense"]["before"] == 1.2 and dry["dense"]["after"] <= 2.4
    acme.execute("reset memory.weight_dense")
    acme.execute("set memory.tune_max_factor = 10")
    with pytest.raises(psycopg.Error, match="tune_max_factor"):
        acme.execute("select memory.tune_weights()")


def test_the_client_and_the_command_line_tune_and_reset(judged, dsn):
    judged.commit()
    with Memory(dsn) as memory:
        dry = memory.tune_weights(dry_run=True)
        assert (dry.applied, dry.reason, dry.helpful_verdicts) == (False, "fitted; dry run, not kept", 4)
        assert dry.weights["dense"]["after"] > dry.weights["dense"]["before"]
    shown = subprocess.run([CLI, "--dsn", dsn, "tune-weights"], capture_output=True, text=True, check=True).stdout
    assert shown.splitlines()[0] == "fitted and kept"
    assert "  weight_dense: 1.2 -> " in shown and "pairs ordered right: " in shown
    with Memory(dsn) as memory:
        assert memory.reset_tuned_weights() is True
    again = subprocess.run([CLI, "--dsn", dsn, "reset-tuned-weights"], capture_output=True, text=True, check=True)
    assert again.stdout.strip() == "no tuned weights to remove"
