"""Supersession rules read from claims' words (agent_memory_db.supersession), and the llm judge's request
and answer."""

import json

import pytest

from agent_memory_db.supersession import Held, changes, frame, llm_messages, parse_llm_decision, supersedes


@pytest.mark.parametrize(
    ("claim", "subject", "attribute", "value"),
    [
        ("My editor is vim.", "i", "editor", "vim"),
        ("Our main branch is master.", "we", "main branch", "master"),
        ("Ana's manager is Priya.", "ana", "manager", "priya"),
        ("The deploy day is Tuesday.", "", "deploy day", "tuesday"),
        ("I live in Berlin.", "i", "live in", "berlin"),
        ("I moved to Lisbon last month.", "i", "live in", "lisbon"),
        ("I work for Acme.", "i", "work at", "acme"),
        ("Our CI runs on Jenkins.", "we", "ci run on", "jenkins"),
        ("I'm vegetarian.", "i", "be", "vegetarian"),
        ("We renamed our main branch from master to main.", "we", "main branch", "main"),
    ],
)
def test_a_claim_is_read_as_subject_attribute_and_value(claim, subject, attribute, value):
    found = frame(claim)
    assert (found.subject, found.attribute, found.value) == (subject, attribute, value)


def test_how_a_claim_says_it_marks_change_denial_and_the_value_before():
    assert frame("My timezone is now PST.").change
    assert frame("I don't use a MacBook anymore.").denied
    assert frame("I switched from vim to helix.").previous == "vim"
    assert not frame("My timezone is CET.").change


@pytest.mark.parametrize("claim", ["I'd rather use tabs than spaces.", "Our cloud costs went up 10% last month.", ""])
def test_a_claim_the_rules_cannot_read_has_no_frame(claim):
    assert frame(claim) is None


@pytest.mark.parametrize(
    ("new", "held"),
    [
        ("The deploy day moved from Tuesday to Thursday.", "The deploy day is Tuesday."),
        ("I switched from npm to pnpm.", "I use npm for package management."),
        ("My editor is now helix.", "My editor is vim."),
        ("I work at Globex.", "I work at Acme."),
        ("The deploy day moved to Thursday.", "The deploy day is Tuesday."),
        ("I'm no longer vegetarian.", "I'm vegetarian."),
        ("I don't use a MacBook anymore.", "I use a MacBook for work."),
    ],
)
def test_a_change_or_a_denial_replaces_the_claim_it_changes(new, held):
    assert changes(new, held, None, 0.6)


@pytest.mark.parametrize(
    ("new", "held"),
    [
        ("Priya is my manager.", "My manager is Priya."),  # a paraphrase
        ("My mentor is Tom.", "My manager is Priya."),  # another attribute
        ("I use Docker for local development.", "I use npm for package management."),  # one more
        ("The build is flaky.", "The build is slow."),  # both hold: neither a number nor a name, no change
        ("Our production database runs Postgres 16.", "Our staging database runs Postgres 14."),
        ("We upgraded the production database from Postgres 14 to 16.", "Our staging database is Postgres 14."),
        ("I use vim again.", "I'm not using vim."),  # a held denial is left to the caller
    ],
)
def test_a_paraphrase_another_attribute_or_another_value_of_a_verb_replaces_nothing(new, held):
    assert not changes(new, held, None, 0.6)


def test_from_a_to_b_of_another_attribute_needs_a_held_claim_close_in_meaning_of_the_same_subject():
    assert changes("I switched from vim to helix.", "My editor is vim.", 0.62, 0.6)
    assert not changes("I switched from vim to helix.", "My editor is vim.", None, 0.6)
    assert not changes("Ana switched from vim to helix.", "My editor is vim.", 0.9, 0.6)


@pytest.mark.parametrize(
    ("new", "held"),
    [
        ("My editor is vim, not emacs.", "My editor is vim."),  # a denial of something else
        ("I'm vegetarian but not vegan.", "I'm vegetarian."),
        ("My car is red.", "My car is a Honda Civic."),  # a description, not another value
        ("My dog is 3 years old.", "My dog is named Max."),
        ("I work at home on Fridays.", "I work at Acme."),
    ],
)
def test_a_restatement_or_a_description_does_not_replace(new, held):
    assert not changes(new, held, None, 0.6)


def test_a_verb_of_several_values_needs_a_close_held_claim_and_the_closest_wins():
    held = [Held(1, "I prefer tabs over spaces.", 0.96), Held(2, "I prefer dark mode in my editor.", 0.41)]
    assert supersedes("I now prefer spaces over tabs.", held, 0.6) == (
        1,
        "update",
        "i prefer: 'tabs over spaces' is now 'spaces over tabs'",
    )
    assert supersedes("I now prefer spaces over tabs.", held[1:], 0.6) is None
    assert supersedes("I now prefer spaces over tabs.", [Held(1, "I prefer tabs over spaces.", None)], 0.6) is None


def test_a_denial_is_a_retraction():
    assert supersedes("I'm no longer vegetarian.", [Held(4, "I'm vegetarian.", None)], 0.6)[:2] == (4, "retract")


def test_the_llm_judge_is_asked_with_the_held_claims_numbered():
    messages = llm_messages({"claim": "I use helix.", "held": [{"content": "My editor is vim."}]})
    assert '"decision"' in messages[0]["content"]
    assert messages[1]["content"] == "Held claims:\n1. My editor is vim.\n\nNew claim: I use helix."


def test_the_llm_judges_answer_names_a_held_claim_by_number():
    held = [Held(10, "My editor is vim.", 0.7), Held(11, "I use Docker.", 0.2)]
    answer = json.dumps({"decision": "update", "memory": 1, "reason": "editor changed"})
    assert parse_llm_decision(answer, held) == ("update", 10, "editor changed")
    assert parse_llm_decision('{"decision": "add"}', held) == ("add", None, "add")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ('{"decision": "merge"}', "decision must be one of add, update, retract, none, got 'merge'"),
        ('{"decision": "retract", "memory": 3}', "retract must name a held claim by its number 1-2, got 3"),
        ('{"decision": "update", "memory": true}', "got True"),
        ("[]", "is not a JSON object"),
    ],
)
def test_an_llm_answer_that_makes_no_sense_is_an_error_naming_it(answer, problem):
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        parse_llm_decision(answer, [Held(1, "a", None), Held(2, "b", None)])
