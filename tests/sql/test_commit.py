"""memory.commit: storing turns, idempotency, and bad input that stores nothing."""

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

CHAT = [
    {"role": "user", "content": "We decided to use Postgres for the auth service.", "id": "m1", "name": "Ana"},
    {"role": "assistant", "content": [{"type": "text", "text": "Great."}, "I will set up row level security."]},
    {"role": "tool", "content": '{"ok": true}', "tool_call_id": "call_1"},
]


def commit(db, messages, session="s1", **options):
    names = "".join(f", {name} => %({name})s" for name in options)
    row = db.execute(
        f"select * from memory.commit(%(session)s, %(messages)s{names}, enrich => 'none')",
        {"session": session, "messages": Json(messages), **options},
    ).fetchone()
    return row[:2]


def count(db, table):
    return db.execute(f"select count(*) from memory.{table}").fetchone()[0]


def test_first_commit_creates_the_session_and_every_turn(db):
    created, added = commit(db, CHAT)
    assert (created, added) == (True, 3)
    rows = db.execute("select position, role, speaker, message_id, content, tool_call_id from memory.turns order by 1")
    assert rows.fetchall() == [
        (0, "user", "Ana", "m1", CHAT[0]["content"], None),
        (1, "assistant", None, None, "Great.\nI will set up row level security.", None),
        (2, "tool", None, None, '{"ok": true}', "call_1"),
    ]


def test_committing_the_same_messages_twice_changes_nothing(db):
    commit(db, CHAT)
    assert commit(db, CHAT) == (False, 0)
    assert count(db, "turns") == 3


def test_recommitting_a_longer_session_appends_only_new_turns(db):
    commit(db, CHAT)
    longer = [*CHAT, {"role": "user", "content": "Remind me to rotate the keys."}]
    assert commit(db, longer) == (False, 1)
    assert db.execute("select max(position) from memory.turns").fetchone()[0] == 3


def test_a_message_with_a_known_id_is_not_stored_again_wherever_it_appears(db):
    commit(db, CHAT)
    assert commit(db, [CHAT[0], {"role": "user", "content": "And a new one."}])[1] == 1


def test_event_time_comes_from_the_message_else_the_session_start(db):
    messages = [
        {"role": "user", "content": "hello there", "created_at": "2023-05-08T13:56:00Z"},
        {"role": "assistant", "content": "hi, how are you?"},
    ]
    commit(db, messages)
    times = db.execute("select created_at::text from memory.turns order by position").fetchall()
    assert times == [("2023-05-08 13:56:00+00",), ("2023-05-08 13:56:00+00",)]


def test_session_options_are_stored(db):
    commit(
        db,
        CHAT,
        agent_id="support-bot",
        source="slack",
        model="gpt-x",
        tokens_in=10,
        tokens_out=20,
        metadata=Jsonb({"channel": "#ops"}),
    )
    row = db.execute("select agent_id, source, model, tokens_in, tokens_out, metadata from memory.sessions")
    assert row.fetchone() == ("support-bot", "slack", "gpt-x", 10, 20, {"channel": "#ops"})


def test_same_session_id_under_two_agents_is_two_sessions(db):
    commit(db, CHAT, agent_id="a")
    commit(db, CHAT, agent_id="b")
    assert count(db, "sessions") == 2


def test_tenant_comes_from_the_session_setting(db):
    db.execute("set memory.tenant_id = 'acme'")
    commit(db, CHAT)
    assert db.execute("select distinct tenant_id from memory.turns").fetchall() == [("acme",)]


def test_commit_queues_one_enrichment_job(db):
    row = db.execute("select job_id, turns_added from memory.commit('s1', %s)", (Json(CHAT),)).fetchone()
    assert row[0] is not None
    again = db.execute(
        "select job_id from memory.commit('s1', %s)", (Json([*CHAT, {"role": "user", "content": "more!"}]),)
    )
    assert again.fetchone()[0] == row[0]
    assert db.execute("select count(*) from memory.jobs where status = 'queued'").fetchone()[0] == 1


BAD = [
    ({"a": 1}, "messages must be a JSON array of messages, got object"),
    ([{"content": "x"}], "message 0 has no role"),
    ([CHAT[0], {"role": "robot", "content": "x"}], 'message 1 has unknown role "robot"'),
    ([{"role": "user"}], "message 0 has no content"),
    ([{"role": "user", "content": 5}], "message 0 has content that is neither a string nor a list of text parts"),
    ([{"role": "user", "content": [{"image": "x"}]}], "message 0 has a content part that is not text"),
    ([{"role": "user", "content": ["a", ["b"]]}], "message 0 has a content part that is not text"),
    ([{"role": "user", "content": [{"text": ["b"]}]}], "message 0 has a content part that is not text"),
    ([{"role": "user", "content": "a\u0000b"}], "message 0 contains a NUL character"),
    ([{"role": "user", "content": "x", "created_at": "yesterday"}], 'message 0 has created_at "yesterday"'),
    (
        [{"role": "user", "content": "x", "created_at": "2024-02-30T10:00:00Z"}],
        'message 0 has created_at "2024-02-30T10:00:00Z", which is not a valid time',
    ),
    ([{"role": "user", "content": "x", "metadata": [1]}], "message 0 has metadata that is not a JSON object"),
    (
        [{"role": "user", "content": "x", "id": "a"}, {"role": "user", "content": "y", "id": "a"}],
        "message 1 repeats id a",
    ),
    ([{"role": "user", "content": "x", "embedding": [1, 2]}], "message 0 has an embedding that is not a list of 384"),
    ([{"role": "user", "content": "x", "embedding": [0] * 384}], "message 0 has an embedding that is all zeros"),
    ([{"role": "user", "content": "x", "embedding": ["1"] * 384}], "message 0 has an embedding that is not a list"),
    ([{"role": "user", "content": "x", "embedding": "0.1 0.2"}], "message 0 has an embedding that is not a list"),
    (
        [{"role": "user", "content": "x", "embedding": [70000] + [1] * 383}],
        "message 0 has an embedding with a number beyond 65504 either way",
    ),
    ([CHAT[0], {"role": "user", "content": "x", "id": "i" * 1001}], "message 1 has an id over 1000 characters"),
    ([{"role": "user", "content": "x", "name": "n" * 3000}], "message 0 has a name over 1000 characters"),
    (
        [{"role": "user", "content": "x", "created_at": "2024-01-01T00:00:00+99"}],
        'message 0 has created_at "2024-01-01T00:00:00+99", which is not a valid time',
    ),
    ("not a list", "messages must be a JSON array"),
    ([CHAT[0], {"role": "user", "content": "a\ud800b"}], "message 1 contains a \\u escape that is not a character"),
    ([{"role": "user", "content": "x", "tokens": 1.5}], "message 0 has tokens 1.5, which is not a whole number"),
    ([{"role": "user", "content": "x", "tokens": "12"}], 'message 0 has tokens "12", which is not a whole number'),
    ([{"role": "user", "content": "x", "tokens": -1}], "message 0 has tokens -1, which is not a whole number"),
    ([{"role": "user", "content": "x", "tokens": 1e12}], "which is not a whole number from 0 to 2147483647"),
    ([{"role": "user", "content": "x", "status": "error"}], "message 0 has a status, which only a tool result"),
    ([{"role": "tool", "content": "x", "status": "crashed"}], 'message 0 has status "crashed" (expected success,'),
    ([{"role": "assistant", "content": "x", "duration_ms": 5}], "message 0 has a duration_ms, which only a tool"),
    ([{"role": "tool", "content": "x", "duration_ms": -5}], "message 0 has duration_ms -5, which is not a whole"),
    ([{"role": "tool", "content": "x", "duration_ms": "5s"}], 'message 0 has duration_ms "5s", which is not a whole'),
]


def test_a_commits_per_message_checks_text_and_hash_are_inlined_not_called(db):
    # One expression each, which the planner folds into commit's queries: called as functions, once or twice
    # per message, they were half of a commit's time. A subquery or a pinned search_path in one stops that.
    inlined = ["_message_problem(jsonb,integer,integer)", "_message_text(jsonb)", "_message_sha256(jsonb,text)"]
    with db.transaction():
        db.execute("set local track_functions = 'all'")
        commit(db, CHAT)
        calls = db.execute(
            "select f, pg_stat_get_xact_function_calls(('memory_internal.' || f)::regprocedure)"
            " from unnest(%s::text[]) as f",
            (inlined,),
        ).fetchall()
        called = db.execute(
            "select pg_stat_get_xact_function_calls('memory_internal._content_parts_text(jsonb)'::regprocedure)"
        ).fetchone()[0]
    assert calls == [(name, None) for name in inlined]
    assert called == 1  # the assistant's content parts: the one helper left a function, called only for them


def test_a_tool_results_status_and_duration_are_kept_and_listed_with_its_call(db):
    messages = [
        {"role": "user", "content": "Is the build green?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ci", "arguments": '{"job": "build"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "build failed", "status": "error", "duration_ms": 2300},
        {"role": "tool", "tool_call_id": "c9", "content": "an answer to no call"},
    ]
    commit(db, messages)
    assert db.execute("select metadata from memory.turns where role = 'tool' order by position").fetchall() == [
        ({"tool_status": "error", "duration_ms": 2300},),
        ({},),
    ]
    rows = db.execute(
        "select tool, arguments, result, status, duration_ms, call_turn_id is not null from memory.tool_executions "
        "order by result_turn_id"
    ).fetchall()
    assert rows == [
        ("ci", '{"job": "build"}', "build failed", "error", 2300, True),
        (None, None, "an answer to no call", None, None, False),
    ]
    (exported,) = db.execute("select session from memory.export(session_id => 's1')").fetchone()
    assert exported["messages"][2]["metadata"] == {"tool_status": "error", "duration_ms": 2300}


@pytest.mark.parametrize(("messages", "error"), BAD, ids=[error[:40] for _, error in BAD])
def test_bad_input_names_the_message_and_stores_nothing(db, messages, error):
    with pytest.raises(psycopg.Error) as raised:
        commit(db, messages)
    assert error in str(raised.value)
    db.rollback()
    assert (count(db, "sessions"), count(db, "turns"), count(db, "jobs")) == (0, 0, 0)


def test_a_message_over_the_size_limit_is_refused(db):
    db.execute("set memory.max_message_chars = 10")
    with pytest.raises(
        psycopg.errors.InvalidParameterValue, match="message 1 is 26 characters long, over the limit of 10"
    ):
        commit(db, [{"role": "user", "content": "short"}, {"role": "user", "content": "abcdefghijklmnopqrstuvwxyz"}])


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("agent_id", "", "commit needs an agent_id"),
        ("enrich", "later", "enrich must be queue, now or none"),
        ("agent_id", "a" * 3000, "agent_id is 3000 characters long, over the limit of 1000"),
        ("source", "s" * 1001, "source is 1001 characters long, over the limit of 1000"),
        ("model", "m" * 1001, "model is 1001 characters long, over the limit of 1000"),
    ],
)
def test_bad_options_are_refused(db, option, value, error):
    with pytest.raises(psycopg.Error, match=error):
        db.execute(f"select * from memory.commit('s1', %s, {option} => %s)", (Json(CHAT), value))


def test_a_session_id_over_the_limit_is_refused_by_name(db):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="session_id is 3000 characters long"):
        db.execute("select * from memory.commit(%s, %s)", ("s" * 3000, Json(CHAT)))


def test_negative_token_counts_are_refused(db):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="tokens_in and tokens_out must not be negative"):
        db.execute("select * from memory.commit('s1', %s, tokens_in => -1)", (Json(CHAT),))


def test_the_six_characters_of_a_c_escape_are_text_not_a_nul(db):
    code = 'printf("end\\u0000");'  # what a code snippet says: a backslash, u, four zeros
    commit(db, [{"role": "user", "content": code}])
    assert db.execute("select content from memory.turns").fetchone()[0] == code


def test_empty_session_id_is_refused(db):
    with pytest.raises(psycopg.errors.RaiseException, match="commit needs a session_id"):
        db.execute("select * from memory.commit('', %s)", (Json(CHAT),))
