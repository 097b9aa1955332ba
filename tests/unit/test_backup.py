"""The hooks' markdown copies of sessions: readable, written whole, private, pruned after their days."""

import os
import stat
import time
from datetime import UTC, datetime

from agent_memory.backup import Backup, prune, render, write
from agent_memory.importers import Session

MESSAGES = [
    {"role": "user", "name": "Ana", "content": "Is the build green?", "created_at": "2026-12-05T10:00:00Z"},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ci", "arguments": '{"job": "build"}'}}],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "FAILED ```x```", "status": "error", "duration_ms": 2300},
]


def test_a_session_reads_as_markdown_with_its_calls_and_results():
    text = render("s1", "bot", "claude-code", MESSAGES, datetime(2026, 12, 5, 10, 1, tzinfo=UTC))
    assert text.startswith("# Session s1\n\nagent bot · source claude-code · saved 2026-12-05T10:01:00+00:00\n")
    assert "## Ana · 2026-12-05T10:00:00Z\n\nIs the build green?\n" in text
    assert '- calls `ci` with `{"job": "build"}`' in text
    assert "## tool result (error, 2300 ms)\n\n````\nFAILED ```x```\n````\n" in text  # a fence longer than the text's


def test_a_copy_is_replaced_whole_private_and_pruned_after_its_days(tmp_path):
    first = write(tmp_path / "copies", "bot/1", "s.1", "one")
    assert write(tmp_path / "copies", "bot/1", "s.1", "two") == first and first.read_text() == "two"
    assert first.name == "s%2E1.md" and first.parent.name == "bot%2F1"
    assert stat.S_IMODE(first.stat().st_mode) == 0o600 and stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    old = write(tmp_path / "copies", "bot", "old", "x")
    os.utime(old, (time.time() - 40 * 86400,) * 2)
    assert prune(tmp_path / "copies", 30) == 1 and not old.exists() and first.exists()


def test_a_backup_keeps_each_session_under_its_agent(tmp_path):
    (path,) = Backup(tmp_path, days=30).keep([Session("s1", list(MESSAGES))], "coder", "claude-code")
    assert path == tmp_path / "coder" / "s1.md" and "Is the build green?" in path.read_text()
