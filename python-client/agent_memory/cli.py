"""The agent-memory command."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agent_memory.localdb import DEFAULT_PORT, LocalServer, LocalServerError


def _local_server(args: argparse.Namespace) -> LocalServer:
    return LocalServer(directory=Path(args.dir).resolve(), port=args.port)


def _dsn(args: argparse.Namespace) -> str:
    """--dsn, else DATABASE_URL, else the local server's database named by --dbname."""
    return args.dsn or os.environ.get("DATABASE_URL") or _local_server(args).url(args.dbname)


def _print_rows(rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, default=str, indent=2))
        return
    for row in rows:
        width = max(len(key) for key in row)
        for key, value in row.items():
            print(f"{key:<{width}}  {'' if value is None else value}")
        print()


def cmd_db(args: argparse.Namespace) -> int:
    server = _local_server(args)
    if args.action == "start":
        started = server.start()
        print(f"{'started' if started else 'already running'}: {server.url()}")
    elif args.action == "stop":
        print("stopped" if server.stop() else "not running")
    elif args.action == "status":
        running = server.running()
        print(f"{'running' if running else 'stopped'}: {server.url()}")
        return 0 if running else 3
    else:
        print(server.url(args.dbname))
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    """Creates the database if it is the local server's, then the extension in it."""
    if not args.dsn and not os.environ.get("DATABASE_URL"):
        with psycopg.connect(_local_server(args).url(), autocommit=True) as conn:
            exists = conn.execute("select 1 from pg_database where datname = %s", (args.dbname,)).fetchone()
            if not exists:
                conn.execute(sql.SQL("create database {}").format(sql.Identifier(args.dbname)))
    with psycopg.connect(_dsn(args), autocommit=True) as conn:
        conn.execute("create extension if not exists agent_memory cascade")
        conn.execute("alter extension agent_memory update")
        version = conn.execute("select memory.version()").fetchone()
    print(f"agent_memory {version[0] if version else '?'} installed")
    return 0


def cmd_health(args: argparse.Namespace) -> int:
    with psycopg.connect(_dsn(args), row_factory=dict_row) as conn:
        rows = conn.execute("select * from memory.health()").fetchall()
    _print_rows(rows, args.json)
    return 0 if rows and rows[0]["problem"] is None else 1


def cmd_worker(args: argparse.Namespace) -> int:
    """Runs queued enrichment jobs until stopped (or, with --once, until the queue is empty)."""
    done = failed = 0
    started = time.monotonic()
    with psycopg.connect(_dsn(args), autocommit=True) as conn:
        while True:
            row = conn.execute("call memory.work(%s)", (args.batch,)).fetchone()
            processed, errors = row if row else (0, 0)
            done, failed = done + processed, failed + errors
            pending = conn.execute("select count(*) from memory.jobs where status in ('queued', 'running')").fetchone()
            left = pending[0] if pending else 0
            if processed or errors:
                rate = done / max(time.monotonic() - started, 1e-9)
                eta = f", about {left / rate:.0f} s left" if rate and left else ""
                print(f"{done} done, {failed} failed, {left} pending ({rate:.1f} jobs/s{eta})", flush=True)
            if processed + errors == 0:
                if args.once:
                    break
                time.sleep(args.idle_seconds)
    print(f"worker finished: {done} done, {failed} failed")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-memory", description="Long-term memory for AI agents in PostgreSQL.")
    parser.add_argument("--dsn", help="connection string (default: $DATABASE_URL, else the local server)")
    parser.add_argument(
        "--dir",
        default=os.environ.get("AGENT_MEMORY_HOME", ".agent-memory"),
        help="local server directory (default: $AGENT_MEMORY_HOME or ./.agent-memory)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("AGENT_MEMORY_PORT", DEFAULT_PORT)),
        help=f"local server port (default: $AGENT_MEMORY_PORT or {DEFAULT_PORT})",
    )
    parser.add_argument("--dbname", default="agent_memory", help="database on the local server")
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    commands = parser.add_subparsers(dest="command", required=True)

    db = commands.add_parser("db", help="run the local PostgreSQL server")
    db.add_argument("action", choices=["start", "stop", "status", "url"])
    db.set_defaults(func=cmd_db)

    install = commands.add_parser("install", help="create (or update) the extension in the database")
    install.set_defaults(func=cmd_install)

    health = commands.add_parser("health", help="show versions and whether the embedder loads")
    health.set_defaults(func=cmd_health)
    worker = commands.add_parser("worker", help="run queued enrichment jobs (memory.work) in a loop")
    worker.add_argument("--batch", type=int, default=20, help="jobs per memory.work call (default 20)")
    worker.add_argument("--once", action="store_true", help="stop when no job is left to run")
    worker.add_argument("--idle-seconds", type=float, default=2.0, help="wait when the queue is empty (default 2)")
    worker.set_defaults(func=cmd_worker)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except (LocalServerError, psycopg.Error) as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
