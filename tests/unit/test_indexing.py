"""What gets indexed for a turn: noise, context, chunks."""

import pytest

from agent_memory_db.indexing import IndexPolicy, index_chunks, is_noise, split_chunks


@pytest.mark.parametrize(
    "text", ["ok", "Thanks!", "got it", "ok, thanks", "/compact", "/model opus", "HEARTBEAT_OK", "ping", "hm?"]
)
def test_noise_is_not_indexed(text):
    assert is_noise(text, min_chars=12)


@pytest.mark.parametrize(
    "text", ["ok so the deploy failed on Friday", "Thanks to Maria the auth fix landed.", "what is /etc/hosts for?"]
)
def test_real_content_is_indexed(text):
    assert not is_noise(text, min_chars=12)


def test_short_text_under_the_minimum_is_noise():
    assert is_noise("Nice cat", min_chars=12) and not is_noise("Nice cat", min_chars=5)


def test_short_text_stays_one_chunk():
    assert split_chunks("  One sentence.  ", 100) == ["One sentence."]


def test_long_text_splits_at_sentence_ends_within_the_limit():
    text = " ".join(f"Sentence {i} is here." for i in range(20))
    chunks = split_chunks(text, 60)
    assert all(len(chunk) <= 60 for chunk in chunks)
    assert " ".join(chunks) == text


def test_a_sentence_longer_than_a_chunk_is_cut():
    chunks = split_chunks("x" * 250, 100)
    assert [len(c) for c in chunks] == [100, 100, 50]


def turns(*contents, role="user"):
    return [{"turn_id": i, "role": role, "content": c} for i, c in enumerate(contents)]


def test_context_is_the_previous_indexed_turns_kept_apart_from_the_turns_own_words():
    policy = IndexPolicy(context_turns=2, min_chars=3)
    chunks = index_chunks(turns("first turn", "ok", "second turn", "third turn"), policy)
    assert [(c.turn_id, c.text, c.context, c.context_turn_id) for c in chunks] == [
        (0, "first turn", "", None),
        (2, "second turn", "first turn", 0),
        (3, "third turn", "first turn\nsecond turn", 2),
    ]


def test_claims_are_indexed_each_on_its_own_however_short():
    policy = IndexPolicy(context_turns=2, min_chars=12, claims=True)
    chunks = index_chunks(turns("Ana lives in Porto.", "Ana Silva", "yes"), policy)
    assert [(c.turn_id, c.text, c.context, c.context_turn_id) for c in chunks] == [
        (0, "Ana lives in Porto.", "", None),
        (1, "Ana Silva", "", None),
        (2, "yes", "", None),
    ]


def test_roles_outside_the_policy_are_skipped():
    assert index_chunks(turns("a system prompt here", role="system"), IndexPolicy()) == []
    assert index_chunks(turns("a tool result here", role="tool"), IndexPolicy(roles=frozenset({"user"}))) == []


def test_tool_results_are_indexed_by_default():
    (chunk,) = index_chunks(turns("ERROR: NULLS NOT DISTINCT is not supported", role="tool"), IndexPolicy())
    assert chunk.text == "ERROR: NULLS NOT DISTINCT is not supported"


def test_tool_call_arguments_are_indexed_with_the_turn():
    openai = {"function": {"name": "Bash", "arguments": '{"command": "pytest -q tests/test_db.py"}'}}
    plain = {"name": "Read", "input": {"file_path": "/srv/app/db.py", "limit": 40}}
    turn = {"turn_id": 1, "role": "assistant", "content": "Running the tests.", "tool_calls": [openai, plain]}
    (chunk,) = index_chunks([turn], IndexPolicy())
    assert (
        chunk.text
        == "Running the tests.\nBash command: pytest -q tests/test_db.py\nRead file_path: /srv/app/db.py limit: 40"
    )


def test_a_turn_of_tool_calls_alone_is_indexed_and_bad_calls_are_skipped():
    calls = [{"function": {"name": "Grep", "arguments": "not json"}}, "junk", {"name": None}]
    (chunk,) = index_chunks([{"turn_id": 1, "role": "assistant", "content": "", "tool_calls": calls}], IndexPolicy())
    assert chunk.text == "Grep not json"


def test_only_the_first_chunk_of_a_turn_carries_context():
    policy = IndexPolicy(context_turns=1, min_chars=3, chunk_chars=20)
    chunks = index_chunks(turns("the context", "One two three. Four five six. Seven eight."), policy)
    assert (chunks[1].context, chunks[1].context_turn_id) == ("the context", 0)
    assert (chunks[2].context, chunks[2].context_turn_id) == ("", None)
    assert "the context" not in chunks[1].text


def test_only_the_first_max_chunks_worth_of_a_long_turn_is_indexed():
    policy = IndexPolicy(min_chars=3, chunk_chars=100, max_chunks=3)
    chunks = index_chunks(turns("x" * 1000), policy)
    assert [len(c.text) for c in chunks] == [100, 100, 100]
    assert policy.max_chars == 300


def test_chunk_hash_changes_with_text():
    a, b = index_chunks(turns("some text here", "other text here"), IndexPolicy(context_turns=0))
    assert a.sha256 != b.sha256 and len(a.sha256) == 64
