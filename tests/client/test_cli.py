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


def test_worker_once_runs_the_queue_and_reports_progress(db, dsn):
    db.execute(
        'select memory.commit(s, \'[{"role": "user", "content": "Deploy the auth service on Friday."}]\')'
        " from unnest(array['s1', 's2', 's3']) as s"
    )
    db.commit()
    result = run("--dsn", dsn, "worker", "--once", "--batch", "2")
    assert result.returncode == 0, result.stderr
    assert "enrichment [" in result.stderr and "3/3 jobs" in result.stderr
    assert result.stdout.strip().endswith("worker finished: 3 done, 0 failed")
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
    assert json.loads(result.stdout) == {"sessions": 2, "turns_added": 4, "skipped_sessions": 0, "invalid_lines": 1}


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


def test_import_chatgpt_and_claude_code_logs(db, dsn):
    chatgpt = run("--dsn", dsn, "import", "chatgpt", "--agent", "me", str(FIXTURES / "chatgpt-conversations.json"))
    assert chatgpt.returncode == 0, chatgpt.stderr
    assert chatgpt.stdout.strip() == "sessions: 2, turns added: 5, skipped sessions: 0, invalid lines: 0"
    claude = run(
        "--dsn",
        dsn,
        "import",
        "claude-code",
        "--agent",
        "me",
        "--enrich",
        "now",
        str(FIXTURES / "claude-code-session.jsonl"),
    )
    assert claude.returncode == 0, claude.stderr
    (tool_turn,) = db.execute("select tool_call_id from memory.turns where role = 'tool'").fetchall()
    assert tool_turn == ("toolu_1",)
    recalled = run("--dsn", dsn, "--json", "recall", "why does the login test fail?", "-k", "3", "--agent", "me")
    hits = json.loads(recalled.stdout)
    assert {hit["session_id"] for hit in hits} == {"0b6f7d3e-claude-session"}
    assert any("Freeze the clock" in hit["content"] for hit in hits)


def test_commit_recall_explain_feedback_remember_bootstrap_stats(db, dsn):
    messages = json.dumps(
        [
            {"role": "user", "name": "Ana", "content": "We moved the auth service to Postgres last week."},
            {"role": "assistant", "content": "Noted. I still need to rotate the signing keys."},
        ]
    )
    committed = subprocess.run(
        [CLI, "--dsn", dsn, "commit", "chat-1", "-", "--agent", "bot", "--enrich", "now"],
        input=messages,
        capture_output=True,
        text=True,
    )
    assert committed.stdout.strip() == "chat-1: new session, 2 turns added", committed.stderr

    table = run("--dsn", dsn, "recall", "signing keys", "-k", "1")
    header, rule, row = table.stdout.splitlines()
    assert header.split() == ["score", "turn_id", "session_id", "created_at", "speaker", "role", "content"]
    assert set(rule.replace(" ", "")) == {"-"} and "rotate the signing keys" in row
    turn_id = int(row.split()[1])

    explained = run("--dsn", dsn, "explain", "signing keys", "--limit", "1")
    assert "session +" in explained.stdout and "lexical #" in explained.stdout and "dense #" in explained.stdout

    verdict = run("--dsn", dsn, "feedback", str(turn_id), "unhelpful", "--note", "keys were rotated already")
    assert verdict.stdout.strip() == f"turn {turn_id}: trust 1 -> 0.5"
    remembered = run("--dsn", dsn, "remember", "Ana leads security.", "--kind", "fact", "--agent", "bot")
    assert remembered.stdout.startswith("remembered as turn ")
    context = run("--dsn", dsn, "bootstrap", "--agent", "bot")
    assert context.stdout.startswith("## Remembered\n- Ana leads security.")
    stats = json.loads(run("--dsn", dsn, "--json", "stats").stdout)
    assert [(s["agent_id"], s["sessions"], s["turns"], s["feedback"]) for s in stats] == [("bot", 2, 3, 1)]


def test_export_then_import_into_another_tenant_reproduces_the_sessions(db, dsn, tmp_path):
    assert run("--dsn", dsn, "import", "jsonl", str(FIXTURES / "messages.jsonl")).returncode == 0
    exported = tmp_path / "export.jsonl"
    result = run("--dsn", dsn, "export", "--agent", "helpdesk", "-o", str(exported))
    assert result.stderr.strip() == "exported 2 sessions"
    imported = run("--dsn", dsn, "--tenant", "copy", "--json", "import", "jsonl", str(exported))
    assert json.loads(imported.stdout)["turns_added"] == 5
    again = run("--dsn", dsn, "--json", "import", "jsonl", str(exported))
    assert json.loads(again.stdout)["turns_added"] == 0
    copy = run("--dsn", dsn, "--tenant", "copy", "export")
    original = run("--dsn", dsn, "export")
    assert copy.stdout == original.stdout


def test_forget_and_its_errors(db, dsn):
    assert run("--dsn", dsn, "import", "jsonl", str(FIXTURES / "messages.jsonl")).returncode == 0
    forgot = run("--dsn", dsn, "forget", "support-17", "--agent", "helpdesk")
    assert forgot.stdout.strip() == "forgot support-17: 3 turns, 0 indexed chunks"
    again = run("--dsn", dsn, "forget", "support-17", "--agent", "helpdesk")
    assert again.returncode == 1
    assert again.stderr.strip() == 'agent-memory: no session "support-17" for agent "helpdesk" in tenant "default"'


def test_bad_input_is_one_clear_line_and_exit_1(dsn):
    bad_json = subprocess.run([CLI, "--dsn", dsn, "commit", "s1"], input="[{", capture_output=True, text=True)
    assert bad_json.returncode == 1 and bad_json.stderr.startswith("agent-memory: stdin is not valid JSON")
    bad_role = subprocess.run(
        [CLI, "--dsn", dsn, "commit", "s1"], input='[{"role": "robot", "content": "x"}]', capture_output=True, text=True
    )
    assert bad_role.stderr.strip().startswith("agent-memory: message 0 has unknown role")
    bad_weights = run("--dsn", dsn, "recall", "x", "--weights", "{nope")
    assert bad_weights.returncode == 1 and "--weights is not valid JSON" in bad_weights.stderr
