"""Commit, forget and workers at once: one lock order (no deadlock), a job outliving its lease done once,
a cancel that stops a long embedding."""

from __future__ import annotations

import contextlib
import os
import threading

import psycopg
import pytest
from concurrent_calls import run_concurrently
from psycopg import sql
from psycopg.types.json import Json


def connect(db: psycopg.Connection) -> psycopg.Connection:
    info = db.info
    return psycopg.connect(host=info.host, port=info.port, user=info.user, dbname=info.dbname, autocommit=True)


def chat(n: int) -> Json:
    return Json(
        [
            {"role": "user", "content": f"Session {n}: the nightly export of the billing tables timed out again."},
            {"role": "assistant", "content": f"Session {n}: raise the timeout and split the export per table."},
        ]
    )


def test_forget_commit_and_workers_under_load_never_deadlock(db, capsys):
    """Two workers enrich while one connection commits and another forgets the same sessions."""
    rounds = int(os.environ.get("AGENT_MEMORY_SOAK_ROUNDS", "40"))
    db.commit()
    db.autocommit = True

    def worker(stop: threading.Event) -> None:
        with connect(db) as conn:
            while not stop.is_set():
                conn.execute("call memory.work(5)")

    def committer() -> None:
        with connect(db) as conn:
            for n in range(rounds):
                # the forgetter's sessions come back on purpose
                conn.execute("select memory.commit(%s, %s, allow_forgotten => true)", (f"s{n % 8}", chat(n)))

    def forgetter() -> None:
        with connect(db) as conn:
            for n in range(rounds):
                with contextlib.suppress(psycopg.errors.NoDataFound):  # forgotten already, not committed again
                    conn.execute("select * from memory.forget(%s)", (f"s{(n + 3) % 8}",))

    assert run_concurrently([committer, forgetter], [worker, worker]) == []
    db.execute("call memory.work(100)")
    failed = db.execute("select count(*) from memory.jobs where status <> 'done'").fetchone()[0]
    assert failed == 0
    with capsys.disabled():
        print(f"\n  {rounds} commits and {rounds} forgets against 2 workers: 0 deadlocks, 0 failed jobs")


def test_a_job_that_outlives_its_lease_is_run_once(db, http_stub):
    """The first worker's embedding takes longer than the lease; a second worker does not take the job."""
    db.execute("select memory.commit('slow', %s)", (chat(1),))
    db.commit()
    db.autocommit = True
    http_stub.delay = 2.0
    first = connect(db)
    first.execute("set memory.queue_lease_seconds = 1")
    first.execute("set memory.embedder = 'openai'")
    first.execute("set memory.openai_embedding_dimensions = 8")
    first.execute(sql.SQL("set memory.openai_base_url = {}").format(http_stub.base_url))
    result: list[tuple] = []
    running = threading.Thread(target=lambda: result.append(first.execute("call memory.work(1)").fetchone()))
    running.start()
    try:
        with connect(db) as second:
            second.execute("set memory.queue_lease_seconds = 1")
            second.execute("select pg_sleep(1.3)")  # the first worker's lease has run out
            assert second.execute("call memory.work(1)").fetchone() == (0, 0)
    finally:
        running.join()
        first.close()
    assert result == [(1, 0)]
    assert db.execute("select status, attempts from memory.jobs").fetchall() == [("done", 1)]
    assert len([path for path, _, _ in http_stub.requests if path.endswith("/embeddings")]) == 1


def test_a_statement_timeout_stops_a_long_local_embedding(db):
    texts = [f"text number {n} about a database migration that ran over the weekend" for n in range(400)]
    db.execute("set statement_timeout = '50ms'")
    with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout") as cancelled:
        db.execute("select memory.embed(%s)", (texts,))
    # It took effect inside the embedding, between two batches, not after the whole of it.
    assert 'PL/Python function "_embed_texts"' in (cancelled.value.diag.context or "")


def test_eight_concurrent_commits_of_one_session_lose_and_duplicate_nothing(db):
    db.commit()
    db.autocommit = True
    # Overlapping windows of one growing conversation, as eight retries or clients would send them.
    windows = [
        Json([{"id": f"m{j}", "role": "user", "content": f"message {j}"} for j in range(5 * i, 5 * i + 10)])
        for i in range(8)
    ]

    def commit(window: Json) -> None:
        with connect(db) as conn:
            conn.execute("select memory.commit('shared', %s)", (window,))

    assert run_concurrently([lambda window=window: commit(window) for window in windows]) == []
    ids = [m for (m,) in db.execute("select message_id from memory.turns")]
    assert sorted(ids) == sorted(f"m{j}" for j in range(45))
