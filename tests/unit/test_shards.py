"""agent_memory_db.shards: a statement's tables named by their shards (for Citus)."""

from __future__ import annotations

from agent_memory_db.shards import renamed

SHARDS = {"memory.turns": "memory.turns_102008", "memory.chunks": "memory.chunks_102040"}


def test_each_mapped_name_is_replaced_where_it_stands_whole():
    statement = "select * from memory.turns as t join memory.chunks c on (c.turn_id = t.turn_id)\nwhere memory.turns.x"
    assert renamed(statement, SHARDS) == (
        "select * from memory.turns_102008 as t join memory.chunks_102040 c on (c.turn_id = t.turn_id)\n"
        "where memory.turns_102008.x"
    )


def test_a_longer_name_an_other_schema_and_an_unmapped_table_stay():
    statement = "memory.turns_archive, other.turns, xmemory.turns, memory.sessions, memory.chunk_embeddings"
    assert renamed(statement, SHARDS) == statement


def test_a_name_put_in_is_not_replaced_again():
    assert renamed("memory.turns", {"memory.turns": "memory.turns_1", "memory.turns_1": "wrong"}) == "memory.turns_1"
