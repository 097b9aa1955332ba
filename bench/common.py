"""Shared by the benchmarks: a fresh database with the extension, running the queue, results files."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT / "python-client"))
sys.path.insert(0, str(ROOT / "plpython"))

from agent_memory.localdb import DEFAULT_PORT, LocalServer  # noqa: E402

SERVER = LocalServer(
    directory=Path(os.environ.get("AGENT_MEMORY_HOME", ROOT / ".agent-memory")).resolve(),
    port=int(os.environ.get("AGENT_MEMORY_PORT", DEFAULT_PORT)),
)


def fresh_database(name: str) -> str:
    """Drops and re-creates a database with the extension; returns its URL."""
    with psycopg.connect(SERVER.url(), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
    url = SERVER.url(name)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("create extension agent_memory cascade")
    return url


ROLES = ("superuser", "app")
APP_ROLE = "agent_memory_bench_app"


def connect_as(url: str, role: str) -> str:
    """The URL to measure with: the database's own superuser, or (app) a login granted memory_app, which
    works as the tenant 'default' under row-level security, as an application is deployed."""
    if role == "superuser":
        return url
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("select 1 from pg_roles where rolname = %s", (APP_ROLE,)).fetchone() is None:
            conn.execute(sql.SQL("create role {} login").format(sql.Identifier(APP_ROLE)))
        conn.execute(sql.SQL("grant memory_app to {}").format(sql.Identifier(APP_ROLE)))
    return url.replace("postgresql://postgres@", f"postgresql://{APP_ROLE}@", 1)


def machine() -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "commit": commit.stdout.strip(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def save(name: str, results: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps({"machine": machine(), **results}, indent=2) + "\n")
    return path


def run_queue(url: str, workers: int, batch: int = 10) -> float:
    """Runs the enrichment queue to the end on `workers` connections; returns the seconds it took.

    Each worker loads the embedding model, if one is configured, before the clock starts (a once-per-backend
    cost)."""
    ready = threading.Barrier(workers + 1)
    failures: list[str] = []

    def worker() -> None:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                # No model to load for embedder none, nor for client (the caller's vectors).
                conn.execute(
                    "select memory.embed(array['warm up']) from memory.embedding_model() where provider <> 'client'"
                )
                ready.wait()
                while True:
                    processed, failed = conn.execute("call memory.work(%s)", (batch,)).fetchone()
                    if failed:
                        failures.append(f"{failed} jobs failed")
                    if processed + failed == 0:
                        return
        except BaseException as error:  # any failure is reported below; none may leave the clock waiting
            failures.append(repr(error))
            ready.abort()  # the others, and the clock, do not wait for this worker

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a worker failed: reported below
        ready.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    with psycopg.connect(url) as conn:
        dead, left = conn.execute(
            "select count(*) filter (where status = 'dead'), count(*) filter (where status in ('queued', 'running'))"
            " from memory.jobs where kind = 'enrich'"
        ).fetchone()
    if failures or dead or left:
        raise RuntimeError(f"enrichment failed: {failures}, {dead} dead jobs, {left} jobs left")
    return seconds


def on_two_connections(work: Callable[[int, threading.Event], None]) -> None:
    """Runs work(0, failed) and work(1, failed) in two threads; `failed` is set once either raises, so that the
    other may stop early, and the first error is raised once both have stopped."""
    failed = threading.Event()
    errors: list[BaseException] = []

    def run(number: int) -> None:
        try:
            work(number, failed)
        except BaseException as error:  # raised below, once both have stopped
            errors.append(error)
            failed.set()

    threads = [threading.Thread(target=run, args=(number,)) for number in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
