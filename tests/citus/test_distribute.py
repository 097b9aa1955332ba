"""memory_internal._distribute() on a three-node Citus cluster: where each table goes, each tenant's rows on one worker,
and the extension on every node."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from cluster import WORKERS, session, worker_of


def test_every_tenant_keyed_table_is_distributed_by_tenant_together_and_the_shared_ones_replicated(coordinator):
    placed = dict(
        coordinator.execute(
            "select p.logicalrelid::regclass::text, "
            "case p.partmethod when 'h' then 'distributed' when 'n' then 'reference' end "
            "from pg_dist_partition as p"
        ).fetchall()
    )
    tables = dict(
        coordinator.execute(
            "select c.oid::regclass::text, exists (select from pg_attribute as a "
            "where a.attrelid = c.oid and a.attname = 'tenant_id') "
            "from pg_class as c where c.relnamespace in ('memory'::regnamespace, 'memory_internal'::regnamespace) "
            "and c.relkind = 'r'"
        ).fetchall()
    )
    shared = {"memory.config", "memory.tenant_roles"}
    local = {"memory.maintenance_runs", "memory_internal._node_locks", "memory_internal.api_keys"}  # each node's
    assert placed == {
        table: "distributed" if keyed and table not in shared else "reference"
        for table, keyed in tables.items()
        if table not in local
    }
    assert {"memory.turns", "memory.chunk_embeddings", "memory.memories", "memory.jobs"} <= set(placed)
    columns = coordinator.execute(
        "select distinct column_to_column_name(logicalrelid, partkey), colocationid from pg_dist_partition "
        "where partmethod = 'h'"
    ).fetchall()
    assert len(columns) == 1 and columns[0][0] == "tenant_id"


def test_distributing_again_changes_nothing(coordinator):
    (again,) = coordinator.execute("select memory_internal._distribute()").fetchone()
    # (Again, it adapts every node: one added since has the extension as its script made it.)
    assert again == {"distributed": False, "reason": "the tables are distributed already", "adapted": 3}


def test_the_extension_and_its_roles_are_on_every_worker(cluster):
    for worker in WORKERS:
        with worker.connect() as conn:
            assert conn.execute("select extversion from pg_extension where extname = 'agent_memory'").fetchone()
            roles = {name for (name,) in conn.execute("select rolname from pg_roles where rolname like 'memory%'")}
            assert {"memory_owner", "memory_tenant", "memory_app", "memory_admin"} <= roles


def test_each_tenants_rows_of_every_table_are_on_one_worker_and_tenants_spread_over_both(coordinator):
    tenants = [f"citus-{uuid.uuid4().hex[:8]}" for _ in range(8)]
    for tenant in tenants:
        session(coordinator, tenant, f"notes of {tenant}")
        coordinator.execute(
            "insert into memory.tombstones (tenant_id, selector, removed) values (%s, '{}', '{}')", (tenant,)
        )
    tables = [
        name
        for (name,) in coordinator.execute(
            "select logicalrelid::regclass::text from pg_dist_partition where partmethod = 'h'"
        )
    ]
    for tenant in tenants:
        assert len({worker_of(coordinator, table, tenant) for table in tables}) == 1
        rows = coordinator.execute(
            "select count(*) from memory.sessions as s inner join memory.tombstones as t using (tenant_id) "
            "where s.tenant_id = %s",
            (tenant,),
        ).fetchone()
        assert rows == (1,)
    assert {worker_of(coordinator, "memory.sessions", tenant) for tenant in tenants} == {w.port for w in WORKERS}


def test_distributing_from_a_worker_is_an_error_that_names_the_coordinator(cluster):
    with (
        WORKERS[0].connect() as conn,
        pytest.raises(psycopg.errors.FeatureNotSupported, match="runs on the Citus coordinator"),
    ):
        conn.execute("select memory_internal._distribute()")


def test_the_embedding_model_in_force_is_recorded_on_every_node_before_any_tenant_writes(cluster, coordinator):
    """Recorded by a tenant's first enrichment on a worker, it would write a reference table and index every shard
    from there, as the owner; memory_internal._distribute() records it while the tables are the coordinator's."""
    (model,) = coordinator.execute("select model from memory.embedding_model()").fetchone()
    for node in cluster:
        with node.connect() as conn:
            assert conn.execute("select model, state from memory.embedding_models").fetchall() == [(model, "ready")]
