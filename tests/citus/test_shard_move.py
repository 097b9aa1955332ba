"""A tenant's shards moved to the other worker (citus_move_shard_placement) while another tenant whose rows are on
the same shards commits: the first tenant's recall answers as before the move, from the worker its shards moved
to, and every turn the other committed during the move is there once; the shards made there check their tenant
policy once per statement at once, as the others (an event trigger on create policy). A move connects to the
workers as the tables' owner, memory_owner, which may log in for the move alone (docs/SCALING.md); it blocks writes
to those shards while it copies them (shard_transfer_mode block_writes): the writes wait, then go on."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest
from cluster import COORDINATOR, WORKERS, worker_of
from psycopg.types.json import Jsonb

QUERIES = ["where is the cache?", "who agreed to the move?", "when does Alice fly to Lisbon?"]
WRITES = 30


def call(conn, tenant: str, function: str, arguments: dict) -> list:
    return [r[0] for r in conn.execute("select memory.call(%s, %s, %s)", (tenant, function, Jsonb(arguments)))]


def answers(conn, tenant: str) -> list[list[tuple[str, float]]]:
    return [
        [(hit["content"], round(hit["score"], 6)) for hit in call(conn, tenant, "recall", {"query": query})]
        for query in QUERIES
    ]


def sharing_tenant(conn, tenant: str) -> str:
    """Another tenant whose rows are on the same shards as tenant's."""
    shard = "select get_shard_id_for_distribution_column('memory.turns', %s::text)"
    (wanted,) = conn.execute(shard, (tenant,)).fetchone()
    for n in range(10_000):
        other = f"{tenant}-{n}"
        if conn.execute(shard, (other,)).fetchone()[0] == wanted:
            return other
    pytest.fail("no tenant found on the same shards")


def placement(conn, tenant: str) -> tuple[int, dict[int, str], int, int]:
    """A tenant's shard of memory.turns, the workers (host by port), the port of its worker and of the other."""
    source = worker_of(conn, "memory.turns", tenant)
    (shard,) = conn.execute(
        "select get_shard_id_for_distribution_column('memory.turns', %s::text)", (tenant,)
    ).fetchone()
    nodes = dict(conn.execute("select nodeport, nodename from pg_dist_node where groupid > 0").fetchall())
    (target,) = [port for port in nodes if port != source]
    return shard, nodes, source, target


def test_a_tenant_moved_to_another_worker_answers_the_same_and_loses_no_concurrent_write(cluster, coordinator):
    tenant = f"move-{uuid.uuid4().hex[:8]}"
    neighbour = sharing_tenant(coordinator, tenant)
    call(
        coordinator,
        tenant,
        "commit",
        {
            "session_id": "trip",
            "enrich": "now",
            "messages": [
                {"role": "user", "content": "Alice moved the cache to Paris on Friday; Bob from Acme agreed."},
                {"role": "assistant", "content": "Noted: the cache is in Paris now."},
                {"role": "user", "content": "Next week Alice flies to Lisbon for the offsite."},
            ],
        },
    )
    call(coordinator, tenant, "remember", {"content": "The offsite is in Lisbon.", "kind": "event"})
    before = answers(coordinator, tenant)
    assert before[0] and "Paris" in before[0][0][0]

    shard, nodes, source, target = placement(coordinator, tenant)

    written: list[int] = []
    started_at: list[float] = []
    retried: list[int] = []
    failures: list[BaseException] = []
    moved = threading.Event()

    def write() -> None:
        """Commits a line at a time until the move is over (and at least WRITES lines). A call in flight when the
        shards change node fails, as a client sees it: it commits the line again (with its id: once)."""
        try:
            with COORDINATOR.connect() as conn:
                while not moved.is_set() or len(written) < WRITES:
                    n = len(written)
                    started_at.append(time.monotonic())
                    message = [{"role": "user", "content": f"Line {n} of the log.", "id": f"m{n}"}]
                    for attempt in range(5):
                        try:
                            result = call(conn, neighbour, "commit", {"session_id": "log", "messages": message})
                            break
                        except psycopg.Error:
                            retried.append(n)
                            if attempt == 4:
                                raise
                    written.append(result[0]["turns_added"])
        except BaseException as error:  # reported by the test below
            failures.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    while not written and not failures:
        time.sleep(0.01)
    began = time.monotonic()
    try:
        coordinator.execute("alter role memory_owner login bypassrls")  # Citus makes the change on every node
        coordinator.execute(
            "select citus_move_shard_placement(%s, %s, %s, %s, %s, shard_transfer_mode => 'block_writes')",
            (shard, nodes[source], source, nodes[target], target),
        )
        ended = time.monotonic()
    finally:
        coordinator.execute("alter role memory_owner nologin nobypassrls")
        moved.set()
        writer.join()
    assert failures == []
    assert any(began < at < ended for at in started_at)  # writes went on while the shards moved

    assert worker_of(coordinator, "memory.turns", tenant) == target
    assert answers(coordinator, tenant) == before
    moved = [
        name
        for (name,) in coordinator.execute(
            "select shard_name(logicalrelid, get_shard_id_for_distribution_column(logicalrelid, %s::text)) "
            "from pg_dist_partition where partmethod = 'h'",
            (tenant,),
        )
    ]
    (node,) = [worker for worker in WORKERS if worker.port == target]
    with node.connect() as conn:
        checks = conn.execute(
            "select pg_get_expr(polqual, polrelid) from pg_policy where polrelid::regclass::text = any(%s)", (moved,)
        ).fetchall()
    assert len(checks) >= 20 and all("( SELECT memory.current_tenant()" in check for (check,) in checks)
    # Every write of the neighbour landed once: one turn per line, each line once (a line retried after a call
    # that failed was not written by it).
    assert set(written) == {1}
    assert len(retried) <= 2
    count, distinct = coordinator.execute(
        "select count(*), count(distinct message_id) from memory.turns where tenant_id = %s", (neighbour,)
    ).fetchone()
    assert count == distinct == len(written)


def test_a_statement_on_a_tenants_shards_holds_them_and_a_move_waits_for_it(cluster, coordinator):
    """A statement that names shards (memory_internal._prepared on the tenant's worker) holds them as Citus's own
    writes do: a move of them waits until its transaction ends, and after the move the old node no longer names
    them (the statement stays as written; a call in flight fails and is made again)."""
    tenant = f"hold-{uuid.uuid4().hex[:8]}"
    call(coordinator, tenant, "commit", {"session_id": "s", "messages": [{"role": "user", "content": "Held."}]})
    shard, nodes, source, target = placement(coordinator, tenant)
    (node,) = [worker for worker in WORKERS if worker.port == source]
    statement = "select count(*) from memory.turns where tenant_id = $1"
    failures: list[BaseException] = []

    def move() -> None:
        try:
            with COORDINATOR.connect() as conn:
                conn.execute(
                    "select citus_move_shard_placement(%s, %s, %s, %s, %s, shard_transfer_mode => 'block_writes')",
                    (shard, nodes[source], source, nodes[target], target),
                )
        except BaseException as error:  # reported below
            failures.append(error)

    coordinator.execute("alter role memory_owner login bypassrls")
    try:
        with node.connect() as held:
            held.execute("begin")
            (named,) = held.execute("select memory_internal._on_local_shards(%s, %s)", (statement, tenant)).fetchone()
            assert named != statement
            mover = threading.Thread(target=move)
            mover.start()
            time.sleep(2)
            assert mover.is_alive() and worker_of(coordinator, "memory.turns", tenant) == source  # it waits
            held.execute("commit")
        mover.join(120)
    finally:
        coordinator.execute("alter role memory_owner nologin nobypassrls")
    assert not mover.is_alive() and failures == []
    assert worker_of(coordinator, "memory.turns", tenant) == target
    with node.connect() as conn:
        (same,) = conn.execute("select memory_internal._on_local_shards(%s, %s)", (statement, tenant)).fetchone()
    assert same == statement
    assert call(coordinator, tenant, "list_sessions", {})[0]["session_id"] == "s"
