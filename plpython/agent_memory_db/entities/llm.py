"""The `llm` entity extractor: the chat request, and the strict parsing of the model's answer.

The model is asked (LLM_INSTRUCTIONS) for JSON {"entities": [{"name": ..., "type": ...}]}. The answer
may sit in a ```json fence. A type outside the twelve is "other"; an answer of any other shape is a
ValueError that names what is wrong. Names merge like the rule extractor's (by key; the count is the
number of times the model listed the name).
"""

from __future__ import annotations

import json
import re

from agent_memory_db.entities import TYPES, Entity, Mention, merge_mentions

LLM_INSTRUCTIONS = (
    "List the entities the text mentions, for an agent's long-term memory: people, organizations, places, "
    "projects, tools, documents and files, metrics, events, tasks, topics and concepts. Answer with only a "
    'JSON object {"entities": [{"name": "...", "type": "..."}]}, each name written as in the text, each type '
    f"one of: {', '.join(TYPES)}. List each entity once; leave out dates, times and bare numbers."
)
FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def llm_messages(text: str) -> list[dict]:
    """The chat request: the instructions, then the text."""
    return [{"role": "system", "content": LLM_INSTRUCTIONS}, {"role": "user", "content": text}]


def _mention(number: int, item: object) -> Mention:
    if not isinstance(item, dict):
        raise ValueError(f"the LLM entity {number} is not an object")
    name, kind = item.get("name"), item.get("type")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f'the LLM entity {number} has no "name" string')
    if not isinstance(kind, str):
        raise ValueError(f'the LLM entity {number} has no "type" string')
    kind = kind.strip().lower()
    return Mention(number, name, kind if kind in TYPES else "other")


def parse_llm_entities(content: str) -> list[Entity]:
    """The model's answer as Entities; a reply that is not the asked-for JSON is a ValueError."""
    text = content.strip()
    fenced = FENCED.match(text)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the LLM entities are not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("entities"), list):
        raise ValueError('the LLM answer has no "entities" list')
    return merge_mentions(_mention(number, item) for number, item in enumerate(data["entities"]))
