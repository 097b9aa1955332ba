"""A Citus cluster of three nodes on this machine: a coordinator and two workers, each a local server of the
project's kind (agent_memory.localdb) with Citus preloaded, the nodes talking over their Unix sockets.

`make test-citus` builds Citus (extension/tools/citus.sh), then runs these tests. The nodes live under
$AGENT_MEMORY_HOME/citus/ on ports from $AGENT_MEMORY_CITUS_PORT (55440, 55441, 55442); they are made once,
started for a run and stopped after it when the run started them. Each run makes the database afresh on every
node, creates the extension on the coordinator (Citus creates it on the workers) and distributes it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from agent_memory.localdb import LocalServer

ROOT = Path(__file__).resolve().parents[2]
HOME = Path(os.environ.get("AGENT_MEMORY_HOME", ROOT / ".agent-memory")).resolve() / "citus"
PORT = int(os.environ.get("AGENT_MEMORY_CITUS_PORT", "55440"))
DATABASE = "am_citus"
# Citus first among the preloaded libraries; a smaller cache than the single server's, three nodes sharing
# the machine.
CITUS_SETTINGS = {"shared_preload_libraries": "'citus,pg_cron'", "shared_buffers": "'256MB'", "max_connections": "100"}


@dataclass(frozen=True)
class CitusNode(LocalServer):
    def _configure(self, extra: Mapping[str, str] | None = None) -> None:
        # How Citus connects to this node from this node (a shard move does): by its socket, as the others do.
        local = {"citus.local_hostname": f"'{self.socket_dir}'"}
        super()._configure({**(extra or {}), **CITUS_SETTINGS, **local})

    def connect(self, user: str = "postgres", dbname: str = DATABASE) -> psycopg.Connection:
        return psycopg.connect(host=str(self.socket_dir), port=self.port, user=user, dbname=dbname, autocommit=True)


NODES = [CitusNode(HOME / name, PORT + number) for number, name in enumerate(("coordinator", "worker-1", "worker-2"))]
COORDINATOR, WORKERS = NODES[0], NODES[1:]


def fresh_database(node: CitusNode, dbname: str = DATABASE, citus: bool = True) -> None:
    """Makes the database afresh on a node: with Citus, or (citus false) with the extension alone, not distributed."""
    with node.connect(dbname="postgres") as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(dbname)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(dbname)))
    with node.connect(dbname=dbname) as conn:
        conn.execute("create extension citus" if citus else "create extension agent_memory cascade")


def distributed_database(dbname: str = DATABASE) -> None:
    """The database afresh on every node, the workers added to the coordinator's, the extension created there (Citus
    creates it on the workers) and distributed; then distributed again, once that has ended, to adapt every node."""
    for node in NODES:
        fresh_database(node, dbname)
    with COORDINATOR.connect(dbname=dbname) as conn:
        conn.execute("select citus_set_coordinator_host(%s, %s)", (str(COORDINATOR.socket_dir), COORDINATOR.port))
        for worker in WORKERS:
            conn.execute("select citus_add_node(%s, %s)", (str(worker.socket_dir), worker.port))
        conn.execute("create extension agent_memory cascade")
        conn.execute("select memory_internal._distribute()")
        conn.execute("select memory_internal._distribute()")


def worker_of(conn: psycopg.Connection, table: str, tenant: str) -> int:
    """The port of the worker that holds a tenant's shard of a table."""
    row = conn.execute(
        "select n.nodeport from pg_dist_placement as p "
        "inner join pg_dist_node as n on n.groupid = p.groupid "
        "where p.shardid = get_shard_id_for_distribution_column(%s, %s::text)",
        (table, tenant),
    ).fetchone()
    assert row is not None
    return int(row[0])


def tenants_on(conn: psycopg.Connection, node: CitusNode, count: int, prefix: str) -> list[str]:
    """New tenant names (prefix-...) whose shards are on a worker."""
    found: list[str] = []
    while len(found) < count:
        tenant = f"{prefix}-{uuid.uuid4().hex[:8]}"
        if worker_of(conn, "memory.turns", tenant) == node.port:
            found.append(tenant)
    return found


def session(conn: psycopg.Connection, tenant: str, session_id: str) -> None:
    """Stores a session of a tenant, as the superuser (who writes the tables directly)."""
    conn.execute(
        "insert into memory.sessions (tenant_id, agent_id, session_id, started_at) values (%s, 'default', %s, now())",
        (tenant, session_id),
    )
