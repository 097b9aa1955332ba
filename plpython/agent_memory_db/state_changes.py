"""Entity state changes read from what users say: "Ana now leads billing.", "The deploy freeze is over.".

Each prose sentence of a user's turn is read as a frame (agent_memory_db.supersession: subject, attribute,
value). A sentence states a change of state when it says so ("now", "moved to", "switched from ... to")
or gives a value that is a state ("over", "paused", "live"), and is about a named thing rather than the
speaker ("I", "we": those are the speaker's own facts, kept as curated memories):

- a name and what it does or has: "Ana now leads billing." is Ana's `lead`, "billing";
  "Ana's role is now staff engineer." is Ana's `role`;
- "the X": "The deploy freeze is over." is the deploy freeze's `state`, "over"; "The release moved to
  March 17." is the release's `state`, "March 17".

Denials ("Ana no longer leads billing") and questions name no new value and are left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory_db.memory_extraction import parse_llm_memories
from agent_memory_db.sentences import sentences
from agent_memory_db.supersession import PERSONS, frame

# Values that are a state in themselves: saying one says the state changed.
STATE_VALUES = frozenset(
    [
        "over",
        "done",
        "finished",
        "ended",
        "lifted",
        "cancelled",
        "canceled",
        "closed",
        "resolved",
        "live",
        "paused",
        "on hold",
        "resumed",
        "blocked",
        "unblocked",
        "back",
        "open",
        "shipped",
        "released",
        "frozen",
        "deprecated",
        "retired",
        "in progress",
        "complete",
        "completed",
        "delayed",
        "postponed",
    ]
)
# Words that open a sentence as a name does and are none.
NOT_NAMES = frozenset(
    [
        "he",
        "she",
        "it",
        "they",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "everything",
        "everyone",
        "everybody",
        "something",
        "someone",
        "nothing",
        "nobody",
        "anything",
        "today",
        "tomorrow",
        "tonight",
        "yesterday",
        "now",
        "summer",
        "winter",
        "spring",
        "autumn",
        "fall",
        "dinner",
        "lunch",
        "breakfast",
        "life",
        "work",
        "school",
        "who",
        "what",
        "which",
    ]
)
QUESTION = re.compile(r"\?\s*$")


@dataclass(frozen=True)
class StateChange:
    turn_id: int
    entity: str
    attribute: str
    value: str


def _as_said(sentence: str, words: str) -> str:
    """The words as the sentence writes them (the frame's are case-folded)."""
    found = re.search(r"\b" + re.escape(words).replace(r"\ ", r"\s+") + r"\b", sentence, re.IGNORECASE)
    return found.group(0) if found else words


def _change(sentence: str) -> tuple[str, str, str] | None:
    """(entity, attribute, value) of the state change a sentence states, or None."""
    said = frame(sentence)
    if said is None or said.denied or QUESTION.search(sentence) or said.subject in PERSONS or not said.value:
        return None
    if not (said.change or said.value in STATE_VALUES):
        return None
    if said.subject and said.attribute:
        entity, attribute = _as_said(sentence, said.subject), said.attribute
        # A name, as written: "He is now a manager" or "Summer is over" names nothing to keep a state of.
        if not entity[:1].isupper() or said.subject in NOT_NAMES:
            return None
    elif not said.subject and said.owned and said.attribute:
        entity, attribute = _as_said(sentence, said.attribute), "state"
    else:
        return None
    return entity, attribute, _as_said(sentence, said.value)


def from_claims(claims: Sequence[tuple[int, str]]) -> list[StateChange]:
    """The state changes of claims others read from turns (the llm extractor's), each with its turn."""
    return [StateChange(turn, *change) for turn, claim in claims if (change := _change(claim.strip())) is not None]


def propose(turns: Sequence[dict]) -> list[StateChange]:
    """The state changes a session's user turns state, each with its turn, once per turn, entity and attribute."""
    out: list[StateChange] = []
    for turn in turns:
        if turn.get("role") != "user" or not isinstance(turn.get("content"), str):
            continue
        seen: set[tuple[str, str]] = set()
        for sentence in sentences(turn["content"]):
            change = _change(sentence.strip())
            if change is not None and (change[0].casefold(), change[1]) not in seen:
                seen.add((change[0].casefold(), change[1]))
                out.append(StateChange(int(turn["turn_id"]), *change))
    return out


def of_session(turns: Sequence[dict], answer: str | None) -> list[StateChange]:
    """A session's state changes: by the patterns (answer None), or from the claims of the llm memory
    extractor's answer (ValueError when it is not one)."""
    if answer is None:
        return propose(turns)
    proposals, _ = parse_llm_memories(answer, turns)
    return from_claims([(p.turn_id, p.content) for p in proposals])
