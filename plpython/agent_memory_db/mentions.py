"""The entities each turn of a session mentions, for the knowledge graph.

A turn mentions what the extractor finds in what is indexed of it (its words and its tool calls) and its
speaker, and the entities the caller passed with the message (a list of names or {"name", "type"}
objects, kept in metadata.entities). Each is keyed by its normalized, canonical name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_memory_db import indexing
from agent_memory_db.entities import TYPES, entity_key
from agent_memory_db.entities.extract import extract_entities

MentionRow = tuple[int, str, str, str, int]  # turn_key, name as written, key, type, how often


def passed_entities(value: object) -> list[tuple[str, str]]:
    """(name, type) of the entities a caller passed with a message (commit checked their shape)."""
    passed = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, str):
            passed.append((item, "other"))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            kind = item.get("type")
            passed.append((item["name"], kind if kind in TYPES else "other"))
    return passed


def session_mentions(turns: Sequence[dict], gazetteer: Mapping[str, str]) -> list[MentionRow]:
    """One row per turn and entity it mentions: (turn_key, name, key, type, count)."""
    rows: list[MentionRow] = []
    for turn in turns:
        found = [
            (entity.name, entity.type, entity.count)
            for entity in extract_entities(indexing.indexed_text(turn), speaker=turn.get("name"), gazetteer=gazetteer)
        ]
        found += [(name, kind, 1) for name, kind in passed_entities(turn.get("entities"))]
        for name, kind, count in found:
            key = entity_key(name)
            if key:
                rows.append((turn["turn_key"], name, key, kind, count))
    return rows
