from agent_memory_db.suggestions import closest

KNOWN = ["weight_dense", "weight_lexical", "recall_candidates", "index_roles", "chunk_chars"]


def test_a_transposition_finds_the_setting():
    assert closest("wieght_dense", KNOWN) == "weight_dense"


def test_case_and_a_missing_letter_are_forgiven():
    assert closest("INDEX_ROLE", KNOWN) == "index_roles"


def test_nothing_close_gives_none():
    assert closest("colour", KNOWN) is None
