"""memory.remember, memory.bootstrap, memory.forget, memory.export and memory.stats on real memory."""

import psycopg
import pytest
from psycopg.types.json import Json

KICKOFF = [
    {"role": "user", "name": "Maria", "id": "k1", "content": "We deploy to production every Friday afternoon."},
    {"role": "assistant", "id": "k2", "content": "Noted. Someone still needs to write the rollback runbook."},
]
INCIDENT = [
    {"role": "user", "name": "Priya", "id": "i1", "content": "Decision: we deploy on Tuesday mornings from now on."},
    {"role": "assistant", "id": "i2", "content": "Recorded: production deploys move to Tuesday mornings."},
]


@pytest.fixture
def memory(db):
    for session, messages, when in (("kickoff", KICKOFF, "2026-09-01"), ("incident", INCIDENT, "2026-09-29")):
        db.execute(
            "select memory.commit(%s, %s, agent_id => 'team', started_at => %s, enrich => 'now')",
            (session, Json(messages), when),
        )
    return db


def remember(db, content, **extra):
    """The turn that carries the remembered words, and what remembering did (created, updated, unchanged)."""
    names = "".join(f", {key} => %({key})s" for key in extra)
    return db.execute(
        f"select turn_id, outcome from memory.remember(%(content)s{names})", {"content": content, **extra}
    ).fetchone()


def test_remember_keeps_a_fact_once_and_recall_finds_it(db):
    db.execute("insert into memory.config (key, value) values ('enrich', '\"now\"')")
    turn, outcome = remember(db, "Tom prefers short answers with the code first.", kind="preference")
    assert outcome == "created"
    assert remember(db, "  Tom prefers short answers with the code first. ", kind="preference") == (turn, "unchanged")
    kind, source = db.execute(
        "select t.metadata ->> 'kind', s.source from memory.turns as t join memory.sessions as s using "
        "(tenant_id, session_key) where t.turn_id = %s",
        (turn,),
    ).fetchone()
    assert (kind, source) == ("preference", "remember")
    (hit,) = db.execute("select turn_id from memory.recall('how does Tom like his answers?', k => 1)").fetchall()
    assert hit[0] == turn


def test_a_fact_is_kept_and_queued_when_enriching_it_fails(db, http_stub):
    db.execute("set memory.embedder = 'openai'")
    db.execute(psycopg.sql.SQL("set memory.openai_base_url = {}").format(http_stub.base_url))
    db.execute("set memory.http_retries = 0")
    db.execute("select memory.set_secret('openai_api_key', 'sk-test')")
    http_stub.fail_next = [500]
    notices = []
    db.add_notice_handler(lambda notice: notices.append(notice.message_primary))
    _, outcome = remember(db, "The CI must test against Postgres 16.", kind="rule")
    assert outcome == "created"
    assert any(notice.startswith("agent_memory: remembered, but enriching it failed") for notice in notices)
    assert db.execute("select count(*) from memory.jobs where status = 'queued'").fetchone()[0] == 1
    assert db.execute("select count(*) from memory.summaries").fetchone()[0] == 0


@pytest.mark.parametrize(
    ("content", "kind", "message"),
    [
        ("", "fact", "remember needs some content"),
        ("Deploys are on Tuesdays.", "gossip", "remember kind must be one of fact, preference, rule"),
    ],
)
def test_remember_rejects_bad_input_and_stores_nothing(db, content, kind, message):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match=message):
        remember(db, content, kind=kind)
    db.rollback()
    assert db.execute("select count(*) from memory.turns").fetchone()[0] == 0


def bootstrap(db, **options):
    names = ", ".join(f"{key} => %({key})s" for key in options)
    return db.execute(f"select section, session_id, content from memory.bootstrap({names})", options).fetchall()


def test_bootstrap_puts_remembered_facts_then_open_loops_decisions_and_summaries(memory):
    remember(memory, "The release manager is Maria.", agent_id="team")
    rows = bootstrap(memory, agent_id="team")
    sections = [section for section, _, _ in rows]
    assert sections[0] == "remembered" and sections[-1] == "recent_session"
    assert sections == sorted(sections, key=["remembered", "open_loop", "decision", "recent_session"].index)
    assert ("open_loop", "kickoff", "Someone still needs to write the rollback runbook.") in rows
    assert any(section == "decision" and session == "incident" for section, session, _ in rows)
    # The newest session's summary comes first.
    assert [session for section, session, _ in rows if section == "recent_session"] == ["incident", "kickoff"]


def test_bootstrap_stays_within_its_budget(memory):
    everything = bootstrap(memory, agent_id="team")
    budget = sum(len(content) for _, _, content in everything[:2])
    assert bootstrap(memory, agent_id="team", max_chars=budget) == everything[:2]
    assert bootstrap(memory, agent_id="team", max_chars=budget - 1) == everything[:1]
    assert bootstrap(memory, agent_id="nobody") == []


def test_forget_removes_a_session_and_everything_derived_from_it(memory):
    turn = memory.execute("select turn_id from memory.turns where message_id = 'k1'").fetchone()[0]
    memory.execute("select memory.give_feedback('unhelpful', turn_id => %s)", (turn,))
    memory.execute(
        "select memory.commit('kickoff', %s, agent_id => 'team')", (Json([{"role": "user", "content": "x" * 20}]),)
    )
    corpus_before = memory.execute("select chunks from memory.corpus").fetchone()[0]
    session = memory.execute("select session_key from memory.sessions where session_id = 'kickoff'").fetchone()[0]
    turns = [row[0] for row in memory.execute("select turn_id from memory.turns where session_key = %s", (session,))]
    assert len(turns) == 3

    removed = memory.execute("select turns_removed, chunks_removed from memory.forget('kickoff', 'team')").fetchone()
    assert removed == (3, 2)
    for table in ("turns", "chunks", "summaries", "session_embeddings", "jobs"):
        left = memory.execute(f"select count(*) from memory.{table} where session_key = %s", (session,))
        assert left.fetchone()[0] == 0, table
    for table in ("chunk_embeddings", "feedback"):
        left = memory.execute(f"select count(*) from memory.{table} where turn_id = any(%s)", (turns,))
        assert left.fetchone()[0] == 0, table
    assert memory.execute("select count(*) from memory.feedback").fetchone()[0] == 0
    assert memory.execute("select chunks from memory.corpus").fetchone()[0] == corpus_before - 2
    assert memory.execute("select count(*) from memory.lexicon where lexeme = 'friday'").fetchone()[0] == 0
    assert memory.execute("select speaker from memory.speakers order by speaker").fetchall() == [("Priya",)]
    with pytest.raises(psycopg.errors.NoDataFound, match='no session "kickoff" for agent "team"'):
        memory.execute("select memory.forget('kickoff', 'team')")


def test_forget_leaves_a_tombstone_and_the_session_does_not_come_back(memory):
    gone = memory.execute("select * from memory.forget('kickoff', 'team')").fetchone()
    memory.commit()
    assert gone[:4] == (1, 2, 2, 0)
    tombstone = memory.execute("select tombstone_id, selector, removed, forgotten_by from memory.tombstones").fetchone()
    assert tombstone == (
        gone[4],
        {"agent_id": "team", "session_id": "kickoff"},
        {"sessions": 1, "turns": 2, "chunks": 2, "memories": 0},
        "postgres",
    )
    again = Json(KICKOFF)
    with pytest.raises(
        psycopg.errors.ObjectNotInPrerequisiteState, match="session kickoff of agent team was forgotten"
    ):
        memory.execute("select memory.commit('kickoff', %s, agent_id => 'team')", (again,))
    memory.rollback()
    # Another agent's session of the same id is not affected; the caller may store it again.
    memory.execute("select memory.commit('kickoff', %s, agent_id => 'other')", (again,))
    memory.execute("select memory.commit('kickoff', %s, agent_id => 'team', allow_forgotten => true)", (again,))
    assert memory.execute("select count(*) from memory.sessions where session_id = 'kickoff'").fetchone()[0] == 2
    assert memory.execute("select count(*) from memory.forgotten_sessions").fetchone()[0] == 0
    assert memory.execute("select count(*) from memory.tombstones").fetchone()[0] == 1


def test_forget_of_an_agent_removes_all_it_holds_in_one_tombstone(memory):
    memory.execute("select memory.remember('Deploys need two approvals', kind => 'rule', agent_id => 'team')")
    memory.execute("select memory.set_entity_state('Priya', 'role', '\"on call\"', agent_id => 'team')")
    memory.execute(
        "select memory.commit('solo-1', %s, agent_id => 'solo')", (Json([{"role": "user", "content": "hi"}]),)
    )
    gone = memory.execute("select sessions_removed, memories_removed from memory.forget_agent('team')").fetchone()
    memory.commit()
    assert gone == (3, 1)  # kickoff, incident and the session that holds remembered words
    for table in ("sessions", "memories", "lexicon", "corpus", "speakers"):
        left = memory.execute(f"select count(*) from memory.{table} where agent_id = 'team'").fetchone()[0]
        assert left == 0, table
    assert memory.execute("select count(*) from memory.entities where agent_id = 'team'").fetchone()[0] == 0
    assert memory.execute("select count(*) from memory.entity_states").fetchone()[0] == 0
    assert memory.execute("select count(*) from memory.sessions where agent_id = 'solo'").fetchone()[0] == 1
    assert memory.execute("select selector from memory.tombstones").fetchone()[0] == {"agent_id": "team"}
    assert memory.execute("select count(*) from memory.forgotten_sessions").fetchone()[0] == 3
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        memory.execute("select memory.commit('incident', %s, agent_id => 'team')", (Json(KICKOFF),))
    memory.rollback()
    # Remembering is the caller saying so: the agent's remembered session comes back.
    memory.execute("select memory.remember('Deploys need two approvals', kind => 'rule', agent_id => 'team')")
    with pytest.raises(psycopg.errors.NoDataFound, match="agent nobody has nothing to forget"):
        memory.execute("select memory.forget_agent('nobody')")
    memory.rollback()
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="forget_agent needs an agent_id"):
        memory.execute("select memory.forget_agent(null)")


def test_an_application_cannot_rewrite_or_remove_a_tombstone(memory, logins):
    memory.execute("select memory.forget('kickoff', 'team')")
    memory.commit()
    app = logins.create(tenant="default")
    assert app.execute("select count(*) from memory.tombstones").fetchone()[0] == 1
    for statement in (
        "update memory.tombstones set removed = '{}'",
        "delete from memory.tombstones",
        "insert into memory.tombstones (tenant_id, selector, removed) values ('default', '{}', '{}')",
        "delete from memory.forgotten_sessions",
    ):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute(statement)


def test_an_export_commits_back_as_the_same_sessions(memory):
    memory.execute("select memory.set_summary('kickoff', 'Deploy rules.', agent_id => 'team')")
    exported = memory.execute("select session from memory.export('team')").fetchall()
    assert [session["session_id"] for (session,) in exported] == ["kickoff", "incident"]
    kickoff = exported[0][0]
    assert kickoff["summary"] == "Deploy rules."
    assert kickoff["messages"][0] == {
        "id": "k1",
        "role": "user",
        "name": "Maria",
        "content": KICKOFF[0]["content"],
        "created_at": "2026-09-01T00:00:00+00:00",
    }
    for (session,) in exported:
        added = memory.execute(
            "select turns_added from memory.commit(%s, %s, agent_id => %s)",
            (session["session_id"], Json(session["messages"]), session["agent_id"]),
        ).fetchone()[0]
        assert added == 0
    memory.execute("set memory.tenant_id = 'copy'")
    for (session,) in exported:
        memory.execute(
            "select memory.commit(%s, %s, agent_id => %s, started_at => %s)",
            (session["session_id"], Json(session["messages"]), session["agent_id"], session["started_at"]),
        )
    copied = [row[0] for row in memory.execute("select session from memory.export('team')")]
    assert [s["messages"] for s in copied] == [s["messages"] for (s,) in exported]


def test_stats_count_each_agents_memory(memory):
    memory.execute(
        "select memory.commit('other', %s, agent_id => 'solo')",
        (Json([{"role": "user", "content": "hello there, world"}]),),
    )
    rows = memory.execute(
        "select agent_id, sessions, turns, chunks, embedded_chunks, summaries, remembered, pending_jobs "
        "from memory.stats()"
    ).fetchall()
    assert rows == [("solo", 1, 1, 0, 0, 0, 0, 1), ("team", 2, 4, 4, 4, 2, 0, 0)]
    assert memory.execute("select count(*) from memory.stats('team')").fetchone()[0] == 1


def test_context_for_a_task_is_the_most_relevant_turns_within_the_budget(memory):
    rows = memory.execute(
        "select rank, session_id, speaker, content from memory.context_for_task('which day do we deploy?')"
    ).fetchall()
    assert [rank for rank, *_ in rows] == list(range(1, len(rows) + 1)) and len(rows) == 4
    assert rows[0][1] == "incident" and "Tuesday" in rows[0][3]
    budget = len(rows[0][3]) + len(rows[1][3])
    limited = memory.execute(
        "select content from memory.context_for_task('which day do we deploy?', max_chars => %s, k => 3)", (budget,)
    ).fetchall()
    assert [content for (content,) in limited] == [rows[0][3], rows[1][3]]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("memory.bootstrap(max_chars => 0)", "max_chars must be at least 1, got 0"),
        ("memory.bootstrap(sessions => -1)", "sessions must be 0 or more, got -1"),
        ("memory.context_for_task('deploys', max_chars => -5)", "max_chars must be at least 1, got -5"),
        ("memory.context_for_task('deploys', k => 0)", "k must be at least 1, got 0"),
        ("memory.remember('Deploys are on Tuesdays.', metadata => '[1]')", "remember metadata must be a JSON object"),
    ],
)
def test_budgets_and_options_out_of_range_are_named(memory, call, message):
    with pytest.raises(psycopg.Error, match=message):
        memory.execute(f"select * from {call}")


def test_pop_turn_takes_back_the_last_turn_as_commit_took_it(db):
    said = [
        {
            "role": "user",
            "id": "u1",
            "content": "Book a table for two at Nola.",
            "metadata": {"item": {"n": 1, "none": None}},
        },
        {"role": "assistant", "id": "a1", "content": "Booked Nola for two at eight.", "name": "concierge"},
    ]
    db.execute("select memory.commit('dinner', %s, agent_id => 'bot', enrich => 'now')", (Json(said),))
    popped = db.execute("select memory.pop_turn('dinner')").fetchone()[0]
    assert {key: popped[key] for key in ("id", "role", "name", "content")} == {
        "id": "a1",
        "role": "assistant",
        "name": "concierge",
        "content": "Booked Nola for two at eight.",
    }
    assert "eight" not in str(db.execute("select tsv from memory.chunks").fetchall())
    first = db.execute("select memory.pop_turn('dinner', agent_id => 'bot')").fetchone()[0]
    assert (first["id"], first["metadata"]) == ("u1", {"item": {"n": 1, "none": None}})
    # Empty, the session stays: popping gives nothing, and committing to it again is not refused.
    assert db.execute("select memory.pop_turn('dinner')").fetchone()[0] is None
    again = db.execute("select turns_added from memory.commit('dinner', %s, agent_id => 'bot')", (Json(said),))
    assert again.fetchone()[0] == 2
    assert (
        db.execute("select count(*) from memory.tombstones where selector ->> 'last_turn' = 'true'").fetchone()[0] == 2
    )
    assert db.execute("select memory.pop_turn('no such session')").fetchone()[0] is None
    db.execute("select memory.remember('Nola closes on Mondays.', agent_id => 'bot')")
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="holds the words of curated memories"):
        db.execute("select memory.pop_turn('remembered', agent_id => 'bot')")


def test_forget_range_removes_what_was_said_then_and_reindexes_what_is_left(db):
    said = [
        {
            "role": "user",
            "content": "We keep the launch codes in the blue vault.",
            "created_at": "2026-01-01T10:00:00Z",
        },
        {"role": "assistant", "content": "Noted, the blue vault.", "created_at": "2026-01-01T10:01:00Z"},
        {"role": "user", "content": "The spare key is under the mat.", "created_at": "2026-02-01T10:00:00Z"},
    ]
    db.execute("select memory.commit('vault', %s, enrich => 'now')", (Json(said),))
    january = [{"role": "user", "content": "I prefer green tea.", "created_at": "2026-01-05T10:00:00Z"}]
    db.execute("select memory.commit('tea', %s, enrich => 'now')", (Json(january),))
    db.execute("select memory.commit('other', %s, agent_id => 'solo', enrich => 'now')", (Json(january),))
    assert db.execute("select count(*) from memory.memories where agent_id = 'default'").fetchone()[0] == 1

    gone = db.execute("select * from memory.forget_range('2026-01-01', '2026-01-31', agent_id => 'default')").fetchone()
    assert gone[:4] == (1, 3, 3, 1)  # session tea whole; two turns of vault; the preference from tea
    left = db.execute(
        "select s.session_id, t.content from memory.turns as t join memory.sessions as s"
        " using (tenant_id, session_key) where s.session_id <> 'remembered' order by 1"
    ).fetchall()
    assert left == [("other", "I prefer green tea."), ("vault", "The spare key is under the mat.")]
    # What the vault session derived from the forgotten turns is gone, and it is queued to be enriched again.
    assert "vault" not in str(db.execute("select tsv from memory.chunks").fetchall())
    vault = db.execute("select session_key from memory.sessions where session_id = 'vault'").fetchone()[0]
    assert db.execute("select count(*) from memory.summaries where session_key = %s", (vault,)).fetchone()[0] == 0
    assert (
        db.execute(
            "select count(*) from memory.jobs where session_key = %s and status = 'queued'", (vault,)
        ).fetchone()[0]
        == 1
    )
    assert db.execute("select selector, removed from memory.tombstones").fetchone() == (
        {"since": "2026-01-01T00:00:00+00:00", "until": "2026-01-31T00:00:00+00:00", "agent_id": "default"},
        {"sessions": 1, "turns": 3, "chunks": 3, "memories": 1},
    )
    db.commit()
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="session tea of agent default"):
        db.execute("select memory.commit('tea', %s)", (Json(january),))
    db.rollback()
    with pytest.raises(psycopg.errors.NoDataFound, match="nothing in this tenant was said between"):
        db.execute("select memory.forget_range('2026-01-01', '2026-01-31', agent_id => 'default')")
    db.rollback()
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="forget_range needs since before until"):
        db.execute("select memory.forget_range('2026-02-01', '2026-01-01')")


def test_forget_entity_removes_what_mentions_it_the_memories_about_it_and_the_entity(db):
    for session, said, agent in (
        (
            "infra",
            ["Postgres runs on the new cluster in Frankfurt.", "Good, the cluster has three nodes now."],
            "default",
        ),
        ("db-only", ["We upgraded PostgreSQL to 16 yesterday."], "default"),
        ("theirs", ["Postgres is slow on my laptop."], "solo"),
    ):
        messages = [{"role": "user", "content": content} for content in said]
        db.execute("select memory.commit(%s, %s, agent_id => %s, enrich => 'now')", (session, Json(messages), agent))
    db.execute("select memory.remember('Backups of the main database run nightly.', subjects => array['Postgres'])")
    db.execute("select memory.set_entity_state('postgres', 'version', '\"16\"')")

    gone = db.execute("select * from memory.forget_entity('Postgres', agent_id => 'default')").fetchone()
    assert gone[:4] == (2, 3, 3, 1)  # db-only and the remembered words whole; one turn of infra; the memory
    left = db.execute(
        "select s.agent_id, s.session_id, t.content from memory.turns as t join memory.sessions as s"
        " using (tenant_id, session_key) order by 1, 2"
    ).fetchall()
    assert left == [("default", "infra", "Good, the cluster has three nodes now."), ("solo", "theirs", left[1][2])]
    assert db.execute("select agent_id from memory.entities where normalized = 'postgresql'").fetchall() == [("solo",)]
    assert db.execute("select count(*) from memory.entity_states").fetchone()[0] == 0
    assert db.execute("select selector, removed from memory.tombstones").fetchone() == (
        {"entity": "Postgres", "agent_id": "default"},
        {"sessions": 2, "turns": 3, "chunks": 3, "memories": 1, "entities": 1},
    )
    db.commit()
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="session db-only of agent default"):
        db.execute("select memory.commit('db-only', %s)", (Json([{"role": "user", "content": "again"}]),))
    db.rollback()
    with pytest.raises(psycopg.errors.NoDataFound, match='no entity "postgres" for agent "default"'):
        db.execute("select memory.forget_entity('postgres', agent_id => 'default')")
    db.rollback()
    assert db.execute("select count(*) from memory.tombstones").fetchone()[0] == 1  # nothing half-written


def found_anywhere(db, word: str) -> list:
    """Where a word still finds something: indexed chunks, and the full-text signal of recall (turns,
    sessions) and explain."""
    lexical = "(components #>> '{signals,lexical,value}')::float > 0"
    return [
        *db.execute("select turn_id from memory.chunks where tsv @@ plainto_tsquery('english', %s)", (word,)),
        *db.execute(f"select content from memory.recall(%s, k => 50) where {lexical}", (word,)),
        *db.execute(f"select content from memory.recall(%s, k => 50, level => 'session') where {lexical}", (word,)),
        *db.execute(f"select turn_id from memory.explain_recall(%s) where {lexical}", (word,)),
    ]


def test_a_forgotten_turn_held_as_context_by_a_later_turn_is_found_by_no_recall(db):
    # Two turns of context: the third turn is indexed with the first's words beside its own.
    db.execute("set memory.index_context_turns = 2")
    said = [
        {"role": "user", "content": "The vault combination is zebracode 4417.", "created_at": "2026-01-01T10:00:00Z"},
        {"role": "user", "content": "Write that down somewhere safe for later.", "created_at": "2026-02-01T10:00:00Z"},
        {"role": "user", "content": "Next we plan the quarterly roadmap review.", "created_at": "2026-02-01T10:05:00Z"},
    ]
    db.execute("select memory.commit('vault', %s, enrich => 'now')", (Json(said),))
    assert found_anywhere(db, "zebracode")
    db.execute("select memory.forget_range('2026-01-01', '2026-01-31')")
    assert found_anywhere(db, "zebracode") == []
    assert found_anywhere(db, "roadmap")  # the turns left are still found by their own words


def test_remembered_claims_are_indexed_each_on_its_own_and_a_forgotten_one_is_found_nowhere(db):
    # Memories extracted from what users say are kept as turns of one session ('remembered'): each is
    # indexed on its own words, not beside the claim before it, so one claim never matches another's words.
    db.commit()
    db.autocommit = True
    for session, said in (
        ("keyboards", "I prefer zebracode keyboards for all my coding work."),
        ("drinks", "I prefer oolong tea over coffee in the afternoon."),
    ):
        db.execute("select memory.commit(%s, %s)", (session, Json([{"role": "user", "content": said}])))
        db.execute("call memory.work(100)")  # the session, then the words of the memory it proposed
        db.execute("call memory.work(100)")
    held = db.execute(
        "select c.context_length from memory.chunks as c join memory.sessions as s using (tenant_id, session_key)"
        " where s.session_id = 'remembered' order by c.turn_id"
    ).fetchall()
    assert held == [(0,), (0,)]
    assert found_anywhere(db, "zebracode")
    db.execute("select memory.forget('keyboards')")
    assert [content for (content,) in db.execute("select content from memory.memories")] == [
        "I prefer oolong tea over coffee in the afternoon."
    ]
    assert found_anywhere(db, "zebracode") == []
    assert found_anywhere(db, "oolong")
