"""The entities each turn of a session mentions, for the knowledge graph.

A turn mentions what the extractor finds in what is indexed of it (its words and its tool calls) and its
speaker (with the llm extractor: the entities the model named for the session, where their names appear
in the turn), and the entities the caller passed with the message (a list of names or {"name", "type"}
objects, kept in metadata.entities). Each is keyed by its normalized, canonical name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agent_memory_db import indexing
from agent_memory_db.entities import TYPES, Entity, merge_mentions, normalized_key
from agent_memory_db.entities.extract import extract_entities, speaker_mentions
from agent_memory_db.entities.llm import Named, llm_mentions, llm_messages

MentionRow = tuple[int, str, str, str, int]  # turn_id, name as written, key, type, how often


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


def transcript(turns: Sequence[dict]) -> str:
    """The session as the llm extractor reads it: each turn as "speaker: what is indexed of it", a blank
    line between turns."""
    return "\n\n".join(f"{turn.get('name') or turn['role']}: {indexing.indexed_text(turn)}" for turn in turns)


def llm_request(turns: Sequence[dict]) -> list[dict]:
    """The llm extractor's chat request for a session."""
    return llm_messages(transcript(turns))


def _found(turn: dict, gazetteer: Mapping[str, str], named: Sequence[Named] | None) -> list[Entity]:
    """What a turn mentions: by the rules, or (named: the llm's answer for the session) where a name the
    model gave appears in its words; its speaker either way."""
    text = indexing.indexed_text(turn)
    if named is None:
        return extract_entities(text, speaker=turn.get("name"), gazetteer=gazetteer)
    return merge_mentions(speaker_mentions(turn.get("name"))) + llm_mentions(text, named)


def session_mentions(
    turns: Sequence[dict], gazetteer: Mapping[str, str], named: Sequence[Named] | None = None
) -> list[MentionRow]:
    """One row per turn and entity it mentions: (turn_id, name, key, type, count)."""
    rows: list[MentionRow] = []
    for turn in turns:
        found = [(entity.name, entity.type, entity.count) for entity in _found(turn, gazetteer, named)]
        found += [(name, kind, 1) for name, kind in passed_entities(turn.get("entities"))]
        for name, kind, count in found:
            key = normalized_key(name)
            if key:
                rows.append((turn["turn_id"], name, key, kind, count))
    return rows
