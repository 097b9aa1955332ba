"""memory.work() on a Citus cluster runs on each worker, for the tenants whose shards that node holds: every job of
theirs is done once, enriching their sessions as on one node, and the coordinator, which holds no job, says where
to run it. A worker that restarts while it works loses no job and runs none twice: a job and the mark that it is
done commit together, what was done before the restart stays done, and what was claimed and not done is claimed
again once its lease runs out."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from cluster import COORDINATOR, WORKERS, CitusNode, tenants_on
from psycopg.types.json import Jsonb


def queue(coordinator: psycopg.Connection, tenant: str, sessions: int) -> None:
    """Commits sessions of a tenant with their enrichment queued."""
    for n in range(sessions):
        messages = [{"role": "user", "content": f"{tenant} ships release {n} on Friday from Lisbon."}]
        coordinator.execute(
            "select memory.call(%s, 'commit', %s)", (tenant, Jsonb({"session_id": f"s{n}", "messages": messages}))
        )


def jobs(coordinator: psycopg.Connection, tenants: list[str]) -> dict[tuple[str, int], tuple[str, object]]:
    """Each job of the tenants by (tenant, session key): its status and when it finished."""
    rows = coordinator.execute(
        "select tenant_id, session_key, status, finished_at from memory.jobs where tenant_id = any(%s)", (tenants,)
    ).fetchall()
    return {(tenant, session): (status, finished) for tenant, session, status, finished in rows}


def work(node: CitusNode, user: str, lease: int | None = None) -> int:
    """Runs memory.work on a node until it finds nothing to do; how many jobs it did."""
    done = 0
    with node.connect(user=user) as conn:
        if lease is not None:
            conn.execute(f"set memory.queue_lease_seconds = {lease}")
        while True:
            processed, failed = conn.execute("call memory.work(100)").fetchone()
            assert failed == 0
            if processed == 0:
                return done
            done += processed


def test_each_worker_works_the_jobs_of_its_tenants_and_the_coordinator_says_where_to_run_it(coordinator, admin):
    tenants = {node.port: tenants_on(coordinator, node, 2, "work") for node in WORKERS}
    everyone = [tenant for some in tenants.values() for tenant in some]
    for tenant in everyone:
        queue(coordinator, tenant, 3)
    with (
        COORDINATOR.connect(user=admin) as conn,
        pytest.raises(psycopg.errors.FeatureNotSupported, match="runs on each worker"),
    ):
        conn.execute("call memory.work(100)")
    for node in WORKERS:
        assert work(node, admin) >= 2 * 3  # (its other tenants' jobs too, from the suite's other tests)
    assert {status for status, _ in jobs(coordinator, everyone).values()} == {"done"}
    assert len(jobs(coordinator, everyone)) == len(everyone) * 3
    for tenant in everyone:
        (chunks,) = coordinator.execute(
            "select count(*) from memory.chunk_embeddings where tenant_id = %s", (tenant,)
        ).fetchone()
        assert chunks == 3
        hits = coordinator.execute("select memory.call(%s, 'recall', %s)", (tenant, Jsonb({"query": "release 2"})))
        assert "release 2" in hits.fetchone()[0]["content"]


def test_a_worker_restarted_while_it_works_loses_no_job_and_runs_none_twice(coordinator, admin):
    node = WORKERS[0]
    work(node, admin)  # (what the suite's other tests left queued)
    tenants = tenants_on(coordinator, node, 2, "work")
    for tenant in tenants:
        queue(coordinator, tenant, 12)
    errors: list[BaseException] = []

    def doomed() -> None:
        try:
            work(node, admin, lease=2)
        except psycopg.Error as error:  # the node going down under it
            errors.append(error)

    worker = threading.Thread(target=doomed)
    worker.start()
    deadline = time.monotonic() + 60
    while sum(status == "done" for status, _ in jobs(coordinator, tenants).values()) < 3:
        assert time.monotonic() < deadline and worker.is_alive()
        time.sleep(0.05)
    node.stop(mode="immediate")
    node.start()
    worker.join()
    assert errors  # it was cut off at work
    before = jobs(coordinator, tenants)
    finished = {key: at for key, (status, at) in before.items() if status == "done"}
    left = len(before) - len(finished)
    assert finished and left  # some done, some not, when the node went down
    time.sleep(2.2)  # the leases of what it had claimed run out
    assert work(node, admin) == left
    after = jobs(coordinator, tenants)
    assert {status for status, _ in after.values()} == {"done"} and len(after) == 24
    assert {key: after[key][1] for key in finished} == finished  # what was done was not done again
    for tenant in tenants:
        (chunks,) = coordinator.execute(
            "select count(*) from memory.chunk_embeddings where tenant_id = %s", (tenant,)
        ).fetchone()
        assert chunks == 12
