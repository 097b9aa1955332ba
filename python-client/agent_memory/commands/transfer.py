"""Moving memory in and out: the tenant's memory as JSON lines, and conversation logs (or those lines)
imported."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from agent_memory import importers, memory_files
from agent_memory.commands import Args, Command, Option, memory
from agent_memory.commands.write import ENRICH
from agent_memory.errors import AgentMemoryError, ForgottenSession, InvalidInput
from agent_memory.formatting import print_json
from agent_memory.progress import Progress

RECORD_NAMES = {
    "session": "sessions",
    "memory": "memories",
    "memory_merge": "merges",
    "memory_supersession": "supersessions",
    "entity": "entities",
    "entity_state": "entity states",
    "feedback": "feedback",
}


def export(args: Args) -> int:
    """Writes the tenant's memory as export records (one session alone: in the shape commit takes), JSON
    lines that `agent-memory import jsonl` reads back; gzipped when the file name ends in .gz."""
    kinds: Counter[str] = Counter()
    with memory(args) as client:
        out = sys.stdout if args.output == "-" else importers.open_for_writing(args.output)
        try:
            if args.session_id:
                for session in client.export(agent_id=args.agent_id, session_id=args.session_id):
                    out.write(json.dumps(session, ensure_ascii=False) + "\n")
                    kinds["session"] += 1
            else:
                for record in client.iter_export_tenant(agent_id=args.agent_id):
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


def _import_records(args: Args, paths: list[Path]) -> int:
    """Export records through memory.import_tenant as they are read, all in one transaction: all or nothing
    (a line that is not a record stops it too)."""
    progress = Progress("import", importers.count_lines(paths), "records")
    origins: list[importers.Origin] = []
    try:
        with memory(args) as client:
            counts = client.import_tenant(
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


def _import_memory_files(args: Args, paths: list[Path]) -> int:
    """Markdown memory files: every item read first, then remembered one by one (a re-run adds nothing)."""
    items, problems = memory_files.read(paths)
    for problem in problems:
        print(f"agent-memory: {problem}", file=sys.stderr)
    if problems and not args.skip_invalid:
        if items:
            print("nothing imported (use --skip-invalid to import the rest)", file=sys.stderr)
        return 1
    with memory(args) as client:
        counts = memory_files.remember(client, items, args.agent_id, args.enrich)
    summary = {"memories": len(items), **counts, "invalid_lines": len(problems)}
    print_json(summary) if args.json else print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items()))
    return 0 if not problems else 1


def import_logs(args: Args) -> int:
    """Reads every input first; commits session by session (a re-run skips what is stored). Files of
    export records go through memory.import_tenant instead, markdown memory files memory.remember."""
    paths = [Path(path) for path in args.paths]
    if args.format == "markdown":
        return _import_memory_files(args, paths)
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
    with memory(args) as client:
        for session in read.sessions:
            try:
                turns, refused = importers.commit(
                    client,
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


COMMANDS = (
    Command(
        "export",
        "write the tenant's memory as JSON lines (importable with: import jsonl)",
        (
            Option("agent_id", "one agent"),
            Option("session_id", "one session"),
            Option("output", "file to write, gzipped if it ends in .gz (default: stdout)", default="-", short="-o"),
        ),
        description="Sessions with their trust, tiers and summaries, curated memories with their history, entities"
        " and their states, feedback. With --session-id, that session alone in the shape commit takes.",
        main=export,
    ),
    Command(
        "import",
        "import conversation logs or markdown memory files (re-importing adds nothing)",
        (
            Option("format", positional=True, choices=[*importers.FORMATS, "markdown"]),
            Option(
                "paths",
                "files: .jsonl (an export or archive too), conversations.json, Claude Code <session>.jsonl, an OpenCode"
                " store (~/.local/share/opencode/storage) or session .json; or gzipped; markdown: .md files or folders",
                positional=True,
                repeat=True,
            ),
            Option("agent_id", "the agent of sessions that name none (default: 'default')"),
            ENRICH,
            Option("skip_invalid", "import what is valid and report the rest (default: all or nothing)", flag=True),
            Option(
                "allow_forgotten",
                "store again sessions memory.forget removed (default: leave them out and count them)",
                flag=True,
            ),
        ),
        main=import_logs,
    ),
)
