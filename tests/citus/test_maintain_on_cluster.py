"""memory.maintain() on a Citus cluster runs on each worker, for the tenants whose shards that node holds: it
applies their retention, deletes their old finished jobs and records the run on the node, one run at a time
there; the coordinator, which holds no tenant, says where to run it."""

from __future__ import annotations

import psycopg
import pytest
from cluster import COORDINATOR, WORKERS, CitusNode, tenants_on
from psycopg.types.json import Jsonb

SAID = [{"role": "user", "content": "The staging database moved to the Frankfurt region last spring."}]


def aged(coordinator: psycopg.Connection, tenant: str) -> None:
    """A tenant with a session unused for 400 days under a policy that keeps 365, one unused for 200 days (which
    has decayed, to cold), a session of today, and one whose enrichment finished 8 days ago."""
    for session_id, enrich in (("old", "now"), ("stale", "now"), ("today", "now"), ("queued", "queue")):
        commit = {"session_id": session_id, "messages": SAID, "enrich": enrich}
        coordinator.execute("select memory.call(%s, 'commit', %s)", (tenant, Jsonb(commit)))
    # (The superuser sets the clock back: it writes the tables directly.)
    coordinator.execute(
        "update memory.sessions set updated_at = now() - interval '400 days', used_at = null"
        " where tenant_id = %s and session_id = 'old'",
        (tenant,),
    )
    coordinator.execute(
        "update memory.sessions set updated_at = now() - interval '200 days', used_at = null"
        " where tenant_id = %s and session_id = 'stale'",
        (tenant,),
    )
    coordinator.execute(
        "update memory.jobs set status = 'done', finished_at = now() - interval '8 days' where tenant_id = %s",
        (tenant,),
    )
    coordinator.execute(
        "select memory.call(%s, 'set_retention', %s)", (tenant, Jsonb({"data": "sessions", "max_age": "365 days"}))
    )


def last_run(node: CitusNode, user: str) -> tuple[str, str, dict]:
    with node.connect(user=user) as conn:
        row = conn.execute(
            "select status, run_by, actions from memory.maintenance_runs order by run_id desc limit 1"
        ).fetchone()
    assert row is not None
    return row


def test_each_worker_maintains_its_tenants_and_records_the_run_there(coordinator, admin):
    tenants = {node.port: tenants_on(coordinator, node, 1, "maintain")[0] for node in WORKERS}
    for tenant in tenants.values():
        aged(coordinator, tenant)
    with (
        COORDINATOR.connect(user=admin) as conn,
        pytest.raises(psycopg.errors.FeatureNotSupported, match="runs on each worker"),
    ):
        conn.execute("call memory.maintain()")
    for node in WORKERS:
        with node.connect(user=admin) as conn:
            conn.execute("call memory.maintain()")
        status, run_by, actions = last_run(node, admin)
        mine, other = tenants[node.port], next(t for port, t in tenants.items() if port != node.port)
        assert (status, run_by) == ("done", admin)
        assert actions["retention"][mine]["sessions"] == 1
        assert actions["tiers_moved"][mine]["to_cold"] >= 1
        assert other not in actions["retention"] and other not in actions["tiers_moved"]
        assert actions["jobs_deleted"] >= 1  # (and those of the suite's other tenants there)
        assert actions["tenant_graphs_due"] is None  # no graph of a tenant's own on a cluster yet
    for tenant in tenants.values():
        sessions = coordinator.execute(
            "select array_agg(session_id order by session_id) from memory.sessions"
            " where tenant_id = %s and session_id <> 'remembered'",
            (tenant,),
        ).fetchone()[0]
        assert sessions == ["queued", "stale", "today"]
        tiers = coordinator.execute(
            "select session_id, tier from memory.sessions where tenant_id = %s and session_id in ('stale', 'today')"
            " order by 1",
            (tenant,),
        ).fetchall()
        assert tiers == [("stale", "cold"), ("today", "hot")]
        assert coordinator.execute("select count(*) from memory.jobs where tenant_id = %s", (tenant,)).fetchone() == (
            0,
        )
        (archived,) = coordinator.execute(
            "select count(*) from memory.archives where tenant_id = %s", (tenant,)
        ).fetchone()
        assert archived == 1
        answer = coordinator.execute("select memory.call(%s, 'recall', %s)", (tenant, Jsonb({"query": "staging"})))
        assert "Frankfurt" in answer.fetchone()[0]["content"]
    # Each node keeps its own record: the coordinator ran none.
    assert coordinator.execute("select count(*) from memory.maintenance_runs").fetchone() == (0,)


def test_a_second_run_on_a_worker_while_one_runs_there_is_skipped(cluster, admin):
    worker = WORKERS[0]
    with worker.connect(user=admin) as first, worker.connect(user=admin) as second:
        first.execute("begin")
        first.execute("call memory.maintain()")  # holds the run's lock until its transaction ends
        second.execute("call memory.maintain()")
        assert last_run(worker, admin)[0] == "skipped"
        first.execute("rollback")
    with WORKERS[1].connect(user=admin) as conn:  # the other worker's runs are its own
        conn.execute("call memory.maintain()")
    assert last_run(WORKERS[1], admin)[0] == "done"
