"""mem0's filters, tags and history events as agent_memory maps them (agent_memory.http.mem0), without a database."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from agent_memory.http.mem0 import conditions, events, matches, tag_for, tags
from agent_memory.http.service import HTTPProblem
from agent_memory.results import MemoryItem


def test_filters_become_alternatives_of_equalities():
    assert conditions(None) == [{}]
    assert conditions({"user_id": "alex"}) == [{"user_id": "alex"}]
    assert conditions({"AND": [{"user_id": "alex"}, {"agent_id": "planner"}]}) == [
        {"user_id": "alex", "agent_id": "planner"}
    ]
    assert conditions({"OR": [{"user_id": "alex"}, {"AND": [{"user_id": "sam"}, {"run_id": 7}]}]}) == [
        {"user_id": "alex"},
        {"user_id": "sam", "run_id": "7"},
    ]


@pytest.mark.parametrize(
    ("filters", "problem"),
    [
        ({"categories": {"in": ["food"]}}, "filter field 'categories' is not supported"),
        ({"user_id": {"in": ["a", "b"]}}, "only equality"),
        ({"AND": [{"OR": [{"user_id": "a"}, {"user_id": "b"}]}]}, "an OR inside an AND"),
        ({"AND": {"user_id": "a"}}, "take a list of objects"),
        (["user_id"], "filters must be an object"),
    ],
)
def test_filters_agent_memory_cannot_answer_are_refused(filters, problem):
    with pytest.raises(HTTPProblem, match=problem) as refused:
        conditions(filters)
    assert refused.value.status == 400


def test_tags_and_the_tag_a_condition_filters_by():
    assert tags({"user_id": "alex", "run_id": "r1"}) == ["mem0", "mem0:user=alex", "mem0:run=r1"]
    assert tag_for({}) == "mem0"
    assert tag_for({"user_id": "alex", "agent_id": "planner"}) == "mem0:agent=planner"


def version(memory_id: int, content: str, status: str, ids: dict | None = None) -> MemoryItem:
    at = datetime(2026, 12, 1, 10, memory_id, tzinfo=timezone.utc)
    return MemoryItem(
        memory_id=memory_id,
        agent_id="default",
        kind="fact",
        content=content,
        key="mem0/abc",
        subjects=[],
        tags=["mem0"],
        importance=0.5,
        confidence=1.0,
        status=status,
        valid_from=at,
        valid_to=at if status == "retracted" else None,
        recorded_at=at,
        recorded_by="x",
        supersedes=None,
        superseded_by=None,
        turn_id=1,
        evidence_turn_ids=[],
        origin="remember",
        metadata={"mem0": ids or {"user_id": "alex"}},
        shared=False,
        run_id=None,
    )


def test_matches_reads_mem0s_ids_from_the_metadata():
    item = version(1, "likes tea", "active", {"user_id": "alex", "agent_id": "planner"})
    assert matches(item, {"user_id": "alex"})
    assert matches(item, {})
    assert not matches(item, {"user_id": "alex", "agent_id": "other"})


def test_versions_become_mem0s_history_events():
    found = events([version(1, "likes tea", "superseded"), version(2, "likes coffee", "retracted")])
    assert [(e["event"], e["old_memory"], e["new_memory"], e["memory_id"]) for e in found] == [
        ("ADD", None, "likes tea", "abc"),
        ("UPDATE", "likes tea", "likes coffee", "abc"),
        ("DELETE", "likes coffee", None, "abc"),
    ]
    assert events([version(1, "likes tea", "active")])[0]["event"] == "ADD"
