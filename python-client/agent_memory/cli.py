"""The agent-memory command."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, get_args

import psycopg
from psycopg import sql

from agent_memory import hooks, importers, watch
from agent_memory.calls import Kind, RetainedData
from agent_memory.client import Memory
from agent_memory.errors import AgentMemoryError, ForgottenSession, InvalidInput, NotFound
from agent_memory.formatting import plain, print_json, print_record, print_table, ranks, signals
from agent_memory.localdb import DEFAULT_PORT, HOME_RULE, Home, LocalServer, LocalServerError, find_home
from agent_memory.progress import Progress
from agent_memory.results import EntityType, Verdict


def _home(args: argparse.Namespace) -> Home:
    return Home(Path(args.dir).resolve(), "--dir") if args.dir else find_home(Path.cwd(), os.environ)


def _local_server(args: argparse.Namespace) -> LocalServer:
    return LocalServer(directory=_home(args).directory, port=args.port)


def _dsn(args: argparse.Namespace) -> str:
    """--dsn, else DATABASE_URL, else the local server's database named by --dbname."""
    return args.dsn or os.environ.get("DATABASE_URL") or _local_server(args).url(args.dbname)


def _memory(args: argparse.Namespace) -> Memory:
    return Memory(_dsn(args), tenant=args.tenant, max_connections=2)


def _report(args: argparse.Namespace, result: Any, for_people: str) -> int:
    """Prints the result as JSON with --json, else the line for people."""
    print_json(result) if args.json else print(for_people)
    return 0


def _json_argument(text: str | None, what: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what} is not valid JSON: {exc}") from exc


def cmd_db(args: argparse.Namespace) -> int:
    home = _home(args)
    server = LocalServer(directory=home.directory, port=args.port)
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
            f"agent-memory: no server running in {home.directory} (chosen as {home.reason}); choose another"
            " with --dir or $AGENT_MEMORY_HOME, or use --dsn or $DATABASE_URL for any database",
            file=sys.stderr,
        )
    if args.action == "status":
        print(f"{'running' if running else 'stopped'}: {server.url()}")
        return 0 if running else 3
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
    with _memory(args) as memory:
        health = memory.health()
    print_json(health) if args.json else print_record(health)
    return 0 if health.problem is None else 1


def cmd_work(args: argparse.Namespace) -> int:
    """Runs queued enrichment jobs until stopped (or, with --once, until the queue is empty)."""
    done = failed = 0
    progress: Progress | None = None
    with psycopg.connect(_dsn(args), autocommit=True) as conn:
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


def _messages_input(path: str) -> Any:
    text = sys.stdin.read() if path == "-" else importers.read_text(Path(path))
    return importers.parse_json(text, "stdin" if path == "-" else path)


def cmd_commit(args: argparse.Namespace) -> int:
    """Commits one session from a JSON array of messages (or {"messages": [...], ...}) in a file or stdin."""
    data = _messages_input(args.file)
    options: dict[str, Any] = {}
    if isinstance(data, dict):
        options = {key: data[key] for key in ("source", "model", "metadata") if key in data}
        data = data.get("messages")
    if not isinstance(data, list):
        raise InvalidInput('the input must be a JSON array of messages or an object with "messages"')
    options.update({"agent_id": args.agent_id, "enrich": args.enrich, "source": args.source or options.get("source")})
    with _memory(args) as memory:
        committed = memory.commit(args.session_id, data, **{k: v for k, v in options.items() if v is not None})
    state = "new session" if committed.created else "existing session"
    return _report(args, committed, f"{args.session_id}: {state}, {committed.turns_added} turns added")


def _recall_filters(args: argparse.Namespace) -> dict[str, Any]:
    if args.entity_mode == "all" and not args.entities:
        raise InvalidInput("--entity-mode all needs at least one of --entities")
    filters = {
        "agent_id": args.agent_id,
        "since": args.since,
        "until": args.until,
        "source": args.source,
        "entities": args.entities,
        "entity_mode": args.entity_mode,
        "weights": _json_argument(args.weights, "--weights"),
        "as_of": args.as_of,
        "include_ended": args.include_ended or None,
        "intent": args.intent,
        "tiers": args.tiers,
    }
    return {key: value for key, value in filters.items() if value is not None}


def cmd_recall(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        hits = memory.recall(args.query, k=args.k, level=args.level, **_recall_filters(args))
    if args.json:
        print_json(hits)
    elif not hits:
        print("nothing recalled")
    else:
        columns = ["score", "kind", "turn_id", "session_id", "created_at", "speaker", "role", "content"]
        print_table(hits, columns, {"content": 70})
    return 0


def cmd_explain_recall(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        candidates = memory.explain_recall(args.query, k=args.k, **_recall_filters(args))
    if args.json:
        print_json(candidates)
        return 0
    rows = [
        plain(candidate) | {"lists": ranks(candidate.components), "signals": signals(candidate.components)}
        for candidate in candidates
    ]
    columns = ["rank", "score", "fused", "lists", "kind", "turn_id", "session_id", "content", "signals"]
    print_table(rows, columns, {"content": 50, "signals": 60})
    return 0


def cmd_give_feedback(args: argparse.Namespace) -> int:
    target = next(name for name in ("turn_id", "memory_id", "session_id") if getattr(args, name) is not None)
    with _memory(args) as memory:
        result = memory.give_feedback(
            args.verdict,
            turn_id=args.turn_id,
            memory_id=args.memory_id,
            session_id=args.session_id,
            judged_by=args.judged_by,
            query=args.query,
            note=args.note,
        )
    said = result.effect if result.counted else f"not counted again: {result.effect}"
    judged = f"{target.removesuffix('_id')} {getattr(args, target)}"
    return _report(args, result, f"{judged}: {result.verdict}, {said}")


REMEMBERED = {
    "created": "remembered",
    "updated": "remembered, replacing memory {supersedes}",
    "unchanged": "already remembered",
    "merged": "a paraphrase of what is remembered",
}


def cmd_remember(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        result = memory.remember(
            args.content,
            kind=args.kind,
            agent_id=args.agent_id,
            key=args.key,
            subjects=args.subjects,
            tags=args.tags,
            importance=args.importance,
            status=args.status,
        )
    said = REMEMBERED[result.outcome].format(supersedes=result.supersedes)
    return _report(args, result, f"{said} as memory {result.memory_id} (turn {result.turn_id})")


def cmd_list_memories(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        found = memory.list_memories(
            kind=args.kind,
            agent_id=args.agent_id,
            subject=args.subject,
            tag=args.tag,
            search=args.search,
            status=args.status,
            as_of=args.as_of,
            k=args.k,
        )
    return _print_memories(args, found)


def cmd_get(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        found = memory.get(args.key, agent_id=args.agent_id, as_of=args.as_of)
    return _print_memories(args, found)


def _print_memories(args: argparse.Namespace, found: Sequence[Any]) -> int:
    if args.json:
        print_json(found)
    elif not found:
        print("no memories found")
    else:
        columns = ["memory_id", "kind", "key", "status", "importance", "valid_from", "content"]
        several = len({item.agent_id for item in found}) > 1
        print_table(found, ["agent_id", *columns] if several else columns, {"content": 60})
    return 0


def cmd_move_memory(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        moved = getattr(memory, args.command)(args.memory_id)
    return _report(args, moved, f"memory {moved.memory_id}: {moved.status}")


def cmd_bootstrap(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        context = memory.bootstrap(agent_id=args.agent_id, max_chars=args.max_chars, sessions=args.sessions)
    return _report(args, context.items, context.text() or "(nothing to bootstrap from yet)")


def cmd_stats(args: argparse.Namespace) -> int:
    if args.watch is not None:
        return _watch(args)
    with _memory(args) as memory:
        rows = memory.stats(args.agent_id)
    if args.json:
        print_json(rows)
    else:
        counts = ["sessions", "turns", "chunks", "embedded_chunks", "summaries", "remembered", "feedback"]
        print_table(rows, ["agent_id", *counts, "pending_jobs", "dead_jobs", "last_turn_at"])
    return 0


def _watch(args: argparse.Namespace) -> int:
    """memory.metrics every --watch seconds (--count times, else until interrupted): per tenant, what
    changed since the last reading; with --json, one JSON object a reading."""
    if args.watch <= 0 or (args.count is not None and args.count < 1):
        raise InvalidInput("--watch needs a positive number of seconds and --count at least 1")
    previous, taken = None, None
    readings = 0
    with _memory(args) as memory:
        while args.count is None or readings < args.count:
            if readings:
                time.sleep(args.watch)
            metrics, now = memory.metrics(), time.monotonic()
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


def _forgotten(result: Any) -> str:
    removed = (
        f"{result.turns_removed} turns, {result.chunks_removed} indexed chunks, {result.memories_removed} memories"
    )
    return f"{removed} (tombstone {result.tombstone_id})"


def cmd_forget(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        result = memory.forget(args.session_id, agent_id=args.agent_id)
    return _report(args, result, f"forgot {args.session_id}: {_forgotten(result)}")


def cmd_forget_range(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        result = memory.forget_range(args.since, args.until, agent_id=args.agent_id)
    span = f"{args.since.isoformat()} to {args.until.isoformat()}"
    return _report(args, result, f"forgot {span}: {result.sessions_removed} whole sessions, {_forgotten(result)}")


def cmd_forget_entity(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        result = memory.forget_entity(args.entity, agent_id=args.agent_id)
    return _report(
        args, result, f"forgot {args.entity}: {result.sessions_removed} whole sessions, {_forgotten(result)}"
    )


def cmd_forget_agent(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        result = memory.forget_agent(args.agent_id)
    return _report(
        args, result, f"forgot agent {args.agent_id}: {result.sessions_removed} sessions, {_forgotten(result)}"
    )


def _scoped(rows: Sequence[Any], columns: list[str]) -> list[str]:
    """The columns, with the agent each row belongs to first when the rows are of several agents."""
    return ["agent_id", *columns] if len({row.agent_id for row in rows}) > 1 else columns


def cmd_list_entities(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        found = memory.list_entities(args.search, type=args.type, agent_id=args.agent_id, k=args.k)
    if args.json:
        print_json(found)
    elif not found:
        print("no entities found" if args.search or args.type else "no entities yet")
    else:
        rows = [plain(entity) | {"aliases": ", ".join(entity.aliases)} for entity in found]
        columns = ["name", "type", "mentions", "sessions", "last_mentioned_at", "aliases"]
        print_table(rows, _scoped(found, columns), {"aliases": 50})
    return 0


def cmd_entity_neighbors(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        neighbors = memory.entity_neighbors(args.entity, depth=args.depth, k=args.k, agent_id=args.agent_id)
    if args.json:
        print_json(neighbors)
    elif not neighbors:
        print(f"nothing is mentioned with {args.entity}")
    else:
        rows = [plain(neighbor) | {"path": " → ".join(neighbor.path)} for neighbor in neighbors]
        print_table(rows, _scoped(neighbors, ["distance", "name", "type", "turns", "path"]), {"path": 80})
    return 0


def cmd_entity_state(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        states = memory.entity_state(args.entity, as_of=args.as_of, attribute=args.attribute, agent_id=args.agent_id)
    if args.json:
        print_json(states)
    elif not states:
        when = f" at {args.as_of.isoformat()}" if args.as_of else ""
        print(f"no state recorded for {args.entity}{when}")
    else:
        rows = [plain(state) | {"value": json.dumps(state.value, ensure_ascii=False)} for state in states]
        print_table(rows, _scoped(states, ["attribute", "value", "valid_from", "valid_to"]), {"value": 60})
    return 0


RECORD_NAMES = {
    "session": "sessions",
    "memory": "memories",
    "memory_merge": "merges",
    "entity": "entities",
    "entity_state": "entity states",
    "feedback": "feedback",
}


def cmd_export(args: argparse.Namespace) -> int:
    """Writes the tenant's memory as export records (one session alone: in the shape commit takes), JSON
    lines that `agent-memory import jsonl` reads back; gzipped when the file name ends in .gz."""
    kinds: Counter[str] = Counter()
    with _memory(args) as memory:
        out = sys.stdout if args.output == "-" else importers.open_for_writing(args.output)
        try:
            if args.session_id:
                for session in memory.export(agent_id=args.agent_id, session_id=args.session_id):
                    out.write(json.dumps(session, ensure_ascii=False) + "\n")
                    kinds["session"] += 1
            else:
                for record in memory.iter_export_tenant(agent_id=args.agent_id):
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    kinds[str(record.get("record"))] += 1
        finally:
            if out is not sys.stdout:
                out.close()
    if args.session_id:
        print(f"exported {kinds['session']} sessions", file=sys.stderr)
    else:
        print("exported " + ", ".join(f"{kinds[kind]} {name}" for kind, name in RECORD_NAMES.items()), file=sys.stderr)
    return 0


def _import_records(args: argparse.Namespace, paths: list[Path]) -> int:
    """Export records through memory.import_tenant as they are read, all in one transaction: all or nothing
    (a line that is not a record stops it too)."""
    progress = Progress("import", importers.count_lines(paths), "records")
    origins: list[importers.Origin] = []
    try:
        with _memory(args) as memory:
            counts = memory.import_tenant(
                importers.iter_records(paths, origins),
                allow_forgotten=args.allow_forgotten or None,
                on_batch=progress.advance,
            )
    except importers.ImportProblem as problem:
        raise importers.ImportProblem(problem.path, problem.line, f"{problem.problem} (nothing imported)") from None
    except AgentMemoryError as exc:
        match = re.match(r"(?:agent_memory: )?import record (\d+) (.*)", str(exc), re.DOTALL)
        if match is None or not 0 < int(match[1]) <= len(origins):
            raise
        where = origins[int(match[1]) - 1]
        raise importers.ImportProblem(where.path, where.line, f"record {match[2]} (nothing imported)") from exc
    progress.finish()
    if args.json:
        print_json(counts)
    else:
        for count in counts:
            name = RECORD_NAMES.get(count.record_type, count.record_type)
            forgotten = f", {count.forgotten} forgotten (left out)" if count.forgotten else ""
            print(f"{name}: {count.imported} imported, {count.unchanged} here already{forgotten}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Reads every input first; commits session by session (a re-run skips what is stored). Files of
    export records go through memory.import_tenant instead."""
    paths = [Path(path) for path in args.paths]
    if args.format == "jsonl" and any(path.is_file() and importers.is_export(path) for path in paths):
        return _import_records(args, paths)
    read = importers.read(args.format, paths)
    for problem in read.problems:
        print(f"agent-memory: {problem}", file=sys.stderr)
    if read.problems and not args.skip_invalid:
        if read.sessions:
            print("nothing imported (use --skip-invalid to import the rest)", file=sys.stderr)
        return 1
    added = skipped = forgotten = 0
    invalid = len(read.problems)
    progress = Progress("import", len(read.sessions), "sessions")
    with _memory(args) as memory:
        for session in read.sessions:
            try:
                turns, refused = importers.commit(
                    memory,
                    session,
                    agent_id=args.agent_id,
                    source=f"import:{args.format}",
                    enrich=args.enrich,
                    skip_invalid=args.skip_invalid,
                    allow_forgotten=args.allow_forgotten,
                )
            except ForgottenSession as exc:
                print(f"agent-memory: session {session.session_id} not imported: {exc}", file=sys.stderr)
                forgotten += 1
            except InvalidInput as exc:
                if not args.skip_invalid:
                    raise InvalidInput(f"session {session.session_id}: {exc}") from exc
                print(f"agent-memory: session {session.session_id} skipped: {exc}", file=sys.stderr)
                skipped += 1
            else:
                for problem in refused:
                    print(f"agent-memory: {problem}", file=sys.stderr)
                added += turns
                invalid += len(refused)
            progress.advance()
    progress.finish()
    summary = {
        "sessions": len(read.sessions) - skipped - forgotten,
        "turns_added": added,
        "skipped_sessions": skipped,
        "forgotten_sessions": forgotten,
    }
    summary["invalid_lines"] = invalid
    print_json(summary) if args.json else print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items()))
    return 0 if not skipped and not invalid else 1


def age(text: str) -> timedelta:
    """A retention age: a whole number and a unit, as 90d, 12h, 2w or '90 days'."""
    units = {
        "h": "hours",
        "hour": "hours",
        "hours": "hours",
        "d": "days",
        "day": "days",
        "days": "days",
        "w": "weeks",
        "week": "weeks",
        "weeks": "weeks",
    }
    match = re.fullmatch(r"\s*(\d+)\s*([a-z]+)\s*", text.lower())
    if match is None or match[2] not in units or int(match[1]) == 0:
        raise argparse.ArgumentTypeError(
            f"must be a positive whole number of hours, days or weeks (90d, 12h, 2w), got {text!r}"
        )
    return timedelta(**{units[match[2]]: int(match[1])})


def cmd_set_retention(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        policy = memory.set_retention(
            args.data,
            max_age=args.max_age,
            keep_last=args.keep_last,
            tier=args.tier,
            agent_id=args.agent_id,
            statuses=args.statuses,
        )
    return _report(args, policy, f"retention policy {policy.policy_id} added")


def cmd_drop_retention(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        if not memory.drop_retention(args.policy_id):
            raise NotFound(f"no retention policy {args.policy_id}")
    return _report(args, {"dropped": True}, f"retention policy {args.policy_id} dropped")


def cmd_retention_preview(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        items = memory.retention_preview(at=args.at)
    if args.json:
        print_json(items)
    elif not items:
        print("nothing would go")
    else:
        print_table(items, ["policy_id", "data", "agent_id", "session_id", "memory_id", "tier", "last_used", "reason"])
    return 0


def cmd_list_retention_policies(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        policies = memory.list_retention_policies()
    if args.json:
        print_json(policies)
    elif not policies:
        print("no retention policies (add one: agent-memory set-retention sessions --max-age 365d)")
    else:
        print_table(policies, ["policy_id", "data", "agent_id", "tier", "statuses", "max_age", "keep_last"])
    return 0


def _archive_gone(archive_id: int) -> NotFound:
    return NotFound(f"archive {archive_id} holds no data (dropped, or no such archive)")


def cmd_archive(args: argparse.Namespace) -> int:
    """Saves an archive's gzipped JSON lines to a file."""
    with _memory(args) as memory:
        data = memory.archive(args.archive_id)
    if data is None:
        raise _archive_gone(args.archive_id)
    output = args.output or f"agent-memory-archive-{args.archive_id}.jsonl.gz"
    Path(output).write_bytes(data)
    return _report(args, {"file": output, "bytes": len(data)}, f"wrote {output} ({len(data)} bytes)")


def cmd_drop_archive(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        if not memory.drop_archive(args.archive_id):
            raise _archive_gone(args.archive_id)
    return _report(args, {"dropped": True}, f"archive {args.archive_id}: data dropped, record kept")


def cmd_list_archives(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        archives = memory.list_archives()
    if args.json:
        print_json(archives)
    elif not archives:
        print("no archives (retention has removed nothing)")
    else:
        print_table(archives, ["archive_id", "created_at", "policies", "removed", "records", "bytes", "dropped_at"])
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    def connect(seconds: float) -> Memory:
        return Memory(hooks.bounded(_dsn(args), seconds), tenant=args.tenant, max_connections=1)

    return hooks.run(
        args.event,
        sys.stdin,
        connect,
        agent_id=args.agent_id,
        max_chars=args.max_chars,
        timeout=args.timeout,
        log=Path(args.log).expanduser(),
    )


def cmd_reindex(args: argparse.Namespace) -> int:
    with _memory(args) as memory:
        result = memory.reindex(agent_id=args.agent_id, session_id=args.session_id)
    waiting = result.sessions - result.jobs  # memory.reindex does not queue a session twice
    jobs = f"{result.jobs} jobs" + (f", {waiting} were queued already" if waiting else "")
    queued = f"queued {result.sessions} sessions for re-indexing ({jobs})"
    return _report(args, result, f"{queued}; run `agent-memory work` to process them")


def cmd_mcp(args: argparse.Namespace) -> int:
    from agent_memory import mcp_server

    mcp_server.serve(_dsn(args), tenant=args.tenant, agent_id=args.agent_id)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from agent_memory import demo

    return demo.run(_dsn(args), tenant=args.tenant)


def _global_options(parser: argparse._ActionsContainer, defaults: bool) -> None:
    """The options every command takes, before or after its name. The main parser has their defaults; each
    command's parser has none (argparse.SUPPRESS), so a value given after the command wins and one given
    before it is kept."""

    def default(value: Any) -> Any:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument(
        "--dsn", default=default(None), help="connection string (default: $DATABASE_URL, else the local server)"
    )
    parser.add_argument("--dir", default=default(None), help="local server directory (default: see `db --help`)")
    parser.add_argument(
        "--port",
        type=int,
        default=default(int(os.environ.get("AGENT_MEMORY_PORT", DEFAULT_PORT))),
        help=f"local server port (default: $AGENT_MEMORY_PORT or {DEFAULT_PORT})",
    )
    parser.add_argument("--dbname", default=default("agent_memory"), help="database on the local server")
    parser.add_argument(
        "--tenant", default=default(None), help="the tenant to act as (memory.tenant_id; default: 'default')"
    )
    parser.add_argument("--json", action="store_true", default=default(False), help="print JSON for scripts")


def positive_seconds(text: str) -> float:
    """A time bound in seconds: a positive number (0 would mean no bound at all)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0
    if not 0 < seconds < 3600:
        raise argparse.ArgumentTypeError(f"must be a number of seconds between 0 and 3600, got {text!r}")
    return seconds


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-memory", description="Long-term memory for AI agents in PostgreSQL.", allow_abbrev=False
    )
    _global_options(parser, defaults=True)
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, func: Any, help: str, description: str = "") -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name, help=help, description=f"{help}. {description}" if description else help, allow_abbrev=False
        )
        sub.set_defaults(func=func)
        _global_options(sub.add_argument_group("global options (also before the command)"), defaults=False)
        return sub

    db = command(
        "db",
        cmd_db,
        "run the local PostgreSQL server",
        f"Its directory: --dir if given, else {HOME_RULE}. `db url` and `db status` say on stderr which"
        " directory they chose when no server runs there.",
    )
    db.add_argument("action", choices=["start", "stop", "status", "url"])
    command("install", cmd_install, "create (or update) the extension in the database")
    command("health", cmd_health, "show versions and whether the embedder loads")

    def agent_id(sub: argparse.ArgumentParser, help: str) -> None:
        sub.add_argument("--agent-id", help=help)

    every_agent = "only this agent's (default: every agent of the tenant)"
    commit = command("commit", cmd_commit, "commit a session's messages from a JSON file (or - for stdin)")
    commit.add_argument("session_id")
    commit.add_argument("file", nargs="?", default="-", help="JSON array of messages, or {messages: [...]}")
    agent_id(commit, "the agent (default: 'default')")
    commit.add_argument("--source", help="where the conversation comes from")
    commit.add_argument("--enrich", choices=["queue", "now", "none"], help="enrichment (default: setting enrich)")

    for name, func, help in (
        ("recall", cmd_recall, "the turns and memories that best answer a query"),
        ("explain-recall", cmd_explain_recall, "the candidates of a recall with their ranks and signals"),
    ):
        sub = command(name, func, help)
        sub.add_argument("query")
        agent_id(sub, every_agent)
        sub.add_argument("--since", type=datetime.fromisoformat, help="only turns at or after (ISO 8601)")
        sub.add_argument("--until", type=datetime.fromisoformat, help="only turns before (ISO 8601)")
        sub.add_argument("--source", help="only sessions from this source")
        sub.add_argument(
            "--entities",
            action="append",
            metavar="ENTITY",
            help="an entity the query is about, lifting turns that mention it (repeat for more)",
        )
        sub.add_argument(
            "--entity-mode", choices=["any", "all"], help="all: only sessions that mention every one of --entities"
        )
        sub.add_argument("--weights", help="per-call settings as JSON, e.g. '{\"weight_dense\": 0.8}'")
        sub.add_argument("--as-of", type=datetime.fromisoformat, help="what was said and held then (ISO 8601)")
        sub.add_argument("--include-ended", action="store_true", help="superseded and retracted memories too")
        sub.add_argument(
            "--intent", help="the memory kind the question asks for (default: found in its words); none: no routing"
        )
        sub.add_argument(
            "--tiers",
            action="append",
            choices=["hot", "warm", "cold"],
            help="a tier to search (repeat for more; default: hot and warm, the setting recall_tiers)",
        )
        if name == "recall":
            sub.add_argument("-k", type=int, default=10, help="how many results (default 10)")
            sub.add_argument("--level", choices=["turn", "session"], default="turn")
        else:
            sub.add_argument("-k", type=int, help="how many candidates (default: every one)")

    feedback = command("give-feedback", cmd_give_feedback, "judge a recalled turn, a memory or a session (moves trust)")
    feedback.add_argument("verdict", choices=get_args(Verdict))
    judged = feedback.add_mutually_exclusive_group(required=True)
    judged.add_argument("--turn-id", type=int, help="the turn judged")
    judged.add_argument("--memory-id", type=int, help="the memory judged")
    judged.add_argument("--session-id", help="the session judged")
    feedback.add_argument("--judged-by", help="the agent judging (its repeats are not counted twice)")
    feedback.add_argument("--query", help="the query it was recalled for")
    feedback.add_argument("--note", help="why")

    kinds = ", ".join(get_args(Kind))
    remember = command("remember", cmd_remember, "keep a fact, preference, rule, decision or task")
    remember.add_argument("content")
    remember.add_argument("--kind", help=f"one of {kinds} (default fact)")
    agent_id(remember, "the agent (default: 'default')")
    remember.add_argument("--key", help="a stable key: a new claim under it replaces the current one")
    remember.add_argument("--subjects", action="append", metavar="SUBJECT", help="an entity it is about (repeatable)")
    remember.add_argument("--tags", action="append", metavar="TAG", help="a tag (repeatable)")
    remember.add_argument("--importance", type=float, help="0 to 1 (default 0.5)")
    remember.add_argument(
        "--status", choices=["active", "ongoing", "pending"], help="ongoing: work in progress; pending: to review"
    )

    memories = command("list-memories", cmd_list_memories, "the memories that hold now (or then), most important first")
    memories.add_argument("search", nargs="?", help="words the content contains (any case)")
    memories.add_argument("--kind", help=f"one of {kinds}")
    agent_id(memories, every_agent)
    memories.add_argument("--subject", help="memories about this entity")
    memories.add_argument("--tag", help="memories with this tag")
    memories.add_argument(
        "--status", help="active, ongoing, resolved, superseded, retracted or pending (not with --as-of)"
    )
    memories.add_argument("--as-of", type=datetime.fromisoformat, help="what held then (ISO 8601)")
    memories.add_argument("-k", type=int, help="how many (default 100)")

    get = command("get", cmd_get, "the memory held under a key, now or then (one per agent that holds it)")
    get.add_argument("key")
    agent_id(get, every_agent)
    get.add_argument("--as-of", type=datetime.fromisoformat, help="what held then (ISO 8601)")

    for verb, what in (
        ("resolve", "mark a memory resolved (a task done)"),
        ("retract", "mark a memory never true (or reject a proposal)"),
        ("approve", "approve a memory enrichment proposed (status pending)"),
    ):
        move = command(verb, cmd_move_memory, what)
        move.add_argument("memory_id", type=int)

    bootstrap = command("bootstrap", cmd_bootstrap, "context for a new conversation, within a budget")
    agent_id(bootstrap, "one agent (default: every agent of the tenant)")
    bootstrap.add_argument("--max-chars", type=int, help="character budget (default: setting bootstrap_max_chars)")
    bootstrap.add_argument("--sessions", type=int, help="how many recent sessions to draw on (default 5)")

    stats = command("stats", cmd_stats, "sessions, turns, vectors and pending jobs per agent")
    agent_id(stats, "one agent")
    stats.add_argument(
        "--watch",
        type=float,
        nargs="?",
        const=2.0,
        metavar="SECONDS",
        help="show memory.metrics every SECONDS (default 2): recalls, latency, commits, the queue, the tiers",
    )
    stats.add_argument("--count", type=int, help="with --watch: stop after this many readings")

    forget = command("forget", cmd_forget, "remove a session and everything derived from it, leaving a tombstone")
    forget.add_argument("session_id")
    agent_id(forget, "the agent (default: whichever agent has the session)")
    forget_agent = command("forget-agent", cmd_forget_agent, "remove all of an agent's memory, leaving a tombstone")
    forget_agent.add_argument("agent_id")
    forget_range = command(
        "forget-range", cmd_forget_range, "remove everything said in a time range, leaving a tombstone"
    )
    forget_range.add_argument("since", type=datetime.fromisoformat, help="from (ISO 8601, included)")
    forget_range.add_argument("until", type=datetime.fromisoformat, help="to (ISO 8601, left out)")
    agent_id(forget_range, "only this agent's (default: every agent's)")
    forget_entity = command(
        "forget-entity", cmd_forget_entity, "remove everything about an entity, leaving a tombstone"
    )
    forget_entity.add_argument("entity", help="its name or an alias")
    agent_id(forget_entity, "only this agent's entity (default: every agent's of that name)")

    entity_types = get_args(EntityType)
    entities = command("list-entities", cmd_list_entities, "the people, projects, tools and more that turns mention")
    entities.add_argument("search", nargs="?", help="a name or part of one (fuzzy, over names and aliases)")
    entities.add_argument("--type", choices=entity_types, metavar="TYPE", help=f"one of {', '.join(entity_types)}")
    agent_id(entities, every_agent)
    entities.add_argument("-k", type=int, help="how many (default 50)")

    neighbors = command("entity-neighbors", cmd_entity_neighbors, "the entities mentioned together with one")
    neighbors.add_argument("entity", help="the entity's name or an alias")
    neighbors.add_argument("--depth", type=int, help="how many steps away, 1-5 (default 1)")
    neighbors.add_argument("-k", type=int, help="how many (default 20)")
    agent_id(neighbors, every_agent)

    state = command("entity-state", cmd_entity_state, "what holds for an entity: its attributes' values, now or then")
    state.add_argument("entity", help="the entity's name or an alias")
    state.add_argument("--as-of", type=datetime.fromisoformat, help="the values that held then (ISO 8601)")
    state.add_argument("--attribute", help="one attribute")
    agent_id(state, every_agent)

    export = command(
        "export",
        cmd_export,
        "write the tenant's memory as JSON lines (importable with: import jsonl)",
        "Sessions with their trust, tiers and summaries, curated memories with their history, entities and their"
        " states, feedback. With --session-id, that session alone in the shape commit takes.",
    )
    agent_id(export, "one agent")
    export.add_argument("--session-id", help="one session")
    export.add_argument(
        "-o", "--output", default="-", help="file to write, gzipped if it ends in .gz (default: stdout)"
    )

    imports = command("import", cmd_import, "import conversation logs (re-importing adds nothing)")
    imports.add_argument("format", choices=importers.FORMATS)
    imports.add_argument(
        "paths",
        nargs="+",
        help="files: .jsonl (an export or archive too), conversations.json, Claude Code <session>.jsonl; or gzipped",
    )
    agent_id(imports, "the agent of sessions that name none (default: 'default')")
    imports.add_argument("--enrich", choices=["queue", "now", "none"], help="enrichment (default: setting enrich)")
    imports.add_argument(
        "--skip-invalid", action="store_true", help="import what is valid and report the rest (default: all or nothing)"
    )
    imports.add_argument(
        "--allow-forgotten",
        action="store_true",
        help="store again sessions memory.forget removed (default: leave them out and count them)",
    )

    statuses = ["active", "ongoing", "resolved", "superseded", "retracted", "pending"]
    retention = command(
        "set-retention",
        cmd_set_retention,
        "add a retention policy: what maintenance archives and removes",
        "An item goes when it is over every limit its policy sets.",
    )
    retention.add_argument("data", choices=get_args(RetainedData))
    retention.add_argument("--max-age", type=age, help="unused for longer than this: 90d, 12h, 2w")
    retention.add_argument("--keep-last", type=int, help="keep each agent's newest N (by last use)")
    retention.add_argument("--tier", choices=["hot", "warm", "cold"], help="only items in this tier")
    agent_id(retention, "only this agent's (default: every agent)")
    retention.add_argument(
        "--statuses", action="append", choices=statuses, help="memories only: only of this status (repeatable)"
    )
    drop_retention = command("drop-retention", cmd_drop_retention, "remove a retention policy")
    drop_retention.add_argument("policy_id", type=int)
    command("list-retention-policies", cmd_list_retention_policies, "the tenant's retention policies")
    preview = command(
        "retention-preview", cmd_retention_preview, "what the next `call memory.maintain()` archives and removes"
    )
    preview.add_argument("--at", type=datetime.fromisoformat, help="as if maintenance ran then (ISO 8601)")

    archive = command(
        "archive",
        cmd_archive,
        "save an archive of what retention removed to a file",
        "The file holds the gzipped JSON lines that `agent-memory import jsonl FILE` reads back.",
    )
    archive.add_argument("archive_id", type=int)
    archive.add_argument("-o", "--output", help="the file (default: agent-memory-archive-ID.jsonl.gz)")
    drop_archive = command("drop-archive", cmd_drop_archive, "drop an archive's data, keeping its record")
    drop_archive.add_argument("archive_id", type=int)
    command("list-archives", cmd_list_archives, "what retention removed, one archive per run")

    reindex = command("reindex", cmd_reindex, "queue sessions indexed under older index settings for re-indexing")
    agent_id(reindex, "one agent")
    reindex.add_argument("--session-id", help="one session")

    work = command("work", cmd_work, "run queued enrichment jobs (memory.work) in a loop")
    work.add_argument("--max-jobs", type=int, default=10, help="jobs per memory.work call (default 10)")
    work.add_argument("--once", action="store_true", help="stop when no job is left to run")
    work.add_argument("--idle-seconds", type=float, default=2.0, help="wait when the queue is empty (default 2)")

    mcp = command("mcp", cmd_mcp, "serve memory as MCP tools over stdio (for Claude Code and other hosts)")
    mcp.add_argument(
        "--agent-id",
        help="agent id every tool uses unless told another (default: reads cover every agent, writes go to 'default')",
    )

    hook = command(
        "hook",
        cmd_hook,
        "a Claude Code hook: save the transcript (PreCompact, SessionEnd) or print context (SessionStart)",
        "Reads the JSON Claude Code sends on stdin. Always exits 0: an error is one line in the log.",
    )
    hook.add_argument("event", nargs="?", help=f"{', '.join(hooks.EVENTS)} (default: hook_event_name of the input)")
    hook.add_argument(
        "--agent-id", help="agent id (default: 'default', as `import claude-code`; SessionStart: every agent)"
    )
    hook.add_argument("--max-chars", type=int, help="SessionStart's budget (default: setting bootstrap_max_chars)")
    hook.add_argument(
        "--timeout", type=positive_seconds, default=10.0, help="give up after this many seconds (default 10)"
    )
    hook.add_argument("--log", default=hooks.DEFAULT_LOG, help=f"where errors go (default {hooks.DEFAULT_LOG})")

    command("demo", cmd_demo, "a tour: import a small example, recall, explain, bootstrap, feedback")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except ImportError as exc:  # an optional dependency missing: its message says what to install
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        problem = f"cannot open {exc.filename}: {importers.os_reason(exc)}" if exc.filename else str(exc)
        print(f"agent-memory: {problem}", file=sys.stderr)
        return 1
    except (LocalServerError, psycopg.Error, AgentMemoryError, importers.ImportProblem) as exc:
        message = str(exc).removeprefix("agent_memory: ")  # the server's own prefix, once is enough
        print(f"agent-memory: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
