"""The spool with a real server stopped and started again: commits made while it is down are kept, replayed in
order, each stored once; the Claude Code hooks spool a transcript and the next hook commits it."""

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from own_server import own_server

from agent_memory.results import Committed
from agent_memory.spool import Spool, Spooled

CLI = str(Path(sys.executable).parent / "agent-memory")
TRANSCRIPT = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code-session.jsonl"


def said(text: str) -> list[dict]:
    return [{"role": "user", "content": text, "id": text}, {"role": "assistant", "content": f"Noted: {text}"}]


def cli(dsn: str, spool: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [CLI, "--dsn", dsn, "--json", *args, "--spool", str(spool)]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120)


def stored(dsn: str) -> list[tuple[str, str, int]]:
    """Each session's agent and turns, in the order the sessions were stored."""
    with psycopg.connect(dsn) as conn:
        return conn.execute(
            "select s.session_id, s.agent_id, count(t.*)::int from memory.sessions as s left join memory.turns as t "
            "using (tenant_id, session_key) where s.session_id <> 'remembered' group by s.tenant_id, s.session_key "
            "order by s.session_key"
        ).fetchall()


@pytest.fixture
def server():
    with own_server() as own:
        yield own


def test_commits_made_while_the_server_is_down_are_replayed_in_order_once(server, tmp_path):
    dsn, directory = server.url("memory"), tmp_path / "spool"
    spool = Spool(directory)
    assert isinstance(spool.commit(dsn, "monday", said("Deploys are on Fridays."), agent_id="bot"), Committed)
    server.stop()
    kept = [spool.commit(dsn, day, said(f"On {day} we shipped."), agent_id="bot") for day in ("tuesday", "wednesday")]
    kept.append(spool.commit(dsn, "notes", said("Ana is on call."), agent_id="helper", tenant="acme"))
    assert all(isinstance(result, Spooled) for result in kept) and kept[1].entries == 2
    status = json.loads(cli(dsn, directory, "spool", "status").stdout)
    assert {(f["tenant"], f["agent_id"], f["entries"]) for f in status} == {(None, "bot", 2), ("acme", "helper", 1)}
    down = cli(dsn, directory, "spool", "replay")
    assert down.returncode == 1 and json.loads(down.stdout) == {
        "committed": 0,
        "turns_added": 0,
        "waiting": 3,
        "rejected": 0,
    }

    server.start()
    replayed = cli(dsn, directory, "spool", "replay")
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == {"committed": 3, "turns_added": 6, "waiting": 0, "rejected": 0}
    # as if a replay had crashed after its commit, before it emptied the file: the entry comes back
    spool.add(None, "tuesday", said("On tuesday we shipped."), {"agent_id": "bot"})
    again = json.loads(cli(dsn, directory, "spool", "replay").stdout)
    assert again == {"committed": 1, "turns_added": 0, "waiting": 0, "rejected": 0}
    assert stored(dsn) == [("monday", "bot", 2), ("tuesday", "bot", 2), ("wednesday", "bot", 2), ("notes", "helper", 2)]
    with psycopg.connect(dsn) as conn:
        assert conn.execute("select count(*) from memory.turns where tenant_id = 'acme'").fetchone() == (2,)
    assert json.loads(cli(dsn, directory, "spool", "status").stdout) == []


def test_what_the_database_refuses_is_set_aside_and_the_rest_goes_on(server, tmp_path):
    dsn, spool = server.url("memory"), Spool(tmp_path / "spool")
    spool.add(None, "bad", [{"role": "robot", "content": "beep"}], {"agent_id": "bot"})
    spool.add(None, "mixed", [*said("Tabs, not spaces."), {"role": "robot", "content": "beep"}], {"agent_id": "bot"})
    (file,) = spool.files()
    with file.path.open("a") as cut_short:  # a writer that died halfway through its line
        cut_short.write('{"spooled_at": "2026-12-05T10:00:00+00:00", "session_id": "lost", "messa')
    spool.add(None, "good", said("Spaces, not tabs."), {"agent_id": "bot"})
    done = spool.replay(dsn)
    assert (done.committed, done.rejected, done.waiting) == (2, 3, 0)
    (aside,) = (tmp_path / "spool").glob("*/*.rejected.jsonl")
    reasons = [json.loads(line)["reason"] for line in aside.read_text().splitlines()]
    assert "role" in reasons[0] and "message 2 has unknown role" in reasons[1] and "cut short" in reasons[2]
    assert stored(dsn) == [("mixed", "bot", 2), ("good", "bot", 2)]
    (file,) = spool.files()
    assert (file.entries, file.rejected) == (0, 3)


def test_a_hook_spools_the_transcript_and_the_next_one_commits_it(server, tmp_path):
    dsn, directory = server.url("memory"), tmp_path / "spool"
    lines = TRANSCRIPT.read_text().splitlines(keepends=True)
    transcript = tmp_path / "0b6f7d3e-claude-session.jsonl"
    transcript.write_text("".join(lines[:5]))
    event = {"hook_event_name": "PreCompact", "transcript_path": str(transcript), "session_id": "0b6f7d3e"}
    log = tmp_path / "hooks.log"
    server.stop()
    copies = tmp_path / "copies"
    down = cli(dsn, directory, "hook", "--log", str(log), "--backup", str(copies), stdin=json.dumps(event))
    assert (down.returncode, down.stdout) == (0, "agent-memory: the server is out of reach: 1 session(s) spooled\n")
    assert "Let me read the test first." in (copies / "default" / "0b6f7d3e-claude-session.md").read_text()
    assert "PreCompact error" in log.read_text()
    server.start()
    transcript.write_text("".join(lines))
    up = cli(dsn, directory, "hook", "--log", str(log), stdin=json.dumps(event | {"hook_event_name": "SessionEnd"}))
    assert up.stdout == "agent-memory: 0b6f7d3e-claude-session: 2 turns added\n", up.stdout
    assert stored(dsn) == [("0b6f7d3e-claude-session", "default", 5)]
    assert Spool(directory).files() == []
