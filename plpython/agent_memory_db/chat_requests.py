"""What enrichment asks the chat endpoint, by purpose: the request built from a session's turns, the
setting that must choose `llm` for the request to be sent, and the name the purpose has in an error."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_memory_db import memory_extraction, mentions, summarize


@dataclass(frozen=True)
class ChatPurpose:
    label: str  # "llm summary": errors say "llm summary failed: ..."
    setting: str  # the setting whose value must be "llm"
    messages: Callable[[Sequence[dict]], list[dict]]


PURPOSES = {
    "summary": ChatPurpose("llm summary", "summarizer", summarize.llm_messages),
    "entities": ChatPurpose("llm entity extraction", "entity_extractor", mentions.llm_request),
    "memories": ChatPurpose("llm memory extraction", "memory_extractor", memory_extraction.llm_messages),
}
