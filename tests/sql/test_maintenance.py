"""call memory.maintain(): queue cleanup, retiring an embedding model's vectors after the swap, one run at
a time, administrators only, and scheduled through the real pg_cron."""

import time
import uuid

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

SESSION = [
    {"role": "user", "content": "We moved the billing service to the new cluster on Monday."},
    {"role": "assistant", "content": "Good. Did the signing keys move with it?"},
]


def runs(db):
    return db.execute("select status, actions from memory.maintenance_runs order by run_id").fetchall()


def test_maintain_deletes_old_finished_jobs_and_keeps_the_rest(db):
    for number in range(3):
        db.execute("select memory.commit(%s, %s)", (f"s{number}", Json(SESSION)))
    db.commit()
    db.autocommit = True
    db.execute("call memory.work()")
    assert db.execute("select count(*) from memory.jobs where status = 'done'").fetchone()[0] == 3
    db.execute(
        "update memory.jobs set finished_at = now() - interval '8 days'"
        " where job_id = (select min(job_id) from memory.jobs)"
    )
    db.execute(
        "update memory.jobs set status = 'dead', finished_at = now() - interval '30 days'"
        " where job_id = (select max(job_id) from memory.jobs)"
    )
    db.execute("call memory.maintain()")
    assert db.execute("select status from memory.jobs order by job_id").fetchall() == [("done",), ("dead",)]
    nothing_else = {
        "graph_joined": {},
        "tiers_moved": {},
        "retention": {},
        "metric_rows_folded": 0,
        "tenant_graphs_due": 0,
        "models_retired": [],
        "vectors_dropped": {},
    }
    assert runs(db) == [("done", {"jobs_deleted": 1, **nothing_else})]
    db.execute("call memory.maintain()")
    assert runs(db)[-1] == ("done", {"jobs_deleted": 0, **nothing_else})


def test_a_second_run_while_one_is_running_is_skipped(db, dsn):
    db.execute("call memory.maintain()")  # holds the run's lock until this transaction ends
    with psycopg.connect(dsn, autocommit=True) as other:
        other.execute("call memory.maintain()")
    db.rollback()
    assert runs(db) == [("skipped", {})]


def test_only_an_administrator_maintains(db, logins):
    for conn in (logins.create(tenant="acme"), logins.create()):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("call memory.maintain()")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select memory_internal._retire_models()")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select * from memory.maintenance_runs")
    admin = logins.create(grant="memory_admin")
    admin.execute("call memory.maintain()")
    assert admin.execute("select status, run_by from memory.maintenance_runs").fetchall() == [("done", admin.info.user)]


def vectors(db, model):
    return db.execute("select count(*) from memory.chunk_embeddings where model = %s", (model,)).fetchone()[0]


def configure_embedder(db, stub):
    """The administrator's configuration (memory.config) chooses the stub's model for every tenant."""
    rows = {
        "embedder": "openai",
        "openai_base_url": stub.base_url,
        "openai_embedding_model": "stub-embed",
        "openai_embedding_dimensions": stub.dimensions,
    }
    for key, value in rows.items():
        db.execute("insert into memory.config (key, value) values (%s, %s)", (key, Jsonb(value)))
    db.execute("select memory.set_secret('openai_api_key', 'sk-test')")


def test_after_a_model_swap_the_old_vectors_go_after_the_grace_period(db, dsn, http_stub):
    db.execute("select memory.commit('s1', %s, enrich => 'now')", (Json(SESSION),))
    configure_embedder(db, http_stub)
    db.execute("select memory.commit('s2', %s, enrich => 'now')", (Json(SESSION),))
    # While the new model is built, recall keeps the old one's vectors and maintenance keeps them.
    db.execute("call memory.maintain()")
    assert db.execute("select memory.recall_model()").fetchone()[0] == "all-MiniLM-L6-v2"
    assert runs(db)[-1][1]["models_retired"] == []
    db.execute("select memory.reembed(100)")
    assert db.execute("select memory.recall_model()").fetchone()[0] == "stub-embed"

    # A tenant whose own settings still choose the old model keeps it; a session's settings do not.
    db.execute("insert into memory.config (tenant_id, key, value) values ('acme', 'embedder', '\"local\"')")
    db.execute("set memory.embedder = 'none'")
    db.execute("call memory.maintain()")
    assert runs(db)[-1][1]["models_retired"] == []
    db.execute("delete from memory.config where tenant_id = 'acme'")
    db.execute("call memory.maintain()")
    assert runs(db)[-1][1]["models_retired"] == ["all-MiniLM-L6-v2"]
    assert vectors(db, "all-MiniLM-L6-v2") == 2  # within the grace period
    db.execute("update memory.embedding_models set retired_at = now() - interval '25 hours' where state = 'retired'")
    db.commit()
    # A long query on the vectors: the drop gives up after its lock timeout instead of stalling every query.
    with psycopg.connect(dsn) as reader:
        reader.execute("select count(*) from memory.chunk_embeddings")
        db.execute("call memory.maintain()")
        assert runs(db)[-1][1]["vectors_dropped"] == {}
        assert vectors(db, "all-MiniLM-L6-v2") == 2
    db.execute("call memory.maintain()")
    assert runs(db)[-1][1]["vectors_dropped"] == {"all-MiniLM-L6-v2": {"chunk_vectors": 2, "session_vectors": 1}}
    assert vectors(db, "all-MiniLM-L6-v2") == 0
    suffix = db.execute("select left(md5('all-MiniLM-L6-v2'), 10)").fetchone()[0]
    indexes = db.execute("select count(*) from pg_indexes where indexname like %s", ("%_hnsw_" + suffix,))
    assert indexes.fetchone()[0] == 0
    db.execute("call memory.maintain()")
    assert runs(db)[-1][1]["vectors_dropped"] == {}

    # Chosen again, the retired model is built again, its index with it.
    db.execute("reset memory.embedder")
    db.execute("delete from memory.config where key = 'embedder'")
    db.execute("select memory.commit('s3', %s, enrich => 'now')", (Json(SESSION),))
    assert db.execute(
        "select state, retired_at from memory.embedding_models where model = 'all-MiniLM-L6-v2'"
    ).fetchone() == ("building", None)
    assert (
        db.execute("select count(*) from pg_indexes where indexname like %s", ("%_hnsw_" + suffix,)).fetchone()[0] == 2
    )
    db.execute("select memory.reembed(100)")
    assert db.execute("select memory.recall_model()").fetchone()[0] == "all-MiniLM-L6-v2"
    assert vectors(db, "all-MiniLM-L6-v2") == 6


def test_pg_cron_runs_maintain_on_schedule(db):
    """The real pg_cron of the local server (shared_preload_libraries), scheduling into the test's database."""
    db.commit()
    info = db.info
    name = f"am-test-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(host=info.host, port=info.port, dbname="postgres", user="postgres", autocommit=True) as cron:
        cron.execute("create extension if not exists pg_cron")
        cron.execute(
            "select cron.schedule_in_database(%s, '* * * * *', 'call memory.maintain()', %s)", (name, info.dbname)
        )
        try:
            deadline = time.monotonic() + 130
            while time.monotonic() < deadline and not runs(db):
                db.rollback()
                time.sleep(2)
            assert runs(db) and runs(db)[0][0] == "done"
            assert db.execute("select run_by from memory.maintenance_runs").fetchone()[0] == "postgres"
        finally:
            cron.execute("select cron.unschedule(%s)", (name,))
