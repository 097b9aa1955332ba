"""Tiers: decay and moves over simulated time, capacity per agent, recall leaving cold items out and bringing
back what it returns, helpful feedback and commits bringing items back, per-tenant settings, tenant roles."""

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

BILLING = [
    {"role": "user", "content": "We moved the billing service to the new cluster on Monday."},
    {"role": "assistant", "content": "Good. Did the signing keys for billing move with it?"},
]
GARDEN = [
    {"role": "user", "content": "The tomatoes in the greenhouse need watering twice a week."},
    {"role": "assistant", "content": "I will remind you about the greenhouse tomatoes on Tuesdays and Fridays."},
]


def commit(db, session, messages, agent="a"):
    db.execute("select memory.commit(%s, %s, agent_id => %s, enrich => 'now')", (session, Json(messages), agent))


def remember(db, content, importance, agent="a"):
    return db.execute(
        "select memory_id from memory.remember(%s, agent_id => %s, importance => %s, enrich => 'now')",
        (content, agent, importance),
    ).fetchone()[0]


def moves(db, days):
    """What maintenance would move `days` from now: (session or memory id, to, reason)."""
    return sorted(
        (row[0] or str(row[1]), row[2], row[3])
        for row in db.execute(
            "select session_id, memory_id, new_tier, reason from memory.tier_moves(now() + %s * interval '1 day')",
            (days,),
        )
    )


def move(db, days, tenant="default"):
    return db.execute(
        "select memory_internal._move_tiers(%s, now() + %s * interval '1 day')", (tenant, days)
    ).fetchone()[0]


def tiers(db):
    return dict(
        (row[0] or str(row[1]), row[2])
        for row in db.execute("select session_id, memory_id, tier from memory.tier_items")
    )


def test_decay_moves_items_down_the_more_important_later(db):
    commit(db, "billing", BILLING)
    memory = remember(db, "The billing service runs on the new cluster.", 0.9)
    assert moves(db, 0) == []
    # A session (importance 0.5) halves every 7 days down to tier_warm_below 0.25 (day 7), then every 30
    # days: day 10, 0.25 x 2^(-3/30) = 0.23, warm. The memory (0.9) reaches 0.25 on day 12.9.
    assert moves(db, 10) == [("billing", "warm", "decayed below tier_warm_below")]
    assert move(db, 10) == {"to_warm": 1, "to_cold": 0}
    assert tiers(db) == {"billing": "warm", str(memory): "hot"}
    assert move(db, 10) == {"to_warm": 0, "to_cold": 0}  # the same run again moves nothing
    assert move(db, 60) == {"to_warm": 1, "to_cold": 0}
    assert tiers(db) == {"billing": "warm", str(memory): "warm"}
    # tier_cold_below 0.05 is 30 x log2(0.25 / 0.05) = 69.7 days after tier_warm_below: day 76.7 for the
    # session, day 82.6 for the memory.
    assert moves(db, 76) == []
    assert moves(db, 80) == [("billing", "cold", "decayed below tier_cold_below")]
    assert len(moves(db, 83)) == 2
    (decayed,) = db.execute("select decayed_importance from memory.tier_items where session_id = 'billing'").fetchone()
    assert decayed == pytest.approx(0.5, rel=1e-3)  # used just now, by these clocks


def test_where_decay_puts_an_item_does_not_depend_on_how_often_maintenance_ran(db):
    for tenant in ("daily", "once"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        commit(db, "billing", BILLING)
    for day in range(1, 91):
        move(db, day, tenant="daily")
    move(db, 90, tenant="once")
    placed = db.execute("select tenant_id, tier from memory.sessions order by tenant_id").fetchall()
    assert placed == [("daily", "cold"), ("once", "cold")]


def test_capacity_moves_the_least_important_then_least_recently_used(db):
    db.execute("insert into memory.config (key, value) values ('tier_hot_capacity', '2'), ('tier_warm_capacity', '1')")
    for hours, session in ((3, "oldest"), (2, "older"), (1, "newest")):
        commit(db, session, [{"role": "user", "content": f"Notes of the {session} meeting about the roadmap."}])
        db.execute(
            "update memory.sessions set updated_at = now() - %s * interval '1 hour' where session_id = %s",
            (hours, session),
        )
    weighty = remember(db, "Releases need two approvals.", 0.9)
    commit(db, "elsewhere", BILLING, agent="b")  # another agent's tiers are its own
    assert moves(db, 0) == [
        ("older", "warm", "over tier_hot_capacity"),
        ("oldest", "cold", "over tier_warm_capacity"),
    ]
    assert move(db, 0) == {"to_warm": 1, "to_cold": 1}
    assert tiers(db) == {"oldest": "cold", "older": "warm", "newest": "hot", str(weighty): "hot", "elsewhere": "hot"}


def test_recall_leaves_cold_items_out_unless_asked_and_brings_back_what_it_returns(db):
    commit(db, "billing", BILLING)
    commit(db, "garden", GARDEN)
    db.execute("update memory.sessions set tier = 'cold' where session_id = 'garden'")

    def found(**options):
        names = "".join(f", {key} => %({key})s" for key in options)
        return [
            row[0] for row in db.execute(f"select session_id from memory.recall('greenhouse tomatoes'{names})", options)
        ]

    assert "garden" not in found(weights=Jsonb({"tier_promote_on_recall": False}))
    (context,) = db.execute(
        "select components -> 'tiers' from memory.explain_recall('greenhouse tomatoes') limit 1"
    ).fetchone()
    assert context == ["hot", "warm"]
    db.commit()
    db.execute("set transaction read only")
    assert found(tiers=["hot", "warm", "cold"])[0] == "garden"  # read only: found, not moved
    assert tiers(db)["garden"] == "cold"
    db.rollback()

    db.execute("update memory.sessions set tier = 'cold' where session_id = 'garden'")
    (tier_signal,) = db.execute(
        "select components -> 'signals' -> 'tier' ->> 'value' from memory.recall('greenhouse tomatoes', k => 1,"
        " tiers => '{cold}')"
    ).fetchone()
    assert float(tier_signal) == 0
    garden = db.execute("select tier, used_at is not null from memory.sessions where session_id = 'garden'")
    assert garden.fetchone() == ("hot", True)
    assert found()[0] == "garden"


def test_a_cold_memory_is_left_out_of_recall(db):
    memory = remember(db, "The greenhouse tomatoes need watering twice a week.", 0.5)
    db.execute("update memory.memories set tier = 'cold' where memory_id = %s", (memory,))
    query = "select memory_id from memory.recall('greenhouse tomatoes watering', weights => %s, tiers => %s)"
    off = Jsonb({"tier_promote_on_recall": False})
    assert memory not in [row[0] for row in db.execute(query, (off, None))]
    assert memory in [row[0] for row in db.execute(query, (off, ["cold"]))]


def test_helpful_feedback_and_a_commit_bring_items_back_to_hot(db):
    commit(db, "billing", BILLING)
    commit(db, "garden", GARDEN)
    memory = remember(db, "The billing service runs on the new cluster.", 0.5)
    db.execute("update memory.sessions set tier = 'warm' where session_id in ('billing', 'garden')")
    db.execute("update memory.memories set tier = 'cold'")
    (turn,) = db.execute(
        "select t.turn_id from memory.turns as t join memory.sessions as s using (tenant_id, session_key)"
        " where s.session_id = 'billing' order by t.position limit 1"
    ).fetchone()
    db.execute("select memory.give_feedback('unhelpful', turn_id => %s)", (turn,))
    assert tiers(db)["billing"] == "warm"
    db.execute("select memory.give_feedback('helpful', turn_id => %s)", (turn,))
    db.execute("select memory.give_feedback('helpful', memory_id => %s)", (memory,))
    assert tiers(db) == {"billing": "hot", "garden": "warm", str(memory): "hot"}
    commit(db, "garden", [{"role": "user", "content": "The peppers need shade in July."}])
    assert tiers(db)["garden"] == "hot"


def test_maintain_moves_each_tenants_items_by_its_own_settings(db):
    db.execute(
        "insert into memory.config (tenant_id, key, value) values ('', 'tier_hot_capacity', '1'),"
        " ('roomy', 'tier_hot_capacity', '10')"
    )
    for tenant in ("default", "roomy"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        commit(db, "billing", BILLING)
        commit(db, "garden", GARDEN)
    db.commit()
    db.autocommit = True
    db.execute("call memory.maintain()")
    (actions,) = db.execute("select actions from memory.maintenance_runs order by run_id desc limit 1").fetchone()
    assert actions["tiers_moved"] == {"default": {"to_warm": 1, "to_cold": 0}}
    assert sorted(tiers(db).values()) == ["hot", "hot"]  # tenant roomy
    db.execute("set memory.tenant_id = 'default'")
    assert sorted(tiers(db).values()) == ["hot", "warm"]


def test_bad_tiers_are_refused(db):
    commit(db, "billing", BILLING)
    with pytest.raises(psycopg.errors.RaiseException, match=r'recall_tiers.*got \["lukewarm"\]'):
        db.execute("select * from memory.recall('billing', tiers => '{lukewarm}')")
    db.rollback()
    with pytest.raises(psycopg.errors.RaiseException, match=r'recall_tiers" needs at least 1 of'):
        db.execute("select * from memory.recall('billing', tiers => '{}')")


def test_a_tenant_sees_only_its_own_tiers_and_moves_none(db, logins):
    acme = logins.create(tenant="acme")
    other = logins.create(tenant="other")
    for conn in (acme, other):
        commit(conn, "billing", BILLING)
    assert [row[0] for row in acme.execute("select session_id from memory.tier_items")] == ["billing"]
    assert acme.execute("select count(*) from memory.tier_moves(now() + interval '10 days')").fetchone()[0] == 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # moving tiers is maintenance's
        acme.execute("select memory_internal._move_tiers('acme', now() + interval '10 days')")
    moved = db.execute("select memory_internal._move_tiers('acme', now() + interval '10 days')").fetchone()[0]
    db.commit()
    assert moved == {"to_warm": 1, "to_cold": 0}
    assert other.execute("select tier from memory.tier_items").fetchone()[0] == "hot"
    (session_id,) = acme.execute(
        "select session_id from memory.recall('billing cluster', tiers => '{warm}')"
    ).fetchone()
    assert session_id == "billing"
