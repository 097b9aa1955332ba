"""Requests in plain words read as filters, without a model (agent_memory_db.plain_query), and the filters a
chat endpoint proposes, checked the same way."""

from datetime import date

import pytest

from agent_memory_db.periods import period_and_mentions
from agent_memory_db.plain_query import from_llm, llm_messages, read

TODAY = date(2026, 12, 5)  # a Saturday
LAST_WEEK = ["2026-11-23", "2026-11-30"]


def filters(request: str) -> dict:
    """What a request sets, without the defaults it leaves and the account of each phrase."""
    found = read(request, TODAY)
    assert found["not_understood"] == [], found
    defaults = {"order": "importance" if found["target"] == "memories" else "newest", "k": 20, "period": None}
    return {
        key: value
        for key, value in found.items()
        if key not in ("understood", "not_understood") and defaults.get(key, "kept") != value
    }


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (
            "show me high-importance unresolved projects from last week",
            {
                "target": "memories",
                "importance": {"min": 0.7},
                "statuses": ["active", "ongoing"],
                "entity_types": ["project"],
                "period": LAST_WEEK,
            },
        ),
        ("top 10 recent decisions", {"target": "memories", "kinds": ["decision"], "order": "newest", "k": 10}),
        (
            "observations tagged docker and error",
            {"target": "memories", "kinds": ["observation"], "tags": {"all": ["docker", "error"]}},
        ),
        (
            "tasks tagged urgent or blocked",
            {"target": "memories", "kinds": ["task"], "tags": {"any": ["urgent", "blocked"]}},
        ),
        ("rules with tag #security", {"target": "memories", "kinds": ["rule"], "tags": {"all": ["security"]}}),
        ("completed todos", {"target": "memories", "kinds": ["task"], "statuses": ["resolved"]}),
        ("tasks in progress", {"target": "memories", "kinds": ["task"], "statuses": ["ongoing"]}),
        (
            "superseded facts about Atlas",
            {"target": "memories", "kinds": ["fact"], "statuses": ["superseded"], "about": ["Atlas"]},
        ),
        (
            "preferences with importance above 0.8",
            {"target": "memories", "kinds": ["preference"], "importance": {"min": 0.8}},
        ),
        ("low-importance observations", {"target": "memories", "kinds": ["observation"], "importance": {"max": 0.3}}),
        ("5 oldest decisions", {"target": "memories", "kinds": ["decision"], "order": "oldest", "k": 5}),
        ("first three rules", {"target": "memories", "kinds": ["rule"], "order": "oldest", "k": 3}),
        (
            "memories of any status by agent ops-bot",
            {
                "target": "memories",
                "statuses": ["active", "ongoing", "resolved", "superseded", "retracted", "pending"],
                "agent_id": "ops-bot",
            },
        ),
        ("pending memories", {"target": "memories", "statuses": ["pending"]}),
        (
            "decisions about the database migration since March 2026",
            {
                "target": "memories",
                "kinds": ["decision"],
                "about": ["database migration"],
                "period": ["2026-03-01", "2026-12-06"],
            },
        ),
        ("user messages mentioning Redis", {"target": "turns", "roles": ["user"], "containing": ["Redis"]}),
        (
            'assistant replies containing "connection refused" yesterday',
            {
                "target": "turns",
                "roles": ["assistant"],
                "containing": ["connection refused"],
                "period": ["2026-12-04", "2026-12-05"],
            },
        ),
        (
            "tool calls in the last 7 days",
            {"target": "tool_executions", "period": ["2026-11-29", "2026-12-06"]},
        ),
        ("tool results mentioning timeout", {"target": "turns", "roles": ["tool"], "containing": ["timeout"]}),
        ("what did we say about pg_cron", {"target": "turns", "about": ["pg_cron"]}),
        (
            "sessions about kubernetes in November 2026",
            {"target": "sessions", "about": ["kubernetes"], "period": ["2026-11-01", "2026-12-01"]},
        ),
        ("last 5 conversations", {"target": "sessions", "k": 5}),
        ("oldest sessions by agent helper", {"target": "sessions", "order": "oldest", "agent_id": "helper"}),
        ("decisions in run task-42", {"target": "memories", "kinds": ["decision"], "run_id": "task-42"}),
        (
            "failed bash calls during the run r7",
            {"target": "tool_executions", "tools": ["bash"], "tool_statuses": ["error"], "run_id": "r7"},
        ),
        ("most important skills", {"target": "memories", "kinds": ["skill"]}),
        ("important people", {"target": "memories", "importance": {"min": 0.7}, "entity_types": ["person"]}),
    ],
)
def test_a_request_sets_the_filters_it_names(request_, expected):
    assert filters(request_) == expected


@pytest.mark.parametrize(
    ("request_", "not_understood"),
    [
        ("flibbertigibbet decisions", ["flibbertigibbet"]),
        ("decisions before Christmas", ["before", "Christmas"]),
        ("rules stored in triplicate", ["stored", "triplicate"]),
        # a filter the target does not have is named, not applied silently
        ("sessions tagged docker", ["tags (not a filter of sessions)"]),
        ("tool calls of high importance", ["importance (not a filter of tool_executions)"]),
        ("failed decisions", ["tool_statuses (not a filter of memories)"]),
        ("slowest sessions", ["order slowest (not an order of sessions)"]),
    ],
)
def test_words_it_cannot_read_are_named(request_, not_understood):
    found = read(request_, TODAY)
    assert found["not_understood"] == not_understood
    assert "tags" not in found or found["target"] == "memories"


def test_each_phrase_says_what_it_set():
    found = read("top 10 recent decisions tagged infra", TODAY)
    assert {(u["words"], u["as"]) for u in found["understood"]} == {
        ("top 10", "k: 10"),
        ("recent", "order: newest"),
        ("decisions", "kinds: decision"),
        ("tagged infra", "tags (all): infra"),
    }


def test_a_phrase_about_something_stops_at_the_next_rule():
    assert read("decisions about the queue tagged infra from last week", TODAY)["about"] == ["queue"]
    assert read("facts about Ana and Bo", TODAY)["about"] == ["Ana"]  # "Bo" is not read: named
    assert read("facts about Ana and Bo", TODAY)["not_understood"] == ["Bo"]


@pytest.mark.parametrize(
    ("request_", "error"),
    [("", "the request is empty"), ("   ", "the request is empty"), ("top 5000 decisions", "1 to 1000 rows, got 5000")],
)
def test_a_request_that_cannot_run_is_refused_with_the_reason(request_, error):
    with pytest.raises(ValueError, match=error):
        read(request_, TODAY)


def test_the_period_reader_says_where_it_read_a_period():
    text = "decisions from last week about May"
    period, mentions = period_and_mentions(text, TODAY)
    assert period == (date(2026, 11, 23), date(2026, 11, 30))
    assert [text[start:end] for start, end in mentions] == ["last week"]


def test_the_llm_is_asked_with_today_and_the_request():
    messages = llm_messages({"request": "top 3 rules", "today": "2026-12-05"})
    assert messages[0]["role"] == "system" and '"target"' in messages[0]["content"]
    assert messages[1]["content"] == "Today is 2026-12-05. Request: top 3 rules"


def test_filters_from_an_llm_are_checked_and_completed():
    found = from_llm({"target": "turns", "roles": ["user"], "period": ["2026-11-01", "2026-12-01"], "k": 5})
    assert found["target"] == "turns" and found["roles"] == ["user"] and found["k"] == 5
    assert found["order"] == "newest" and found["period"] == ["2026-11-01", "2026-12-01"]
    # memory filters an llm gives for turns are named, as the words' own are
    assert from_llm({"target": "turns", "kinds": ["rule"]})["not_understood"] == ["kinds (not a filter of turns)"]
    assert from_llm({"kinds": ["rule"], "not_understood": ["soonish"]})["not_understood"] == ["soonish"]


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"target": "people"}, "target must be memories, sessions, turns, tool_executions"),
        ({"kinds": ["decision", "wish"]}, "kinds must be of fact, .*got wish"),
        ({"statuses": "active"}, "statuses must be a list of words"),
        ({"importance": {"min": 2}}, "importance min must be a number from 0 to 1"),
        ({"importance": {"least": 0.2}}, "importance must be"),
        ({"tags": ["a"]}, "tags must be"),
        ({"period": ["2026-12-01", "2026-11-01"]}, "period must end after it begins"),
        ({"period": ["last week"]}, "period must be .* ISO dates"),
        ({"order": "random"}, "order must be importance, newest, oldest or slowest"),
        ({"k": "ten"}, "k must be a whole number"),
        ({"k": 0}, "1 to 1000 rows, got 0"),
        ({"min_duration_ms": -1, "target": "tool_executions"}, "min_duration_ms must be a whole number"),
        ({"tool_statuses": ["crashed"]}, "tool_statuses must be of success, error, timeout, got crashed"),
        ({"sql": "drop table x"}, "unknown filter 'sql'"),
    ],
)
def test_filters_from_an_llm_that_are_wrong_are_refused_by_name(answer, error):
    with pytest.raises(ValueError, match=error):
        from_llm(answer)


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        # a number is how many only before what is listed; in a phrase it is a word of it
        ("notes about redis 7 upgrade", {"target": "memories", "about": ["redis 7 upgrade"]}),
        (
            "2 decisions about postgres 16",
            {"target": "memories", "kinds": ["decision"], "about": ["postgres 16"], "k": 2},
        ),
        ("10 high-importance tasks", {"target": "memories", "kinds": ["task"], "importance": {"min": 0.7}, "k": 10}),
        ("facts containing 100%", {"target": "memories", "kinds": ["fact"], "containing": ["100%"]}),
        # a phrase ends before filler words and sentence punctuation
        (
            "decisions about the API on 1 Dec",
            {"target": "memories", "kinds": ["decision"], "about": ["API"], "period": ["2026-12-01", "2026-12-02"]},
        ),
        ("rules about e-mail.", {"target": "memories", "kinds": ["rule"], "about": ["e-mail"]}),
        ("notes tagged c++ or redis.", {"target": "memories", "tags": {"any": ["c++", "redis"]}}),
        ("what did the user say about X", {"target": "turns", "roles": ["user"], "about": ["X"]}),
        ("top sessions", {"target": "sessions"}),
    ],
)
def test_numbers_phrases_and_punctuation_read_as_meant(request_, expected):
    assert filters(request_) == expected


def test_a_second_count_or_an_importance_past_one_is_not_taken_silently():
    assert read("top 5 decisions 10", TODAY)["not_understood"] == ["10"]
    assert read("5", TODAY)["not_understood"] == ["5"]
    with pytest.raises(ValueError, match=r"importance is from 0 to 1, got 1\.5"):
        read("facts with importance above 1.5", TODAY)


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (
            "failed bash calls last week",
            {"target": "tool_executions", "tools": ["bash"], "tool_statuses": ["error"], "period": LAST_WEEK},
        ),
        (
            "calls to the read tool that timed out",
            {"target": "tool_executions", "tools": ["read"], "tool_statuses": ["timeout"]},
        ),
        (
            "bash tool calls slower than 2.5 s",
            {"target": "tool_executions", "tools": ["bash"], "min_duration_ms": 2500},
        ),
        ("slow tool calls", {"target": "tool_executions", "min_duration_ms": 1000}),
        ("5 slowest calls", {"target": "tool_executions", "order": "slowest", "k": 5}),
        (
            "successful runs of grep mentioning node_modules",
            {
                "target": "tool_executions",
                "tools": ["grep"],
                "tool_statuses": ["success"],
                "containing": ["node_modules"],
            },
        ),
    ],
)
def test_tool_executions_by_tool_status_and_duration(request_, expected):
    assert filters(request_) == expected
