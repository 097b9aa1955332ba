"""Big messages (pasted files, tool outputs) are stored whole; indexing reads their first chunks."""

import psycopg
import pytest
from psycopg.rows import namedtuple_row
from psycopg.types.json import Json


def commit(db, messages, **options):
    names = "".join(f", {name} => %({name})s" for name in options)
    cursor = db.cursor(row_factory=namedtuple_row)
    query = f"select * from memory.commit('big', %(messages)s{names})"
    return cursor.execute(query, {"messages": Json(messages), **options}).fetchone()


def test_a_message_of_a_million_characters_is_stored_whole(db):
    text = "The deploy log says the cache warmed. " * 27_000
    row = commit(db, [{"role": "system", "content": text}, {"role": "user", "content": text}], enrich="none")
    assert row.turns_added == 2
    stored = db.execute("select length(content) from memory.turns order by position").fetchall()
    assert stored == [(len(text),), (len(text),)]
    # Only the user turn is of an indexed role, so only it is indexed in part.
    assert row.turns_indexed_in_part == 1


def test_indexing_reads_the_first_index_max_chunks_chunks(db):
    db.execute("set memory.chunk_chars = 100")
    db.execute("set memory.index_max_chunks = 3")
    sentences = " ".join(f"Sentence number {i} talks about item {i}." for i in range(60))
    row = commit(db, [{"role": "user", "content": sentences}], enrich="now")
    assert row.turns_indexed_in_part == 1
    chunks = db.execute("select text from memory.chunks order by chunk_no").fetchall()
    assert sum(len(text) for (text,) in chunks) <= 300 and "item 0." in chunks[0][0]
    assert not db.execute("select count(*) from memory.chunks where text like '%item 59%'").fetchone()[0]


def test_a_message_within_the_limit_is_indexed_whole(db):
    row = commit(db, [{"role": "user", "content": "A short note about the deploy."}], enrich="now")
    assert row.turns_indexed_in_part == 0


def test_the_hard_limit_is_a_setting_and_names_the_message(db):
    db.execute("set memory.max_message_chars = 1000")
    too_long = pytest.raises(psycopg.errors.InvalidParameterValue, match="message 0 is 1001 characters long")
    with too_long, db.transaction():
        commit(db, [{"role": "user", "content": "x" * 1001}])
    assert db.execute("select count(*) from memory.turns").fetchone()[0] == 0


def test_recall_finds_a_word_from_the_indexed_part_of_a_big_message(db):
    db.execute("set memory.embedder = 'none'")
    head = "The incident report names the zeppelin cluster as the root cause. "
    commit(db, [{"role": "user", "content": head + "filler words here. " * 50_000}], enrich="now")
    hits = db.execute("select content from memory.recall('zeppelin cluster', k => 1)").fetchall()
    assert hits and hits[0][0].startswith(head)
