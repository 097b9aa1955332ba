from agent_memory_db.entities.llm import parse_llm_entities
from agent_memory_db.mentions import llm_request, passed_entities, session_mentions, transcript

# A user who names herself, and the assistant's reply with a tool call.
TURNS = [
    {"turn_id": 1, "role": "user", "name": "Maria", "content": "Move billing from MySQL to Postgres."},
    {
        "turn_id": 2,
        "role": "assistant",
        "content": "Checking the schema.",
        "tool_calls": [{"name": "Read", "input": {"file_path": "src/billing/models.py"}}],
    },
]


def test_each_turn_mentions_what_it_says_its_tool_calls_and_its_speaker():
    rows = session_mentions(TURNS, {})
    keys = {(turn, key) for turn, _, key, _, _ in rows}
    assert {(1, "maria"), (1, "mysql"), (1, "postgresql"), (2, "src/billing/models.py")} <= keys


def test_entities_a_caller_passed_are_mentions_too():
    turns = [
        {
            "turn_id": 7,
            "role": "user",
            "content": "It slipped.",
            "entities": ["Apollo", {"name": "Q3 plan", "type": "doc"}],
        }
    ]
    assert [(key, kind) for _, _, key, kind, _ in session_mentions(turns, {})] == [
        ("apollo", "other"),
        ("q3 plan", "doc"),
    ]


def test_passed_entities_of_other_shapes_are_ignored():
    assert passed_entities(None) == [] and passed_entities([{"type": "doc"}, 3]) == []


def test_with_the_llms_entities_a_turn_mentions_them_where_their_names_appear():
    turns = [
        {
            "turn_id": 1,
            "role": "user",
            "name": "Maria",
            "content": "Is the Billing Service on postgres yet? postgres!",
        },
        {"turn_id": 2, "role": "assistant", "content": "Not yet: billing services move in May.", "entities": ["Q3"]},
    ]
    named = parse_llm_entities(
        '{"entities": [{"name": "billing service", "type": "project"}, {"name": "Postgres", "type": "tool"},'
        ' {"name": "Lisbon", "type": "place"}]}'
    )
    assert [(turn, key, kind, count) for turn, _, key, kind, count in session_mentions(turns, {}, named)] == [
        (1, "maria", "person", 1),
        (1, "billing service", "project", 1),
        (1, "postgresql", "tool", 2),
        (2, "q3", "other", 1),
    ]


def test_the_llm_reads_each_turn_with_its_speaker_and_tool_calls():
    assert transcript(TURNS).split("\n\n") == [
        "Maria: Move billing from MySQL to Postgres.",
        "assistant: Checking the schema.\nRead file_path: src/billing/models.py",
    ]
    request = llm_request(TURNS)
    assert [m["role"] for m in request] == ["system", "user"] and request[1]["content"] == transcript(TURNS)
