"""On the worker that holds a tenant, the API's hot statements run on the tenant's shards as on one node: recall's
scoring statement, commit's insert of turns and the counters' insert are prepared there naming the shards (Citus
plans a statement about its tables on every run), and every shard's tenant policy checks once per statement (with
subselects, as on one node: Citus takes none in its tables' policies), a shard made anew by a move too
(test_shard_move.py). The functions that only read the tables every node holds whole (settings, the registries)
read each node's copy by its shard's name, and those of SQL stay SQL."""

from __future__ import annotations

import re
import uuid

import psycopg
from cluster import WORKERS, worker_of
from psycopg import sql
from psycopg.types.json import Jsonb

ONCE_PER_STATEMENT = "( SELECT memory.current_tenant() AS current_tenant)"
APP = "citus_shards_app"
# The statements prepared on the shards, by the start of their names, and a table each names.
PURPOSES = {"memory_recall_score_": "turns", "memory_add_turns_": "turns", "memory_add_counts_": "metric_counts"}


def tenant_on(coordinator: psycopg.Connection, port: int) -> str:
    """A new tenant whose shards are on the worker of that port."""
    while True:
        tenant = f"shards-{uuid.uuid4().hex[:8]}"
        if worker_of(coordinator, "memory.turns", tenant) == port:
            return tenant


def test_on_its_worker_a_tenants_recall_and_commit_are_prepared_on_its_shards(coordinator):
    """As an application's login (row-level security on): the statements are prepared on the tenant's shards, and
    what they fire there (a speaker's trigger, the counters) runs as on one node."""
    if coordinator.execute("select 1 from pg_roles where rolname = %s", (APP,)).fetchone() is None:
        coordinator.execute(sql.SQL("create role {} login").format(sql.Identifier(APP)))  # Citus: on every node
    coordinator.execute(sql.SQL("grant memory_app to {}").format(sql.Identifier(APP)))
    worker = WORKERS[0]
    tenant, elsewhere = tenant_on(coordinator, worker.port), tenant_on(coordinator, WORKERS[1].port)
    (shard,) = coordinator.execute(
        "select shard_name('memory.turns', get_shard_id_for_distribution_column('memory.turns', %s::text))", (tenant,)
    ).fetchone()
    with worker.connect(user=APP) as conn:
        commit = {
            "session_id": "s1",
            "enrich": "now",
            "messages": [
                {"role": "user", "name": "Alice", "content": "The cache moved to Paris on Friday."},
                {"role": "assistant", "content": "Noted: Paris."},
            ],
        }
        (added,) = conn.execute("select memory.call(%s, 'commit', %s)", (tenant, Jsonb(commit))).fetchone()
        assert added["turns_added"] == 2
        hits = conn.execute("select memory.call(%s, 'recall', %s)", (tenant, Jsonb({"query": "cache Paris"})))
        assert "Paris" in hits.fetchone()[0]["content"]
        prepared = dict(conn.execute("select name, statement from pg_prepared_statements").fetchall())
    named = {purpose: text for name, text in prepared.items() for purpose in PURPOSES if name.startswith(purpose)}
    assert set(named) == set(PURPOSES)
    for purpose, statement in named.items():
        table = PURPOSES[purpose]
        assert re.search(rf"\bmemory\.{table}_[0-9]+\b", statement)  # a shard of the table
        assert not re.search(rf"\bmemory\.{table}\b(?!_[0-9])", statement)  # never the table
    assert shard in named["memory_recall_score_"] and shard in named["memory_add_turns_"]
    speakers = coordinator.execute("select speaker from memory.speakers where tenant_id = %s", (tenant,)).fetchall()
    assert speakers == [("Alice",)]
    # A tenant whose shards are on the other worker: the statement as written (it would not run here).
    statement = "select count(*) from memory.turns where tenant_id = $1"
    with worker.connect() as conn:
        (same,) = conn.execute("select memory_internal._on_local_shards(%s, %s)", (statement, elsewhere)).fetchone()
    assert same == statement


def test_every_shards_tenant_policy_checks_once_per_statement_and_each_table_once_per_row(cluster, coordinator):
    # The shards a move left behind go first (Citus drops them later in the background, maybe while this reads).
    coordinator.execute("call citus_cleanup_orphaned_resources()")
    for worker in WORKERS:
        with worker.connect() as conn:
            conn.execute("set citus.override_table_visibility = off")
            policies = conn.execute(
                "select p.polrelid::regclass::text, pg_get_expr(p.polqual, p.polrelid) from pg_policy as p "
                "where p.polname in ('tenant_isolation', 'tenant_settings') "
                "and p.polrelid::regclass::text like 'memory.%'"
            ).fetchall()
            shards = {name: check for name, check in policies if re.search(r"_[0-9]+$", name)}
            tables = {name: check for name, check in policies if name not in shards}
            assert len(shards) > 100 and all(ONCE_PER_STATEMENT in check for check in shards.values())
            # Citus's own tables keep plain calls (it refuses a subquery in a statement that writes one).
            assert "memory.turns" in tables and not any("SELECT" in check for check in tables.values())
            # The bindings' copy keeps its own policy alone.
            assert not any(name.startswith("memory.tenant_roles_") for name in shards)


def test_the_settings_are_read_from_each_nodes_copy_by_sql_functions_that_stay_sql(cluster):
    functions = ["memory_internal._setting_definitions()", "memory_internal._configured_settings(text)"]
    for node in cluster:
        with node.connect() as conn:
            rows = conn.execute(
                "select p.oid::regprocedure::text, l.lanname, p.prosrc from pg_proc as p"
                " inner join pg_language as l on l.oid = p.prolang where p.oid = any(%s::regprocedure[])",
                (functions,),
            ).fetchall()
        assert len(rows) == len(functions)
        for name, language, body in rows:
            assert language == "sql", name  # inlined where it is called, as on one node
            assert re.search(r"\bmemory(_internal)?\.[a-z_]+_[0-9]+\b", body), name  # a shard, on every node
            assert not re.search(r"\bmemory(_internal)?\.(config|_declared_settings|signals)\b(?!_)", body), name
