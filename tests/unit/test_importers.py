"""The importers' readers on small realistic files (tests/fixtures), without a database."""

import json
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from agent_memory import importers, memory_files
from agent_memory.errors import InvalidInput

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
        f'{path} conversation 1: has no "mapping" of messages',
        f'{path} conversation 2: has no "conversation_id" or "id"',
        f"{path} conversation 3: is not a JSON object",
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
    assert (session.messages[2]["status"], session.messages[2]["duration_ms"]) == ("success", 1000)


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


def test_claude_code_compaction_summaries_are_left_out(tmp_path):
    path = tmp_path / "s.jsonl"
    shutil.copy(FIXTURES / "claude-code-session.jsonl", path)
    summary = {"type": "user", "uuid": "c1", "sessionId": "0b6f7d3e-claude-session", "isCompactSummary": True}
    summary["message"] = {"role": "user", "content": "This session is being continued from a previous conversation."}
    with path.open("a") as file:
        file.write(json.dumps(summary) + "\n")
    (session,) = importers.read("claude-code", [path]).sessions
    assert [m["id"] for m in session.messages] == ["u1", "u2", "u3", "u5", "u6"]


@pytest.mark.parametrize(
    ("given", "fixture", "looks", "described"),
    [
        ("jsonl", "claude-code-session.jsonl", "claude-code", "a Claude Code transcript"),
        ("jsonl", "chatgpt-conversations.json", "chatgpt", "a ChatGPT export (conversations.json)"),
        ("claude-code", "messages.jsonl", "jsonl", "JSON lines of messages with a session_id"),
        ("chatgpt", "claude-code-session.jsonl", "claude-code", "a Claude Code transcript"),
    ],
)
def test_a_file_of_another_format_is_one_problem_naming_the_command_to_use(given, fixture, looks, described):
    path = FIXTURES / fixture
    read = importers.read(given, [path])
    assert read.sessions == []
    assert [str(p) for p in read.problems] == [
        f"{path}: looks like {described}: use `agent-memory import {looks} {path}`"
    ]


def test_files_that_cannot_be_read_are_one_problem_each_naming_the_file(tmp_path):
    missing, folder = tmp_path / "chats.jsonl", tmp_path / "folder"
    folder.mkdir()
    read = importers.read("jsonl", [missing, folder, FIXTURES / "messages.jsonl"])
    assert [str(p) for p in read.problems] == [
        f"cannot read {missing}: no such file or directory",
        f"cannot read {folder}: is a directory",
    ]
    assert len(read.sessions) == 2  # the readable file is still read


def test_bad_utf8_is_named_by_file_and_line(tmp_path):
    lines = tmp_path / "latin1.jsonl"
    lines.write_bytes(b'{"session_id": "s", "role": "user", "content": "ok"}\n{"content": "caf\xe9"}\n')
    read = importers.read("jsonl", [lines])
    assert [str(p) for p in read.problems] == [f"{lines}:2: not UTF-8 text (byte 0xe9)"]
    assert [len(s.messages) for s in read.sessions] == [1]
    export = tmp_path / "conversations.json"
    export.write_bytes(b'[\n  {"title": "caf\xe9"}\n]')
    assert [str(p) for p in importers.read("chatgpt", [export]).problems] == [f"{export}:2: not UTF-8 text (byte 0xe9)"]


class RefusingMemory:
    """Refuses, as memory.commit does, the first message whose role is not user or assistant."""

    def __init__(self):
        self.committed = []

    def commit(self, session_id, messages, **options):
        for index, message in enumerate(messages):
            if message["role"] not in ("user", "assistant"):
                raise InvalidInput(f'agent_memory: message {index} has unknown role "{message["role"]}"')
        self.committed.append([m.get("id") for m in messages])

        class Committed:
            turns_added = len(messages)

        return Committed()


def test_a_refused_message_is_named_by_its_file_line_and_only_it_is_left_out(tmp_path):
    path = tmp_path / "chats.jsonl"
    roles = ["user", "robot", "assistant", "alien", "user"]
    path.write_text(
        "".join(json.dumps({"session_id": "s", "id": f"m{n}", "role": r}) + "\n" for n, r in enumerate(roles))
    )
    (session,) = importers.read("jsonl", [path]).sessions
    memory = RefusingMemory()
    options = {"agent_id": None, "source": "import:jsonl", "enrich": None}
    added, refused = importers.commit(memory, session, **options, skip_invalid=True)
    assert (added, memory.committed) == (3, [["m0", "m2", "m4"]])
    assert [str(p) for p in refused] == [f'{path}:2: has unknown role "robot"', f'{path}:4: has unknown role "alien"']
    with pytest.raises(importers.ImportProblem, match=f'^{path}:2: has unknown role "robot"$'):
        importers.commit(memory, session, **options, skip_invalid=False)


def test_a_refused_message_of_a_whole_session_line_is_named_by_line_and_position(tmp_path):
    path = tmp_path / "export.jsonl"
    messages = [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]
    path.write_text("\n" + json.dumps({"session_id": "s", "messages": messages}) + "\n")
    (session,) = importers.read("jsonl", [path]).sessions
    _, refused = importers.commit(
        RefusingMemory(), session, agent_id=None, source="import:jsonl", enrich=None, skip_invalid=True
    )
    assert [str(p) for p in refused] == [f'{path}:2: message 2 has unknown role "robot"']


OPENCODE = FIXTURES / "opencode-storage"


def test_an_opencode_store_becomes_its_conversation_with_tool_results_status_and_duration():
    read = importers.read("opencode", [OPENCODE])
    assert read.problems == []
    (session,) = read.sessions
    assert session.session_id == "ses_5c1e9a0b3ffeQ2r7Lk1mVdXw8a" and session.source == "opencode"
    assert session.metadata["title"] == "Fix the failing checkout test"
    assert session.started_at == datetime(2025, 12, 4, 12, 27, 40, tzinfo=UTC)
    assert [(m["role"], m["id"][:4]) for m in session.messages] == [
        ("user", "msg_"),
        ("assistant", "msg_"),
        ("tool", "prt_"),
        ("tool", "prt_"),
        ("user", "msg_"),
    ]
    asked, answer, ran, failed, said = session.messages
    assert "Called the Read tool" not in asked["content"]  # OpenCode's synthetic text is left out
    assert "coupon module changed rounding" not in answer["content"]  # and so is reasoning
    assert [call["function"]["name"] for call in answer["tool_calls"]] == ["bash", "read"]
    assert json.loads(answer["tool_calls"][0]["function"]["arguments"])["command"].startswith("pytest")
    assert ran["tool_call_id"] == answer["tool_calls"][0]["id"] and "1 failed" in ran["content"]
    assert (ran["status"], ran["duration_ms"], ran["metadata"]) == ("success", 1250, {"tool": "bash"})
    assert (failed["status"], failed["duration_ms"], failed["metadata"]) == ("error", 40, {"tool": "read"})
    assert failed["content"].startswith("Error: File not found")
    assert said["content"] == "Good catch. From now on we round money only at the end."


def test_an_opencode_session_file_alone_is_read_from_its_store():
    (session_file,) = OPENCODE.glob("session/*/*.json")
    (session,) = importers.read("opencode", [session_file]).sessions
    assert len(session.messages) == 5


def test_opencode_problems_name_the_file(tmp_path):
    store = tmp_path / "storage"
    shutil.copytree(OPENCODE, store)
    (message,) = store.glob("message/*/msg_a3e1f7a1*.json")
    message.write_text('{"id": "msg_x", "role": "robot"}')
    (part,) = store.glob("part/*/prt_a3e1f6612005*.json")
    tool = json.loads(part.read_text())
    assert importers.read("opencode", [store]).problems == [
        importers.ImportProblem(str(message), 0, 'is no message: needs "id" and role user or assistant')
    ]
    message.write_text("{not json")
    assert [str(p) for p in importers.read("opencode", [store]).problems] == [
        f"{message}:1: not valid JSON: Expecting property name enclosed in double quotes (column 2)"
    ]
    message.unlink()
    del tool["callID"]
    part.write_text(json.dumps(tool))
    assert [str(p) for p in importers.read("opencode", [store]).problems] == [
        f'{part}: is a tool part without "tool", "callID" or "state"'
    ]
    assert [str(p) for p in importers.read("opencode", [tmp_path / "elsewhere"]).problems] == [
        f"cannot read {tmp_path / 'elsewhere'}: is no OpenCode store (no session/ directory) nor a session file"
    ]


def test_markdown_memory_files_become_memories_by_heading_item_and_date():
    items, problems = memory_files.read([FIXTURES / "memory-notes.md"])
    assert problems == []
    found = [(i.kind, i.content, i.subjects, i.tags, i.valid_from and i.valid_from.date(), i.done) for i in items]
    assert found == [
        ("preference", "Ana prefers short code reviews, one topic each.", [], [], None, False),
        ("preference", "Dark theme in every editor #ui", [], ["ui"], None, False),
        (
            "decision",
            "Move the job queue from RabbitMQ to Redis streams #infra",
            ["Project Atlas"],
            ["infra"],
            date(2025, 3, 4),
            False,
        ),
        (
            "decision",
            "Keep PostgreSQL 15 until the Citus upgrade is tested on staging.",
            ["Project Atlas"],
            [],
            date(2025, 4, 10),
            False,
        ),
        ("task", "Rotate the staging database password", ["Project Atlas"], [], None, False),
        ("task", "Write the migration guide", ["Project Atlas"], [], None, True),
        (
            "fact",
            "Deploy of Atlas 2.1 failed on the arm64 runners #incident",
            [],
            ["incident"],
            date(2025, 5, 20),
            False,
        ),
        ("rule", "Never push to main without a review.", [], [], None, False),
        ("rule", "Run the migrations before the app deploys.", [], [], None, False),
    ]
    assert (items[0].path, items[0].line) == (str(FIXTURES / "memory-notes.md"), 7)


def test_markdown_problems_name_the_line(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_text("## Decisions\n\n- 2025-02-30: a date that is not\n-  \n- fine\n## 2025-13-01\n")
    items, problems = memory_files.read([path])
    assert [str(p) for p in problems] == [
        f"{path}:3: no such date 2025-02-30",
        f"{path}:4: is an empty item",
        f"{path}:6: no such date 2025-13-01",
    ]
    assert [item.content for item in items] == ["fine"]
    assert [str(p) for p in memory_files.read([tmp_path / "none"])[1]] == [
        f"cannot read {tmp_path / 'none'}: no such file or directory"
    ]


def test_opencode_parts_it_does_not_know_or_calls_not_finished_are_left_out(tmp_path):
    store = tmp_path / "storage"
    shutil.copytree(OPENCODE, store)
    (folder,) = store.glob("part/msg_a3e1f6612001*")
    (folder / "prt_a3e1f6612009Retry.json").write_text(json.dumps({"id": "prt_a3e1f6612009Retry", "type": "retry"}))
    (part,) = folder.glob("prt_a3e1f6612006*.json")
    running = json.loads(part.read_text())
    running["state"] = {"status": "running", "input": {}, "time": {"start": 1764851265000}}
    part.write_text(json.dumps(running))
    read = importers.read("opencode", [store])
    assert read.problems == []
    (session,) = read.sessions
    assert [m["role"] for m in session.messages] == ["user", "assistant", "tool", "user"]
    assert [call["function"]["name"] for call in session.messages[1]["tool_calls"]] == ["bash"]
    alone = tmp_path / "ses_x.json"
    alone.write_text('{"id": "ses_x"}')
    assert [str(p) for p in importers.read("opencode", [alone]).problems] == [
        f"{alone}: is no session file of an OpenCode store (<store>/session/<project>/)"
    ]


def test_markdown_rules_lazy_lines_and_anchors_read_as_markdown_means_them(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("- Deploys need a review\nfrom someone else, see [the guide](#deploys).\n\n* * *\n- - -\n")
    items, problems = memory_files.read([path])
    assert problems == [] and [(i.content, i.tags) for i in items] == [
        ("Deploys need a review from someone else, see [the guide](#deploys).", [])
    ]
