"""`agent-memory hook EVENT` as Claude Code runs it: a recorded payload on stdin, the real command, the real
database. It saves the transcript before compaction and at the end, brings memory back at the start, and
never fails its host."""

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory.hooks import EVENTS, bounded
from agent_memory.spool import Spool

CLI = str(Path(sys.executable).parent / "agent-memory")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TRANSCRIPT = FIXTURES / "claude-code-session.jsonl"
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d (\w+) error: (.+)")


def payload(event: str, transcript: Path = TRANSCRIPT) -> str:
    """A payload Claude Code sent, pointing at a transcript here instead of the recording machine's."""
    name = {"PreCompact": "pre-compact", "SessionEnd": "session-end", "SessionStart": "session-start"}[event]
    recorded = json.loads((FIXTURES / f"hook-{name}.json").read_text())
    return json.dumps(recorded | {"transcript_path": str(transcript)})


def hook(dsn: str, log: Path, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [CLI, "--dsn", dsn, "hook", *args, "--log", str(log), "--spool", str(log.parent / "spool")]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)


def test_pre_compact_twice_and_session_end_store_each_turn_once(db, dsn, tmp_path):
    lines = TRANSCRIPT.read_text().splitlines(keepends=True)
    transcript = tmp_path / "0b6f7d3e-claude-session.jsonl"
    transcript.write_text("".join(lines[:5]))  # the session so far: u1, u2 and the tool result u3
    log = tmp_path / "hooks.log"
    first = hook(dsn, log, payload("PreCompact", transcript), "PreCompact")
    assert (first.returncode, first.stdout) == (0, "agent-memory: 0b6f7d3e-claude-session: 3 turns added\n")
    transcript.write_text("".join(lines))  # the session went on
    assert hook(dsn, log, payload("PreCompact", transcript), "PreCompact").returncode == 0
    end = hook(dsn, log, payload("SessionEnd", transcript))  # the event from hook_event_name
    assert (end.returncode, end.stdout) == (0, "agent-memory: 0b6f7d3e-claude-session: 0 turns added\n")
    rows = db.execute(
        "select t.message_id, count(*) from memory.turns as t join memory.sessions as s using (tenant_id, session_key)"
        " where (s.session_id, s.agent_id, s.source) = ('0b6f7d3e-claude-session', 'default', 'claude-code')"
        " group by 1 order by 1"
    ).fetchall()
    assert rows == [("u1", 1), ("u2", 1), ("u3", 1), ("u5", 1), ("u6", 1)]
    assert db.execute("select count(*) from memory.jobs where status = 'queued'").fetchone()[0] >= 1
    assert not log.exists()


def test_session_start_gives_claude_code_what_was_committed_as_context(db, dsn, tmp_path):
    log = tmp_path / "hooks.log"
    empty = hook(dsn, log, payload("SessionStart"), "SessionStart")
    assert (empty.returncode, empty.stdout) == (0, "")  # nothing remembered yet: nothing to add
    assert hook(dsn, log, payload("PreCompact"), "PreCompact").returncode == 0
    assert subprocess.run([CLI, "--dsn", dsn, "work", "--once"], capture_output=True).returncode == 0
    start = hook(dsn, log, payload("SessionStart"), "SessionStart", "--max-chars", "2000")
    assert start.returncode == 0, start.stderr
    output = json.loads(start.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert output["additionalContext"].startswith("# What agent-memory remembers from earlier sessions\n\n## ")
    assert "Freeze the clock" in output["additionalContext"]
    assert not log.exists()


@pytest.fixture
def silent_server():
    """A TCP port that accepts connections and never answers, like a server that hangs."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield f"postgresql://postgres@127.0.0.1:{listener.getsockname()[1]}/x"


@pytest.mark.parametrize(
    ("case", "error"),
    [
        ("unreachable database", "/nonexistent"),
        ("hanging database", "gave up after 1 s|timeout expired"),
        ("missing transcript", "cannot read /nonexistent/s.jsonl: no such file or directory"),
        ("garbage on stdin", "the input is not JSON"),
        ("unknown event", "unknown event 'Stop'"),
    ],
)
def test_a_failing_hook_exits_0_in_time_and_logs_one_line(dsn, silent_server, tmp_path, case, error):
    dsns = {"unreachable database": "postgresql://postgres@/x?host=/nonexistent&port=1"}
    dsns["hanging database"] = silent_server
    stdin = {"missing transcript": payload("PreCompact", Path("/nonexistent/s.jsonl")), "garbage on stdin": "{oops"}
    event = "Stop" if case == "unknown event" else "PreCompact"
    log = tmp_path / "logs" / "hooks.log"
    # Without its bounds the hanging case would wait for ever: subprocess.run's timeout would fail the test.
    result = hook(dsns.get(case, dsn), log, stdin.get(case, payload("PreCompact")), event, "--timeout", "1")
    spooled = "agent-memory: the server is out of reach: 1 session(s) spooled\n" if case in dsns else ""
    assert (result.returncode, result.stdout) == (0, spooled)  # the transcript waits in the spool
    assert [file.entries for file in Spool(log.parent / "spool").files()] == ([1] if spooled else [])
    (line,) = log.read_text().splitlines()
    match = LOG_LINE.fullmatch(line)
    assert match and match[1] == event and re.search(error, match[2]), line


def test_the_connection_is_bounded_keeping_its_own_options():
    assert bounded("postgresql:///app?options=-c%20search_path%3Dx", 2.5) == (
        "dbname=app options='-c search_path=x -c statement_timeout=2500' connect_timeout=3"
    )
    assert "connect_timeout=2 " in bounded("dbname=app", 0.5) + " "


def test_the_settings_in_the_docs_run_this_command_for_each_event():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "client.md").read_text()
    settings = json.loads(re.search(r"## Claude Code hooks.*?```json\n(.*?)```", docs, re.DOTALL)[1])
    for event, groups in settings["hooks"].items():
        (group,) = groups
        assert group["hooks"] == [
            {"type": "command", "command": f"/path/to/agent_memory/.venv/bin/agent-memory hook {event}"}
        ]
    assert sorted(settings["hooks"]) == sorted(EVENTS)
