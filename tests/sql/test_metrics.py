"""memory.metrics: what recall, commit, feedback and enrichment counted, per tenant; counting never waits for
another session and never writes in a read-only transaction; maintenance folds ended backends' rows; and the
real postgres_exporter serves docs/prometheus-queries.yaml to Prometheus."""

import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Json

QUERIES = Path(__file__).resolve().parents[2] / "docs" / "prometheus-queries.yaml"
SAID = [
    {"role": "user", "content": "We moved the billing service to the new cluster on Monday."},
    {"role": "assistant", "content": "Good. Did the signing keys move with it?"},
]


def metrics(conn, tenant="default"):
    return {
        (metric, label): value
        for metric, label, value in conn.execute(
            "select metric, label, value from memory.metrics where tenant_id = %s", (tenant,)
        )
    }


def test_recall_commit_feedback_and_enrichment_are_counted(db):
    db.execute("select memory.commit('billing', %s, enrich => 'now')", (Json(SAID),))
    for _ in range(3):
        db.execute("select * from memory.recall('signing keys')").fetchall()
    db.execute("select * from memory.explain_recall('signing keys')").fetchall()  # explaining is not a recall
    db.execute("select memory.give_feedback('helpful', turn_id => (select min(turn_id) from memory.turns))")
    db.execute("select * from memory.recall('billing', weights => '{\"embedder\": \"none\"}')").fetchall()
    counted = metrics(db)
    assert counted[("recalls", "")] == 4 and counted[("recalls_degraded", "")] == 1
    assert counted[("recall_duration_seconds_bucket", "+Inf")] == 4
    buckets = [value for (metric, _), value in sorted(counted.items()) if metric == "recall_duration_seconds_bucket"]
    assert len(buckets) == 12 and max(buckets) == 4
    assert 0 < counted[("recall_duration_seconds_sum", "")] < 60
    assert (counted[("commits", "")], counted[("turns_committed", "")], counted[("turns_indexed", "")]) == (1, 2, 2)
    assert counted[("feedback", "helpful")] == 1
    assert (counted[("chunks_indexed", "")], counted[("sessions", "hot")]) == (2, 1)
    kinds = dict(db.execute("select metric, kind from memory.metric_definitions()").fetchall())
    assert {metric for metric, _ in counted} <= kinds.keys()


def test_a_read_only_transaction_counts_nothing_and_the_queue_is_read_live(db):
    db.execute("select memory.commit('billing', %s)", (Json(SAID),))  # queued
    db.commit()
    db.execute("set transaction read only")
    db.execute("select * from memory.recall('signing keys')").fetchall()
    counted = metrics(db)
    db.rollback()
    assert ("recalls", "") not in counted
    assert counted[("queue_jobs", "queued")] == 1 and counted[("queue_oldest_queued_seconds", "")] >= 0


def test_counting_never_waits_for_another_sessions_transaction(db, dsn):
    db.execute("select memory.commit('billing', %s, enrich => 'now')", (Json(SAID),))
    db.commit()
    with psycopg.connect(dsn) as first, psycopg.connect(dsn, autocommit=True) as second:
        first.execute("select * from memory.recall('signing keys')").fetchall()  # holds its counters' rows
        second.execute("set lock_timeout = '2s'")
        second.execute("select * from memory.recall('signing keys')").fetchall()
        first.commit()
    assert metrics(db)[("recalls", "")] == 2


def test_maintenance_folds_the_rows_of_ended_backends(db, dsn):
    with psycopg.connect(dsn, autocommit=True) as gone:
        gone.execute("select memory.commit('billing', %s)", (Json(SAID),))
    db.commit()
    db.autocommit = True
    db.execute("select memory.commit('other', %s)", (Json(SAID),))
    assert db.execute("select count(distinct backend) from memory.metric_counts").fetchone()[0] == 2
    time.sleep(0.2)  # the ended backend leaves pg_stat_activity
    db.execute("call memory.maintain()")
    (folded,) = db.execute("select actions -> 'metric_rows_folded' from memory.maintenance_runs").fetchone()
    assert folded == 2  # commits and turns_committed of the ended backend
    assert sorted(r[0] for r in db.execute("select distinct backend from memory.metric_counts")) == [
        0,
        db.info.backend_pid,
    ]
    assert metrics(db)[("commits", "")] == 2


def test_a_tenant_reads_only_its_own_metrics(db, logins):
    acme, globex = logins.create(tenant="acme"), logins.create(tenant="globex")
    acme.execute("select memory.commit('billing', %s)", (Json(SAID),))
    globex.execute("select memory.commit('billing', %s)", (Json(SAID),))
    globex.execute("select memory.commit('more', %s)", (Json(SAID),))
    assert {row[0] for row in acme.execute("select tenant_id from memory.metrics")} == {"acme"}
    assert metrics(acme, "acme")[("commits", "")] == 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # counters are the API's to write
        acme.execute("update memory.metric_counts set value = 0 where tenant_id = 'acme'")
    assert metrics(globex, "globex")[("commits", "")] == 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scrape(url: str, deadline: float) -> str:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                text = response.read().decode()
            if "agent_memory_" in text:
                return text
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"postgres_exporter served no agent_memory metrics at {url}")
        time.sleep(0.2)


def test_postgres_exporter_serves_every_tenants_metrics_to_prometheus(db, logins):
    exporter = shutil.which("prometheus-postgres-exporter")
    assert exporter, "make provision installs prometheus-postgres-exporter (Debian's package)"
    for tenant in ("acme", "globex"):
        db.execute("select set_config('memory.tenant_id', %s, false)", (tenant,))
        db.execute("select memory.commit('billing', %s, enrich => 'now')", (Json(SAID),))
        db.execute("select * from memory.recall('signing keys')").fetchall()
    # Something for every query of the file: a degraded recall, a verdict, a queued job.
    db.execute("select * from memory.recall('billing', weights => '{\"embedder\": \"none\"}')").fetchall()
    db.execute("select memory.give_feedback('unhelpful', turn_id => (select max(turn_id) from memory.turns))")
    db.execute("select memory.commit('later', %s)", (Json(SAID),))
    db.commit()
    monitor = logins.create(grant="memory_admin")
    user = monitor.info.user
    info = db.info
    port = free_port()
    source = f"host={info.host} port={info.port} dbname={info.dbname} user={user} sslmode=disable"
    process = subprocess.Popen(
        [
            exporter,
            "--disable-default-metrics",
            "--disable-settings-metrics",
            f"--extend.query-path={QUERIES}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        env={"DATA_SOURCE_NAME": source, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        text = scrape(f"http://127.0.0.1:{port}/metrics", time.monotonic() + 20)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=10)
    series = {}
    for line in text.splitlines():
        found = re.match(r"(agent_memory_\w+)\{(.*)\} (\S+)$", line)
        if found:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', found.group(2)))
            labels.pop("server", None)
            series[(found.group(1), tuple(sorted(labels.items())))] = float(found.group(3))
    for tenant, recalls in (("acme", 1), ("globex", 2)):
        assert series[("agent_memory_recalls_total", (("tenant", tenant),))] == recalls, errors
        assert series[("agent_memory_recall_duration_seconds_bucket", (("le", "+Inf"), ("tenant", tenant)))] == recalls
        assert series[("agent_memory_recall_duration_seconds_count", (("tenant", tenant),))] == recalls
        assert series[("agent_memory_tier_sessions", (("tenant", tenant), ("tier", "hot")))] >= 1
        assert series[("agent_memory_chunks_indexed", (("tenant", tenant),))] == 2
    assert series[("agent_memory_feedback_total", (("tenant", "globex"), ("verdict", "unhelpful")))] == 1
    assert series[("agent_memory_queue_jobs", (("status", "queued"), ("tenant", "globex")))] == 1
    # Every query of the file gives series.
    queries = set(re.findall(r"^(agent_memory_\w+):", QUERIES.read_text(), re.MULTILINE))
    served = {query for query in queries if any(name.startswith(query + "_") for name, _ in series)}
    assert served == queries
