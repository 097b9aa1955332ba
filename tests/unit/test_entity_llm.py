"""The llm entity extractor's request and the strict reading of its answer (agent_memory_db.entities.llm)."""

import json

import pytest

from agent_memory_db.entities import TYPES, Entity
from agent_memory_db.entities.llm import LLM_INSTRUCTIONS, Named, llm_mentions, llm_messages, parse_llm_entities


def test_the_request_carries_the_instructions_and_the_transcript():
    messages = llm_messages("Maria: We moved to Postgres.")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == LLM_INSTRUCTIONS and '"entities"' in LLM_INSTRUCTIONS
    assert all(kind in LLM_INSTRUCTIONS for kind in TYPES)
    assert messages[1]["content"] == "Maria: We moved to Postgres."


def entities(answer):
    return [named.entity for named in parse_llm_entities(answer)]


def test_an_answer_is_read_even_in_a_code_fence():
    answer = '```json\n{"entities": [{"name": "Caroline", "type": "person"}, {"name": "Boston", "type": "Place"}]}\n```'
    assert entities(answer) == [Entity("Caroline", "person", 1), Entity("Boston", "place", 1)]


def test_unknown_types_are_other_and_names_of_one_entity_merge_keeping_every_spelling():
    assert entities('{"entities": [{"name": "Pride", "type": "festival"}]}') == [Entity("Pride", "other")]
    answer = '{"entities": [{"name": "Postgres", "type": "tool"}, {"name": "PostgreSQL", "type": "tool"}]}'
    assert parse_llm_entities(answer) == [Named(Entity("Postgres", "tool", 2), ("Postgres", "PostgreSQL"))]
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


def found(text, *names):
    answer = json.dumps({"entities": [{"name": name, "type": "other"} for name in names]})
    return {entity.name: entity.count for entity in llm_mentions(text, parse_llm_entities(answer))}


def test_every_name_the_model_gave_is_found_in_any_case_as_a_whole_word():
    assert found("PostgreSQL is up; postgres too. Postgresify no.", "Postgres", "PostgreSQL") == {"Postgres": 2}
    assert found("C++ is fast, c++! Not ABC++.", "C++") == {"C++": 2}


def test_a_name_that_is_a_common_word_counts_only_as_the_model_wrote_it():
    assert found("We go to Go meetups; Google and Golang are not Go.", "Go") == {"Go": 2}
    assert found("I may visit May in may.", "May") == {"May": 1}


def test_overlapping_names_count_the_longest_and_scripts_without_spaces_need_no_word_boundary():
    assert found("New York City and new york", "New York", "New York City") == {"New York City": 1, "New York": 1}
    assert found("昨日東京に行った", "東京") == {"東京": 1}
