"""The installed agent-memory command, run as a user would run it."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

CLI = str(Path(sys.executable).parent / "agent-memory")


def run(*args, env=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env={**os.environ, **(env or {})})


def test_health_as_json_reports_a_working_install(dsn):
    result = run("--dsn", dsn, "--json", "health")
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)
    assert (row["embedder"], row["embedder_loads"], row["problem"]) == ("local", True, None)


def test_health_for_people_is_one_field_a_line(dsn):
    result = run("--dsn", dsn, "health")
    assert "embedder_loads          True" in result.stdout


def test_database_url_is_used_when_no_dsn_is_given(dsn):
    result = run("--json", "health", env={"DATABASE_URL": dsn})
    assert result.returncode == 0, result.stderr


def test_unreachable_database_is_a_clear_error_and_exit_1():
    result = run("--dsn", "postgresql://postgres@/x?host=/nonexistent&port=1", "health")
    assert result.returncode == 1
    assert result.stderr.startswith("agent-memory: ") and "/nonexistent" in result.stderr


@pytest.fixture
def server_dir():
    directory = tempfile.mkdtemp(prefix="am-cli-")
    yield directory
    run("--dir", directory, "--port", "55499", "db", "stop")
    shutil.rmtree(directory, ignore_errors=True)


def test_local_server_lifecycle(server_dir):
    local = ("--dir", server_dir, "--port", "55499")
    assert run(*local, "db", "status").returncode == 3
    started = run(*local, "db", "start")
    assert started.returncode == 0 and started.stdout.startswith("started: postgresql://postgres@/postgres?host=")
    assert run(*local, "db", "start").stdout.startswith("already running")
    assert run(*local, "db", "status").stdout.startswith("running")
    installed = run(*local, "install")
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.strip().startswith("agent_memory ") and installed.stdout.strip().endswith(" installed")
    assert run(*local, "install").returncode == 0  # idempotent
    url = run(*local, "--dbname", "agent_memory", "db", "url").stdout.strip()
    assert url.endswith(f"/agent_memory?host={Path(server_dir).resolve()}/run&port=55499")
    assert run(*local, "db", "stop").stdout.strip() == "stopped"
    assert run(*local, "db", "stop").stdout.strip() == "not running"


def test_worker_once_runs_the_queue_and_reports_progress(db, dsn):
    db.execute(
        'select memory.commit(s, \'[{"role": "user", "content": "Deploy the auth service on Friday."}]\')'
        " from unnest(array['s1', 's2', 's3']) as s"
    )
    db.commit()
    result = run("--dsn", dsn, "worker", "--once", "--batch", "2")
    assert result.returncode == 0, result.stderr
    assert "2 done, 0 failed, 1 pending" in result.stdout
    assert result.stdout.strip().endswith("worker finished: 3 done, 0 failed")
    assert db.execute("select count(*) from memory.jobs where status = 'done'").fetchone()[0] == 3
