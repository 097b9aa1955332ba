"""What the database asks the chat endpoint, by purpose: the request built from what the purpose reads (a
session's turns; for the supersession judge, a claim and the claims held; for a request in plain words, the
request and today), the setting that must choose `llm` for the request to be sent, and the name the purpose
has in an error."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_memory_db import memory_extraction, mentions, plain_query, summarize, supersession


@dataclass(frozen=True)
class ChatPurpose:
    label: str  # "llm summary": errors say "llm summary failed: ..."
    setting: str  # the setting whose value must be "llm"
    messages: Callable[[Any], list[dict]]  # from the request's JSON


PURPOSES = {
    "summary": ChatPurpose("llm summary", "summarizer", summarize.llm_messages),
    "entities": ChatPurpose("llm entity extraction", "entity_extractor", mentions.llm_request),
    "memories": ChatPurpose("llm memory extraction", "memory_extractor", memory_extraction.llm_messages),
    "supersession": ChatPurpose("llm supersession judge", "memory_supersede_judge", supersession.llm_messages),
    "query": ChatPurpose("llm query reading", "query_reader", plain_query.llm_messages),
}
