"""memory.export_tenant and memory.import_tenant: a tenant's whole memory out, and into an empty database."""

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

PLANNING = [
    {"role": "user", "name": "Ana", "id": "p1", "content": "We decided to use Postgres for the auth service."},
    {"role": "assistant", "id": "p2", "content": "Noted. Someone still needs to set up row level security."},
    {
        "role": "user",
        "name": "Ana",
        "id": "p3",
        "content": "I prefer short answers with the code first.",
        "entities": [{"name": "Project Falcon", "type": "project"}],
    },
]
INCIDENT = [
    {"role": "user", "name": "Bo", "id": "i1", "content": "The nightly backup of Postgres failed again at 02:00."},
    {
        "role": "assistant",
        "id": "i2",
        "content": "Checking the logs.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "logs", "arguments": "{}"}}],
    },
    {"role": "tool", "id": "i3", "tool_call_id": "c1", "content": "ERROR: disk full on /var/backups"},
    {"role": "assistant", "id": "i4", "content": "The backup disk is full; I will rotate the old archives."},
]
QUERIES = ["what did Ana decide about auth?", "why did the backup fail?", "how does Ana like answers?", "security lead"]


def build_tenant(db: psycopg.Connection) -> None:
    """A tenant with what recall reads: enriched sessions, trust moved by feedback, accesses, a supersede
    chain, an extracted memory, a merged entity with an alias and an entity's state."""
    for session, messages, when in (("planning", PLANNING, "2026-10-01"), ("incident", INCIDENT, "2026-11-20")):
        db.execute(
            "select memory.commit(%s, %s, agent_id => 'team', started_at => %s, enrich => 'now')",
            (session, Json(messages), when),
        )
    db.execute("select memory.set_summary('incident', 'Backups failed: the disk was full.', agent_id => 'team')")
    for lead in ("Ana leads the security work.", "Bo leads the security work."):
        db.execute(
            "select memory.remember(%s, 'fact', agent_id => 'team', key => 'security.lead', metadata => %s)",
            (lead, Jsonb({"said_by": lead.split()[0], "why": None})),
        )
    db.execute(
        "select memory.give_feedback('unhelpful', turn_id => t.turn_id, query => 'backup')"
        " from memory.turns as t where t.message_id = 'i3'"
    )
    db.execute("select memory.recall('Postgres auth', agent_id => 'team')")
    db.execute("select memory.set_entity_state('Bo', 'on_call', 'true', agent_id => 'team')")
    db.execute("select memory.merge_entities('Postgres', 'Project Falcon', agent_id => 'team')")
    db.execute("update memory.sessions set tier = 'warm' where session_id = 'planning'")


def export(db: psycopg.Connection) -> list[dict]:
    return [row[0] for row in db.execute("select r from memory.export_tenant() as r").fetchall()]


def answers(db: psycopg.Connection) -> list[list[tuple]]:
    """Each query's hits: kind, words and score (ids differ between databases)."""
    statement = "select kind, content, round(score::numeric, 4) from memory.recall(%s, k => 6, agent_id => 'team')"
    return [db.execute(statement, (query,)).fetchall() for query in QUERIES]


@pytest.fixture
def empty(bare_db):
    bare_db.execute("create extension agent_memory cascade")
    return bare_db


def import_and_enrich(db: psycopg.Connection, records: list[dict], **options) -> dict:
    names = "".join(f", {key} => %({key})s" for key in options)
    rows = db.execute(
        f"select * from memory.import_tenant(%(records)s{names})", {"records": Jsonb(records), **options}
    ).fetchall()
    db.commit()
    db.autocommit = True
    db.execute("call memory.work(100)")
    db.autocommit = False
    return {kind: (imported, unchanged, forgotten) for kind, imported, unchanged, forgotten in rows}


def test_an_export_imported_into_an_empty_database_holds_and_recalls_the_same(db, empty):
    build_tenant(db)
    records = export(db)
    assert [r["record"] for r in records[:1]] == ["header"]
    counts = import_and_enrich(empty, records)
    assert counts == {
        "session": (3, 0, 0),
        "memory": (4, 0, 0),
        "entity": (4, 0, 0),
        "entity_state": (1, 0, 0),
        "feedback": (1, 0, 0),
    }
    # Exported again, it is the same memory (but for the time of the export).
    assert export(empty)[1:] == records[1:]
    assert answers(empty) == answers(db)


def test_turn_state_summaries_and_history_come_back(db, empty):
    build_tenant(db)
    import_and_enrich(empty, export(db))
    trust = "select t.message_id, t.trust, t.access_count > 0 from memory.turns as t order by t.message_id"
    assert empty.execute(trust).fetchall() == db.execute(trust).fetchall()
    summaries = (
        "select s.session_id, m.method, m.summary from memory.summaries as m"
        " join memory.sessions as s using (tenant_id, session_key) order by 1"
    )
    assert empty.execute(summaries).fetchall() == db.execute(summaries).fetchall()
    chain = (
        "select m.content, m.status, p.content, m.metadata from memory.memories as m"
        " left join memory.memories as p on p.memory_id = m.supersedes"
        " where m.key = 'security.lead' order by m.memory_id"
    )
    assert empty.execute(chain).fetchall() == [
        ("Ana leads the security work.", "superseded", None, {"said_by": "Ana", "why": None}),
        ("Bo leads the security work.", "active", "Ana leads the security work.", {"said_by": "Bo", "why": None}),
    ]
    evidence = (
        "select m.content, array_agg(t.message_id order by t.message_id) from memory.memories as m"
        " join memory.memory_evidence as e using (tenant_id, memory_id)"
        " join memory.turns as t on t.tenant_id = e.tenant_id and t.turn_id = e.turn_id group by 1 order by 1"
    )
    assert empty.execute(evidence).fetchall() == db.execute(evidence).fetchall()
    assert empty.execute("select aliases from memory.entities where normalized = 'postgresql'").fetchone() == (
        ["project falcon"],
    )
    assert empty.execute("select value from memory.entity_state('Bo', agent_id => 'team')").fetchone() == (True,)


def test_importing_again_changes_nothing(db, empty):
    build_tenant(db)
    records = export(db)
    import_and_enrich(empty, records)
    tables = ["sessions", "turns", "memories", "entities", "entity_states", "feedback", "summaries", "jobs"]
    before = {t: empty.execute(f"select count(*) from memory.{t}").fetchone()[0] for t in tables}
    first = export(empty)
    again = import_and_enrich(empty, records)
    assert {kind: imported for kind, (imported, _, _) in again.items()} == dict.fromkeys(again, 0)
    assert {t: empty.execute(f"select count(*) from memory.{t}").fetchone()[0] for t in tables} == before
    assert export(empty)[1:] == first[1:]


def test_into_a_session_with_turns_of_its_own_records_name_the_right_turns(db, empty):
    db.execute("select memory.commit('planning', %s, agent_id => 'team', enrich => 'now')", (Json(PLANNING),))
    db.execute(
        "select memory.give_feedback('unhelpful', turn_id => turn_id, query => 'auth')"
        " from memory.turns where message_id = 'p2'"
    )
    empty.execute(
        "select memory.commit('planning', %s, agent_id => 'team')",
        (Json([{"role": "user", "id": "p0", "content": "An earlier line."}]),),
    )
    import_and_enrich(empty, export(db))
    evidence = (
        "select m.content, array_agg(t.message_id order by t.message_id) from memory.memories as m"
        " join memory.memory_evidence as e using (tenant_id, memory_id)"
        " join memory.turns as t on t.tenant_id = e.tenant_id and t.turn_id = e.turn_id group by 1 order by 1"
    )
    assert empty.execute(evidence).fetchall() == db.execute(evidence).fetchall()
    judged = "select t.message_id from memory.feedback as f join memory.turns as t using (tenant_id, turn_id)"
    assert empty.execute(judged).fetchall() == [("p2",)]
    positions = "select message_id from memory.turns where session_key = 1 order by position"
    assert [row[0] for row in empty.execute(positions).fetchall()] == ["p0", "p1", "p2", "p3"]


def test_a_claim_held_here_already_is_that_memory(db):
    db.execute("select memory.remember('Ana leads the security work.', 'fact', agent_id => 'team', key => 'lead')")
    records = export(db)
    db.execute("set memory.tenant_id = 'copy'")
    db.execute("select memory.remember('Ana leads the security work.', 'fact', agent_id => 'team', key => 'lead')")
    counts = db.execute("select record_type, imported, unchanged from memory.import_tenant(%s)", (Jsonb(records),))
    assert dict((kind, (imported, unchanged)) for kind, imported, unchanged in counts.fetchall())["memory"] == (0, 1)


def test_turns_added_to_a_session_here_get_their_state(db, empty):
    db.execute("select memory.commit('chat', %s, agent_id => 'team')", (Json(PLANNING),))
    db.execute("update memory.turns set trust = 0.5, access_count = 7 where message_id = 'p3'")
    empty.execute("select memory.commit('chat', %s, agent_id => 'team')", (Json(PLANNING[:2]),))
    empty.execute("update memory.turns set trust = 2 where message_id = 'p1'")
    import_and_enrich(empty, export(db))
    state = "select message_id, trust, access_count from memory.turns where message_id like 'p_' order by 1"
    assert empty.execute(state).fetchall() == [("p1", 2.0, 0), ("p2", 1.0, 0), ("p3", 0.5, 7)]


def test_a_session_with_gaps_imported_again_adds_nothing(db):
    plain = [
        {"role": m["role"], "content": m["content"], "created_at": f"2026-10-0{i + 1}"} for i, m in enumerate(INCIDENT)
    ]
    db.execute("select memory.commit('incident', %s, agent_id => 'team')", (Json(plain),))
    db.execute("select memory.forget_range('2026-10-02', '2026-10-03', 'team')")
    records = export(db)
    again = db.execute("select record_type, imported, unchanged from memory.import_tenant(%s)", (Jsonb(records),))
    assert again.fetchall() == [("session", 0, 1)]
    assert db.execute("select count(*) from memory.turns").fetchone() == (3,)


def test_one_agent_is_exported_alone(db):
    build_tenant(db)
    db.execute("select memory.commit('other', %s, agent_id => 'sales', enrich => 'now')", (Json(PLANNING[:1]),))
    records = [row[0] for row in db.execute("select r from memory.export_tenant('sales') as r").fetchall()]
    assert {r.get("agent_id") for r in records} == {None, "sales"}
    assert [r["session_id"] for r in records if r["record"] == "session"] == ["other", "remembered"]


def test_lines_of_memory_export_are_session_records(db):
    db.execute("select memory.commit('chat', %s, agent_id => 'team')", (Json(PLANNING),))
    (line,) = db.execute("select session from memory.export()").fetchone()
    db.execute("set memory.tenant_id = 'copy'")
    assert db.execute("select record_type, imported from memory.import_tenant(%s)", (Jsonb([line]),)).fetchall() == [
        ("session", 1)
    ]
    assert db.execute("select count(*) from memory.turns where tenant_id = 'copy'").fetchone() == (3,)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            {"record": "memory", "id": 9, "kind": "gossip", "content": "x"},
            r"memory kind must be one of fact, .*got gossip",
        ),
        ({"record": "memory", "kind": "fact", "content": "x"}, r"a memory record needs \"id\""),
        (
            {"record": "memory", "id": 9, "kind": "fact", "content": "x", "metadata": [1]},
            r"a memory record's \"metadata\" must be a JSON object, got \[1\]",
        ),
        ({"record": "session", "session_id": "s"}, r"a session record needs \"messages\""),
        ({"record": "session", "session_id": "s", "messages": [{"content": "hi"}]}, r"message 0 has no role"),
        ({"record": "feedback", "turn": ["team", "nowhere", 1], "verdict": "helpful"}, r"feedback names no turn"),
        ({"record": "entity_state", "agent_id": "team", "entity": "nobody", "attribute": "a"}, r"entity \"nobody\""),
        ({"record": "chat"}, r"unknown record \"chat\""),
        ({"record": "header", "format_version": 2}, r"format_version 2 is newer"),
        ("not an object", r"not a JSON object"),
    ],
)
def test_a_bad_record_is_named_and_nothing_is_stored(db, bad, message):
    good = {"record": "session", "agent_id": "team", "session_id": "fine", "messages": PLANNING}
    with pytest.raises(psycopg.errors.Error, match=rf"import record 2 \(.*\): .*{message}"):
        db.execute("select * from memory.import_tenant(%s)", (Jsonb([good, bad]),))
    db.rollback()
    assert db.execute("select count(*) from memory.sessions").fetchone() == (0,)


def test_a_forgotten_session_is_left_out_unless_allowed(db):
    db.execute("select memory.commit('chat', %s, agent_id => 'team')", (Json(PLANNING),))
    records = [row[0] for row in db.execute("select r from memory.export_tenant() as r").fetchall()]
    db.execute("select memory.forget('chat', 'team')")
    left_out = db.execute("select record_type, imported, forgotten from memory.import_tenant(%s)", (Jsonb(records),))
    assert left_out.fetchall() == [("session", 0, 1)]
    allowed = db.execute(
        "select record_type, imported, forgotten from memory.import_tenant(%s, allow_forgotten => true)",
        (Jsonb(records),),
    )
    assert allowed.fetchall() == [("session", 1, 0)]


def test_a_tenant_role_exports_and_imports_its_own_memory_only(db, logins):
    db.execute("set memory.tenant_id = 'globex'")
    db.execute("select memory.commit('secret', %s, agent_id => 'team')", (Json(PLANNING),))
    db.commit()
    acme = logins.create(tenant="acme")
    acme.execute("select memory.commit('chat', %s, agent_id => 'team')", (Json(INCIDENT),))
    records = [row[0] for row in acme.execute("select r from memory.export_tenant() as r").fetchall()]
    assert [r.get("session_id") for r in records if r["record"] == "session"] == ["chat"]
    planted = {**records[1], "session_id": "planted", "tenant_id": "globex"}
    acme.execute("select * from memory.import_tenant(%s)", (Jsonb([planted]),))
    tenants = db.execute("select tenant_id, session_id from memory.sessions order by 1, 2").fetchall()
    assert tenants == [("acme", "chat"), ("acme", "planted"), ("globex", "secret")]
