"""On a server of the test's own: a worker killed with SIGKILL and an immediate shutdown in the middle of an
ingest lose and duplicate nothing, and every job gets done; recall (SQL and the client) on a streaming
standby made with pg_basebackup."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest
from concurrent_calls import run_concurrently
from own_server import free_port, own_server, private_directory
from psycopg.types.json import Json

from agent_memory import Memory
from agent_memory.localdb import LocalServer

SESSIONS_PER_WRITER = 25
WRITERS = 3


@pytest.fixture
def server() -> Iterator[LocalServer]:
    """A cluster of this test's own, with the extension in database memory."""
    with own_server({"queue_lease_seconds": "1"}) as own:
        yield own


def retrying(url: str, action: Callable[[psycopg.Connection], object], stop: threading.Event | None = None) -> None:
    """Run action on a connection, reconnecting while the server restarts (as an agent's client would)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
                action(conn)
                return
        except psycopg.OperationalError:
            if stop is not None and stop.is_set():
                return
            time.sleep(0.2)
    raise TimeoutError("the server did not come back")


def messages(writer: int, n: int) -> Json:
    return Json(
        [
            {"id": f"{writer}-{n}-q", "role": "user", "content": f"Writer {writer} asks question {n} about backups."},
            {"id": f"{writer}-{n}-a", "role": "assistant", "content": f"Answer {n}: the backups run nightly."},
        ]
    )


def ingest_through(server: LocalServer, disrupt: Callable[[], None]) -> None:
    """Writers commit sessions and two workers enrich them while disrupt() breaks the server once; then
    every session must hold its two turns once, and every job be done."""
    url = server.url("memory")

    def writer(number: int) -> None:
        for n in range(SESSIONS_PER_WRITER):
            # A commit cut off by the crash is committed again: by message id it is stored once.
            commit = ("select memory.commit(%s, %s)", (f"w{number}-{n}", messages(number, n)))
            retrying(url, lambda conn, commit=commit: conn.execute(*commit))

    def worker(stop: threading.Event) -> None:
        while not stop.is_set():
            retrying(url, lambda conn: conn.execute("call memory.work(3)"), stop)

    def break_the_server_once() -> None:
        time.sleep(1.5)
        disrupt()

    writers = [lambda i=i: writer(i) for i in range(WRITERS)]
    assert run_concurrently(writers, [worker, worker], during=break_the_server_once) == []

    def drain(conn: psycopg.Connection) -> None:
        for _ in range(60):  # jobs of a worker that died are reclaimed once their 1 s lease runs out
            conn.execute("call memory.work(50)")
            if not conn.execute("select count(*) from memory.jobs where status <> 'done'").fetchone()[0]:
                return
            time.sleep(0.5)

    retrying(url, drain)
    with psycopg.connect(url) as conn:
        sessions, turns, distinct = conn.execute(
            "select (select count(*) from memory.sessions), count(*), count(distinct message_id) from memory.turns"
        ).fetchone()
        jobs = dict(conn.execute("select status, count(*) from memory.jobs group by status").fetchall())
        chunks = conn.execute("select count(*) from memory.chunks").fetchone()[0]
    expected = WRITERS * SESSIONS_PER_WRITER
    assert (sessions, turns, distinct) == (expected, 2 * expected, 2 * expected)  # 0 lost, 0 duplicated
    assert set(jobs) == {"done"}
    assert chunks == 2 * expected  # every session enriched


def test_a_worker_killed_mid_ingest_loses_and_duplicates_nothing(server):
    def kill_a_worker() -> None:
        with psycopg.connect(server.url("memory"), autocommit=True) as conn:
            for _ in range(50):
                row = conn.execute(
                    "select pid from pg_stat_activity where query like 'call memory.work%' and state = 'active' limit 1"
                ).fetchone()
                if row:
                    os.kill(row[0], signal.SIGKILL)  # the postmaster resets every backend, as after any crash
                    return
                time.sleep(0.05)
        raise AssertionError("no worker was busy to kill")

    ingest_through(server, kill_a_worker)


def test_an_immediate_shutdown_mid_ingest_loses_and_duplicates_nothing(server):
    def shut_down_and_restart() -> None:
        server._run("pg_ctl", "stop", "-m", "immediate", "-D", str(server.data_dir))
        server.start()

    ingest_through(server, shut_down_and_restart)


@pytest.fixture
def standby(server) -> Iterator[LocalServer]:
    """A streaming standby of the server, made with pg_basebackup."""
    replica = LocalServer(directory=private_directory(), port=free_port())
    replica._prepare_directory()
    source = ["-h", str(server.socket_dir), "-p", str(server.port), "-U", "postgres"]
    replica._run("pg_basebackup", *source, "-D", str(replica.data_dir), "-R", "-X", "stream", "--checkpoint=fast")
    conf = replica.data_dir / "postgresql.conf"
    conf.write_text(conf.read_text() + f"\nunix_socket_directories = '{replica.socket_dir}'\n")
    replica.start()
    try:
        yield replica
    finally:
        replica._run("pg_ctl", "stop", "-m", "immediate", "-D", str(replica.data_dir), check=False)
        shutil.rmtree(replica.directory, ignore_errors=True)


def test_recall_on_a_streaming_standby(server, standby):
    with psycopg.connect(server.url("memory"), autocommit=True) as primary:
        primary.execute(
            "select memory.commit('ops', %s, enrich => 'now')",
            (Json([{"role": "user", "content": "the staging database moved to a larger disk on monday"}]),),
        )
        lsn = primary.execute("select pg_current_wal_lsn()").fetchone()[0]
    with psycopg.connect(standby.url("memory"), autocommit=True) as replica:
        for _ in range(100):
            if replica.execute("select pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()[0]:
                break
            time.sleep(0.1)
        assert replica.execute("select pg_is_in_recovery()").fetchone()[0]
        recall = "select content, components -> 'signals' -> 'dense' ->> 'value' from memory.recall(%s, k => 1)"
        hit = replica.execute(recall, ("storage upgrade",)).fetchone()
        assert hit[0] == "the staging database moved to a larger disk on monday" and float(hit[1]) > 0.2
        for reading in (
            "select * from memory.explain_recall('disk')",
            "select * from memory.bootstrap()",
            "select * from memory.context_for_task('disk upgrade')",
            "select * from memory.export()",
            "select * from memory.export_tenant()",
            "select * from memory.stats()",
        ):
            assert replica.execute(reading).fetchall(), reading
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            replica.execute("select memory.commit('more', %s)", (Json([{"role": "user", "content": "x"}]),))
    with Memory(standby.url("memory")) as memory:
        assert memory.recall("storage upgrade", k=1)[0].content.startswith("the staging database moved")
