"""Entities shared by the agents of a tenant (setting entity_scope tenant), as tenant-bound roles: what two agents
say of Postgres is one entity, whose mentions, sessions and states either agent reads; with the default scope each
agent keeps its own, and another tenant sees neither."""

import pytest
from psycopg.types.json import Json


def commit(conn, session, agent, words):
    conn.execute(
        "select memory.commit(%s, %s, agent_id => %s, enrich => 'now')",
        (session, Json([{"role": "user", "content": words}]), agent),
    )


@pytest.fixture
def tenants(db, logins):
    """acme shares its entities; globex keeps them per agent. Both hear the same two agents."""
    db.execute("insert into memory.config (tenant_id, key, value) values ('acme', 'entity_scope', '\"tenant\"')")
    db.commit()
    acme, globex = logins.create(tenant="acme"), logins.create(tenant="globex")
    for conn in (acme, globex):
        commit(conn, "s1", "planner", "We moved the billing service to Postgres last week.")
        commit(conn, "s2", "coder", "Postgres needs a bigger disk for billing.")
    return acme, globex


def postgres(conn, agent):
    return conn.execute(
        "select agent_id, mentions, sessions from memory.list_entities('postgres', agent_id => %s)", (agent,)
    ).fetchall()


def test_two_agents_mentions_are_one_entity_in_a_tenant_scope(tenants):
    acme, globex = tenants
    assert postgres(acme, "coder") == [("", 2, 2)] == postgres(acme, "planner")
    sessions = acme.execute("select session_id, agent_id from memory.entity_sessions('Postgres', agent_id => 'coder')")
    assert sorted(sessions.fetchall()) == [("s1", "planner"), ("s2", "coder")]
    # Per agent (the default), each agent has its own.
    assert postgres(globex, "coder") == [("coder", 1, 1)]
    assert postgres(globex, "planner") == [("planner", 1, 1)]


def test_a_state_one_agent_sets_is_the_others(tenants):
    acme, globex = tenants
    for conn in (acme, globex):
        conn.execute("select memory.set_entity_state('Postgres', 'version', '16', agent_id => 'planner')")
    read = "select agent_id, value from memory.entity_state('Postgres', agent_id => 'coder')"
    assert acme.execute(read).fetchall() == [("", 16)]
    assert globex.execute(read).fetchall() == []


def test_recall_for_an_agent_reads_the_shared_entity(tenants):
    acme, _ = tenants
    hit = acme.execute(
        "select components -> 'entities_matched'"
        " from memory.recall('What about Postgres?', agent_id => 'coder', k => 1)"
    ).fetchone()
    assert hit == (["Postgres"],)


def test_one_agent_forgetting_a_shared_entity_leaves_the_others(tenants):
    acme, _ = tenants
    acme.execute("select memory.forget_entity('Postgres', agent_id => 'planner')")
    # What the planner said about it is gone; the coder's words and the shared entity stay.
    assert postgres(acme, "coder") == [("", 1, 1)]
    said = acme.execute("select agent_id, content from memory.turns where content like '%%Postgres%%'").fetchall()
    assert said == [("coder", "Postgres needs a bigger disk for billing.")]


def test_merging_stays_in_the_scope_entities_are_written_in(tenants):
    acme, _ = tenants
    commit(acme, "s3", "coder", "PG disk is full again.")
    merged = acme.execute("select name, aliases from memory.merge_entities('Postgres', 'PG', agent_id => 'coder')")
    assert merged.fetchone() == ("Postgres", ["pg"])
    assert postgres(acme, "planner") == [("", 3, 3)]
