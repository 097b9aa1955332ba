"""Curated memories proposed from what a user said: explicit statements only.

The `patterns` extractor reads each prose sentence of a user's turn and proposes a memory where the person
states something meant to last, in words that say so:

- a rule: an instruction for later ("Always ...", "Never ...", "From now on ...", "Going forward ...");
- a preference: "I prefer ...", "I'd rather ...", "my preference is ...", "I don't like ...";
- a decision: "we decided ...", "I've decided ...", "we agreed ...", "we're going with ...", "let's go with ...";
- a fact: "remember that ..." (the words after it), "my <thing> is ..." (the thing in at most three words).

A statement is a clause: the sentence cut at commas, semicolons and dashes. Nothing is proposed from a
clause that asks ("Should I always ...?", "Do you prefer ...") or supposes ("if I always ...", "what if we
decided ...", "maybe we'd rather ..."). The memory's words are the statement with what the same sentence
said before it (its reason: "I'm keeping the app small, so I prefer ..."), up to where a question or a
request begins ("..., can you help me ...").

The `llm` extractor asks the chat endpoint for the same kinds of statement (llm_messages) and reads its
answer strictly (parse_llm_memories): each proposal names a user's turn by number and must quote words that
turn contains; an item that does not is left out, named.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory_db.openai_compat import json_object
from agent_memory_db.sentences import sentences

KINDS = ("rule", "preference", "decision", "fact")
MAX_CHARS = 400  # a proposal longer than this keeps only its own clause and what follows it

# (kind, trigger, whether the memory's words start after the trigger)
TRIGGERS: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    (
        "rule",
        re.compile(
            r"^(?:please\s+)?(?:always|never|(?:do not|don't) ever|make sure (?:to|you) always)\b"
            r"|\b(?:from now on|going forward|in (?:the )?future)\b",
            re.IGNORECASE,
        ),
        False,
    ),
    (
        "preference",
        re.compile(
            r"\bI(?: really| strongly| generally| usually| mostly| definitely| much| always)? "
            r"(?:prefer|(?:don't|do not) like|can't stand|cannot stand)\b|\bI(?:'d| would)(?: much)? rather\b"
            r"|\bmy (?:personal |strong )?preference is\b",
            re.IGNORECASE,
        ),
        False,
    ),
    (
        "decision",
        re.compile(
            r"\b(?:we|I)(?: have|'ve| finally| just)? (?:decided|agreed|settled on|opted|chosen|chose)\b"
            r"|\b(?:we're|we are|we'll|we will|I'm|I am|I'll|I will) (?:going|go) with\b"
            r"|\blet's go with\b|\bthe (?:final )?decision (?:is|was)\b",
            re.IGNORECASE,
        ),
        False,
    ),
    # A changed value: "it improved from 65% to 78%", "I've raised the snack budget to $75", "the new quota
    # is 1,200", "the total is now 10".
    (
        "fact",
        re.compile(
            r"\b(?:improved|increased|decreased|dropped|grown|risen|fallen|reached|climbed|gone (?:up|down)|changed|"
            r"moved|raised|lowered|pushed|extended|updated|adjusted|reduced|cut|bumped)(?: [\w'-]+){0,4}?"
            r"(?: from \S+)? to \S*\d"
            r"|\b(?:is|are) now \S*\d|\bnow (?:I |we )?(?:have|has) (?:a total of )?\S*\d|\bthe new [\w -]{1,40}? "
            r"(?:of|is|are) \S*\d",
            re.IGNORECASE,
        ),
        False,
    ),
    ("fact", re.compile(r"^(?:please\s+)?remember(?: that)?\s+(?=\S)", re.IGNORECASE), True),
    ("fact", re.compile(r"^my (?:[\w-]+ ){0,2}[\w-]+ (?:is|are) (?=\S)", re.IGNORECASE), False),
)
# Where a clause begins: after a comma, semicolon, colon or dash, and after a joining word at its start.
CLAUSE_BREAK = re.compile(r"[,;:]\s+|(?<!\s)\s+[-\u2013\u2014]\s+")
JOINING_WORD = re.compile(r"^(?:so|and|but|because|since|as|also|though|although|then|thus|hence)\s+", re.IGNORECASE)
ASKS = re.compile(
    r"^(?:do|does|did|should|shall|would|could|can|will|is|are|was|were|am|have|has|what|why|how|which|when|"
    r"where|who|whom|whose|any idea|is there)\b",
    re.IGNORECASE,
)
REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you|please help|help me|any (?:idea|tips|suggestions)|how|what|why|which|"
    r"where|when|is there|are there|should I|do you|I need (?:help|you)|I(?:'m| am) (?:not sure|wondering|curious)|"
    r"I (?:don't|do not) know|I (?:was|am|'m) thinking|I want to (?:know|make sure))\b",
    re.IGNORECASE,
)
# Words before a trigger that make it part of a phrase rather than a statement ("the ones I prefer").
EMBEDS = re.compile(r"\b(?:which|that|what|whatever|who|whom|ones?|like|as)\s*$", re.IGNORECASE)
SUPPOSES = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|hypothetically|what if|let's say|say that|whether|maybe|perhaps|"
    r"might|wonder|wondering)\b",
    re.IGNORECASE,
)
# Hedges that make a whole clause uncertain wherever they stand ("from now on we might use tabs").
HEDGES = re.compile(r"\b(?:maybe|perhaps|might|may be|wonder|wondering|not sure)\b", re.IGNORECASE)
# Phrases that look like a statement and are not one: idioms ("never mind", "always a pleasure"), a refusal
# ("I'd rather not say"), a task rather than a fact ("remember to call"), and "my <thing> is" that introduces
# talk, not a fact ("my question is", "my guess is").
NOT_STATEMENTS = re.compile(
    r"^(?:please\s+)?(?:always|never)\s+(?:mind|a|an|the|again|ever|have|had|has|been|before|once)\b"
    r"|\brather not (?:say|answer|talk|discuss|share|comment|get into)\b|^(?:please\s+)?remember to\b"
    r"|^my (?:question|guess|point|concern|issue|problem|worry|thought|thoughts|idea|hope|understanding|bad|"
    r"apologies|pleasure|fault|mistake|gut|take|feeling|sense|impression|answer|reply|request) (?:is|are)\b",
    re.IGNORECASE,
)


# Words that name nothing by themselves: "let's go with this" states no decision worth keeping.
VACANT = frozenset(
    [
        "this",
        "that",
        "it",
        "these",
        "those",
        "one",
        "the",
        "a",
        "an",
        "approach",
        "plan",
        "idea",
        "option",
        "way",
        "then",
        "now",
    ]
)


# Words that point at what was said elsewhere: a claim that leans on one ("never run migrations by hand
# there") means nothing alone, so it waits for review. ("that" is left out: it joins clauses far more often.)
POINTING = re.compile(r"\b(?:there|it|they|them|this|these|those)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Proposal:
    turn_id: int
    kind: str
    content: str

    @property
    def context_bound(self) -> bool:
        """Whether the claim points at something only its context names."""
        return POINTING.search(self.content) is not None


def _clauses(sentence: str) -> list[tuple[int, int]]:
    """The clauses of a sentence as (start, end) offsets, each start past its joining word."""
    bounds, start = [], 0
    for cut in CLAUSE_BREAK.finditer(sentence):
        bounds.append((start, cut.start()))
        start = cut.end()
    bounds.append((start, len(sentence)))
    out = []
    for begin, end in bounds:
        joined = JOINING_WORD.match(sentence[begin:end])
        out.append((begin + joined.end() if joined else begin, end))
    return out


def _statement(sentence: str) -> tuple[str, str] | None:
    """The first (kind, words) a sentence states, or None when it states nothing meant to last."""
    clauses = _clauses(sentence)
    for number, (start, end) in enumerate(clauses):
        clause = sentence[start:end]
        for kind, trigger, after_trigger in TRIGGERS:
            found = trigger.search(clause)
            if found is None:
                continue
            lead = clause[: found.start()]
            if _asks(clause) or SUPPOSES.search(lead) or EMBEDS.search(lead) or HEDGES.search(clause):
                return None
            if NOT_STATEMENTS.search(clause[found.start() :]):
                return None
            # From the sentence's start (the reason said before it) unless that part asks or supposes.
            before = [sentence[s:e] for s, e in clauses[:number]]
            if any(SUPPOSES.search(earlier) for earlier in before):
                return None
            begin = 0 if not any(_asks(earlier) for earlier in before) else start
            if after_trigger:
                begin = start + found.end()
            # Up to the end of the clause before a request or question that follows.
            stop = next(
                (clauses[n - 1][1] for n in range(number + 1, len(clauses)) if _requests(sentence, *clauses[n])),
                len(sentence),
            )
            if _vacant(sentence[start + found.end() : stop]):
                return None
            words = _fitted(sentence[begin:stop]) if len(sentence[begin:stop]) <= MAX_CHARS else None
            words = words or _fitted(sentence[start:stop])
            if words.endswith("?") or len(words) < 8:
                return None
            return kind, words[:1].upper() + words[1:]
    return None


def _vacant(rest: str) -> bool:
    """Whether what follows a trigger in its clause names nothing ("this approach!")."""
    return not [word for word in re.findall(r"[\w'-]+", rest.casefold()) if word not in VACANT]


def _requests(sentence: str, start: int, end: int) -> bool:
    return REQUEST.match(sentence[start:end]) is not None or sentence[start:end].rstrip().endswith("?")


def _fitted(words: str) -> str:
    """The words without edge punctuation, cut at a word boundary to at most MAX_CHARS."""
    words = words.strip().rstrip(",;:-\u2013\u2014 ")
    if len(words) > MAX_CHARS:
        words = words[: words.rfind(" ", 0, MAX_CHARS)].rstrip(",;:-\u2013\u2014 ")
    return words


def _asks(clause: str) -> bool:
    return clause.rstrip().endswith("?") or ASKS.match(clause) is not None


def propose(turns: Sequence[dict]) -> list[Proposal]:
    """The memories a session's user turns state, each with the turn it came from, once per turn and words."""
    out: list[Proposal] = []
    for turn in turns:
        if turn.get("role") != "user" or not isinstance(turn.get("content"), str):
            continue
        seen: set[str] = set()
        for sentence in sentences(turn["content"]):
            stated = _statement(sentence.strip())
            if stated is not None and stated[1].casefold() not in seen:
                seen.add(stated[1].casefold())
                out.append(Proposal(int(turn["turn_id"]), stated[0], stated[1]))
    return out


LLM_INSTRUCTIONS = (
    "You curate an agent's long-term memory. From the numbered turns of this conversation, list what a user "
    "states that should hold for later conversations: rules (instructions for later), preferences, decisions "
    "and facts about the user or the work. Leave out questions, requests for help, hypotheticals and what the "
    'assistant says. Answer with only a JSON object {"memories": [{"turn": <number>, "kind": "rule" | '
    '"preference" | "decision" | "fact", "content": "<one self-contained sentence>", "quote": "<words copied '
    'exactly from that turn>"}]}; an empty list when there is nothing.'
)


def llm_messages(turns: Sequence[dict]) -> list[dict]:
    """The chat request: the instructions, then the session's user and assistant turns, numbered."""
    lines = [
        f"[{number}] {turn.get('name') or turn['role']}: {turn['content']}"
        for number, turn in enumerate(turns)
        if turn.get("role") in ("user", "assistant") and isinstance(turn.get("content"), str)
    ]
    return [{"role": "system", "content": LLM_INSTRUCTIONS}, {"role": "user", "content": "\n".join(lines)}]


def _llm_proposal(number: int, item: object, turns: Sequence[dict]) -> Proposal:
    if not isinstance(item, dict):
        raise ValueError(f"the LLM memory {number} is not an object")
    turn, kind, content, quote = item.get("turn"), item.get("kind"), item.get("content"), item.get("quote")
    if not isinstance(turn, int) or isinstance(turn, bool) or not 0 <= turn < len(turns):
        raise ValueError(f"the LLM memory {number} names no turn of the conversation (turn {turn!r})")
    if kind not in KINDS:
        raise ValueError(f"the LLM memory {number} has kind {kind!r}, not one of {', '.join(KINDS)}")
    if not isinstance(content, str) or not content.strip():
        raise ValueError(f'the LLM memory {number} has no "content" string')
    if not isinstance(quote, str) or not quote.strip():
        raise ValueError(f'the LLM memory {number} has no "quote" string')
    said = turns[turn]
    if said.get("role") != "user" or quote.strip().casefold() not in str(said.get("content", "")).casefold():
        raise ValueError(f"the LLM memory {number} quotes words turn {turn} of the user does not contain")
    return Proposal(int(said["turn_id"]), kind, content.strip())


def parse_llm_memories(answer: str, turns: Sequence[dict]) -> tuple[list[Proposal], list[str]]:
    """The model's answer as proposals, and what is wrong with each item left out (one that names no user
    turn, misquotes it, or lacks a field). An answer that is not the asked-for JSON is a ValueError."""
    data = json_object(answer, "the LLM memories answer")
    if not isinstance(data.get("memories"), list):
        raise ValueError('the LLM memories answer has no "memories" list')
    proposals, problems = [], []
    for number, item in enumerate(data["memories"]):
        try:
            proposals.append(_llm_proposal(number, item, turns))
        except ValueError as exc:
            problems.append(str(exc))
    return proposals, problems
