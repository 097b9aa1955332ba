from agent_memory_db.indexing import split_chunks
from agent_memory_db.sentences import sentences, spans


def test_prose_splits_at_sentence_ends_and_line_breaks():
    assert sentences("We ship today. Is that ok?\nYes! Fine") == ["We ship today.", "Is that ok?", "Yes!", "Fine"]


def test_versions_dotted_names_paths_and_urls_stay_whole():
    text = (
        "Migrate the DB layer from SQLAlchemy 1.4 to 2.0 and replace query.get with Session.get. "
        "Pin httpx==0.27 and the docs job passes. I bumped it to postgres:16 in .github/workflows/ci.yml today. "
        "See https://docs.example.com/v2.1/guide.html for details."
    )
    assert sentences(text) == [
        "Migrate the DB layer from SQLAlchemy 1.4 to 2.0 and replace query.get with Session.get.",
        "Pin httpx==0.27 and the docs job passes.",
        "I bumped it to postgres:16 in .github/workflows/ci.yml today.",
        "See https://docs.example.com/v2.1/guide.html for details.",
    ]


def test_abbreviations_and_inline_code_do_not_end_a_sentence():
    text = "Use a tool, e.g. ruff. Run `make test. then lint` once. Done."
    assert sentences(text) == ["Use a tool, e.g. ruff.", "Run `make test. then lint` once.", "Done."]


def test_a_fenced_code_block_is_one_code_span_left_out_of_sentences():
    text = "Run this:\n```sh\npip install x. y\necho done.\n```\nThen restart. It works."
    found = spans(text)
    assert [(text[s.start : s.end], s.code) for s in found] == [
        ("Run this:", False),
        ("```sh\npip install x. y\necho done.\n```", True),
        ("Then restart.", False),
        ("It works.", False),
    ]
    assert sentences(text) == ["Run this:", "Then restart.", "It works."]


def test_an_unclosed_fence_runs_to_the_end():
    text = "Logs follow.\n```\nERROR: x. y\n"
    assert [s.code for s in spans(text)] == [False, True]


def test_chunks_keep_code_blocks_whole_and_text_as_written():
    block = "```python\n" + "\n".join(f"value_{i} = compute({i}).result()" for i in range(8)) + "\n```"
    text = "First we load it. " * 5 + "\n" + block + "\nThat is all."
    chunks = split_chunks(text, 300)
    assert block in chunks[1] and all(len(c) <= 300 for c in chunks)
    assert chunks[0].startswith("First we load it.") and chunks[-1].endswith("That is all.")


def test_a_code_block_longer_than_a_chunk_is_cut_at_line_breaks():
    block = "```\n" + "\n".join(f"line {i:03d} of output" for i in range(40)) + "\n```"
    chunks = split_chunks(block, 200)
    assert all(len(c) <= 200 for c in chunks)
    assert all(c.endswith("of output") or c.endswith("```") for c in chunks)


def test_a_million_characters_split_in_linear_time():
    text = "The deploy log says the `cache.warm` step ran, e.g. twice. " * 17_000
    assert len(sentences(text)) == 17_000


def test_no_at_the_end_of_a_sentence_ends_it():
    assert sentences("Did it work? No. We then tried again.") == ["Did it work?", "No.", "We then tried again."]
