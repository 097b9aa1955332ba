"""Tenants isolated on the cluster: a login bound to one tenant reads none of another's rows — through the
coordinator, on a worker, nor in any shard of any table read by its name on the worker that holds it — and
writes no table directly, on any node. Row-level security is forced on every shard (Citus makes each shard with
its table's policies)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from cluster import COORDINATOR, WORKERS
from psycopg import sql
from psycopg.types.json import Jsonb


@pytest.fixture
def tenants(coordinator) -> Iterator[tuple[str, str, str]]:
    """Two tenants with an enriched session and a memory each, and a login bound to the first."""
    mine, theirs = (f"iso-{uuid.uuid4().hex[:8]}" for _ in range(2))
    for tenant in (mine, theirs):
        messages = [
            {"role": "user", "content": f"{tenant} keeps the launch codes in the blue vault."},
            {"role": "assistant", "content": f"Noted: {tenant}'s codes are in the blue vault."},
        ]
        coordinator.execute(
            "select memory.call(%s, 'commit', %s)",
            (tenant, Jsonb({"session_id": "plans", "messages": messages, "enrich": "now"})),
        )
        coordinator.execute(
            "select memory.call(%s, 'remember', %s)", (tenant, Jsonb({"content": f"{tenant} prefers tea."}))
        )
    login = f"am_iso_{uuid.uuid4().hex[:8]}"
    coordinator.execute(sql.SQL("create role {} login").format(sql.Identifier(login)))  # on every node
    coordinator.execute(sql.SQL("grant memory_tenant to {}").format(sql.Identifier(login)))
    coordinator.execute("insert into memory.tenant_roles (role_name, tenant_id) values (%s, %s)", (login, mine))
    yield login, mine, theirs
    coordinator.execute("delete from memory.tenant_roles where role_name = %s", (login,))
    coordinator.execute(sql.SQL("drop role {}").format(sql.Identifier(login)))


def readable(conn: psycopg.Connection, relation: str, tenant: str) -> int:
    """Rows of a tenant a statement on a relation returns (none when it is refused)."""
    try:
        with conn.transaction():
            query = sql.SQL("select count(*) from {} where tenant_id = %s").format(sql.SQL(relation))
            return int(conn.execute(query, (tenant,)).fetchone()[0])
    except psycopg.Error:
        return 0


def refused(conn: psycopg.Connection, statement: str) -> bool:
    try:
        with conn.transaction():
            conn.execute(statement)
    except psycopg.Error:
        return True
    return False


def test_a_bound_login_reads_and_writes_nothing_of_another_tenant_on_any_node(coordinator, tenants, capsys):
    login, mine, theirs = tenants
    tables = [
        name
        for (name,) in coordinator.execute(
            "select logicalrelid::regclass::text from pg_dist_partition where partmethod = 'h' order by 1"
        )
    ]
    shards = coordinator.execute(
        "select s.logicalrelid::regclass::text, shard_name(s.logicalrelid, s.shardid), n.nodeport"
        " from pg_dist_shard as s inner join pg_dist_placement as p using (shardid)"
        " inner join pg_dist_node as n using (groupid) where n.groupid > 0"
    ).fetchall()
    attempts = foreign = own = 0
    with COORDINATOR.connect(user=login) as conn:
        for table in tables:
            attempts += 1
            foreign += readable(conn, table, theirs)
            own += readable(conn, table, mine)
        hits = conn.execute("select memory.call(%s, 'recall', %s)", (mine, Jsonb({"query": "launch codes"}))).fetchall()
        assert hits and all(theirs not in hit["content"] for (hit,) in hits)
        for statement in (
            f"insert into memory.sessions (tenant_id, agent_id, session_id) values ('{mine}', 'x', 'forged')",
            f"update memory.turns set content = 'forged' where tenant_id = '{theirs}'",
            f"delete from memory.memories where tenant_id = '{theirs}'",
        ):
            attempts += 1
            assert refused(conn, statement), statement
    for worker in WORKERS:
        with worker.connect(user=login) as conn:
            for table in tables:
                attempts += 1
                foreign += readable(conn, table, theirs)
            for _table, shard, port in shards:
                if port == worker.port:
                    attempts += 1
                    foreign += readable(conn, shard, theirs)
            attempts += 1
            assert refused(conn, f"delete from memory.turns where tenant_id = '{theirs}'")
    assert own > 0
    assert foreign == 0
    # The same reads by the superuser find the other tenant's rows: the reads reach them, row-level security keeps
    # them from the login.
    there = 0
    for worker in WORKERS:
        with worker.connect() as conn:
            there += sum(readable(conn, shard, theirs) for _table, shard, port in shards if port == worker.port)
    assert there > 0
    with capsys.disabled():
        print(f"\n  bound login on 3 nodes: {attempts} reads and writes, 0 foreign rows")
