"""Running memory: the local server, the extension, health, the queue's worker, statistics and metrics,
re-indexing, and the ways agents reach it (the MCP server, Claude Code hooks) and the demo."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from agent_memory import hooks, notifications, upgrade, watch
from agent_memory.backup import DEFAULT_DAYS, Backup
from agent_memory.client import Memory
from agent_memory.commands import (
    Args,
    Command,
    Option,
    Tool,
    answers,
    dsn,
    home,
    local_server,
    memory,
    record,
    said,
    table,
)
from agent_memory.errors import InvalidInput
from agent_memory.formatting import plain, print_json, print_table
from agent_memory.localdb import HOME_RULE, LocalServer
from agent_memory.progress import Progress
from agent_memory.spool import Spool


def database(args: Args) -> int:
    if args.action == "upgrade":
        return _upgrade(args)
    if args.check:
        raise InvalidInput("--check goes with db upgrade")
    chosen = home(args)
    server = LocalServer(directory=chosen.directory, port=args.port)
    if args.action == "start":
        started = server.start()
        print(f"{'started' if started else 'already running'}: {server.url()}")
        return 0
    if args.action == "stop":
        print("stopped" if server.stop() else "not running")
        return 0
    running = server.running()
    if not running:
        print(
            f"agent-memory: no server running in {chosen.directory} (chosen as {chosen.reason}); choose another"
            " with --dir or $AGENT_MEMORY_HOME, or use --dsn or $DATABASE_URL for any database",
            file=sys.stderr,
        )
    if args.action == "status":
        print(f"{'running' if running else 'stopped'}: {server.url()}")
        if running:
            _print_extension_state(server.url(args.dbname), args.dbname)
        return 0 if running else 3
    print(server.url(args.dbname))
    return 0


def _print_extension_state(url: str, dbname: str) -> None:
    """The extension in the local server's database against the one on its disk."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            print(upgrade.extension_state(conn).describe())
    except psycopg.OperationalError as error:
        print(f"database {dbname}: {str(error).strip().splitlines()[-1]}")


def _upgrade(args: Args) -> int:
    """db upgrade: ALTER EXTENSION agent_memory UPDATE in the database when one is pending; --check changes
    nothing and exits 1 when one is."""
    with psycopg.connect(dsn(args), autocommit=True) as conn:
        if args.check:
            state = upgrade.extension_state(conn)
            print(state.describe())
            return 1 if state.pending else 0
        before, after = upgrade.upgrade(conn)
    if before.pending:
        print(f"agent_memory upgraded in database {after.database}: {before.steps()}")
    else:
        print(after.describe())
    return 0 if after.installed is not None and after.installed == after.available else 1


def install(args: Args) -> int:
    """Creates the database if it is the local server's, then the extension in it."""
    if not args.dsn and not os.environ.get("DATABASE_URL"):
        with psycopg.connect(local_server(args).url(), autocommit=True) as conn:
            exists = conn.execute("select 1 from pg_database where datname = %s", (args.dbname,)).fetchone()
            if not exists:
                conn.execute(sql.SQL("create database {}").format(sql.Identifier(args.dbname)))
    with psycopg.connect(dsn(args), autocommit=True) as conn:
        conn.execute("create extension if not exists agent_memory cascade")
        upgrade.upgrade(conn)
        version = conn.execute("select memory.version()").fetchone()
    print(f"agent_memory {version[0] if version else '?'} installed")
    return 0


def work_queue(args: Args) -> int:
    """Runs queued enrichment jobs until stopped (or, with --once, until the queue is empty)."""
    done = failed = 0
    progress: Progress | None = None
    with psycopg.connect(dsn(args), autocommit=True) as conn:
        while True:
            row = conn.execute("call memory.work(max_jobs => %s)", (args.max_jobs,)).fetchone()
            processed, errors = row if row else (0, 0)
            done, failed = done + processed, failed + errors
            if processed or errors:
                if progress is None:
                    pending = conn.execute("select count(*) from memory.jobs where status in ('queued', 'running')")
                    left = (pending.fetchone() or (0,))[0]
                    progress = Progress("enrichment", done + failed + left, "jobs")
                progress.advance(processed + errors)
            elif args.once:
                break
            else:
                time.sleep(args.idle_seconds)
    if progress is not None:
        progress.finish()
    print(f"work finished: {done} done, {failed} failed")
    return 0 if failed == 0 else 1


GRAPH_NAME = re.compile(r"chunk_embeddings_hnsw_tenant_[0-9a-f]{32}")
# One `agent-memory graphs` at a time: a second one would take the first one's graph, under way, for invalid.
GRAPHS_LOCK = 0x616D_6772  # "amgr"


def graph_statement(
    action: str, index_name: str, dimensions: int | None, model: str | None, tenant: str | None
) -> sql.Composed:
    """The statement for one row of memory.tenant_graph_statements(), written here from its columns (not the
    text a function of the extension's owner made, which a superuser would run)."""
    if not GRAPH_NAME.fullmatch(index_name):
        raise InvalidInput(f"tenant_graph_statements() named an index {index_name!r} that is no tenant's graph")
    if action != "create":
        return sql.SQL("drop index concurrently if exists memory.{}").format(sql.Identifier(index_name))
    return sql.SQL(
        "create index concurrently if not exists {} on memory.chunk_embeddings using hnsw"
        " ((embedding::halfvec({})) halfvec_cosine_ops) where model = {} and in_graph and not cold and tenant_id = {}"
    ).format(sql.Identifier(index_name), sql.Literal(int(dimensions or 0)), sql.Literal(model), sql.Literal(tenant))


def tenant_graphs(args: Args) -> int:
    """Builds and drops the HNSW graphs of big tenants that memory.tenant_graph_statements() says are due, each
    statement on its own (`concurrently` runs in no transaction); --check lists them and exits 1 when any is."""
    with psycopg.connect(dsn(args), autocommit=True) as conn:
        locked = None if args.check else conn.execute("select pg_try_advisory_lock(%s)", (GRAPHS_LOCK,)).fetchone()
        if not args.check and not (locked and locked[0]):
            raise InvalidInput("another `agent-memory graphs` is building this database's graphs; try again later")
        due = conn.execute(
            "select tenant_id, model, action, chunks, index_name, dimensions from memory.tenant_graph_statements()"
        ).fetchall()
        for tenant, model, action, chunks, index_name, dimensions in due:
            what = (
                f"{action}: tenant {tenant} ({chunks} chunks), model {model}" if tenant else f"{action}: {index_name}"
            )
            if args.check:
                print(what)
                continue
            started = time.perf_counter()
            conn.execute(graph_statement(action, index_name, dimensions, model, tenant))
            print(f"{what} ({time.perf_counter() - started:.1f} s)")
    if not due:
        print("no tenant graph to build or drop")
    return 1 if args.check and due else 0


def watch_metrics(args: Args) -> int:
    """memory.metrics every --watch seconds (--count times, else until interrupted): per tenant, what
    changed since the last reading; with --json, one JSON object a reading."""
    if args.watch <= 0 or (args.count is not None and args.count < 1):
        raise InvalidInput("--watch needs a positive number of seconds and --count at least 1")
    previous, taken = None, None
    readings = 0
    with memory(args) as client:
        while args.count is None or readings < args.count:
            if readings:
                time.sleep(args.watch)
            metrics, now = client.metrics(), time.monotonic()
            at = datetime.now().astimezone().isoformat(timespec="seconds")
            if args.json:
                print(json.dumps({"at": at, "metrics": plain(metrics)}))  # one line a reading
            else:
                current = watch.reading(metrics)
                print(at)
                for line in watch.report(previous, current, now - taken if taken else 0.0) or ["no metrics yet"]:
                    print(line)
                previous = current
            taken = now
            readings += 1
            sys.stdout.flush()
    return 0


def claude_hook(args: Args) -> int:
    def connect(seconds: float) -> Memory:
        return Memory(hooks.bounded(dsn(args), seconds), tenant=args.tenant, max_connections=1)

    return hooks.run(
        args.event,
        sys.stdin,
        connect,
        agent_id=args.agent_id,
        max_chars=args.max_chars,
        timeout=args.timeout,
        log=Path(args.log).expanduser(),
        spool=Spool(args.spool),
        tenant=args.tenant,
        backup=Backup(args.backup, args.backup_days) if args.backup else None,
    )


def serve_mcp(args: Args) -> int:
    from agent_memory import mcp_server

    mcp_server.serve(dsn(args), tenant=args.tenant, agent_id=args.agent_id)
    return 0


def tour(args: Args) -> int:
    from agent_memory import demo

    return demo.run(dsn(args), tenant=args.tenant)


def positive_days(text: str) -> float:
    """How long copies are kept: a positive number of days, at most a hundred years."""
    try:
        days = float(text)
    except ValueError:
        days = 0
    if not 0 < days <= 36500:
        raise argparse.ArgumentTypeError(f"must be a number of days above 0, got {text!r}")
    return days


def positive_seconds(text: str) -> float:
    """A time bound in seconds: a positive number (0 would mean no bound at all)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0
    if not 0 < seconds < 3600:
        raise argparse.ArgumentTypeError(f"must be a number of seconds between 0 and 3600, got {text!r}")
    return seconds


def _watch(args: Args) -> int:
    """What arrives in the tenant as it commits, a line an event (with --json, one JSON object a line), until
    interrupted or --seconds have passed."""
    if args.seconds is not None and args.seconds <= 0:
        raise InvalidInput("--seconds needs a positive number of seconds")
    with memory(args) as client:
        try:
            for event in client.subscribe(agent_id=args.agent_id, shared_only=bool(args.shared), timeout=args.seconds):
                print(json.dumps(plain(event)) if args.json else notifications.describe(event), flush=True)
        except KeyboardInterrupt:
            pass
    return 0


def _stats(args: Args) -> int:
    """memory.stats, or with --watch memory.metrics again and again."""
    if args.watch is not None:
        return watch_metrics(args)
    with memory(args) as client:
        rows = client.stats(args.agent_id)
    counts = ["sessions", "turns", "chunks", "embedded_chunks", "summaries", "remembered", "feedback"]
    columns = ["agent_id", *counts, "pending_jobs", "dead_jobs", "last_turn_at"]
    return table(columns, "no sessions yet")(args, rows)


def _health(args: Args) -> int:
    with memory(args) as client:
        health = client.health()
    record(args, health)
    return 0 if health.problem is None else 1


def _reindexed(args: Args, result: Any) -> str:
    waiting = result.sessions - result.jobs  # memory.reindex does not queue a session twice
    jobs = f"{result.jobs} jobs" + (f", {waiting} were queued already" if waiting else "")
    return f"queued {result.sessions} sessions for re-indexing ({jobs}); run `agent-memory work` to process them"


SPOOL = Option(
    "spool",
    "the spool directory, for commits made while the server is out of reach (default: $AGENT_MEMORY_SPOOL, else"
    " ~/.local/state/agent-memory/spool)",
)


def spool_main(args: Args) -> int:
    """status: each agent's spool; replay: what is spooled committed in order (exit 1 while some waits or was
    refused)."""
    spool = Spool(args.spool)
    if args.action == "status":
        files = spool.files()
        if args.json:
            print_json(files)
        elif not files:
            print(f"nothing spooled in {spool.directory}")
        else:
            print_table([plain(file) | {"tenant": file.tenant or "(login's)"} for file in files], SPOOL_COLUMNS)
        return 0
    done = spool.replay(dsn(args))
    if args.json:
        print_json(done)
    else:
        print(", ".join(f"{name.replace('_', ' ')}: {value}" for name, value in plain(done).items()))
        if done.rejected:
            print(f"refused entries are kept with the reason in {spool.directory}/*/*.rejected.jsonl", file=sys.stderr)
    return 1 if done.waiting or done.rejected else 0


SPOOL_COLUMNS = ["tenant", "agent_id", "entries", "oldest", "rejected", "path"]

COMMANDS: tuple[Command, ...] = (
    Command(
        "db",
        "run the local PostgreSQL server; upgrade the extension in a database",
        (
            Option("action", positional=True, choices=["start", "stop", "status", "url", "upgrade"]),
            Option(
                "check", "with upgrade: say what an update would apply, change nothing (exit 1: one is due)", flag=True
            ),
        ),
        description=f"Its directory: --dir if given, else {HOME_RULE}. `db url` and `db status` say on stderr which"
        " directory they chose when no server runs there. `db status` also says which version of the extension the"
        " database has against the one on disk; `db upgrade` (any database, with --dsn) applies the update.",
        main=database,
    ),
    Command("install", "create (or update) the extension in the database", main=install),
    Command("health", "show versions and whether the embedder loads", main=_health),
    Command(
        "stats",
        "sessions, turns, vectors and pending jobs per agent",
        (
            Option("agent_id", "one agent"),
            Option(
                "watch",
                "show memory.metrics every SECONDS (default 2): recalls, latency, commits, the queue, the tiers",
                type=float,
                optional=True,
                default=2.0,
                metavar="SECONDS",
            ),
            Option("count", "with --watch: stop after this many readings", type=int),
        ),
        main=_stats,
        tool=Tool(
            """How much is remembered, per agent: sessions, turns, indexed and embedded chunks, summaries,
            remembered facts, feedback, pending and failed enrichment jobs, first and last turn.""",
            "reads",
            answers.stats,
            dict[str, dict[str, Any]],
        ),
    ),
    Command(
        "watch",
        "show sessions and memories as they arrive (memory.notification_channel)",
        (
            Option("agent_id", "as this agent sees them: its own and what the others share"),
            Option("shared", "only what other agents share with the fleet", flag=True),
            Option("seconds", "stop after this many seconds", type=float),
        ),
        description="Sessions committed and memories remembered, shared or unshared in the tenant, a line each as"
        " their transaction commits. No content is sent: read it with recall, get or list-memories.",
        main=_watch,
    ),
    Command(
        "reindex",
        "queue sessions indexed under older index settings for re-indexing",
        (Option("agent_id", "one agent"), Option("session_id", "one session")),
        show=said(_reindexed),
    ),
    Command(
        "work",
        "run queued enrichment jobs (memory.work) in a loop",
        (
            Option("max_jobs", "jobs per memory.work call (default 10)", type=int, default=10),
            Option("once", "stop when no job is left to run", flag=True),
            Option("idle_seconds", "wait when the queue is empty (default 2)", type=float, default=2.0),
        ),
        main=work_queue,
    ),
    Command(
        "graphs",
        "build the HNSW graphs of tenants grown past tenant_graph_min_chunks (and drop those no longer due)",
        (Option("check", "list what is due, change nothing (exit 1: something is)", flag=True),),
        description="Runs memory.tenant_graph_statements() one statement at a time: `create index concurrently`, which"
        " blocks no write, and `drop index concurrently`. As a superuser (the indexes are on the extension's"
        " tables); schedule it beside maintenance, daily say.",
        main=tenant_graphs,
    ),
    Command(
        "mcp",
        "serve memory as MCP tools over stdio (for Claude Code and other hosts)",
        (
            Option(
                "agent_id",
                "agent id every tool uses unless told another (default: reads cover every agent, writes go to"
                " 'default')",
            ),
        ),
        main=serve_mcp,
    ),
    Command(
        "hook",
        "a Claude Code hook: save the transcript (PreCompact, SessionEnd) or print context (SessionStart)",
        (
            Option(
                "event",
                f"{', '.join(hooks.EVENTS)} (default: hook_event_name of the input)",
                positional=True,
                optional=True,
            ),
            Option("agent_id", "agent id (default: 'default', as `import claude-code`; SessionStart: every agent)"),
            Option("max_chars", "SessionStart's budget (default: setting bootstrap_max_chars)", type=int),
            Option("timeout", "give up after this many seconds (default 10)", type=positive_seconds, default=10.0),
            Option("log", f"where errors go (default {hooks.DEFAULT_LOG})", default=hooks.DEFAULT_LOG),
            SPOOL,
            Option("backup", "also write each saved session as markdown in this folder (default: none)"),
            Option(
                "backup_days",
                f"remove copies older than this (default {DEFAULT_DAYS})",
                type=positive_days,
                default=float(DEFAULT_DAYS),
            ),
        ),
        description="Reads the JSON Claude Code sends on stdin. Always exits 0: an error is one line in the log.",
        main=claude_hook,
    ),
    Command(
        "spool",
        "commits kept while the server was out of reach: status, or replay them in order",
        (Option("action", positional=True, choices=["status", "replay"]), SPOOL),
        description="The Claude Code hooks spool a transcript the server cannot take; replay commits what is spooled"
        " (committing is idempotent: a replay twice stores nothing twice).",
        main=spool_main,
    ),
    Command("demo", "a tour: import a small example, recall, explain, bootstrap, feedback", main=tour),
)
