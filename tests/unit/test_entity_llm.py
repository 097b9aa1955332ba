"""The llm entity extractor's request and the strict reading of its answer (agent_memory_db.entities.llm)."""

import pytest

from agent_memory_db.entities import TYPES, Entity
from agent_memory_db.entities.llm import LLM_INSTRUCTIONS, llm_mentions, llm_messages, parse_llm_entities


def test_the_request_carries_the_instructions_and_the_transcript():
    messages = llm_messages("Maria: We moved to Postgres.")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == LLM_INSTRUCTIONS and '"entities"' in LLM_INSTRUCTIONS
    assert all(kind in LLM_INSTRUCTIONS for kind in TYPES)
    assert messages[1]["content"] == "Maria: We moved to Postgres."


def test_an_answer_is_read_even_in_a_code_fence():
    answer = '```json\n{"entities": [{"name": "Caroline", "type": "person"}, {"name": "Boston", "type": "Place"}]}\n```'
    assert parse_llm_entities(answer) == [Entity("Caroline", "person", 1), Entity("Boston", "place", 1)]


def test_unknown_types_are_other_and_repeated_names_merge():
    assert parse_llm_entities('{"entities": [{"name": "Pride", "type": "festival"}]}') == [Entity("Pride", "other")]
    answer = '{"entities": [{"name": "Postgres", "type": "tool"}, {"name": "PostgreSQL", "type": "tool"}]}'
    assert parse_llm_entities(answer) == [Entity("Postgres", "tool", 2)]
    assert parse_llm_entities('{"entities": []}') == []


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ("not json", "the LLM entities answer is not JSON"),
        ("[]", "the LLM entities answer is not a JSON object"),
        ('{"entities": {"name": "x"}}', 'no "entities" list'),
        ('{"entities": ["Caroline"]}', "entity 0 is not an object"),
        ('{"entities": [{"type": "person"}]}', 'entity 0 has no "name" string'),
        ('{"entities": [{"name": "  ", "type": "person"}]}', 'entity 0 has no "name" string'),
        ('{"entities": [{"name": "Ana", "type": "person"}, {"name": "Bo"}]}', 'entity 1 has no "type" string'),
    ],
)
def test_answers_of_another_shape_are_errors_that_name_the_problem(answer, error):
    with pytest.raises(ValueError, match=error):
        parse_llm_entities(answer)


def test_mentions_are_whole_words_in_any_case():
    named = [Entity("Go", "tool"), Entity("C++", "tool"), Entity("New York", "place")]
    found = llm_mentions("We go to new york; Google and Golang are not Go. C++ is. c++!", named)
    assert found == [Entity("Go", "tool", 2), Entity("C++", "tool", 2), Entity("New York", "place", 1)]
