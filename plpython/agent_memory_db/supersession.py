"""Whether a new claim replaces a claim an agent holds, read from the claims' words.

"My editor is vim." then "I switched from vim to helix." says the first no longer holds, though neither
names a key. A claim is read as a frame: who it is about (the subject), what about them (the attribute),
the value it gives, and whether it says so as a change ("now", "switched", "moved ... to", "no longer")
or a denial. The rules (`supersedes`):

- **A change from one value to another** ("... from A to B") replaces the held claim that states A, not
  B, about the same subject and attribute when both are read.
- **The same attribute with another value** replaces a held claim when the attribute holds one value at a
  time: an attribute of an owner ("my editor", "Ana's manager", "the deploy day" when the values are
  numbers or names, or the claim says it changed), or a verb that places someone ("I live in", "I work
  at"). For other verbs ("I use", "I prefer") only a claim that says it changed replaces, and only the
  closest held claim of that verb in meaning (at or above the threshold): "I use Docker" stays beside
  "I use npm".
- **A denial** ("I'm no longer vegetarian", "I don't use a MacBook anymore") replaces the held claim of the
  same subject and attribute that states what it denies.

A paraphrase (the same values, with the same polarity) never replaces; neither does a claim about another
attribute of the same subject. A claim the rules cannot read replaces nothing.

The `llm` judge asks the chat endpoint instead (`llm_messages`, `parse_llm_decision`), as mem0 does: add,
update one held claim, retract one, or nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agent_memory_db.openai_compat import json_object
from agent_memory_db.paraphrase import values

# Verbs that say a value changed ("... to B").
CHANGE_VERBS = (
    "switched|moved|changed|migrated|upgraded|downgraded|renamed|relocated|shifted|raised|lowered|increased|"
    "decreased|reduced|bumped|pushed|went|converted|updated|extended|cut"
)
# Words that say a claim is a change of what held before.
CHANGE_MARK = re.compile(r"\b(?:now|no longer|anymore|any more|these days|nowadays|instead|" + CHANGE_VERBS + r")\b")
DENIAL = re.compile(r"\b(?:no longer|not|never|don't|doesn't|do not|does not|isn't|aren't)\b")
# Words that only say when or that it changed, left out of the frame: "I moved to Lisbon last month".
TRAILING_TIME = re.compile(
    r"(?:\s+(?:now|anymore|any more|these days|nowadays|recently|today|yesterday|instead|"
    r"(?:last|this|next) (?:week|month|year|quarter|spring|summer|autumn|fall|winter)))+$"
)
MARKERS = re.compile(r"\b(?:now|no longer|not|never|don't|doesn't|do not|does not)\s+")
PERSONS = frozenset(["i", "we"])
# Where a claim's first clause ends: "My editor is vim, not emacs", "I'm vegetarian but not vegan", "My manager
# is Priya, who never misses a standup", "I live in Berlin and I don't plan to move".
CLAUSE_END = re.compile(
    r";|\.\s|,\s+(?:and|but|so|not|who|which|where|because|since|although|though)\b"
    r"|\s+(?:but|because|although|though|whereas|while)\s+|\s+and\s+(?:i|we|he|she|they|it)\b"
)
# Words before a claim that are not part of it: "Quick update: Ana now leads billing", "Also, ...".
LEAD_IN = re.compile(
    r"^(?:(?:also|and|but|so|oh|ok|okay|well|btw|fyi|by the way|heads up|update|quick update|note|news|actually|"
    r"correction|sorry)[,:]?\s+)+"
)
DETERMINER = re.compile(r"^(?:the|a|an|our|my|their|his|her)\s+")
OWNED = re.compile(r"^(?:(?P<mine>my|our)|(?P<name>[a-z][\w.-]*)'s)\s+(?P<attribute>[\w' -]+)$")
# Verbs of claims about people and teams ("I live in", "our CI runs on"), and the ones that place the
# subject, one place at a time.
VERBS = (
    "live|work|use|prefer|like|love|hate|drink|eat|host|run|lead|manage|own|drive|speak|report|deploy|play|support|"
    "store|keep|spend|take|need|want|ship|write|read|study|teach|attend|follow|practice|train|cook|ride|wear|belong"
)
PLACING = {"live in": "live in", "live at": "live in", "work at": "work at", "work for": "work at"}
PLACING_CHANGES = {"moved": "live in", "relocated": "live in"}
# Verbs by which a person says what they use: what "switched from A to B" changes.
USING = frozenset(["use", "run", "host", "drive", "drink", "eat", "prefer", "deploy", "ship", "store", "keep"])
PREPOSITIONS = frozenset(["in", "at", "for", "to", "on", "with", "into", "by"])
CHANGED = re.compile(
    r"^(?P<head>.+?)\s+(?:has\s+|have\s+|was\s+|were\s+|got\s+)?(?P<verb>" + CHANGE_VERBS + r")"
    r"(?:\s+(?!from\b)(?P<object>.+?))?(?:\s+from\s+(?P<previous>.+?))?\s+(?:to|into)\s+(?P<value>.+)$"
)
COPULAR = re.compile(r"^(?P<head>.+?)(?:\s+(?:is|are|was|were|am)|'m|'re)\s+(?P<value>.+)$")
VERBAL = re.compile(r"^(?P<head>.+?)\s+(?P<verb>" + VERBS + r")(?:s|es|ed|d)?\s+(?P<rest>.+)$")


@dataclass(frozen=True)
class Frame:
    """What a claim says: who about (subject), what about them (attribute), the value, and how."""

    subject: str  # "i", "we", a name, or "" for "the X"
    attribute: str  # "editor" (owned: "my editor"), "live in" (a verb), "be", or "" when unsaid
    value: str
    owned: bool  # the attribute is a thing the subject has ("my editor", "the deploy day")
    single: bool  # the attribute holds one value at a time
    change: bool  # the claim says the value changed
    denied: bool  # the claim denies the value
    previous: str | None = None  # the value it changed from ("from A to B")
    kinds: frozenset[str] = frozenset()  # what the value is: "number", "name" (neither: a description)


def _head(head: str) -> tuple[str, str | None] | None:
    """(subject, owned attribute or None) of a claim's head: "i", "ana", "my editor", "the deploy day"."""
    head = head.strip()
    owned = OWNED.match(head)
    if owned:
        subject = {"my": "i", "our": "we"}.get(owned.group("mine") or "", owned.group("name") or "")
        return subject, DETERMINER.sub("", owned.group("attribute"))
    if head.startswith("the ") and re.fullmatch(r"[\w' -]+", head):
        return "", head[4:]
    if head in PERSONS or re.fullmatch(r"[a-z][\w.-]*", head):
        return head, None
    return None


def _value(text: str) -> str:
    return DETERMINER.sub("", text.strip(" ,.")).strip()


def _changed(text: str) -> Frame | None:
    """'<head> <change verb> [thing] [from A] to B': "the deploy day moved from tuesday to thursday"."""
    found = CHANGED.match(text)
    head = _head(found.group("head")) if found else None
    if head is None:
        return None
    subject, attribute = head
    thing, verb = found.group("object"), found.group("verb")
    if attribute is None and thing:
        attribute = (_head(thing) or ("", None))[1] or _value(thing)
    elif attribute is None and subject in PERSONS and verb in PLACING_CHANGES:
        attribute = PLACING_CHANGES[verb]
    previous = _value(found.group("previous")) if found.group("previous") else None
    return Frame(
        subject,
        attribute or "",
        _value(found.group("value")),
        head[1] is not None or bool(thing),
        True,
        True,
        False,
        previous,
    )


def _copular(text: str, named: bool, change: bool) -> Frame | None:
    """'<head> is <value>': "my editor is vim", "the deploy day is tuesday", "i'm vegetarian"."""
    found = COPULAR.match(text)
    head = _head(found.group("head")) if found else None
    if head is None:
        return None
    subject, attribute = head
    value = _value(found.group("value"))
    if attribute is None:
        return Frame(subject, "be", value, False, False, change, False)
    # An owner's attribute holds one value at a time; "the X" does when it is a number or a name, or said to change.
    return Frame(subject, attribute, value, True, bool(subject) or named or change, change, False)


def _verbal(text: str, change: bool) -> Frame | None:
    """'<head> <verb> [preposition] <value>': "i live in berlin", "our ci runs on jenkins"."""
    found = VERBAL.match(text)
    head = _head(found.group("head")) if found else None
    if head is None:
        return None
    subject, attribute = head
    first, _, others = found.group("rest").partition(" ")
    preposition = first if first in PREPOSITIONS and others else None
    value = _value(others if preposition else found.group("rest"))
    verb = found.group("verb") + (" " + preposition if preposition else "")
    if attribute is not None:
        # What a thing does is a verb of its own: "our ci runs on" is not "our ci is".
        return Frame(subject, f"{attribute} {verb}", value, True, False, change, False)
    verb = PLACING.get(verb, verb)
    return Frame(subject, verb, value, False, verb in PLACING.values(), change, False)


def frame(claim: str) -> Frame | None:
    """The frame of a claim (its first clause), or None when the rules cannot read one."""
    text = claim.casefold().replace("\u2019", "'")
    text = CLAUSE_END.split(text)[0]
    text = LEAD_IN.sub("", re.sub(r"\s+", " ", text).strip(" .!"))
    change = CHANGE_MARK.search(text) is not None
    denied = DENIAL.search(text) is not None
    text = MARKERS.sub("", TRAILING_TIME.sub("", text).strip(" ,."))
    text = re.sub(r"\b(is|are)n't\b", r"\1", text)
    stated = values(claim)[0]
    found = _changed(text) or _copular(text, bool(stated), change) or _verbal(text, change)
    if found is None:
        return None
    # What the value is, by its first word ("a Honda Civic": a name; "parked in lot B": neither).
    head = re.sub(r"^(?:at|on|in|by|for|to)\s+", "", found.value).split(" ", 1)[0]
    kinds = frozenset("number" if any(c.isdigit() for c in token) else "name" for token in stated if token == head)
    return replace(found, denied=denied, kinds=kinds)


def _mentions(text: str, phrase: str) -> bool:
    """Whether text holds the phrase's words in order, as whole words."""
    wanted = re.findall(r"[\w$%:/-]+(?:\.\w+)*", phrase.casefold())
    have = re.findall(r"[\w$%:/-]+(?:\.\w+)*", text.casefold())
    return bool(wanted) and any(have[i : i + len(wanted)] == wanted for i in range(len(have) - len(wanted) + 1))


@dataclass(frozen=True)
class Held:
    """A claim the agent holds: its id, words, and closeness in meaning to the new claim (None if unknown)."""

    memory_id: int
    content: str
    similarity: float | None


def _same_subject(new: Frame, old: Frame) -> bool:
    return new.subject == old.subject or {new.subject, old.subject} <= PERSONS


def _changed_from(new: Frame, old: Frame | None, held: Held, threshold: float) -> str | None:
    """Why "... from A to B" replaces a held claim that states A (not B): about the same thing, or of the same
    subject and close in meaning, or what the same person said they use ("I use npm ..." for "I switched from
    npm to pnpm")."""
    assert new.previous is not None
    stated = old.value if old is not None else held.content
    if not _mentions(stated, new.previous) or _mentions(stated, new.value):
        return None
    if old is not None and new.subject and old.subject and not _same_subject(new, old):
        return None
    # The same thing: "our ci" moved is what "our ci runs on" said.
    same_thing = (
        old is not None
        and bool(new.attribute)
        and new.subject == old.subject
        and (
            (old.attribute + " ").startswith(new.attribute + " ")
            or (new.attribute + " ").startswith(old.attribute + " ")
        )
    )
    # Two things owned differ ("the staging database" is not "the production database").
    if old is not None and new.owned and old.owned and not same_thing:
        return None
    close = held.similarity is not None and held.similarity >= threshold
    used = (
        old is not None
        and not old.owned
        and old.subject in PERSONS
        and old.attribute in USING
        and stated.startswith(new.previous)
    )
    return f"changed from {new.previous!r} to {new.value!r}" if same_thing or close or used else None


def _why(new: Frame, old: Frame | None, held: Held, threshold: float) -> str | None:
    """Why the new claim replaces a held one, or None when it does not."""
    if old is not None and old.denied and not new.denied:
        return None
    if new.previous is not None:
        return _changed_from(new, old, held, threshold)
    if old is None or not new.attribute or (new.subject, new.attribute) != (old.subject, old.attribute):
        return None
    about = f"{new.subject} {new.attribute}".strip()
    if new.denied:
        if _mentions(old.value, new.value) or _mentions(new.value, old.value):
            return f"{about}: no longer {old.value!r}"
        return None
    if _mentions(new.value, old.value) and _mentions(old.value, new.value):
        return None
    close = held.similarity is not None and held.similarity >= threshold
    # Said to change, or both values of one kind (names, numbers): "my car is red" does not replace "my car is
    # a Honda Civic".
    if (new.single and (new.change or (old.single and new.kinds & old.kinds))) or (new.change and close):
        return f"{about}: {old.value!r} is now {new.value!r}"
    return None


def supersedes(claim: str, held: Sequence[Held], threshold: float) -> tuple[int, str, str] | None:
    """(memory id, action, why) of the held claim the new claim replaces, or None; of several, the closest in
    meaning. The action is retract when the claim denies the held one, update when it gives another value."""
    new = frame(claim)
    if new is None:
        return None
    found = []
    for candidate in held:
        why = _why(new, frame(candidate.content), candidate, threshold)
        if why is not None:
            closeness = candidate.similarity if candidate.similarity is not None else -1.0
            found.append((closeness, -candidate.memory_id, why))
    if not found:
        return None
    closeness, memory_id, why = max(found)
    return -memory_id, "retract" if new.denied else "update", why


def changes(claim: str, held: str, similarity: float | None, threshold: float) -> bool:
    """Whether a claim changes what a held claim states (then it is no paraphrase of it, however close)."""
    return supersedes(claim, [Held(0, held, similarity)], threshold) is not None


def readable(claim: str) -> bool:
    """Whether the rules read a frame in a claim (when not, no held claim needs to be looked at)."""
    return frame(claim) is not None


DECISIONS = ("add", "update", "retract", "none")


def llm_messages(request: dict) -> list[dict]:
    """The chat request of the llm judge: the new claim and the held claims, numbered from 1."""
    held = "\n".join(f"{n}. {h['content']}" for n, h in enumerate(request["held"], start=1))
    return [
        {
            "role": "system",
            "content": (
                "You keep an agent's long-term memory true. Given a new claim and the claims the agent holds, "
                "decide what the new claim does to them. Answer with a JSON object "
                '{"decision": "add" | "update" | "retract" | "none", "memory": <number of a held claim or null>, '
                '"reason": "<a few words>"}. update: the new claim gives a different value for the same thing a '
                "held claim states, so that claim no longer holds. retract: the new claim says a held claim is not "
                "true (any more) without giving a new value. add: the new claim is about something else. none: it "
                "says what a held claim says already. A claim about another attribute of the same subject is add."
            ),
        },
        {"role": "user", "content": f"Held claims:\n{held or '(none)'}\n\nNew claim: {request['claim']}"},
    ]


def parse_llm_decision(answer: str, held: Sequence[Held]) -> tuple[str, int | None, str]:
    """(decision, memory id or None, reason) read from the judge's answer; ValueError when it makes no sense."""
    data = json_object(answer, "the llm supersession judge's answer")
    decision = data.get("decision")
    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
    reason = str(data.get("reason") or decision)[:200]
    if decision in ("add", "none"):
        return decision, None, reason
    number = data.get("memory")
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= len(held):
        raise ValueError(f"{decision} must name a held claim by its number 1-{len(held)}, got {number!r}")
    return decision, held[number - 1].memory_id, reason
