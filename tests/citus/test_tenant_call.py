"""memory.call on a three-node Citus cluster: a call for a tenant runs on the worker that holds the tenant, as one
task (Citus pushes the whole call down), its rows written there with keys of that worker's range, and a role
bound to one tenant (memory.bind_tenant_role, by an administrator through the coordinator) calls for it alone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from cluster import COORDINATOR, WORKERS, worker_of
from psycopg import sql
from psycopg.types.json import Jsonb

PUSHED_DOWN = "pushing down the function call"


def messages(text: str) -> Jsonb:
    return Jsonb([{"role": "user", "content": text}, {"role": "assistant", "content": f"Noted: {text}"}])


def traced(conn: psycopg.Connection) -> list[str]:
    """Citus's DEBUG messages of each statement on conn from now on."""
    seen: list[str] = []
    conn.add_notice_handler(lambda notice: seen.append(notice.message_primary))
    conn.execute("set client_min_messages = debug1")
    return seen


def rows_by_worker(coordinator: psycopg.Connection, table: str, tenant: str) -> dict[int, int]:
    """Per worker port, a tenant's rows in that worker's placement of a table (where it has any)."""
    command = f"select count(*) from %s where tenant_id = '{tenant}'"  # tenant: letters, digits and '-'
    counts: dict[int, int] = {}
    for port, result in coordinator.execute(
        "select nodeport, result from run_command_on_placements(%s, %s)", (table, command)
    ):
        counts[port] = counts.get(port, 0) + int(result)
    return {port: count for port, count in counts.items() if count}


@pytest.fixture
def tenants() -> list[str]:
    return [f"call-{uuid.uuid4().hex[:8]}" for _ in range(4)]


def test_a_call_for_a_tenant_runs_as_one_task_on_the_worker_that_holds_it(coordinator, tenants):
    seen = traced(coordinator)
    for tenant in tenants:
        commit = {"session_id": "s1", "messages": messages(f"{tenant} ships on Fridays.").obj}
        (result,) = coordinator.execute("select memory.call(%s, 'commit', %s)", (tenant, Jsonb(commit))).fetchone()
        assert result["turns_added"] == 2
    assert seen.count(PUSHED_DOWN) == len(tenants)
    for tenant in tenants:
        port = worker_of(coordinator, "memory.turns", tenant)
        assert rows_by_worker(coordinator, "memory.turns", tenant) == {port: 2}
        assert rows_by_worker(coordinator, "memory.sessions", tenant) == {port: 1}
        # Keys of the worker's own range: none meets a key another worker gave, wherever the tenant moves.
        (group,) = coordinator.execute("select groupid from pg_dist_node where nodeport = %s", (port,)).fetchone()
        keys = "select min(turn_id), max(turn_id) from memory.turns where tenant_id = %s"
        low, high = coordinator.execute(keys, (tenant,)).fetchone()
        assert (group << 48) < low <= high <= (group + 1) << 48


@pytest.fixture
def bound(coordinator) -> Iterator[psycopg.Connection]:
    """A login bound to tenant call-acme, connected to the coordinator (its role made there, and by Citus on the
    workers)."""
    name = f"am_call_{uuid.uuid4().hex[:8]}"
    coordinator.execute(sql.SQL("create role {} login").format(sql.Identifier(name)))
    coordinator.execute(sql.SQL("grant memory_tenant to {}").format(sql.Identifier(name)))
    coordinator.execute("insert into memory.tenant_roles (role_name, tenant_id) values (%s, 'call-acme')", (name,))
    with COORDINATOR.connect(user=name) as conn:
        yield conn
    coordinator.execute("delete from memory.tenant_roles where role_name = %s", (name,))
    coordinator.execute(sql.SQL("drop role {}").format(sql.Identifier(name)))


def test_a_role_bound_to_a_tenant_calls_for_it_on_its_worker_and_for_no_other(coordinator, bound):
    seen = traced(bound)
    commit = Jsonb({"session_id": "s1", "messages": messages("Acme ships on Fridays.").obj})
    with bound.transaction():  # in a transaction block too, as a client's calls mostly are
        assert bound.execute("select memory.call('call-acme', 'commit', %s)", (commit,)).fetchone()[0]["created"]
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="acts for tenant call-acme, not call-globex"):
        bound.execute("select memory.call('call-globex', 'commit', %s)", (commit,))
    assert seen.count(PUSHED_DOWN) == 2
    port = worker_of(coordinator, "memory.turns", "call-acme")
    assert rows_by_worker(coordinator, "memory.turns", "call-acme") == {port: 2}
    assert rows_by_worker(coordinator, "memory.turns", "call-globex") == {}


def test_a_commit_enriched_at_once_writes_everything_of_its_session_on_the_tenants_worker(coordinator, tenants):
    tenant = tenants[0]
    commit = {
        "session_id": "s1",
        "messages": messages("The cache moved from Berlin to Paris with Alice.").obj,
        "enrich": "now",
    }
    seen = traced(coordinator)
    coordinator.execute("select memory.call(%s, 'commit', %s)", (tenant, Jsonb(commit)))
    assert seen.count(PUSHED_DOWN) == 1
    port = worker_of(coordinator, "memory.turns", tenant)
    written = {
        table: rows_by_worker(coordinator, f"memory.{table}", tenant)
        for table in (
            "chunks",
            "chunk_embeddings",
            "summaries",
            "session_embeddings",
            "entity_mentions",
            "entity_edges",
            "lexicon",
            "corpus",
        )
    }
    assert {table: set(counts) for table, counts in written.items()} == {table: {port} for table in written}
    assert written["chunks"] == written["chunk_embeddings"] == {port: 2}
    assert written["summaries"] == written["session_embeddings"] == {port: 1}


def test_an_administrator_binds_a_login_through_the_coordinator_on_every_node(coordinator, admin):
    tenant = f"bound-{uuid.uuid4().hex[:8]}"
    login = f"am_bound_{uuid.uuid4().hex[:8]}"
    coordinator.execute(sql.SQL("create role {} login").format(sql.Identifier(login)))
    coordinator.execute(sql.SQL("grant memory_tenant to {}").format(sql.Identifier(login)))
    try:
        with COORDINATOR.connect(user=admin) as conn:
            conn.execute("select memory.bind_tenant_role(%s, %s)", (login, tenant))
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="agent_memory's or PostgreSQL's own"):
                conn.execute("select memory.bind_tenant_role('memory_owner', %s)", (tenant,))
        with COORDINATOR.connect(user=login) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select memory.bind_tenant_role(%s, 'someone-else')", (login,))
        for node in (COORDINATOR, *WORKERS):
            with node.connect() as conn:
                bound = conn.execute(
                    "select tenant_id, bound_by from memory.tenant_roles where role_name = %s", (login,)
                ).fetchone()
            assert bound == (tenant, admin)
        with COORDINATOR.connect(user=login) as conn:
            conn.execute("select memory.call(%s, 'remember', %s)", (tenant, Jsonb({"content": "We ship on Fridays."})))
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=f"acts for tenant {tenant}"):
                conn.execute("select memory.call(%s, 'remember', %s)", ("someone-else", Jsonb({"content": "x"})))
    finally:
        coordinator.execute("delete from memory.tenant_roles where role_name = %s", (login,))
        coordinator.execute(sql.SQL("drop role {}").format(sql.Identifier(login)))
