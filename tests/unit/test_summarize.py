"""Extractive summaries and parsing of LLM summaries."""

import pytest

from agent_memory_db.summarize import extractive, llm_messages, parse_llm_summary

TURNS = [
    {"role": "user", "name": "Ana", "content": "We decided to use Postgres for the auth service. It is simple."},
    {"role": "assistant", "content": "Postgres works well for the auth service and its sessions."},
    {"role": "user", "content": "I need to rotate the signing keys later. The weather is nice today."},
]


def test_summary_keeps_the_most_central_sentences_in_order_with_speakers():
    summary = extractive(TURNS, max_sentences=2)
    assert summary.text == (
        "Ana: We decided to use Postgres for the auth service. "
        "assistant: Postgres works well for the auth service and its sessions."
    )


def test_decisions_and_open_loops_are_found_by_their_wording():
    summary = extractive(TURNS)
    assert summary.decisions == ["We decided to use Postgres for the auth service."]
    assert summary.open_loops == ["I need to rotate the signing keys later."]


def test_summary_is_deterministic():
    assert extractive(TURNS) == extractive(TURNS)


def test_no_sentences_give_an_empty_summary():
    assert extractive([{"role": "user", "content": "ok"}]).text == ""


def test_llm_prompt_carries_the_transcript_with_speakers():
    messages = llm_messages(TURNS)
    assert messages[0]["role"] == "system" and '"open_loops"' in messages[0]["content"]
    assert messages[1]["content"].startswith("Ana: We decided")


def test_llm_answer_is_parsed_even_in_a_code_fence():
    summary = parse_llm_summary('```json\n{"summary": "S.", "decisions": ["d"], "open_loops": []}\n```')
    assert (summary.text, summary.decisions, summary.open_loops, summary.method) == ("S.", ["d"], [], "llm")


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("not json", "not JSON"),
        ("[]", "the LLM summary is not a JSON object"),
        ('{"decisions": []}', 'no "summary" string'),
        ('{"summary": "S", "decisions": "one"}', '"decisions" is not a list of strings'),
    ],
)
def test_bad_llm_answers_are_errors(answer, error):
    with pytest.raises(ValueError, match=error):
        parse_llm_summary(answer)


def test_a_code_conversation_is_summarized_in_whole_sentences():
    turns = [
        {
            "role": "user",
            "content": "Migrate the DB layer from SQLAlchemy 1.4 to 2.0 and replace query.get with Session.get.",
        },
        {
            "role": "assistant",
            "content": "Pinned httpx==0.27 and the docs job passes.\n```\nuv pip install httpx==0.27\n```",
        },
        {
            "role": "assistant",
            "content": "I bumped the image to postgres:16 in .github/workflows/ci.yml for the test job.",
        },
        {"role": "tool", "content": "FAILED tests/test_db.py::test_unique - the unique constraint test failed again"},
    ]
    text = extractive(turns, max_sentences=5).text
    assert "SQLAlchemy 1.4 to 2.0 and replace query.get with Session.get." in text
    assert "httpx==0.27 and the docs job passes." in text and "uv pip install" not in text
    assert "postgres:16 in .github/workflows/ci.yml for the test job." in text and "FAILED" not in text
