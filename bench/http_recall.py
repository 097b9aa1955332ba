"""Recall over HTTP (`agent-memory serve`) against the same recall in SQL, with 1 and 8 concurrent clients.

    .venv/bin/python bench/http_recall.py [--conversations 2] [--requests 240] [--clients 1 8]

Loads the first `conversations` LoCoMo conversations (LOCOMO_DIR, default ../shared/bench/locomo) into tenant
'bench' of a fresh database bench_http: memory.commit, then the queue on two workers. Both sides then ask
the same questions (the conversations' own, in turn) as memory.recall(question, k => 10):

- SQL: each client is a connection of a login bound to tenant bench (row-level security on, as deployed),
  running `select * from memory.recall(%s, k => 10)` and fetching every row;
- HTTP: each client POSTs {"query": ..., "k": 10} to /v1/recall of `agent-memory serve` (its own process,
  logged in as a member of memory_http, one uvicorn worker, 10 database connections) with an API key whose
  role is that same login, and reads the JSON.

Each client is a thread of this process with its own connection; clients share the `requests` of a run
evenly, after one warm-up request each (and both sides first ask every question twice, untimed). Prints,
for each number of clients and each side, requests per second, p50 and p95 latency, and HTTP's ratios to
SQL's in the same run. Writes bench/results/http-recall.json.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import psycopg
from common import ROOT, fresh_database, run_queue, save
from conversations import LOCOMO_DIR, messages, scorer
from psycopg import sql
from psycopg.types.json import Json

TENANT_LOGIN = "agent_memory_bench_tenant"
SERVER_LOGIN = "agent_memory_bench_http"


def loaded(conversations: list[dict]) -> tuple[str, str, str]:
    """A database holding the conversations in tenant bench; URLs of the tenant's login and the server's, and a
    key whose role is the tenant's login."""
    url = fresh_database("bench_http")
    with psycopg.connect(url, autocommit=True) as conn:
        for login, group in ((TENANT_LOGIN, "memory_tenant"), (SERVER_LOGIN, "memory_http")):
            if conn.execute("select 1 from pg_roles where rolname = %s", (login,)).fetchone() is None:
                conn.execute(sql.SQL("create role {} login").format(sql.Identifier(login)))
            conn.execute(sql.SQL("grant {} to {}").format(sql.Identifier(group), sql.Identifier(login)))
        conn.execute(sql.SQL("grant {} to memory_http").format(sql.Identifier(TENANT_LOGIN)))
        conn.execute("select memory.bind_tenant_role(%s, 'bench')", (TENANT_LOGIN,))
        conn.execute("select set_config('memory.tenant_id', 'bench', false)")
        for conversation in conversations:
            for session in conversation["sessions"]:
                conn.execute(
                    "select memory.commit(%s, %s, agent_id => %s, started_at => %s)",
                    (
                        session["session_id"],
                        Json(messages(session)),
                        conversation["conversation_id"],
                        session["timestamp"],
                    ),
                )
        key = conn.execute("select api_key from memory.create_api_key('bench', %s)", (TENANT_LOGIN,)).fetchone()[0]
    run_queue(url, 2)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("vacuum analyze")
    as_login = lambda login: url.replace("postgresql://postgres@", f"postgresql://{login}@", 1)  # noqa: E731
    return as_login(TENANT_LOGIN), as_login(SERVER_LOGIN), key


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(dsn: str) -> tuple[subprocess.Popen[bytes], str]:
    """`agent-memory serve` in its own process; its address once /health answers."""
    port = free_port()
    command = [
        str(ROOT / ".venv" / "bin" / "agent-memory"),
        "--dsn",
        dsn,
        "serve",
        "--http-port",
        str(port),
        "--log-level",
        "warning",
        "--requests-per-minute",
        "1000000",
    ]
    process = subprocess.Popen(command, env={**os.environ, "DATABASE_URL": dsn})
    address = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(address + "/health", timeout=1).status_code == 200:
                return process, address
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    sys.exit("agent-memory serve did not answer /health within 60 s")


def run(
    clients: int, requests: int, questions: list[str], connect: Callable[[], Any], ask: Callable[[Any, str], int]
) -> dict:
    """`requests` recalls over `clients` threads, each with its own connection; rate and latency."""
    latencies: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def client(number: int) -> None:
        handle = connect()
        ask(handle, questions[number % len(questions)])  # warm-up: not counted
        barrier.wait()
        mine = []
        for n in range(number, requests, clients):
            started = time.perf_counter()
            assert ask(handle, questions[n % len(questions)]) > 0
            mine.append((time.perf_counter() - started) * 1000)
        with lock:
            latencies.extend(mine)
        handle.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    latencies.sort()
    return {
        "requests_per_second": round(len(latencies) / seconds, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
    }


def sql_side(url: str) -> tuple[Callable[[], Any], Callable[[Any, str], int]]:
    def ask(conn: psycopg.Connection, question: str) -> int:
        return len(conn.execute("select * from memory.recall(%s, k => 10)", (question,)).fetchall())

    return lambda: psycopg.connect(url, autocommit=True), ask


def http_side(address: str, key: str) -> tuple[Callable[[], Any], Callable[[Any, str], int]]:
    def ask(client: httpx.Client, question: str) -> int:
        answer = client.post("/v1/recall", json={"query": question, "k": 10})
        answer.raise_for_status()
        return len(answer.json()["hits"])

    return lambda: httpx.Client(base_url=address, headers={"Authorization": f"Bearer {key}"}, timeout=60), ask


def main(count: int, requests: int, clients: list[int]) -> None:
    conversations = scorer().load_converted(str(LOCOMO_DIR / "locomo10.json"))[:count]
    questions = [q["question"] for c in conversations for q in c["questions"]]
    tenant_url, server_url, key = loaded(conversations)
    process, address = serve(server_url)
    rows = []
    try:
        for side in (sql_side(tenant_url), http_side(address, key)):  # caches and the server's pool, warm
            run(2, 2 * len(questions), questions, *side)
        for number in clients:
            measured = {
                "sql": run(number, requests, questions, *sql_side(tenant_url)),
                "http": run(number, requests, questions, *http_side(address, key)),
            }
            ratios = {
                "p50": round(measured["http"]["p50_ms"] / measured["sql"]["p50_ms"], 2),
                "p95": round(measured["http"]["p95_ms"] / measured["sql"]["p95_ms"], 2),
                "requests_per_second": round(
                    measured["http"]["requests_per_second"] / measured["sql"]["requests_per_second"], 2
                ),
            }
            rows.append({"clients": number, **measured, "http_to_sql": ratios})
            for side in ("sql", "http"):
                got = measured[side]
                print(
                    f"{number} client(s), {side:>4}: {got['requests_per_second']:>6} req/s, "
                    f"p50 {got['p50_ms']} ms, p95 {got['p95_ms']} ms"
                )
            print(
                f"{number} client(s), http/sql: p50 x{ratios['p50']}, p95 x{ratios['p95']}, "
                f"req/s x{ratios['requests_per_second']}"
            )
    finally:
        process.terminate()
        process.wait(30)
    path = save(
        "http-recall.json",
        {
            "conversations": count,
            "questions": len(questions),
            "requests": requests,
            "k": 10,
            "role": "tenant",
            "runs": rows,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--requests", type=int, default=240)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    arguments = parser.parse_args()
    main(arguments.conversations, arguments.requests, arguments.clients)
