from agent_memory_db.mentions import passed_entities, session_mentions


def test_each_turn_mentions_what_it_says_its_tool_calls_and_its_speaker():
    turns = [
        {"turn_key": 1, "role": "user", "name": "Maria", "content": "Move billing from MySQL to Postgres."},
        {
            "turn_key": 2,
            "role": "assistant",
            "content": "Checking the schema.",
            "tool_calls": [{"name": "Read", "input": {"file_path": "src/billing/models.py"}}],
        },
    ]
    rows = session_mentions(turns, {})
    keys = {(turn, key) for turn, _, key, _, _ in rows}
    assert {(1, "maria"), (1, "mysql"), (1, "postgresql"), (2, "src/billing/models.py")} <= keys


def test_entities_a_caller_passed_are_mentions_too():
    turns = [
        {
            "turn_key": 7,
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
