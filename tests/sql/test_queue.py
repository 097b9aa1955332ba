"""The enrichment queue: work(), retries with backoff, dead-lettering, lease reclaim, SKIP LOCKED."""

import time

import psycopg
from psycopg.types.json import Json

# No statement to extract a memory from (that would queue a job of its own for the memory's words).
CHAT = [{"role": "user", "content": "The auth service runs on Postgres."}]


def queue(db, *sessions):
    for session in sessions:
        db.execute("select memory.commit(%s, %s)", (session, Json(CHAT)))
    db.commit()
    db.autocommit = True


def work(db, max_jobs=10):
    return db.execute("call memory.work(%s)", (max_jobs,)).fetchone()


def job(db):
    return db.execute("select status, attempts, last_error from memory.jobs where kind = 'enrich'").fetchone()


def connect(db):
    info = db.info
    return psycopg.connect(host=info.host, port=info.port, user=info.user, dbname=info.dbname, autocommit=True)


def test_work_runs_queued_jobs_each_once(db):
    queue(db, "s1", "s2")
    assert work(db) == (2, 0)
    assert db.execute("select count(*) from memory.chunks").fetchone()[0] == 2
    assert db.execute("select array_agg(status) from memory.jobs").fetchone()[0] == ["done", "done"]
    assert work(db) == (0, 0)


def test_work_takes_at_most_max_jobs(db):
    queue(db, "s1", "s2", "s3")
    assert work(db, 2) == (2, 0)
    assert db.execute("select count(*) from memory.jobs where status = 'queued'").fetchone()[0] == 1


def test_chunks_embedded_ahead_for_several_sessions_and_tenants_get_their_own_vectors(db):
    said = {
        "a": ["The billing job broke after the vendor call.", "Maria's team owns the search index."],
        "b": ["The billing job broke after the vendor call.", "Nobody expected the outage on Friday."],
    }
    for tenant, texts in said.items():
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        for number, text in enumerate(texts):
            db.execute("select memory.commit(%s, %s)", (f"s{number}", Json([{"role": "assistant", "content": text}])))
    db.commit()
    db.autocommit = True
    assert work(db) == (4, 0)
    rows = db.execute(
        "select e.tenant_id, c.text, e.embedding <=> (memory.embed(array[c.text]))[1] "
        "from memory.chunk_embeddings as e inner join memory.chunks as c using (tenant_id, turn_id, chunk_no)"
    ).fetchall()
    assert sorted((tenant, text) for tenant, text, _ in rows) == sorted(
        (tenant, text) for tenant, texts in said.items() for text in texts
    )
    assert all(distance < 1e-6 for _, _, distance in rows)


def fail_embedding(db):
    db.execute("set memory.embedder = 'openai'")
    db.execute("set memory.openai_base_url = 'http://127.0.0.1:9/v1'")  # nothing listens on the discard port
    db.execute("set memory.http_retries = 0")


def test_a_failed_job_is_retried_after_a_backoff_with_its_error_kept(db):
    queue(db, "s1")
    fail_embedding(db)
    db.execute("set memory.queue_backoff_seconds = 60")
    assert work(db) == (0, 1)
    status, attempts, error = job(db)
    assert (status, attempts) == ("queued", 1) and "embedding failed: the endpoint could not be reached" in error
    waits = db.execute("select run_after - now() > interval '59 seconds' from memory.jobs").fetchone()[0]
    assert waits is True
    assert work(db) == (0, 0)  # not before its time


def test_a_job_that_keeps_failing_goes_dead(db):
    queue(db, "s1")
    fail_embedding(db)
    db.execute("set memory.queue_backoff_seconds = 0")
    db.execute("set memory.queue_max_attempts = 2")
    assert work(db) == (0, 1)
    assert work(db) == (0, 1)
    status, attempts, error = job(db)
    assert (status, attempts) == ("dead", 2) and "embedding failed" in error
    row = db.execute("select dead, queued from memory.queue_status where kind = 'enrich'").fetchone()
    assert row == (1, 0)


def test_a_job_whose_worker_died_is_reclaimed_after_its_lease_and_done_once(db):
    queue(db, "s1")
    with connect(db) as worker:
        worker.execute("set memory.queue_lease_seconds = 1")
        claimed = worker.execute("select job_id from memory_internal._claim_jobs(1, 'doomed')").fetchall()
        assert len(claimed) == 1
        db.execute("select pg_terminate_backend(%s)", (worker.info.backend_pid,))
    assert job(db)[:2] == ("running", 1)
    assert work(db) == (0, 0)  # still leased
    time.sleep(1.2)
    assert work(db) == (1, 0)
    assert job(db)[:2] == ("done", 2)
    assert db.execute("select count(*) from memory.chunks").fetchone()[0] == 1


def test_a_job_whose_workers_die_on_every_attempt_goes_dead(db):
    queue(db, "s1")
    db.execute("set memory.queue_max_attempts = 1")
    db.execute("set memory.queue_lease_seconds = 1")
    db.execute("select memory_internal._claim_jobs(1, 'doomed')")
    time.sleep(1.2)
    assert work(db) == (0, 0)
    status, attempts, error = job(db)
    assert (status, attempts) == ("dead", 1) and "worker doomed lost its lease on attempt 1" in error


def test_concurrent_workers_claim_different_jobs(db):
    queue(db, "s1", "s2")
    with connect(db) as a, connect(db) as b:
        a.autocommit = b.autocommit = False
        first = a.execute("select session_key from memory_internal._claim_jobs(1, 'a')").fetchall()
        second = b.execute("select session_key from memory_internal._claim_jobs(1, 'b')").fetchall()
        assert len(first) == len(second) == 1 and first != second
        a.rollback()
        b.rollback()
