"""Entities: the names a turn mentions (people, tools, files, places...), each kept under one key.

  normalize.py  the key a name is stored under (normalize_entity) and its alias (canonical_name)
  extract.py    the deterministic extractor: handles, tags, URLs, paths, code, titles, tools, names
  names.py      the built-in word lists the extractor reads (tools, first names, places, stop words)
  llm.py        the llm extractor: the chat request and the reading of its answer
  query.py      the names a recall query may mention an entity by

This file holds what they share: the twelve types, the Entity record, and the merge of mentions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agent_memory_db.entities.normalize import canonical_name, normalize_entity

TYPES = ("person", "project", "concept", "tool", "metric", "org", "place", "event", "doc", "task", "topic", "other")
# When one name is found as several types, the most specific wins: earlier here is more specific.
SPECIFICITY = (
    "person",
    "org",
    "place",
    "project",
    "tool",
    "event",
    "task",
    "doc",
    "metric",
    "concept",
    "topic",
    "other",
)
MAX_ENTITIES = 200
MIN_KEY_CHARS = 2


@dataclass(frozen=True)
class Entity:
    name: str  # the first surface form, as written
    type: str  # one of TYPES
    count: int = 1


@dataclass(frozen=True)
class Mention:
    start: int  # offset in the text; the speaker is at -1
    surface: str
    type: str


def normalized_key(surface: str) -> str:
    """The key a surface form is stored and merged under: normalized, then its alias resolved."""
    return canonical_name(normalize_entity(surface))


def merge_mentions(mentions: Iterable[Mention], known: Mapping[str, str] | None = None) -> list[Entity]:
    """One Entity per key, in order of first mention: its first surface form, its most specific type
    (a key in `known` always takes known's type) and its number of mentions. Keys shorter than
    MIN_KEY_CHARS are dropped; after MAX_ENTITIES keys, new ones are dropped (counts still grow)."""
    known = known or {}
    names: dict[str, str] = {}
    types: dict[str, str] = {}
    counts: dict[str, int] = {}
    for mention in sorted(mentions, key=lambda m: m.start):
        key = normalized_key(mention.surface)
        if len(key) < MIN_KEY_CHARS or (key not in names and len(names) >= MAX_ENTITIES):
            continue
        kind = known.get(key, mention.type)
        if key not in names:
            names[key], types[key], counts[key] = mention.surface.strip(), kind, 0
        counts[key] += 1
        types[key] = min(types[key], kind, key=SPECIFICITY.index)
    return [Entity(names[key], types[key], counts[key]) for key in names]
