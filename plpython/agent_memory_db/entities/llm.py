"""The `llm` entity extractor: one chat request per session, and the strict reading of its answer.

The model reads the session's transcript (each turn as "speaker: words") and answers (LLM_INSTRUCTIONS)
with JSON {"entities": [{"name": ..., "type": ...}]}: which entities there are and of what type. Where
they are is not asked: a turn mentions an entity as often as one of the names the model gave for it
appears in the turn's words as a whole word, in any case (llm_mentions), so counts are exact and a
misnumbered answer cannot put a mention in the wrong turn. A type outside the twelve is "other"; an answer
of any other shape is a ValueError that names what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_memory_db.entities import TYPES, Entity, Mention, merge_mentions
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


def parse_llm_entities(content: str) -> list[Entity]:
    """The model's answer as Entities, merged by key like the rule extractor's (the count is how often
    the model listed the name); a reply that is not the asked-for JSON is a ValueError."""
    data = json_object(content, "the LLM entities answer")
    if not isinstance(data.get("entities"), list):
        raise ValueError('the LLM entities answer has no "entities" list')
    return merge_mentions(_mention(number, item) for number, item in enumerate(data["entities"]))


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)", re.IGNORECASE)


def llm_mentions(text: str, entities: Sequence[Entity]) -> list[Entity]:
    """The entities a turn's words mention, each with how often its name appears as a whole word."""
    found = []
    for entity in entities:
        count = len(_pattern(entity.name).findall(text))
        if count:
            found.append(Entity(entity.name, entity.type, count))
    return found
