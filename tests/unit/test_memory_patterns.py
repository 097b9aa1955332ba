"""The memory extractor: explicit statements become proposals; questions and suppositions never do."""

from __future__ import annotations

import json

import pytest

from agent_memory_db.memory_extraction import Proposal, llm_messages, parse_llm_memories, propose


def said(*texts: str, role: str = "user") -> list[dict]:
    return [{"turn_id": number + 1, "role": role, "content": text} for number, text in enumerate(texts)]


def proposals(*texts: str) -> list[tuple[str, str]]:
    return [(p.kind, p.content) for p in propose(said(*texts))]


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        (
            "Always include version numbers when I ask about libraries.",
            "rule",
            "Always include version numbers when I ask about libraries.",
        ),
        ("never push straight to main", "rule", "Never push straight to main"),
        ("From now on, answer in British English.", "rule", "From now on, answer in British English."),
        ("Going forward we deploy on Tuesdays only.", "rule", "Going forward we deploy on Tuesdays only."),
        ("I prefer tabs over spaces.", "preference", "I prefer tabs over spaces."),
        ("Honestly I'd rather use Postgres than Mongo.", "preference", "Honestly I'd rather use Postgres than Mongo."),
        ("I really don't like long meetings.", "preference", "I really don't like long meetings."),
        ("My preference is short answers.", "preference", "My preference is short answers."),
        ("We decided to ship the beta on Friday.", "decision", "We decided to ship the beta on Friday."),
        (
            "After some back and forth we've agreed on weekly releases.",
            "decision",
            "After some back and forth we've agreed on weekly releases.",
        ),
        ("I think I'll go with the Nike Air Max 270.", "decision", "I think I'll go with the Nike Air Max 270."),
        ("Remember that the staging database is read-only.", "fact", "The staging database is read-only."),
        (
            "I've chosen to keep human interviews for the final round.",
            "decision",
            "I've chosen to keep human interviews for the final round.",
        ),
        (
            "Coverage has recently improved to 78% after the refactor.",
            "fact",
            "Coverage has recently improved to 78% after the refactor.",
        ),
        (
            "I added two projects, so now I have a total of 10 cards.",
            "fact",
            "I added two projects, so now I have a total of 10 cards.",
        ),
        ("We moved to the new daily quota of 1,200 calls.", "fact", "We moved to the new daily quota of 1,200 calls."),
        (
            "I've adjusted the snack budget to $75 for the marathon.",
            "fact",
            "I've adjusted the snack budget to $75 for the marathon.",
        ),
        ("My manager is Dana Reyes.", "fact", "My manager is Dana Reyes."),
    ],
)
def test_an_explicit_statement_is_proposed(text: str, kind: str, content: str) -> None:
    assert proposals(text) == [(kind, content)]


@pytest.mark.parametrize(
    "text",
    [
        "Should I always use tabs?",
        "Do you prefer tabs or spaces?",
        "What if we decided to ship on Friday?",
        "If I prefer dark mode, does the editor remember it?",
        "Maybe we'd rather wait for the next release.",
        "Suppose we always deploy on Fridays, what breaks?",
        "Would it help if I always cached the results",
        "Like we decided, to mitigate the risks?",
        "Let's go with this approach!",
        "The ones I prefer are sold out.",
        "Can you remember that for me?",
        "It's sunny today and the build is green.",
        "Has coverage improved to 78% yet?",
        "From now on we might use tabs.",
        "In the future I might switch to Rust.",
        "If we go with Postgres, we decided to use pgvector.",
        "Never mind.",
        "Always a pleasure talking to you!",
        "Never have I ever been to Paris.",
        "My question is about the deploy script.",
        "My guess is that the cache is stale.",
        "Remember to call the vendor tomorrow.",
        "I'd rather not say.",
        "The test suite improved a lot this week.",
    ],
)
def test_a_question_a_supposition_or_chatter_proposes_nothing(text: str) -> None:
    assert proposals(text) == []


def test_the_reason_before_a_statement_is_kept_and_the_request_after_it_cut() -> None:
    text = (
        "I'm trying to keep my weather app under 2.5MB, so I prefer lightweight, dependency-free solutions, "
        "can you help me add a cache?"
    )
    assert proposals(text) == [
        (
            "preference",
            "I'm trying to keep my weather app under 2.5MB, so I prefer lightweight, dependency-free solutions",
        )
    ]


def test_a_question_before_a_statement_is_left_out_of_its_words() -> None:
    assert proposals("How do I deploy it? We decided to use Netlify over GitHub Pages.") == [
        ("decision", "We decided to use Netlify over GitHub Pages.")
    ]


def test_only_users_turns_are_read_and_each_statement_once_per_turn() -> None:
    turns = [
        *said("I prefer tabs. I prefer tabs.", "I prefer tabs."),
        {"turn_id": 9, "role": "assistant", "content": "I prefer to answer briefly."},
    ]
    assert propose(turns) == [Proposal(1, "preference", "I prefer tabs."), Proposal(2, "preference", "I prefer tabs.")]


def test_long_runs_of_white_space_are_read_in_linear_time() -> None:
    assert proposals("I prefer tabs" + " " * 200_000 + "- and spaces.") == [("preference", "I prefer tabs")]


def test_code_is_not_read() -> None:
    assert proposals("Here it is:\n```python\n# always retry\nnever_fail()\n```") == []


def test_a_long_statement_keeps_its_own_clause_within_the_limit() -> None:
    lead = "I have been thinking about the whole release process for a long time " * 8
    found = proposals(f"{lead.strip()}, and I prefer small releases that ship every week.")
    assert found == [("preference", "I prefer small releases that ship every week.")]


def test_the_llm_request_numbers_every_turn() -> None:
    turns = [*said("We decided on Rust."), {"turn_id": 7, "role": "assistant", "content": "Noted."}]
    messages = llm_messages(turns)
    assert messages[0]["role"] == "system" and '"memories"' in messages[0]["content"]
    assert messages[1]["content"] == "[0] user: We decided on Rust.\n[1] assistant: Noted."


def test_the_llm_answer_is_read_strictly() -> None:
    turns = [*said("We decided on Rust for the parser."), {"turn_id": 7, "role": "assistant", "content": "Ok."}]
    answer = {
        "memories": [
            {"turn": 0, "kind": "decision", "content": "The parser is written in Rust.", "quote": "decided on Rust"}
        ]
    }
    assert parse_llm_memories(json.dumps(answer), turns) == (
        [Proposal(1, "decision", "The parser is written in Rust.")],
        [],
    )
    assert parse_llm_memories('{"memories": []}', turns) == ([], [])


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"turn": 5, "kind": "fact", "content": "x", "quote": "Rust"}, "names no turn"),
        ({"turn": 0, "kind": "opinion", "content": "x", "quote": "Rust"}, "has kind 'opinion'"),
        ({"turn": 0, "kind": "fact", "content": " ", "quote": "Rust"}, 'no "content"'),
        ({"turn": 0, "kind": "fact", "content": "x"}, 'no "quote"'),
        ({"turn": 0, "kind": "fact", "content": "x", "quote": "Python"}, "does not contain"),
        ({"turn": 1, "kind": "fact", "content": "x", "quote": "Ok"}, "does not contain"),
        ("text", "is not an object"),
    ],
)
def test_a_wrong_llm_item_is_left_out_and_named(item: object, problem: str) -> None:
    turns = [*said("We decided on Rust."), {"turn_id": 7, "role": "assistant", "content": "Ok."}]
    good = {"turn": 0, "kind": "decision", "content": "Rust it is.", "quote": "Rust"}
    proposals, problems = parse_llm_memories(json.dumps({"memories": [item, good]}), turns)
    assert proposals == [Proposal(1, "decision", "Rust it is.")]
    assert len(problems) == 1 and problem in problems[0]


@pytest.mark.parametrize("answer", ['{"entities": []}', "not json", '{"memories": {}}'])
def test_an_llm_answer_of_another_shape_is_an_error(answer: str) -> None:
    with pytest.raises(ValueError, match="LLM memories answer"):
        parse_llm_memories(answer, said("We decided on Rust."))


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("Please never run migrations by hand there.", True),
        ("We decided to keep it.", True),
        ("From now on, always cite them.", True),
        ("Never push straight to main.", False),
        ("We decided that releases are weekly.", False),
    ],
)
def test_a_claim_that_points_at_what_only_its_context_names_is_bound_to_it(text, bound):
    (proposal,) = propose(said(text))
    assert proposal.context_bound is bound
