"""The `llm` entity extractor: one chat request per session, and the strict reading of its answer.

The model reads the session's transcript (each turn as "speaker: words") and answers (LLM_INSTRUCTIONS)
with JSON {"entities": [{"name": ..., "type": ...}]}: which entities there are and of what type. Where
they are is not asked: a turn mentions an entity as often as one of the names the model gave for it
appears in the turn's words (llm_mentions), so counts are exact and a misnumbered answer cannot put a
mention in the wrong turn. Names are matched in any case, as whole words in scripts written with spaces
("Go" not in "Google"; "東京" inside "昨日東京に行った"), the longest first where names overlap ("New York
City", not also "New York"); a name that is also a common word ("Go", "May", "Rust") only as the model
wrote it. A type outside the twelve is "other"; an answer of any other shape is a ValueError that names
what is wrong.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory_db.entities import TYPES, Entity, Mention, merge_mentions, normalized_key
from agent_memory_db.entities.names import AMBIGUOUS, STOP_WORDS
from agent_memory_db.openai_compat import json_object

LLM_INSTRUCTIONS = (
    "List the entities this conversation mentions, for an agent's long-term memory: people, organizations, "
    "places, projects, tools, documents and files, metrics, events, tasks, topics and concepts. Answer with "
    'only a JSON object {"entities": [{"name": "...", "type": "..."}]}, each name written exactly as in the '
    f"text, each type one of: {', '.join(TYPES)}. List each entity once; leave out dates, times and bare numbers."
)


def llm_messages(transcript: str) -> list[dict]:
    """The chat request: the instructions, then the session's transcript."""
    return [{"role": "system", "content": LLM_INSTRUCTIONS}, {"role": "user", "content": transcript}]


def _mention(number: int, item: object) -> Mention:
    if not isinstance(item, dict):
        raise ValueError(f"the LLM entity {number} is not an object")
    name, kind = item.get("name"), item.get("type")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f'the LLM entity {number} has no "name" string')
    if not isinstance(kind, str):
        raise ValueError(f'the LLM entity {number} has no "type" string')
    kind = kind.strip().lower()
    return Mention(number, name.strip(), kind if kind in TYPES else "other")


@dataclass(frozen=True)
class Named:
    """An entity of the model's answer: merged by key like the rule extractor's (its first name, its most
    specific type, how often the model listed it), with every name the model gave it."""

    entity: Entity
    spellings: tuple[str, ...]


def parse_llm_entities(content: str) -> list[Named]:
    """The model's answer as Named entities; a reply that is not the asked-for JSON is a ValueError."""
    data = json_object(content, "the LLM entities answer")
    if not isinstance(data.get("entities"), list):
        raise ValueError('the LLM entities answer has no "entities" list')
    mentions = [_mention(number, item) for number, item in enumerate(data["entities"])]
    spellings: dict[str, dict[str, None]] = {}
    for mention in mentions:
        spellings.setdefault(normalized_key(mention.surface), {})[mention.surface] = None
    return [Named(entity, tuple(spellings[normalized_key(entity.name)])) for entity in merge_mentions(mentions)]


def _spaced(char: str) -> bool:
    """Whether a name's edge character is of a script that puts spaces between words."""
    return char.isascii() or unicodedata.name(char, "").startswith(("LATIN", "GREEK", "CYRILLIC"))


def _pattern(spelling: str) -> str:
    word = spelling.casefold()
    body = re.escape(spelling)
    if word not in AMBIGUOUS and word not in STOP_WORDS:
        body = f"(?i:{body})"
    return ("(?<!\\w)" if _spaced(spelling[0]) else "") + body + ("(?!\\w)" if _spaced(spelling[-1]) else "")


def llm_mentions(text: str, named: Sequence[Named]) -> list[Entity]:
    """The entities a turn's words mention, each with how often one of its names appears."""
    by_key = {normalized_key(item.entity.name): item.entity for item in named}
    spellings = sorted({spelling for item in named for spelling in item.spellings}, key=len, reverse=True)
    if not spellings:
        return []
    counts: dict[str, int] = {}
    for match in re.finditer("|".join(map(_pattern, spellings)), text):
        key = normalized_key(match.group())
        if key in by_key:
            counts[key] = counts.get(key, 0) + 1
    return [Entity(by_key[key].name, by_key[key].type, count) for key, count in counts.items()]
