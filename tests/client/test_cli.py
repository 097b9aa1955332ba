"""The installed agent-memory command, run as a user would run it."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from agent_memory.cli import build_parser

CLI = str(Path(sys.executable).parent / "agent-memory")


def run(*args, env=None, cwd=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd)


def test_health_as_json_reports_a_working_install(dsn):
    result = run("--dsn", dsn, "--json", "health")
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
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


def test_graphs_builds_a_big_tenants_own_graph_and_check_says_when_one_is_due(db, dsn):
    db.execute(
        "insert into memory.config (key, value) values ('embedder', '\"client\"'), ('client_dimensions', '3'),"
        " ('tenant_graph_min_chunks', '3')"
    )
    db.execute("select set_config('memory.tenant_id', 'team o''brien', false)")  # a tenant with a quote
    for number in range(4):
        turn = [
            {"role": "user", "content": f"Deploy {number} of the auth service is on Friday.", "embedding": [1, 2, 3]}
        ]
        db.execute("select memory.commit(%s, %s, enrich => 'now')", (f"s{number}", json.dumps(turn)))
    db.commit()
    due = run("--dsn", dsn, "graphs", "--check")
    assert (due.returncode, due.stdout.strip()) == (1, "create: tenant team o'brien (4 chunks), model client"), due
    built = run("--dsn", dsn, "graphs")
    assert built.returncode == 0 and built.stdout.startswith(
        "create: tenant team o'brien (4 chunks), model client ("
    ), built
    definition = db.execute(
        "select indexdef from pg_indexes where indexname = memory_internal._tenant_graph_name('client', %s)",
        ("team o'brien",),
    ).fetchone()[0]
    assert definition.endswith("AND (tenant_id = 'team o''brien'::text))"), definition
    assert run("--dsn", dsn, "graphs", "--check").stdout.strip() == "no tenant graph to build or drop"


def test_graphs_refuses_to_run_beside_another_graphs_run(db, dsn):
    db.execute("select pg_advisory_lock(x'616d6772'::integer)")  # as a run under way holds it
    result = run("--dsn", dsn, "graphs")
    assert result.returncode != 0 and "another `agent-memory graphs` is building" in result.stderr, result
    assert run("--dsn", dsn, "graphs", "--check").returncode == 0  # listing needs no lock


def test_worker_once_runs_the_queue_and_reports_progress(db, dsn):
    db.execute(
        'select memory.commit(s, \'[{"role": "user", "content": "Deploy the auth service on Friday."}]\')'
        " from unnest(array['s1', 's2', 's3']) as s"
    )
    db.commit()
    result = run("--dsn", dsn, "work", "--once", "--max-jobs", "2")
    assert result.returncode == 0, result.stderr
    assert "enrichment [" in result.stderr and "3/3 jobs" in result.stderr
    assert result.stdout.strip().endswith("work finished: 3 done, 0 failed")
    assert db.execute("select count(*) from memory.jobs where status = 'done'").fetchone()[0] == 3


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_import_with_a_malformed_line_imports_nothing_and_names_the_line(db, dsn):
    result = run("--dsn", dsn, "import", "jsonl", str(FIXTURES / "messages-malformed.jsonl"))
    assert result.returncode == 1
    assert "messages-malformed.jsonl:3: not valid JSON" in result.stderr
    assert "nothing imported (use --skip-invalid to import the rest)" in result.stderr
    assert db.execute("select count(*) from memory.turns").fetchone()[0] == 0


def test_import_skip_invalid_imports_the_rest_and_says_what_it_skipped(db, dsn):
    result = run(
        "--dsn", dsn, "--json", "import", "jsonl", "--skip-invalid", str(FIXTURES / "messages-malformed.jsonl")
    )
    assert result.returncode == 1 and "messages-malformed.jsonl:3" in result.stderr
    assert json.loads(result.stdout) == {
        "sessions": 2,
        "turns_added": 4,
        "skipped_sessions": 0,
        "forgotten_sessions": 0,
        "invalid_lines": 1,
    }


def test_import_is_idempotent_and_resumes_where_it_stopped(db, dsn):
    paths = [str(FIXTURES / "messages.jsonl")]
    first = run("--dsn", dsn, "--json", "import", "jsonl", *paths)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["turns_added"] == 5
    assert "import [########################] 2/2 sessions" in first.stderr
    db.execute("delete from memory.turns where message_id = 't3'")  # as if the import had stopped halfway
    db.commit()
    again = run("--dsn", dsn, "--json", "import", "jsonl", *paths)
    assert json.loads(again.stdout)["turns_added"] == 1
    rows = db.execute(
        "select s.agent_id, s.source, count(*) from memory.turns join memory.sessions as s "
        "using (tenant_id, session_key) group by 1, 2"
    ).fetchall()
    assert rows == [("helpdesk", "import:jsonl", 5)]


def test_import_an_opencode_store_twice_stores_it_once(db, dsn):
    store = str(FIXTURES / "opencode-storage")
    first = run("--dsn", dsn, "--json", "import", "opencode", "--agent-id", "coder", store)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["turns_added"] == 5
    again = run("--dsn", dsn, "--json", "import", "opencode", "--agent-id", "coder", store)
    assert json.loads(again.stdout)["turns_added"] == 0
    rows = db.execute(
        "select tool, status, duration_ms, arguments is not null from memory.tool_executions order by called_at"
    ).fetchall()
    assert rows == [("bash", "success", 1250, True), ("read", "error", 40, True)]


def test_import_markdown_memory_files_twice_remembers_them_once(db, dsn):
    notes = str(FIXTURES / "memory-notes.md")
    first = run("--dsn", dsn, "--json", "import", "markdown", "--agent-id", "coder", notes)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"memories": 9, "created": 9, "unchanged": 0, "resolved": 1, "invalid_lines": 0}
    db.execute("select memory.retract(memory_id) from memory.list_memories(search => 'Dark theme')")  # judged wrong
    db.commit()
    again = run("--dsn", dsn, "--json", "import", "markdown", "--agent-id", "coder", notes)
    assert json.loads(again.stdout) == {"memories": 9, "created": 0, "unchanged": 9, "resolved": 0, "invalid_lines": 0}
    rows = db.execute(
        "select kind, status, subjects, tags, valid_from::date::text, metadata ->> 'imported_from' "
        "from memory.memory_items where agent_id = 'coder' and kind in ('decision', 'task') order by memory_id"
    ).fetchall()
    assert rows[0] == ("decision", "active", ["project atlas"], ["infra"], "2025-03-04", "memory-notes.md:14")
    assert [(kind, status) for kind, status, *_ in rows[2:]] == [("task", "active"), ("task", "resolved")]
    assert db.execute("select count(*) from memory.memories where content like 'Dark theme%%'").fetchone() == (1,)
    bad = FIXTURES.parent / "unit" / "nothing.md"
    refused = run("--dsn", dsn, "import", "markdown", str(bad))
    assert refused.returncode == 1 and f"cannot read {bad}: no such file or directory" in refused.stderr


def test_import_chatgpt_and_claude_code_logs(db, dsn):
    chatgpt = run("--dsn", dsn, "import", "chatgpt", "--agent-id", "me", str(FIXTURES / "chatgpt-conversations.json"))
    assert chatgpt.returncode == 0, chatgpt.stderr
    assert (
        chatgpt.stdout.strip()
        == "sessions: 2, turns added: 5, skipped sessions: 0, forgotten sessions: 0, invalid lines: 0"
    )
    claude = run(
        "--dsn",
        dsn,
        "import",
        "claude-code",
        "--agent-id",
        "me",
        "--enrich",
        "now",
        str(FIXTURES / "claude-code-session.jsonl"),
    )
    assert claude.returncode == 0, claude.stderr
    (tool_turn,) = db.execute("select tool_call_id from memory.turns where role = 'tool'").fetchall()
    assert tool_turn == ("toolu_1",)
    recalled = run("--dsn", dsn, "--json", "recall", "why does the login test fail?", "-k", "3", "--agent-id", "me")
    hits = json.loads(recalled.stdout)
    assert {hit["session_id"] for hit in hits} == {"0b6f7d3e-claude-session"}
    assert any("Freeze the clock" in hit["content"] for hit in hits)


AT = "2026-11-30T14:05:59Z"


def test_commit_recall_explain_feedback_remember_bootstrap_stats(db, dsn):
    messages = json.dumps(
        [
            {"role": "user", "name": "Ana", "content": "We moved the auth service to Postgres last week."},
            {"role": "assistant", "content": "Noted. I still need to rotate the signing keys.", "created_at": AT},
        ]
    )
    committed = subprocess.run(
        [CLI, "--dsn", dsn, "commit", "chat-1", "-", "--agent-id", "bot", "--enrich", "now"],
        input=messages,
        capture_output=True,
        text=True,
    )
    assert committed.stdout.strip() == "chat-1: new session, 2 turns added", committed.stderr

    table = run("--dsn", dsn, "recall", "signing keys", "-k", "1", env={"PGTZ": "UTC"})
    header, rule, row = table.stdout.splitlines()
    assert header.split() == ["score", "kind", "turn_id", "session_id", "created_at", "speaker", "role", "content"]
    assert set(rule.replace(" ", "")) == {"-"} and "rotate the signing keys" in row
    assert " 2026-11-30 14:05 " in row  # the whole date and time, to the minute
    assert row.split()[1] == "turn"
    turn_id = int(row.split()[2])

    db.execute("update memory.sessions set tier = 'cold' where session_id = 'chat-1'")
    db.commit()
    assert run("--dsn", dsn, "--json", "explain-recall", "signing keys", "--tiers", "hot").stdout.strip() == "[]"
    assert "signing keys" in run("--dsn", dsn, "recall", "signing keys", "--tiers", "cold", "--tiers", "warm").stdout

    explained = run("--dsn", dsn, "explain-recall", "signing keys", "-k", "1")
    assert "session +" in explained.stdout and "lexical #" in explained.stdout and "dense #" in explained.stdout

    verdict = run(
        "--dsn", dsn, "give-feedback", "unhelpful", "--turn-id", str(turn_id), "--note", "keys were rotated already"
    )
    assert verdict.stdout.strip() == f"turn {turn_id}: unhelpful, trust 1 -> 0.5"
    remembered = run("--dsn", dsn, "remember", "Ana leads security.", "--kind", "fact", "--agent-id", "bot")
    assert remembered.stdout.startswith("remembered as memory ")
    context = run("--dsn", dsn, "bootstrap", "--agent-id", "bot")
    assert context.stdout.startswith("## Remembered\n- Ana leads security.")
    stats = json.loads(run("--dsn", dsn, "--json", "stats").stdout)
    assert [(s["agent_id"], s["sessions"], s["turns"], s["feedback"]) for s in stats] == [("bot", 2, 3, 1)]


def test_export_then_import_into_another_tenant_reproduces_the_sessions(db, dsn, tmp_path):
    assert run("--dsn", dsn, "import", "jsonl", str(FIXTURES / "messages.jsonl")).returncode == 0
    exported = tmp_path / "export.jsonl.gz"
    result = run("--dsn", dsn, "export", "--agent-id", "helpdesk", "-o", str(exported))
    assert result.stderr.strip() == (
        "exported 2 sessions, 0 memories, 0 merges, 0 supersessions, 0 entities, 0 entity states, 0 feedback"
    )
    assert exported.read_bytes()[:2] == b"\x1f\x8b"
    imported = run("--dsn", dsn, "--tenant", "copy", "--json", "import", "jsonl", str(exported))
    assert json.loads(imported.stdout) == [{"record_type": "session", "imported": 2, "unchanged": 0, "forgotten": 0}]
    again = run("--dsn", dsn, "import", "jsonl", str(exported))
    assert again.stdout.strip() == "sessions: 0 imported, 2 here already"
    copy = run("--dsn", dsn, "--tenant", "copy", "export")
    original = run("--dsn", dsn, "export")
    assert copy.stdout.splitlines()[1:] == original.stdout.splitlines()[1:]  # all but the header's time


def test_one_session_is_exported_in_the_shape_commit_takes(db, dsn):
    assert run("--dsn", dsn, "import", "jsonl", str(FIXTURES / "messages.jsonl")).returncode == 0
    result = run("--dsn", dsn, "export", "--session-id", "support-17")
    (line,) = result.stdout.splitlines()
    assert ("record" in json.loads(line), json.loads(line)["session_id"]) == (False, "support-17")
    assert result.stderr.strip() == "exported 1 sessions"


def test_a_bad_export_record_is_named_by_file_and_line_and_nothing_is_imported(db, dsn, tmp_path):
    records = tmp_path / "bad.jsonl"
    lines = [
        {"record": "header", "format_version": 1},
        {"record": "session", "session_id": "s1", "messages": [{"role": "user", "content": "hello"}]},
        {"record": "memory", "id": 1, "kind": "gossip", "content": "x"},
    ]
    records.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = run("--dsn", dsn, "import", "jsonl", str(records))
    assert result.returncode == 1
    assert result.stderr.startswith(f"agent-memory: {records}:3: record (memory): ")
    assert "(nothing imported)" in result.stderr
    assert db.execute("select count(*) from memory.sessions").fetchone() == (0,)


def test_a_line_of_an_export_that_is_not_json_stops_the_import(db, dsn, tmp_path):
    records = tmp_path / "bad.jsonl"
    session = {"record": "session", "session_id": "s1", "messages": [{"role": "user", "content": "hello"}]}
    records.write_text(json.dumps({"record": "header"}) + "\n" + json.dumps(session) + "\n{not json\n")
    result = run("--dsn", dsn, "import", "jsonl", str(records))
    assert (result.returncode, result.stderr.count("(nothing imported)")) == (1, 1)
    assert result.stderr.startswith(f"agent-memory: {records}:3: ")
    assert db.execute("select count(*) from memory.sessions").fetchone() == (0,)


def test_retention_and_archives_from_the_command_line(db, dsn, tmp_path):
    assert run("--dsn", dsn, "import", "jsonl", str(FIXTURES / "messages.jsonl")).returncode == 0
    db.execute("update memory.sessions set updated_at = now() - interval '400 days' where session_id = 'support-17'")
    db.commit()
    assert run("--dsn", dsn, "list-retention-policies").stdout.startswith("no retention policies")
    added = run("--dsn", dsn, "set-retention", "sessions", "--max-age", "365d")
    assert added.stdout.strip() == "retention policy 1 added"
    preview = run("--dsn", dsn, "--json", "retention-preview")
    assert [(item["session_id"], item["reason"]) for item in json.loads(preview.stdout)] == [
        ("support-17", "unused for more than 365 days")
    ]
    db.autocommit = True
    db.execute("call memory.maintain()")
    listed = json.loads(run("--dsn", dsn, "--json", "list-archives").stdout)
    assert [(a["archive_id"], a["removed"]["sessions"]) for a in listed] == [(1, 1)]
    saved = tmp_path / "a1.jsonl.gz"
    assert run("--dsn", dsn, "archive", "1", "-o", str(saved)).returncode == 0
    assert run("--dsn", dsn, "drop-retention", "1").stdout.strip() == "retention policy 1 dropped"
    back = run("--dsn", dsn, "import", "jsonl", str(saved))
    assert back.stdout.strip() == "sessions: 1 imported, 0 here already"
    assert run("--dsn", dsn, "drop-archive", "1").stdout.strip() == "archive 1: data dropped, record kept"
    gone = run("--dsn", dsn, "archive", "1")
    assert (gone.returncode, gone.stderr.strip()) == (
        1,
        "agent-memory: archive 1 holds no data (dropped, or no such archive)",
    )
    refused = run("--dsn", dsn, "set-retention", "turns", "--keep-last", "3")
    assert refused.returncode == 2 and "argument data: invalid choice: 'turns'" in refused.stderr


def test_forget_and_its_errors(db, dsn):
    assert run("--dsn", dsn, "import", "jsonl", str(FIXTURES / "messages.jsonl")).returncode == 0
    forgot = run("--dsn", dsn, "forget", "support-17", "--agent-id", "helpdesk")
    assert forgot.stdout.strip() == "forgot support-17: 3 turns, 0 indexed chunks, 0 memories (tombstone 1)"
    again = run("--dsn", dsn, "forget", "support-17", "--agent-id", "helpdesk")
    assert again.returncode == 1
    assert again.stderr.strip() == 'agent-memory: no session "support-17" for agent "helpdesk" in tenant "default"'
    reimport = run("--dsn", dsn, "--json", "import", "jsonl", str(FIXTURES / "messages.jsonl"))
    assert reimport.returncode == 0, reimport.stderr
    assert json.loads(reimport.stdout)["forgotten_sessions"] == 1
    assert "session support-17 not imported: agent_memory: session support-17 of agent helpdesk was forgotten" in (
        reimport.stderr
    )
    allowed = run("--dsn", dsn, "--json", "import", "jsonl", str(FIXTURES / "messages.jsonl"), "--allow-forgotten")
    assert json.loads(allowed.stdout)["forgotten_sessions"] == 0
    assert json.loads(allowed.stdout)["turns_added"] == 3
    whole = run("--dsn", dsn, "forget-agent", "helpdesk")
    assert whole.stdout.startswith("forgot agent helpdesk: 2 sessions, 5 turns")
    assert run("--dsn", dsn, "forget-agent", "helpdesk").returncode == 1
    empty = run("--dsn", dsn, "forget-range", "2000-01-01", "2000-01-02")
    assert empty.returncode == 1 and "nothing in this tenant was said between 2000-01-01" in empty.stderr
    unknown = run("--dsn", dsn, "forget-entity", "Atlantis", "--agent-id", "helpdesk")
    assert unknown.returncode == 1 and 'no entity "Atlantis" for agent "helpdesk"' in unknown.stderr


def test_bad_input_is_one_clear_line_and_exit_1(dsn):
    bad_json = subprocess.run([CLI, "--dsn", dsn, "commit", "s1"], input="[{", capture_output=True, text=True)
    assert bad_json.returncode == 1 and bad_json.stderr.startswith("agent-memory: stdin:1: not valid JSON")
    bad_role = subprocess.run(
        [CLI, "--dsn", dsn, "commit", "s1"], input='[{"role": "robot", "content": "x"}]', capture_output=True, text=True
    )
    assert bad_role.stderr.strip().startswith("agent-memory: message 0 has unknown role")
    bad_weights = run("--dsn", dsn, "recall", "x", "--weights", "{nope")
    assert bad_weights.returncode == 1 and "--weights is not valid JSON" in bad_weights.stderr


def test_db_url_finds_the_nearest_server_directory_from_a_subdirectory(tmp_path):
    (tmp_path / ".agent-memory" / "data").mkdir(parents=True)
    (tmp_path / "src" / "deep").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "AGENT_MEMORY_HOME"}
    result = subprocess.run(
        [CLI, "--port", "55499", "db", "url"], capture_output=True, text=True, env=env, cwd=tmp_path / "src" / "deep"
    )
    assert result.stdout.strip() == f"postgresql://postgres@/agent_memory?host={tmp_path}/.agent-memory/run&port=55499"
    assert result.stderr.strip() == (
        f"agent-memory: no server running in {tmp_path}/.agent-memory (chosen as the nearest .agent-memory/ with a"
        " server); choose another with --dir or $AGENT_MEMORY_HOME, or use --dsn or $DATABASE_URL for any database"
    )


def test_db_url_and_status_say_which_directory_they_chose_when_no_server_runs_there(tmp_path):
    url = run("db", "url", env={"AGENT_MEMORY_HOME": str(tmp_path)}, cwd="/")
    assert url.returncode == 0 and url.stdout.startswith(f"postgresql://postgres@/agent_memory?host={tmp_path}/run&")
    assert f"no server running in {tmp_path} (chosen as $AGENT_MEMORY_HOME)" in url.stderr
    status = run("db", "status", env={"AGENT_MEMORY_HOME": str(tmp_path)})
    assert status.returncode == 3 and f"no server running in {tmp_path}" in status.stderr


def test_a_running_server_is_found_without_a_warning(server_dir):
    assert run("--dir", server_dir, "--port", "55499", "db", "start").returncode == 0
    url = run("db", "url", "--port", "55499", env={"AGENT_MEMORY_HOME": server_dir})
    assert (url.returncode, url.stderr) == (0, "")


@pytest.mark.parametrize(
    "args",
    [
        ["--dsn", "{dsn}", "--json", "--tenant", "t", "recall", "signing"],
        ["recall", "signing", "--json", "--dsn", "{dsn}", "--tenant", "t"],
        ["--json", "recall", "--tenant", "t", "signing", "--dsn", "{dsn}"],
    ],
)
def test_global_options_go_before_or_after_the_command(dsn, args):
    result = run(*[arg.format(dsn=dsn) for arg in args])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_a_global_option_after_the_command_wins_over_one_before():
    parse = build_parser().parse_args
    assert parse(["--tenant", "a", "recall", "q", "--tenant", "b"]).tenant == "b"
    assert parse(["--tenant", "a", "--dbname", "x", "recall", "q"]).tenant == "a"
    assert (parse(["recall", "q"]).tenant, parse(["recall", "q"]).json, parse(["stats"]).dbname) == (
        None,
        False,
        "agent_memory",
    )


def test_a_claude_code_log_given_to_import_jsonl_is_one_line_naming_the_right_command(dsn):
    path = FIXTURES / "claude-code-session.jsonl"
    result = run("--dsn", dsn, "import", "jsonl", str(path))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"agent-memory: {path}: looks like a Claude Code transcript: use `agent-memory import claude-code {path}`"
    ]


def test_skip_invalid_leaves_out_only_the_refused_line_and_names_it(db, dsn, tmp_path):
    path = tmp_path / "chats.jsonl"
    roles = ["user", "robot", "assistant"]
    path.write_text("".join(json.dumps({"session_id": "s", "role": r, "content": f"line {r}"}) + "\n" for r in roles))
    refused = run("--dsn", dsn, "import", "jsonl", str(path))
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith(
        f'agent-memory: {path}:2: has unknown role "robot" (expected user, assistant, system or tool)'
    )
    result = run("--dsn", dsn, "--json", "import", "jsonl", "--skip-invalid", str(path))
    assert result.returncode == 1
    assert f'agent-memory: {path}:2: has unknown role "robot"' in result.stderr
    assert json.loads(result.stdout) == {
        "sessions": 1,
        "turns_added": 2,
        "skipped_sessions": 0,
        "forgotten_sessions": 0,
        "invalid_lines": 1,
    }
    assert db.execute("select array_agg(content order by position) from memory.turns").fetchone()[0] == [
        "line user",
        "line assistant",
    ]


def test_every_file_error_is_one_line_naming_the_file(dsn, tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "bad.json").write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')
    (tmp_path / "broken.json").write_text("[\n,]")
    cases = [
        (["import", "jsonl", "chats.jsonl"], "cannot read chats.jsonl: no such file or directory"),
        (["import", "chatgpt", "folder"], "cannot read folder: is a directory"),
        (["commit", "s1", "chats.json"], "cannot read chats.json: no such file or directory"),
        (["commit", "s1", "bad.json"], "bad.json:1: not UTF-8 text (byte 0xe9)"),
        (["commit", "s1", "broken.json"], "broken.json:2: not valid JSON: Expecting value (column 1)"),
        (["export", "-o", "missing/out.jsonl"], "cannot open missing/out.jsonl: no such file or directory"),
    ]
    for args, problem in cases:
        result = run("--dsn", dsn, *args, cwd=tmp_path)
        assert (result.returncode, result.stderr) == (1, f"agent-memory: {problem}\n"), args


def test_reindex_queues_the_sessions_in_scope_for_the_worker(db, dsn):
    assert run("--dsn", dsn, "import", "jsonl", "--enrich", "none", str(FIXTURES / "messages.jsonl")).returncode == 0
    one = run("--dsn", dsn, "reindex", "--agent-id", "helpdesk", "--session-id", "support-17")
    assert one.stdout.strip() == (
        "queued 1 sessions for re-indexing (1 jobs); run `agent-memory work` to process them"
    ), one.stderr
    every = run("--dsn", dsn, "reindex", "--json")
    assert json.loads(every.stdout) == {"sessions": 2, "jobs": 1}  # support-17 is queued already
    assert db.execute("select count(*) from memory.jobs where status = 'queued'").fetchone()[0] == 2


def test_stats_watch_reads_the_metrics_again_and_tells_what_changed(dsn):
    messages = json.dumps([{"role": "user", "content": "We moved the auth service to Postgres last week."}])
    commit = [CLI, "--dsn", dsn, "commit", "chat-1", "-", "--enrich", "now"]
    subprocess.run(commit, input=messages, text=True, check=True)
    run("--dsn", dsn, "recall", "auth service")
    watched = run("--dsn", dsn, "stats", "--watch", "0.1", "--count", "2")
    lines = watched.stdout.splitlines()
    assert len(lines) == 6, watched.stdout  # a time and two lines per reading
    assert lines[1].startswith("default: recalls 1 (+1; p50 <= ")
    assert lines[4].startswith("default: recalls 1 (+0, 0.0/s; p50 -, p95 -; 0 degraded) | commits 1, turns 1")
    assert "sessions 1 hot" in lines[5]
    as_json = [
        json.loads(line)
        for line in run("--dsn", dsn, "--json", "stats", "--watch", "0.1", "--count", "1").stdout.splitlines()
    ]
    assert {m["metric"] for m in as_json[0]["metrics"]} >= {"recalls", "commits", "sessions"}
    refused = run("--dsn", dsn, "stats", "--watch", "0")
    assert refused.returncode == 1 and "--watch needs a positive number of seconds" in refused.stderr
