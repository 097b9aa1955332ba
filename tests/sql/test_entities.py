"""The knowledge graph: entities normalized and extracted in the database, mentions and co-occurrence
edges kept current through enrichment, merge and forget, graph queries, and entity state over time."""

import json
from datetime import datetime, timezone

import psycopg
import psycopg.sql
import pytest
from psycopg.types.json import Json, Jsonb

CHAT = [
    {"role": "user", "name": "Maria", "content": "We moved the billing service from MySQL to Postgres last week."},
    {"role": "assistant", "content": "Good. Docker builds the Postgres image; Kubernetes runs it next to Redis."},
    {"role": "user", "name": "Maria", "content": "Redis and MySQL both stay for the legacy reports."},
]


# Fullwidth, and with a Cyrillic o: what a spoof or a pasted name looks like.
SPELLINGS = ["Postgres", "POSTGRES", "\uff50\uff4f\uff53\uff54\uff47\uff52\uff45\uff53", "P\u043estgres", " postgres. "]
SPELLINGS.append("PostgreSQL")


def commit(db, messages=CHAT, session="s1", agent="coder"):
    db.execute("select * from memory.commit(%s, %s, agent_id => %s, enrich => 'now')", (session, Json(messages), agent))


def names(db, sql, *args):
    return [row[0] for row in db.execute(sql, args).fetchall()]


def test_names_that_look_alike_are_one_key(db):
    keys = names(
        db,
        "select memory.normalize_entity(n) from unnest(%s::text[]) as n",
        SPELLINGS,
    )
    assert len(set(keys)) == 1 and keys[0] == "postgresql"
    assert db.execute("select memory.normalize_entity('?!.')").fetchone()[0] == ""


def test_enrichment_extracts_the_entities_each_turn_mentions(db):
    commit(db)
    found = dict(db.execute("select name, type from memory.list_entities(agent_id => 'coder', k => 50)").fetchall())
    assert {"Maria", "Postgres", "MySQL", "Redis", "Docker", "Kubernetes"} <= set(found)
    assert found["Maria"] == "person" and found["Postgres"] == "tool"
    mentions = db.execute(
        "select m.mentions from memory.entity_mentions m join memory.entities e using (tenant_id, entity_id)"
        " where e.normalized = 'postgresql'"
    ).fetchall()
    assert sorted(m for (m,) in mentions) == [1, 1]


def test_fuzzy_search_finds_names_and_aliases(db):
    commit(db)
    assert names(db, "select name from memory.list_entities('kubernets')")[0] == "Kubernetes"
    assert names(db, "select name from memory.list_entities('postgres')")[0] == "Postgres"
    assert names(db, "select name from memory.list_entities(type => 'person')") == ["Maria"]


def test_edges_count_the_turns_that_mention_both_and_neighbors_stop_at_cycles(db):
    commit(db)
    edge = db.execute(
        "select g.turns from memory.entity_edges g"
        " join memory.entities a on a.tenant_id = g.tenant_id and a.entity_id = g.entity_a"
        " join memory.entities b on b.tenant_id = g.tenant_id and b.entity_id = g.entity_b"
        " where array[a.normalized, b.normalized] @> array['redis', 'mysql']"
    ).fetchone()
    assert edge == (1,)
    # MySQL - Redis - Kubernetes - Postgres - MySQL is a cycle; depth 3 walks it without looping.
    rows = db.execute(
        "select name, distance, path from memory.entity_neighbors('mysql', depth => 3, k => 50)"
    ).fetchall()
    found = {name: distance for name, distance, _ in rows}
    assert found["Redis"] == 1 and found["Postgres"] == 1 and found["Kubernetes"] == 2
    assert len(rows) == len(found) and "MySQL" not in found
    assert all(len(path) == len(set(path)) for _, _, path in rows)


def test_entity_sessions_lists_where_an_entity_is_mentioned(db):
    commit(db)
    later = {"role": "user", "content": "Redis ran out of memory overnight.", "created_at": "2099-01-01T00:00:00Z"}
    commit(db, [later], session="s2")
    assert names(db, "select session_id from memory.entity_sessions('redis')") == ["s2", "s1"]


def test_a_caller_may_pass_entities_with_a_message(db):
    commit(
        db,
        [
            {
                "role": "user",
                "content": "The launch slipped again.",
                "entities": [{"name": "Apollo", "type": "project"}, "Q3"],
            }
        ],
    )
    found = dict(db.execute("select name, type from memory.list_entities()").fetchall())
    assert found["Apollo"] == "project" and "Q3" in found


def test_bad_entities_on_a_message_are_refused_by_name(db):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="has entities that are not a list of names"):
        commit(db, [{"role": "user", "content": "hello there", "entities": [{"name": "X", "type": "planet"}]}])


def test_forget_takes_mentions_and_edges_away(db):
    commit(db)
    commit(db, [{"role": "user", "content": "Redis and MySQL were slow today."}], session="s2")
    redis_mysql = (
        "select coalesce(sum(g.turns), 0) from memory.entity_edges g"
        " join memory.entities a on a.tenant_id = g.tenant_id and a.entity_id = g.entity_a"
        " join memory.entities b on b.tenant_id = g.tenant_id and b.entity_id = g.entity_b"
        " where array[a.normalized, b.normalized] @> array['redis', 'mysql']"
    )
    assert db.execute(redis_mysql).fetchone()[0] == 2
    db.execute("select * from memory.forget('s2')")
    assert db.execute(redis_mysql).fetchone()[0] == 1
    db.execute("select * from memory.forget('s1')")
    assert db.execute("select count(*) from memory.entity_mentions").fetchone()[0] == 0
    assert db.execute("select count(*) from memory.entity_edges").fetchone()[0] == 0


def test_enriching_again_changes_nothing_when_the_turns_did_not_change(db):
    commit(db)
    before = db.execute(
        "select array_agg(ctid::text order by turn_id, entity_id) from memory.entity_mentions"
    ).fetchone()
    db.execute("select * from memory.enrich('s1')")
    after = db.execute(
        "select array_agg(ctid::text order by turn_id, entity_id) from memory.entity_mentions"
    ).fetchone()
    assert after == before


def test_merge_moves_mentions_aliases_and_edges(db):
    commit(
        db,
        [
            {"role": "user", "content": "Ask Bob Smith and Redis about it."},
            {"role": "user", "content": "Then Bob ran Redis."},
        ],
    )
    db.execute("select * from memory.merge_entities('Bob Smith', 'Bob', agent_id => 'coder')")
    (aliases,) = db.execute("select aliases from memory.entities where name = 'Bob Smith'").fetchone()
    assert "bob" in aliases
    assert names(db, "select name from memory.entity_neighbors('bob')") == ["Redis"]
    assert db.execute(
        "select turns from memory.entity_edges g join memory.entities e on e.entity_id in (g.entity_a, g.entity_b)"
        " and e.tenant_id = g.tenant_id where e.name = 'Bob Smith'"
    ).fetchone() == (2,)
    with pytest.raises(psycopg.errors.NoDataFound, match='no entity "Redis" for agent "nobody"'):
        db.execute("select * from memory.merge_entities('Redis', 'Bob', agent_id => 'nobody')")


@pytest.mark.parametrize(
    ("query", "error", "message"),
    [
        (
            "select * from memory.list_entities(type => 'planet')",
            psycopg.errors.InvalidParameterValue,
            "entity type must be",
        ),
        (
            "select * from memory.list_entities('x', k => 0)",
            psycopg.errors.InvalidParameterValue,
            "k must be at least 1",
        ),
        (
            "select * from memory.entity_neighbors('redis', depth => 9)",
            psycopg.errors.InvalidParameterValue,
            "depth must",
        ),
        (
            "select * from memory.entity_neighbors('nothing here')",
            psycopg.errors.NoDataFound,
            'no entity "nothing here"',
        ),
        ("select * from memory.set_entity_state('redis', ' ', '1')", psycopg.errors.InvalidParameterValue, "attribute"),
        ("select * from memory.set_entity_state('?!', 'a', '1')", psycopg.errors.InvalidParameterValue, "nothing left"),
        (
            "select * from memory.set_entity_state('x', 'a', '1', type => 'planet')",
            psycopg.errors.InvalidParameterValue,
            "type",
        ),
        ("select * from memory.entity_neighbors('redis', k => 0)", psycopg.errors.InvalidParameterValue, "k must be"),
    ],
)
def test_bad_graph_queries_name_the_problem(db, query, error, message):
    commit(db)
    with pytest.raises(error, match=message):
        db.execute(query)


def state(db, entity, as_of=None):
    return db.execute(
        "select attribute, value, valid_from::date::text, valid_to::date::text from memory.entity_state(%s, %s)",
        (entity, as_of),
    ).fetchall()


def test_state_keeps_one_current_value_and_places_backdated_writes(db):
    write = "select * from memory.set_entity_state('billing service', 'database', %s, %s::timestamptz)"
    db.execute(write, (Jsonb("mysql"), "2026-01-01"))
    db.execute(write, (Jsonb("postgres"), "2026-06-01"))
    db.execute(write, (Jsonb("mariadb"), "2026-03-01"))  # backdated: between the two
    assert state(db, "billing service") == [("database", "postgres", "2026-06-01", None)]
    assert state(db, "billing service", "2026-04-15") == [("database", "mariadb", "2026-03-01", "2026-06-01")]
    assert state(db, "billing service", "2026-02-01") == [("database", "mysql", "2026-01-01", "2026-03-01")]
    assert state(db, "billing service", "2025-12-31") == []
    history = db.execute("select value from memory.entity_history('billing service', 'database')").fetchall()
    assert [v for (v,) in history] == ["mysql", "mariadb", "postgres"]


def test_a_write_at_the_same_instant_corrects_the_value(db):
    write = "select * from memory.set_entity_state('billing service', 'owner', %s, '2026-01-01')"
    db.execute(write, (Jsonb("ana"),))
    db.execute(write, (Jsonb("anna"),))
    assert state(db, "billing service") == [("owner", "anna", "2026-01-01", None)]


def test_two_current_values_are_refused_by_the_constraint(db):
    db.execute("select * from memory.set_entity_state('x service', 'owner', '\"ana\"')")
    with pytest.raises(psycopg.errors.UniqueViolation, match="entity_states_one_current"):
        db.execute(
            "insert into memory.entity_states (tenant_id, entity_id, attribute, value, valid_from)"
            " select tenant_id, entity_id, 'owner', '\"bob\"', now() from memory.entities"
        )


def test_set_entity_state_returns_the_value_and_its_period(db):
    db.execute("select * from memory.set_entity_state('api', 'owner', '\"ana\"', '2026-05-01')")
    row = db.execute(
        "select attribute, value, valid_to from memory.set_entity_state('api', 'owner', '\"bo\"', '2026-01-01')"
    )
    assert row.fetchone() == ("owner", "bo", datetime(2026, 5, 1, tzinfo=timezone.utc))


def test_forget_removes_entities_no_other_session_mentions(db):
    commit(db)
    commit(db, [{"role": "user", "content": "Redis ran out of memory overnight."}], session="s2")
    db.execute("select * from memory.set_entity_state('Maria', 'team', '\"billing\"', agent_id => 'coder')")
    db.execute("select * from memory.forget('s1')")
    left = names(db, "select normalized from memory.entities order by 1")
    assert left == ["maria", "redis"]  # Redis is mentioned in s2; Maria keeps a recorded state


def test_entities_in_message_metadata_are_checked_too(db):
    bad = {"role": "user", "content": "hello there", "metadata": {"entities": [{"name": "X", "type": "planet"}]}}
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="has entities that are not a list of names"):
        commit(db, [bad])


def test_a_value_set_for_later_is_not_current_yet(db):
    db.execute("select * from memory.set_entity_state('api', 'owner', '\"ana\"', '2026-01-01')")
    db.execute("select * from memory.set_entity_state('api', 'owner', '\"bo\"', '2999-01-01')")
    assert [v for (_, v, _, _) in state(db, "api")] == ["ana"]


def test_merge_needs_the_agent_whose_entities_are_one(db):
    commit(db)
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="needs the agent_id"):
        db.execute("select * from memory.merge_entities('Redis', 'MySQL', agent_id => null)")


def test_a_growing_session_rewrites_only_its_new_turns_and_edges_stay_right(db):
    commit(db)
    before = db.execute("select turn_id, ctid::text from memory.entity_mentions order by 1, 2").fetchall()
    commit(db, [*CHAT, {"role": "user", "content": "Redis and MySQL need a new owner."}])
    after = db.execute("select turn_id, ctid::text from memory.entity_mentions order by 1, 2").fetchall()
    assert set(before) < set(after)  # the earlier turns' rows were not written again
    pair = (
        "select g.turns from memory.entity_edges g"
        " join memory.entities a on a.tenant_id = g.tenant_id and a.entity_id = g.entity_a"
        " join memory.entities b on b.tenant_id = g.tenant_id and b.entity_id = g.entity_b"
        " where array[a.normalized, b.normalized] @> array['redis', 'mysql']"
    )
    assert db.execute(pair).fetchone() == (2,)


# The llm extractor, against an OpenAI-compatible server on loopback.

LLM_ANSWER = {
    "entities": [
        {"name": "Maria", "type": "person"},
        {"name": "billing service", "type": "project"},
        {"name": "postgres", "type": "Tool"},
        {"name": "Redis", "type": "database"},
    ]
}


def llm_extractor(db, stub, answer):
    stub.answer_chat_for(db, "entity_extractor", answer)


def test_the_llm_extractor_names_the_entities_and_their_mentions_are_counted_per_turn(db, http_stub):
    llm_extractor(db, http_stub, json.dumps(LLM_ANSWER))
    commit(db)
    chats = [body for path, body, _ in http_stub.requests if path == "/v1/chat/completions"]
    assert len(chats) == 1 and chats[0]["model"] == "stub-chat"
    assert chats[0]["messages"][1]["content"].split("\n\n")[0] == "Maria: " + CHAT[0]["content"]
    rows = db.execute(
        "select t.position, e.name, e.type, m.mentions from memory.entity_mentions m"
        " join memory.entities e using (tenant_id, entity_id) join memory.turns t using (tenant_id, turn_id)"
        ' order by 1, e.name collate "C"'
    ).fetchall()
    assert rows == [
        (0, "Maria", "person", 1),
        (0, "billing service", "project", 1),
        (0, "postgres", "tool", 1),
        (1, "Redis", "other", 1),
        (1, "postgres", "tool", 1),
        (2, "Maria", "person", 1),
        (2, "Redis", "other", 1),
    ]
    assert names(db, "select name from memory.entities where type = 'tool'") == ["postgres"]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("Sure, here they are: Maria, Redis.", "the LLM entities answer is not JSON"),
        ('{"names": ["Maria"]}', 'the LLM entities answer has no "entities" list'),
        ('{"entities": [{"name": "Maria"}]}', 'the LLM entity 0 has no "type" string'),
    ],
)
def test_an_llm_answer_of_another_shape_fails_enrichment_naming_the_problem(db, http_stub, answer, error):
    llm_extractor(db, http_stub, answer)
    with pytest.raises(psycopg.Error, match="llm entity extraction failed: " + error):
        commit(db)


def test_an_unreachable_chat_endpoint_is_named(db, http_stub):
    llm_extractor(db, http_stub, json.dumps(LLM_ANSWER))
    http_stub.fail_next = [500]
    with pytest.raises(psycopg.Error, match=r"llm entity extraction failed: .*answered 500"):
        commit(db)


def test_the_llm_extractor_is_the_administrators_choice(db, http_stub):
    assert db.execute("select set_by from memory.setting_definitions() where key = 'entity_extractor'").fetchone() == (
        "admin",
    )
    with pytest.raises(psycopg.Error, match="entity extraction is not configured"):
        db.execute("select memory_internal._llm_chat('entities', '[]', memory_internal._settings_json())")
    db.rollback()
    with pytest.raises(psycopg.Error, match="no chat request for purpose 'poem'"):
        db.execute("select memory_internal._llm_chat('poem', '[]', memory_internal._settings_json())")
