"""mem0's own client (mem0ai's MemoryClient, from PyPI) pointed at `agent-memory serve`: the calls of mem0's
quickstart run unchanged, and what they add is found by search. Its telemetry is off (no network here)."""

from __future__ import annotations

import os

import pytest

os.environ["MEM0_TELEMETRY"] = "false"  # read when mem0 is imported
from mem0 import MemoryClient
from mem0.exceptions import AuthenticationError, MemoryNotFoundError, ValidationError


@pytest.fixture
def mem0(served, tmp_path, monkeypatch):
    monkeypatch.setenv("MEM0_DIR", str(tmp_path))
    return MemoryClient(api_key=served.key("acme"), host=served.url)


def test_quickstart_add_search_get_all_update_history_delete(mem0):
    messages = [
        {"role": "user", "content": "I'm vegetarian and allergic to peanuts."},
        {"role": "assistant", "content": "Got it: vegetarian, no peanuts."},
    ]
    added = mem0.add(messages, user_id="alex", metadata={"source": "onboarding"})
    assert [r["event"] for r in added["results"]] == ["ADD"]
    mem0.add("I work as a nurse in Lisbon.", user_id="alex", agent_id="planner")
    mem0.add("I love sushi.", user_id="sam")

    found = mem0.search("what can alex not eat?", filters={"user_id": "alex"}, top_k=3)["results"]
    assert found[0]["memory"] == "I'm vegetarian and allergic to peanuts."
    assert found[0]["user_id"] == "alex" and found[0]["metadata"] == {"source": "onboarding"}
    assert all(item["user_id"] == "alex" for item in found)
    both = mem0.search("job", filters={"AND": [{"user_id": "alex"}, {"agent_id": "planner"}]})["results"]
    assert [item["memory"] for item in both] == ["I work as a nurse in Lisbon."]

    everything = mem0.get_all(filters={"OR": [{"user_id": "alex"}, {"user_id": "sam"}]})
    assert everything["count"] == 3
    page = mem0.get_all(filters={"user_id": "alex"}, page=1, page_size=1)
    assert page["count"] == 2 and len(page["results"]) == 1 and page["next"]

    memory_id = found[0]["id"]
    assert mem0.get(memory_id)["memory"] == "I'm vegetarian and allergic to peanuts."
    updated = mem0.update(memory_id, text="I'm vegan and allergic to peanuts.")
    assert updated["id"] == memory_id and updated["memory"] == "I'm vegan and allergic to peanuts."
    assert mem0.get(memory_id)["memory"] == "I'm vegan and allergic to peanuts."
    again = mem0.search("what diet does alex follow?", filters={"user_id": "alex"})["results"]
    assert again[0]["memory"] == "I'm vegan and allergic to peanuts."
    assert "vegetarian" not in " ".join(item["memory"] for item in again)

    mem0.delete(memory_id)
    with pytest.raises(MemoryNotFoundError):
        mem0.get(memory_id)
    events = [(event["event"], event["old_memory"], event["new_memory"]) for event in mem0.history(memory_id)]
    assert events == [
        ("ADD", None, "I'm vegetarian and allergic to peanuts."),
        ("UPDATE", "I'm vegetarian and allergic to peanuts.", "I'm vegan and allergic to peanuts."),
        ("DELETE", "I'm vegan and allergic to peanuts.", None),
    ]

    mem0.delete_all(user_id="alex")
    assert mem0.get_all(filters={"user_id": "alex"})["count"] == 0
    assert mem0.get_all(filters={"user_id": "sam"})["count"] == 1


def test_the_conversation_is_kept_as_a_session(mem0, served):
    mem0.add([{"role": "user", "content": "Book the Porto trip for May."}], user_id="alex", run_id="trip-1")
    mem0.add([{"role": "user", "content": "Make it the second week."}], user_id="alex", run_id="trip-1")
    with served.client(served.key("acme")) as client:
        session = client.get("/v1/sessions/trip-1").json()
    assert [m["content"] for m in session["messages"]] == ["Book the Porto trip for May.", "Make it the second week."]


def test_what_agent_memory_does_not_support_is_refused_with_a_reason(mem0, served):
    mem0.add("I like jazz.", user_id="alex")
    with pytest.raises(ValidationError, match="filter field 'categories' is not supported"):
        mem0.search("music", filters={"categories": {"in": ["music"]}})
    with pytest.raises(ValidationError, match="only equality"):
        mem0.get_all(filters={"user_id": {"in": ["alex", "sam"]}})
    with pytest.raises(ValidationError, match="threshold is not supported"):
        mem0.search("music", filters={"user_id": "alex"}, threshold=0.5)
    with pytest.raises(ValidationError, match="needs one of user_id"):
        mem0.add("no owner")
    with pytest.raises(ValueError, match="unknown, revoked or expired API key"):  # mem0's constructor pings
        MemoryClient(api_key="amk_wrong", host=served.url)
    served.db.execute("select memory.revoke_api_key(max(key_id)) from memory.list_api_keys()")
    with pytest.raises(AuthenticationError, match="unknown, revoked or expired API key"):
        mem0.get_all(filters={"user_id": "alex"})
