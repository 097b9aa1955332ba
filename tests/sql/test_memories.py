"""Curated memories: remembered by key and by claim, superseded with their history kept, read at a point in
time, resolved and retracted, left out of recall and bootstrap once they no longer hold."""

import hashlib
from datetime import datetime, timezone

import psycopg
import pytest
from psycopg.types.json import Json


def remember(db, content, **extra):
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select memory_id, status, supersedes, outcome from memory.remember(%(content)s{names})",
        {"content": content, **extra},
    ).fetchone()


def sha256_hex(text):
    return hashlib.sha256(text.encode()).hexdigest()


def contents(db, sql, *args):
    return [row[0] for row in db.execute(sql, args).fetchall()]


def test_the_same_claim_is_one_memory_whatever_its_case_and_spacing(db):
    first = remember(db, "Deploys happen on Tuesdays.", kind="rule", subjects=["Deploys"])
    again = remember(db, "  deploys   HAPPEN on tuesdays ", kind="rule", subjects=["deploys"])
    assert first[3] == "created" and again == (first[0], "active", None, "unchanged")
    # Another kind or subject is another claim.
    assert remember(db, "Deploys happen on Tuesdays.", kind="fact")[3] == "created"
    assert db.execute("select count(*) from memory.memories").fetchone()[0] == 2
    assert db.execute("select count(*) from memory.turns").fetchone()[0] == 1


def test_a_new_claim_under_a_key_supersedes_the_current_one_and_keeps_the_chain(db):
    tea, _, _, created = remember(db, "Maria drinks tea in the morning.", kind="preference", key="maria.drink")
    db.commit()
    coffee, status, supersedes, updated = remember(
        db, "Maria drinks coffee in the morning.", kind="preference", key="maria.drink"
    )
    assert (created, updated, status, supersedes) == ("created", "updated", "active", tea)
    old = db.execute(
        "select status, valid_to is not null, superseded_by from memory.memory_items where memory_id = %s", (tea,)
    ).fetchone()
    assert old == ("superseded", True, coffee)
    assert contents(db, "select content from memory.get('maria.drink')") == ["Maria drinks coffee in the morning."]
    switched = db.execute("select valid_from from memory.memories where memory_id = %s", (coffee,)).fetchone()[0]
    just_before = "select content from memory.get('maria.drink', as_of => %s - interval '1 microsecond')"
    assert contents(db, just_before, switched) == ["Maria drinks tea in the morning."]
    assert contents(db, "select content from memory.list_memories(as_of => %s)", switched) == [
        "Maria drinks coffee in the morning."
    ]


def test_a_backdated_claim_takes_its_place_in_the_history(db):
    march, june = datetime(2026, 3, 1, tzinfo=timezone.utc), datetime(2026, 6, 1, tzinfo=timezone.utc)
    remember(db, "The team uses Jenkins.", key="ci", valid_from=march)
    latest = remember(db, "The team uses GitHub Actions.", key="ci", valid_from=june)[0]
    backdated, status, before, outcome = remember(
        db, "The team uses GitLab CI.", key="ci", valid_from=datetime(2026, 4, 1, tzinfo=timezone.utc)
    )
    assert (status, outcome) == ("superseded", "updated")
    assert contents(db, "select content from memory.get('ci')") == ["The team uses GitHub Actions."]
    for day, expected in (("2026-03-15", "Jenkins"), ("2026-05-01", "GitLab CI"), ("2026-07-01", "GitHub Actions")):
        assert contents(db, "select content from memory.get('ci', as_of => %s)", day) == [f"The team uses {expected}."]
    chain = db.execute("select supersedes from memory.memories where memory_id = %s", (latest,)).fetchone()[0]
    assert chain == backdated and before is not None


def test_superseded_and_retracted_memories_leave_recall_and_bootstrap(db):
    remember(db, "The staging database is called orion.", key="staging.db", importance=0.9)
    remember(db, "The staging database is called vega.", key="staging.db", importance=0.9)
    wrong = remember(db, "Standups are at 11 on Mondays.", kind="rule")[0]
    hits = contents(db, "select content from memory.recall('what is the staging database called', k => 5)")
    assert "The staging database is called vega." in hits
    assert "The staging database is called orion." not in hits
    assert db.execute("select status from memory.retract(%s)", (wrong,)).fetchone() == ("retracted",)
    assert "Standups are at 11 on Mondays." not in contents(db, "select content from memory.recall('standups', k => 5)")
    boot = contents(db, "select content from memory.bootstrap()")
    assert boot == ["The staging database is called vega."]


def test_bootstrap_puts_rules_and_preferences_first_within_the_budget(db):
    remember(db, "Kubernetes runs in eu-west-1.", importance=1.0)
    remember(db, "Answer in British English.", kind="preference", importance=0.2)
    remember(db, "Never force-push to main.", kind="rule", importance=0.3)
    remember(db, "Rotate the signing key.", kind="task")
    everything = contents(db, "select content from memory.bootstrap()")
    assert everything == [
        "Never force-push to main.",
        "Answer in British English.",
        "Rotate the signing key.",
        "Kubernetes runs in eu-west-1.",
    ]
    budget = len("Never force-push to main.") + len("Answer in British English.")
    assert contents(db, "select content from memory.bootstrap(max_chars => %s)", budget) == everything[:2]


def test_resolve_and_retract_move_a_memory_once_and_name_what_stops_them(db):
    task = remember(db, "Write the rollback runbook.", kind="task", status="ongoing")[0]
    assert contents(db, "select content from memory.open_tasks") == ["Write the rollback runbook."]
    assert db.execute("select status from memory.resolve(%s)", (task,)).fetchone() == ("resolved",)
    assert contents(db, "select content from memory.open_tasks") == []
    assert contents(db, "select content from memory.list_memories(status => 'resolved')") == [
        "Write the rollback runbook."
    ]
    resolved_twice = f"memory {task} is resolved and cannot be resolved"
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=resolved_twice), db.transaction():
        db.execute("select memory.resolve(%s)", (task,))
    assert db.execute("select status from memory.retract(%s)", (task,)).fetchone() == ("retracted",)
    with pytest.raises(psycopg.errors.NoDataFound, match="no memory 999999"):
        db.execute("select memory.retract(999999)")


def test_memories_filter_by_kind_subject_tag_and_words(db):
    remember(db, "Use ruff for linting.", kind="rule", subjects=["Ruff"], tags=["python"], importance=0.8)
    remember(db, "The API is written in Go.", subjects=["API"], tags=["go"])
    remember(db, "We chose PostgreSQL over MySQL.", kind="decision", subjects=["Postgres"])
    assert contents(db, "select content from memory.list_memories(kind => 'rule')") == ["Use ruff for linting."]
    assert contents(db, "select content from memory.list_memories(subject => 'POSTGRESQL')") == [
        "We chose PostgreSQL over MySQL."
    ]
    assert contents(db, "select content from memory.list_memories(tag => 'go')") == ["The API is written in Go."]
    assert contents(db, "select content from memory.list_memories(search => 'RUFF')") == ["Use ruff for linting."]
    assert contents(db, "select content from memory.list_memories(k => 1)") == ["Use ruff for linting."]
    assert contents(db, "select content from memory.recent_decisions") == ["We chose PostgreSQL over MySQL."]
    assert contents(db, "select content from memory.rules_and_preferences") == ["Use ruff for linting."]


def test_memories_list_by_key_prefix_case_and_all(db):
    remember(db, "Ana prefers tea.", key="users/ana/drink")
    remember(db, "Ana lives in Porto.", key="users/ana/home")
    remember(db, "Bo prefers coffee.", key="users/bo/drink")
    remember(db, "Anabel likes jazz.", key="users/anabel/music")
    remember(db, "Deploys are on Fridays.")
    listed = "select key from memory.list_memories(key_prefix => %s) order by key"
    assert contents(db, listed, "users/ana/") == ["users/ana/drink", "users/ana/home"]
    assert contents(db, listed, "users/") == [
        "users/ana/drink",
        "users/ana/home",
        "users/anabel/music",
        "users/bo/drink",
    ]
    assert contents(db, listed, "Users/") == [] and contents(db, listed, "users/a_a/") == []
    bo = db.execute("select memory_id from memory.get('users/bo/drink')").fetchone()[0]
    by_id = "select content from memory.list_memories(memory_ids => %s)"
    assert contents(db, by_id, [bo, 424242]) == ["Bo prefers coffee."]


def test_the_same_words_under_two_keys_are_two_turns_and_recall_finds_each(db):
    for key in ("users/ana/theme", "users/bo/theme"):
        remember(db, "Prefers dark mode in every editor.", key=key, tags=[key.split("/")[1]])
    assert db.execute("select count(distinct turn_id) from memory.memories").fetchone()[0] == 2
    found = (
        "select m.key from memory.recall('dark mode editor', tags => %s) as h"
        " join memory.memories as m using (memory_id)"
    )
    assert contents(db, found, ["ana"]) == ["users/ana/theme"] and contents(db, found, ["bo"]) == ["users/bo/theme"]


def test_words_remembered_under_a_key_before_0_4_keep_their_turn(db):
    # Before 0.4.0 the turn of a memory's words was named by the hash of the words alone.
    legacy = {
        "role": "user",
        "content": "Deploys are on Fridays.",
        "id": "remembered:" + sha256_hex("Deploys are on Fridays."),
    }
    db.execute("select memory.commit('remembered', %s, source => 'remember', enrich => 'none')", (Json([legacy]),))
    remember(db, "Deploys are on Fridays.", key="deploy.day")
    assert db.execute("select count(*) from memory.turns").fetchone()[0] == 1
    # Under another key, the same words are a turn of their own.
    remember(db, "Deploys are on Fridays.", key="release.day")
    assert db.execute("select count(*) from memory.turns").fetchone()[0] == 2


def test_remembering_indexes_the_new_claim_alone_and_keeps_the_others(db):
    indexed = "select value from memory.metrics where metric = 'turns_indexed'"
    remember(db, "Ana leads the billing team in Lisbon.", key="ana.role")
    remember(db, "Bo runs the Porto office.", key="bo.role")
    assert db.execute(indexed).fetchone()[0] == 2  # one turn each time, not the session's every turn
    mentions = "select count(*) from memory.entity_mentions"
    before = db.execute(mentions).fetchone()[0]
    remember(db, "Dana Costa joined the Berlin office.", key="dana.start")
    assert db.execute(indexed).fetchone()[0] == 3 and db.execute(mentions).fetchone()[0] > before
    assert db.execute("select count(*) from memory.chunks").fetchone()[0] == 3
    # Enriching the session as a whole (memory.enrich, the queue) reads every claim again, and finds the same.
    db.execute("select memory.enrich('remembered')")
    assert db.execute(indexed).fetchone()[0] == 6
    assert db.execute("select count(*) from memory.chunks").fetchone()[0] == 3


def test_a_memory_keeps_its_metadata_and_the_same_claim_again_adds_to_it(db):
    row = "select metadata from memory.remember(%s, key => 'deploy', metadata => %s::jsonb)"
    assert db.execute(row, ("Deploys are on Fridays.", Json({"source": "ops", "n": 1}))).fetchone()[0] == {
        "source": "ops",
        "n": 1,
    }
    assert db.execute(row, ("Deploys are on Fridays.", Json({"n": 2}))).fetchone()[0] == {"source": "ops", "n": 2}
    # A new claim under the key is a new version with the metadata given with it alone.
    assert db.execute(row, ("Deploys are on Mondays.", Json({"by": "ana"}))).fetchone()[0] == {"by": "ana"}
    history = "select metadata from memory.list_memories(status => 'superseded')"
    assert contents(db, history) == [{"source": "ops", "n": 2}]


def test_evidence_turns_are_kept_and_checked(db):
    message = [{"role": "user", "content": "I always want dark mode."}]
    db.execute("select memory.commit('s1', %s, enrich => 'none')", (Json(message),))
    turn = db.execute("select turn_id from memory.turns").fetchone()[0]
    memory = remember(db, "The user wants dark mode.", kind="preference", evidence=[turn, turn])[0]
    evidence = db.execute("select evidence_turn_ids from memory.memory_items where memory_id = %s", (memory,))
    assert evidence.fetchone()[0] == [turn]
    with pytest.raises(psycopg.errors.ForeignKeyViolation, match="evidence turn 424242 does not exist"):
        remember(db, "The user wants light mode.", evidence=[424242])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"kind": "gossip"}, "remember kind must be one of fact, preference, rule, decision, skill, event"),
        ({"status": "resolved"}, "remember status must be active, ongoing or pending, got resolved"),
        ({"importance": 1.5}, "importance and confidence must be between 0 and 1, got 1.5 and 1"),
        ({"key": "  "}, "a memory key cannot be blank"),
        ({"agent_id": None}, "remember needs an agent_id"),
        ({"status": "pending", "key": "deploy.day"}, "a pending memory cannot have a key"),
    ],
)
def test_bad_memories_are_refused_by_name_and_nothing_is_written(db, extra, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
        remember(db, "Deploys happen on Tuesdays.", **extra)
    db.rollback()
    assert db.execute("select count(*) from memory.memories").fetchone()[0] == 0
    assert db.execute("select count(*) from memory.turns").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("memory.list_memories(kind => 'gossip')", "memory kind must be one of"),
        ("memory.list_memories(status => 'done')", "memory status must be active, ongoing, resolved, superseded"),
        ("memory.list_memories(status => 'active', as_of => now())", "give status or as_of, not both"),
        ("memory.list_memories(k => 0)", "k must be at least 1, got 0"),
    ],
)
def test_bad_memory_queries_are_refused_by_name(db, call, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
        db.execute(f"select * from {call}")


def test_approve_takes_only_a_pending_proposal_of_a_claim_not_held(db):
    with pytest.raises(psycopg.errors.NoDataFound, match="no memory 424242 in tenant"):
        db.execute("select memory.approve(424242)")
    db.rollback()
    proposal = remember(db, "Deploys happen on Tuesdays.", kind="rule", status="pending")[0]
    held = remember(db, "Deploys happen on Tuesdays.", kind="rule")[0]
    with pytest.raises(psycopg.errors.UniqueViolation, match=f"memory {proposal} states what memory {held} already"):
        db.execute("select memory.approve(%s)", (proposal,))


def test_a_tenant_role_keeps_and_reads_only_its_own_memories(db, logins):
    db.commit()
    acme, globex = logins.create(tenant="acme"), logins.create(tenant="globex")
    acme.execute("select memory.remember('acme ships on Fridays', key => 'ship day')")
    globex.execute("select memory.remember('globex ships on Mondays', key => 'ship day')")
    assert contents(acme, "select content from memory.get('ship day')") == ["acme ships on Fridays"]
    assert contents(globex, "select content from memory.list_memories()") == ["globex ships on Mondays"]
    assert contents(acme, "select content from memory.memories") == ["acme ships on Fridays"]


def test_stats_count_the_memories_that_hold_and_every_verdict_of_an_agent(db):
    first = remember(db, "The staging database is called orion.", key="staging.db", agent_id="ops")[0]
    remember(db, "The staging database is called vega.", key="staging.db", agent_id="ops")
    remember(db, "Answer briefly.", kind="rule", agent_id="ops")
    db.execute("select memory.give_feedback('stale', memory_id => %s)", (first,))
    stats = db.execute("select remembered, feedback from memory.stats('ops')").fetchone()
    assert stats == (2, 1)
