"""Retention: policies by age, count and tier, a dry run equal to the run, an archive written before the
removal that imports back."""

import gzip
import json
import threading
import time

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb


def talk(subject: str) -> list[dict]:
    return [
        {"role": "user", "name": "Ana", "content": f"We decided to move the {subject} service to the new cluster."},
        {"role": "assistant", "content": f"Noted: the {subject} service moves to the new cluster."},
    ]


def commit(db, session: str, days_ago: int, agent: str = "team", subject: str | None = None) -> None:
    """A session last used days_ago."""
    db.execute(
        "select memory.commit(%s, %s, agent_id => %s, enrich => 'now')",
        (session, Json(talk(subject or session)), agent),
    )
    db.execute(
        "update memory.sessions set updated_at = now() - make_interval(days => %s)"
        " where session_id = %s and agent_id = %s",
        (days_ago, session, agent),
    )


def maintain(db) -> dict:
    db.commit()
    db.autocommit = True
    db.execute("call memory.maintain()")
    db.autocommit = False
    (actions,) = db.execute("select actions from memory.maintenance_runs order by run_id desc limit 1").fetchone()
    return actions["retention"]


def sessions(db) -> list[str]:
    rows = db.execute("select session_id from memory.sessions where session_id <> 'remembered' order by 1").fetchall()
    return [row[0] for row in rows]


def preview(db) -> list[tuple]:
    return db.execute(
        "select policy_id, data, session_id, memory_id, reason from memory.retention_preview() order by 2, 3, 4"
    ).fetchall()


def test_sessions_unused_longer_than_max_age_go_and_the_dry_run_says_so(db):
    for session, days in (("billing", 200), ("search", 100), ("auth", 10)):
        commit(db, session, days)
    (policy,) = db.execute("select policy_id from memory.set_retention('sessions', max_age => '90 days')").fetchone()
    assert preview(db) == [
        (policy, "memories", None, 1, "extracted from sessions that go"),
        (policy, "memories", None, 2, "extracted from sessions that go"),
        (policy, "sessions", "billing", None, "unused for more than 90 days"),
        (policy, "sessions", "search", None, "unused for more than 90 days"),
    ]
    dry_run = {row[2] or row[3] for row in preview(db)}
    assert maintain(db) == {
        "default": {"archive_id": 1, "sessions": 2, "turns": 6, "memories": 2, "tool_results": 0}
    }  # words too
    assert sessions(db) == ["auth"]
    remaining = {row[0] for row in db.execute("select memory_id from memory.memories").fetchall()}
    assert dry_run == {"billing", "search", *({1, 2, 3} - remaining)}
    assert preview(db) == []
    assert maintain(db) == {}


def test_keep_last_keeps_each_agents_newest(db):
    for agent in ("team", "sales"):
        for session, days in (("a", 30), ("b", 20), ("c", 10)):
            commit(db, session, days, agent)
    db.execute("select memory.set_retention('sessions', keep_last => 1)")
    db.execute("select memory.set_retention('sessions', keep_last => 2, agent_id => 'sales')")
    gone = db.execute("select agent_id, session_id, policy_id from memory.retention_preview() where data = 'sessions'")
    assert sorted(gone.fetchall()) == [("sales", "a", 1), ("sales", "b", 1), ("team", "a", 1), ("team", "b", 1)]
    maintain(db)
    kept = db.execute("select agent_id, session_id from memory.sessions where session_id <> 'remembered' order by 1, 2")
    assert kept.fetchall() == [("sales", "c"), ("team", "c")]


def test_both_limits_must_be_exceeded(db):
    for session, days in (("a", 300), ("b", 200), ("c", 5)):
        commit(db, session, days)
    db.execute("select memory.set_retention('sessions', max_age => '100 days', keep_last => 2)")
    assert [row[2] for row in preview(db) if row[1] == "sessions"] == ["a"]


def test_a_tier_policy_takes_only_that_tier(db):
    for session in ("a", "b"):
        commit(db, session, 400)
    db.execute("update memory.sessions set tier = 'cold' where session_id = 'a'")
    db.execute("update memory.sessions set tier = 'cold', used_at = now() where session_id = 'b'")
    db.execute("select memory.set_retention('sessions', max_age => '30 days', tier => 'cold')")
    assert [row[2] for row in preview(db) if row[1] == "sessions"] == ["a"]
    maintain(db)  # retention comes before this run's tier moves: it takes what the dry run showed
    assert sessions(db) == ["b"]


def test_memories_of_some_statuses_go_and_the_current_one_stays(db):
    for lead in ("Ana", "Bo", "Cy"):
        db.execute("select memory.remember(%s, 'fact', key => 'lead')", (f"{lead} leads the security work.",))
    db.execute("select memory.set_retention('memories', keep_last => 0, statuses => '{superseded}')")
    assert [row[1] for row in preview(db)] == ["memories", "memories"]
    assert maintain(db)["default"]["memories"] == 2
    left = db.execute("select content, status, supersedes from memory.memories").fetchall()
    assert left == [("Cy leads the security work.", "active", None)]
    words = db.execute("select content from memory.turns order by 1").fetchall()
    assert words == [("Cy leads the security work.",)]


def test_the_archive_holds_what_went_and_imports_back(db):
    commit(db, "billing", 200)
    db.execute(
        "select memory.give_feedback('unhelpful', turn_id => turn_id, query => 'billing')"
        " from memory.turns where role = 'assistant'"
    )
    before = db.execute("select content, round(score::numeric, 4) from memory.recall('billing cluster')").fetchall()
    db.execute("update memory.sessions set used_at = null")  # recall used it: unused again, for the policy
    db.execute("select memory.set_retention('sessions', max_age => '90 days')")
    maintain(db)
    assert db.execute("select count(*) from memory.recall('billing cluster')").fetchone() == (0,)
    archive = db.execute("select archive_id, removed, records, bytes, sha256 from memory.list_archives()").fetchone()
    # The turns: the session's two and the words of the memory extracted from it (not indexed yet: 2 chunks).
    assert archive[1:3] == (
        {"sessions": 1, "turns": 3, "chunks": 2, "memories": 1, "entities": 1, "tool_results": 0},
        5,
    )
    (data,) = db.execute("select memory.archive(%s)", (archive[0],)).fetchone()
    assert (len(data), data[:2]) == (archive[3], b"\x1f\x8b")
    records = [json.loads(line) for line in gzip.decompress(data).decode().splitlines()]
    assert [r["record"] for r in records] == ["header", "session", "memory", "entity", "feedback"]
    db.execute("select memory.drop_retention(1)")
    db.execute("select * from memory.import_tenant(%s)", (Jsonb(records),))
    db.commit()
    db.autocommit = True
    db.execute("call memory.work(10)")
    statement = "select content, round(score::numeric, 4) from memory.recall('billing cluster')"
    assert [content for content, _ in db.execute(statement).fetchall()] == [content for content, _ in before]
    assert db.execute("select trust from memory.turns where role = 'assistant'").fetchone() == (0.5,)


def archived(db, archive_id: int) -> list[dict]:
    (data,) = db.execute("select memory.archive(%s)", (archive_id,)).fetchone()
    return [json.loads(line) for line in gzip.decompress(data).decode().splitlines()]


def test_feedback_on_a_memory_that_goes_is_archived_and_comes_back(db):
    for lead in ("Ana", "Bo"):
        db.execute("select memory.remember(%s, 'fact', key => 'lead')", (f"{lead} leads the security work.",))
    db.execute(
        "select memory.give_feedback('unhelpful', turn_id => m.turn_id)"
        " from memory.memories as m where m.status = 'superseded'"
    )
    db.execute("select memory.set_retention('memories', keep_last => 0, statuses => '{superseded}')")
    maintain(db)
    records = archived(db, 1)
    assert [(r["record"], r.get("memory_words") is not None) for r in records[1:]] == [
        ("memory", False),
        ("entity", False),  # Ana: only the words that went named her
        ("feedback", True),
    ]
    assert db.execute("select count(*) from memory.feedback").fetchone() == (0,)
    db.execute("select memory.drop_retention(1)")
    db.execute("select * from memory.import_tenant(%s)", (Jsonb(records),))
    back = db.execute(
        "select m.content, t.trust from memory.feedback as f join memory.turns as t using (tenant_id, turn_id)"
        " join memory.memories as m on m.turn_id = t.turn_id"
    ).fetchall()
    assert back == [("Ana leads the security work.", 0.5)]  # the audit row and the trust it left


def test_a_session_written_to_while_maintenance_waits_for_it_stays(db, dsn):
    commit(db, "billing", 200)
    db.execute("select memory.set_retention('sessions', max_age => '90 days')")
    db.commit()
    with psycopg.connect(dsn) as writer:
        writer.execute(
            "select memory.commit('billing', %s, agent_id => 'team')",
            (Json([{"role": "user", "content": "One more thing about billing."}]),),
        )
        run = threading.Thread(target=maintain, args=(db,))
        run.start()
        time.sleep(1)  # maintenance chose the session and waits for its row
        writer.commit()
        run.join()
    assert sessions(db) == ["billing"]
    assert db.execute(
        "select count(*) from memory.turns where session_key = (select min(session_key) from memory.sessions)"
    ).fetchone() == (3,)


def test_a_memory_remembered_again_while_maintenance_runs_is_kept(db, dsn):
    for lead in ("Ana", "Bo"):
        db.execute("select memory.remember(%s, 'fact', key => 'lead')", (f"{lead} leads the security work.",))
    db.execute("select memory.set_retention('memories', keep_last => 0, statuses => '{superseded}')")
    db.commit()
    with psycopg.connect(dsn) as writer:
        writer.execute("select memory.remember('Ana leads the security work.', 'fact', key => 'lead')")
        run = threading.Thread(target=maintain, args=(db,))
        run.start()
        time.sleep(1)  # maintenance waits for the words' turn the new memory holds a share of
        writer.commit()
        run.join()
    current = db.execute("select content from memory.memories where key = 'lead' and valid_to is null").fetchall()
    assert current == [("Ana leads the security work.",)]
    assert db.execute("select count(*) from memory.turns where content like 'Ana leads%'").fetchone() == (1,)


def test_a_tenant_whose_rows_stay_locked_is_left_to_the_next_run(db, dsn):
    for tenant in ("acme", "globex"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        commit(db, "billing", 200)
        db.execute("select memory.set_retention('sessions', max_age => '90 days')")
    db.execute("reset memory.tenant_id")
    db.commit()
    with psycopg.connect(dsn) as holder:
        holder.execute("select from memory.sessions where tenant_id = 'acme' for update")
        done = maintain(db)
    assert done["acme"] == {"skipped": "canceling statement due to lock timeout"}
    assert done["globex"]["sessions"] == 1
    assert maintain(db)["acme"]["sessions"] == 1


def test_dropping_an_archive_keeps_its_record(db):
    commit(db, "billing", 200)
    db.execute("select memory.set_retention('sessions', max_age => '90 days')")
    maintain(db)
    assert db.execute("select memory.drop_archive(1)").fetchone() == (True,)
    assert db.execute("select memory.drop_archive(1)").fetchone() == (False,)
    row = db.execute(
        "select bytes, records, dropped_at is not null, length(sha256) from memory.list_archives()"
    ).fetchone()
    assert row == (None, 4, True, 64)
    assert db.execute("select memory.archive(1)").fetchone() == (None,)


def test_an_application_reads_archives_but_cannot_write_them(db, logins):
    commit(db, "billing", 200)
    db.execute("select memory.set_retention('sessions', max_age => '90 days')")
    maintain(db)
    db.execute("update memory.archives set tenant_id = 'acme'")
    db.commit()
    acme = logins.create(tenant="acme")
    assert acme.execute("select count(*) from memory.list_archives()").fetchone() == (1,)
    for statement in (
        "update memory.archives set removed = '{}'",
        "delete from memory.archives",
        "insert into memory.archives (tenant_id, policies, removed, records, data, sha256)"
        " values ('acme', '{}', '{}', 0, '', '')",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            acme.execute(statement)
    assert acme.execute("select memory.drop_archive(1)").fetchone() == (True,)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "memory.set_retention('turns', max_age => '1 day')",
            "retention covers sessions, memories or tool_results, got turns",
        ),
        ("memory.set_retention('sessions')", "needs max_age or keep_last"),
        ("memory.set_retention('sessions', max_age => '-1 day')", "max_age must be positive"),
        ("memory.set_retention('sessions', keep_last => -1)", "keep_last must be 0 or more"),
        ("memory.set_retention('sessions', keep_last => 1, tier => 'lukewarm')", "tier must be hot, warm or cold"),
        ("memory.set_retention('sessions', keep_last => 1, statuses => '{active}')", "statuses are for memories"),
        ("memory.set_retention('memories', keep_last => 1, statuses => '{gone}')", "statuses must be among active"),
    ],
)
def test_a_bad_policy_is_refused_by_name_and_nothing_is_stored(db, call, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
        db.execute(f"select * from {call}")
    db.rollback()
    assert db.execute("select count(*) from memory.retention_policies").fetchone() == (0,)
