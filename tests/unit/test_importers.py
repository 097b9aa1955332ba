"""The importers' readers on small realistic files (tests/fixtures), without a database."""

from pathlib import Path

import pytest

from agent_memory import importers

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_jsonl_messages_are_grouped_into_sessions_in_order():
    read = importers.read("jsonl", [FIXTURES / "messages.jsonl"])
    assert read.problems == []
    assert [(s.agent_id, s.session_id, [m["id"] for m in s.messages]) for s in read.sessions] == [
        ("helpdesk", "support-17", ["t1", "t2", "t3"]),
        ("helpdesk", "support-18", ["t1", "t2"]),
    ]
    assert read.sessions[0].messages[0] == {
        "role": "user",
        "id": "t1",
        "created_at": "2026-10-01T08:00:00Z",
        "name": "Lena",
        "content": "My invoice for September shows the wrong VAT rate.",
    }


def test_a_malformed_jsonl_line_is_named_by_file_and_line(tmp_path):
    read = importers.read("jsonl", [FIXTURES / "messages-malformed.jsonl"])
    (problem,) = read.problems
    assert str(problem).endswith(
        "messages-malformed.jsonl:3: not valid JSON: Unterminated string starting at (column 57)"
    )
    assert [len(s.messages) for s in read.sessions] == [3, 1]  # what the other lines hold
    lines = tmp_path / "bad.jsonl"
    lines.write_text('{"role": "user", "content": "no session"}\n[1, 2]\n\n{"session_id": "s", "messages": 3}\n')
    problems = [str(p) for p in importers.read("jsonl", [lines]).problems]
    assert problems == [
        f'{lines}:1: has no "session_id" (a string)',
        f"{lines}:2: is not a JSON object",
        f'{lines}:4: "messages" is not a list',
    ]


def test_jsonl_sessions_as_export_writes_them(tmp_path):
    path = tmp_path / "export.jsonl"
    path.write_text(
        '{"agent_id": "a", "session_id": "s1", "started_at": "2026-01-02T03:04:05+00:00", "source": "app", '
        '"metadata": {"k": 1}, "messages": [{"role": "user", "content": "hi there, friend"}]}\n'
    )
    (session,) = importers.read("jsonl", [path]).sessions
    assert (session.agent_id, session.source, session.metadata) == ("a", "app", {"k": 1})
    assert session.started_at is not None and session.started_at.isoformat() == "2026-01-02T03:04:05+00:00"


def test_chatgpt_export_follows_the_branch_the_user_last_saw():
    read = importers.read("chatgpt", [FIXTURES / "chatgpt-conversations.json"])
    assert read.problems == []
    backup, lunch = read.sessions
    assert backup.session_id == "6750c1a2-0001" and backup.metadata == {"title": "Postgres backup plan"}
    assert [m["id"] for m in backup.messages] == ["m1b", "m4", "m5"]  # the edited question, not m1 / m2
    assert backup.messages[0]["role"] == "user" and "2 TB" in backup.messages[0]["content"]
    assert backup.messages[0]["created_at"] == "2025-10-24T10:01:40+00:00"
    assert backup.started_at is not None and backup.source == "chatgpt"
    assert [m["role"] for m in lunch.messages] == ["user", "assistant"]


def test_chatgpt_problems_name_the_conversation(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text('[{"title": "x"}, {"mapping": {}, "current_node": null}, 7]')
    assert [str(p) for p in importers.read("chatgpt", [path]).problems] == [
        f'{path} conversation 0: has no "mapping" of messages',
        f'{path} conversation 1: has no "conversation_id" or "id"',
        f"{path} conversation 2: is not a JSON object",
    ]
    path.write_text('[{"title": "x",\n  oops}]')
    assert [str(p) for p in importers.read("chatgpt", [path]).problems] == [
        f"{path}:2: not valid JSON: Expecting property name enclosed in double quotes (column 3)"
    ]


def test_claude_code_log_keeps_the_conversation_and_its_tool_calls():
    read = importers.read("claude-code", [FIXTURES / "claude-code-session.jsonl"])
    assert read.problems == []
    (session,) = read.sessions
    assert session.session_id == "0b6f7d3e-claude-session" and session.metadata == {"cwd": "/home/dev/shop"}
    assert [(m["id"], m["role"]) for m in session.messages] == [
        ("u1", "user"),
        ("u2", "assistant"),
        ("u3", "tool"),
        ("u5", "assistant"),
        ("u6", "user"),
    ]
    read_call = session.messages[1]
    assert read_call["content"] == "Let me read the test first."  # thinking left out
    assert read_call["tool_calls"][0]["function"] == {
        "name": "Read",
        "arguments": '{"file_path": "tests/test_login.py"}',
    }
    assert session.messages[2]["tool_call_id"] == "toolu_1" and "def test_login" in session.messages[2]["content"]


def test_claude_code_problems_name_the_line(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"type": "user", "message": {"role": "robot"}}\nnot json\n')
    assert [str(p) for p in importers.read("claude-code", [path]).problems] == [
        f'{path}:1: has no "message" with a user or assistant role',
        f"{path}:2: not valid JSON: Expecting value (column 1)",
    ]


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown import format 'csv'"):
        importers.read("csv", [])
