"""Notifications read: a payload into a Notification (or an error naming what is not one), which events a
subscriber sees, and the line `agent-memory watch` prints."""

import json

import pytest

from agent_memory.notifications import describe, parse, read, wanted
from agent_memory.results import Notification


def memory(agent: str, shared: bool, outcome: str = "created") -> Notification:
    return Notification("memory", agent, shared, memory_id=7, kind="rule", outcome=outcome)


def test_a_payload_reads_as_its_event():
    payload = {"event": "session", "session_id": "s1", "agent_id": "a", "turns": 2, "shared": False}
    assert parse(json.dumps(payload)) == Notification("session", "a", False, session_id="s1", turns=2)
    payload = {"event": "memory", "memory_id": 7, "agent_id": "a", "kind": "rule", "shared": True, "outcome": "shared"}
    assert parse(json.dumps(payload)) == memory("a", True, "shared")


@pytest.mark.parametrize("payload", ["hello", "[]", '{"event": "memory"}', "{}"])
def test_a_payload_that_is_no_event_is_named(payload):
    with pytest.raises(ValueError, match="not an agent_memory notification: " + repr(payload).replace("[", r"\[")):
        parse(payload)


def test_a_subscriber_reads_past_what_is_no_event():
    assert read("not an event") is None
    assert read('{"event": "session", "agent_id": "a", "shared": false, "turns": 1}') == Notification(
        "session", "a", False, turns=1
    )


def test_an_agent_sees_its_own_events_and_what_the_others_share():
    assert wanted(memory("a", False), "a", shared_only=False)
    assert wanted(memory("b", True), "a", shared_only=False)
    assert not wanted(memory("b", False), "a", shared_only=False)
    # A memory unshared is news to those that saw it.
    assert wanted(memory("b", False, "unshared"), "a", shared_only=False)


def test_shared_only_keeps_what_the_other_agents_share():
    assert not wanted(memory("a", True), "a", shared_only=True)
    assert wanted(memory("b", True), "a", shared_only=True)
    assert not wanted(memory("b", False), "a", shared_only=True)
    assert wanted(memory("b", True), None, shared_only=True)
    assert not wanted(memory("b", False), None, shared_only=True)


def test_without_an_agent_every_event_of_the_tenant_is_seen():
    assert wanted(memory("b", False), None, shared_only=False)
    assert wanted(Notification("session", "c", False, session_id="s", turns=1), None, shared_only=False)


def test_each_event_is_one_line():
    assert describe(memory("b", True)) == "b: memory 7 (rule) created (shared)"
    assert describe(Notification("session", "c", False, session_id="s", turns=1)) == "c: 1 turn in session s"
    assert describe(Notification("session", "c", True, session_id="s", turns=3)) == "c: 3 turns in session s (shared)"
