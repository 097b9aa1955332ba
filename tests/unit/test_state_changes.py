"""Entity state changes read from users' sentences (agent_memory_db.state_changes)."""

import json

import pytest

from agent_memory_db.state_changes import StateChange, from_claims, of_session, propose


def changes(text, role="user"):
    return [(c.entity, c.attribute, c.value) for c in propose([{"turn_id": 7, "role": role, "content": text}])]


@pytest.mark.parametrize(
    ("text", "change"),
    [
        ("Ana now leads billing.", ("Ana", "lead", "billing")),
        ("The deploy freeze is over.", ("deploy freeze", "state", "over")),
        ("Heads up: the release moved to March 17.", ("release", "state", "March 17")),
        ("Ana's role is now staff engineer.", ("Ana", "role", "staff engineer")),
        ("The billing migration is paused.", ("billing migration", "state", "paused")),
    ],
)
def test_a_change_of_state_is_read_with_the_words_as_said(text, change):
    assert changes(text) == [change]


@pytest.mark.parametrize(
    "text",
    [
        "Is the deploy freeze over?",  # a question
        "Ana no longer leads billing.",  # a denial names no new value
        "My editor is now helix.",  # the speaker's own fact: a curated memory
        "We moved CI to GitHub Actions.",
        "The build is slow.",  # a description, not a change
        "Ana leads billing.",  # no change said
    ],
)
def test_what_states_no_change_of_a_named_thing_proposes_nothing(text):
    assert changes(text) == []


def test_only_users_turns_count_and_each_change_once_per_turn():
    assert changes("Ana now leads billing.", role="assistant") == []
    assert changes("Ana now leads billing. Ana now leads billing!") == [("Ana", "lead", "billing")]


def test_claims_read_elsewhere_keep_their_turn():
    assert from_claims([(3, "Ana now leads billing."), (4, "Nothing here.")]) == [
        StateChange(3, "Ana", "lead", "billing")
    ]


def test_a_sessions_changes_come_from_the_llm_extractors_claims_when_it_answered():
    turns = [{"turn_id": 5, "role": "user", "content": "Ana took over billing last week."}]
    answer = {"memories": [{"turn": 0, "kind": "fact", "content": "Ana now leads billing.", "quote": "Ana took over"}]}
    assert of_session(turns, json.dumps(answer)) == [StateChange(5, "Ana", "lead", "billing")]
    assert of_session(turns, None) == []
    with pytest.raises(ValueError):
        of_session(turns, "not json")
