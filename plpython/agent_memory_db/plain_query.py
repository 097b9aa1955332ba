"""A request in plain words read as filters, without a model ("top 10 recent decisions", "observations tagged
docker and error", "high-importance unresolved projects from last week", "user messages mentioning Redis").

read(text, today) returns the request's filters as a dict that memory.query turns into SQL:
  target          memories (the default, and what a kind, status, importance or tag implies), sessions, turns, or
                  tool_executions ("tool calls", "bash calls", "calls to the read tool")
  kinds           memory kinds: fact, preference, rule, decision, skill, event, observation, task (todos)
  statuses        memory statuses; None means what holds now (active or ongoing, not superseded)
  importance      {"min": x} and/or {"max": y}: "high-importance" or "important" (at least 0.7), "low-importance"
                  (at most 0.3), "medium importance", "importance above 0.8"
  tags            {"all": [...]} ("tagged docker and error", "#docker") or {"any": [...]} ("tagged a or b")
  entity_types    memories about an entity of a type: projects, people, tools, places, organizations ...
  about           "about X": a memory's subject or words; a session's or turn's words
  containing      "mentioning X", "containing X", "saying X", a quoted phrase
  roles           turns of a role ("user messages", "assistant replies", "tool results")
  tools, tool_statuses, min_duration_ms  tool executions of tools, of a status ("failed": error, "timed out",
                  "successful"), as slow as ("slower than 2 s", "slow": a second or more)
  agent_id        "by agent X", "agent X"
  run_id          "in run X", "during run X", "run_id X": one run (one task or process) of an agent
  period          [first day, day after the last], read as recall reads one (agent_memory_db.periods)
  order           importance (memories' default, "most important"), newest ("recent", "latest", "last 5"),
                  oldest ("oldest", "first 5") or slowest (tool executions)
  k               how many: "top 10", "5 decisions", "limit 20"; default 20, at most 1000
  understood      each phrase read and what it set; not_understood: the words it could not read
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from agent_memory_db.periods import period_and_mentions

DEFAULT_K = 20
MAX_K = 1000
HIGH_IMPORTANCE = 0.7
LOW_IMPORTANCE = 0.3
HOLDING = ["active", "ongoing"]

TARGETS = {
    "memories": ("memories", "memory", "notes", "note", "things"),
    "sessions": ("sessions", "session", "conversations", "conversation", "chats", "chat"),
    "turns": ("turns", "turn", "messages", "message"),
    "tool_executions": ("calls", "executions"),
}
TOOL_STATUSES = {
    "failed": "error",
    "failing": "error",
    "errors": "error",
    "errored": "error",
    "error": "error",
    "timeouts": "timeout",
    "successful": "success",
    "succeeded": "success",
}
SLOW_MS = 1000  # "slow" tool calls: a second or more
KINDS = {
    "fact": ("facts", "fact"),
    "preference": ("preferences", "preference"),
    "rule": ("rules", "rule"),
    "decision": ("decisions", "decision"),
    "skill": ("skills", "skill"),
    "event": ("events", "event"),
    "observation": ("observations", "observation"),
    "task": ("tasks", "task", "todos", "todo", "to-dos", "to-do"),
}
STATUSES = {
    "unresolved": HOLDING,
    "open": HOLDING,
    "outstanding": HOLDING,
    "unfinished": HOLDING,
    "current": HOLDING,
    "active": ["active"],
    "ongoing": ["ongoing"],
    "resolved": ["resolved"],
    "done": ["resolved"],
    "completed": ["resolved"],
    "finished": ["resolved"],
    "closed": ["resolved"],
    "superseded": ["superseded"],
    "replaced": ["superseded"],
    "outdated": ["superseded"],
    "retracted": ["retracted"],
    "withdrawn": ["retracted"],
    "pending": ["pending"],
    "unreviewed": ["pending"],
}
ALL_STATUSES = ["active", "ongoing", "resolved", "superseded", "retracted", "pending"]
ENTITY_TYPES = {
    "project": ("projects", "project"),
    "person": ("people", "persons", "person"),
    "tool": ("tools",),
    "place": ("places", "place"),
    "org": ("organizations", "organisations", "organization", "organisation", "companies", "company", "orgs"),
    "doc": ("documents", "document", "docs"),
    "metric": ("metrics", "metric"),
    "concept": ("concepts", "concept"),
    "topic": ("topics", "topic"),
}
NEWEST = ("recent", "latest", "newest", "recently", "new")
OLDEST = ("oldest", "earliest")
NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "twenty": 20, "fifty": 50, "hundred": 100,
}  # fmt: skip
# Words that carry no filter of their own ("show me all ...", "what are my ...").
FILLER = frozenset(
    re.split(
        r"\s+",
        "show me list find get give what which who are were is was be the a an my our your all any every of with "
        "that have has had been i we please and or for in from to made taken there do does did some those these "
        "whose during since after on at by tool",
    )
)

_WORD = r"[\w#][\w#.'+%-]*"
TRAILING = ".,;:!?"  # punctuation that ends a sentence, not a word
_PHRASE = rf"\"[^\"]+\"|{_WORD}"
_WORDS = rf"\"[^\"]+\"|{_WORD}(?:\s+{_WORD})*"  # a quoted phrase, or words up to another rule's
_LIST = rf"(?:{_PHRASE})(?:\s*(?:,|\band\b|\bor\b|&)\s*(?:{_PHRASE}))*"
_NUMBER = r"\d{1,7}|" + "|".join(NUMBERS)
# Each phrase: its pattern (any case) and the rule that reads a match into the filters, tried in this order.
PATTERNS: list[tuple[str, str]] = [
    (rf"\btagged\s+(?:with\s+)?(?P<list>{_LIST})", "tags"),
    (rf"\bwith\s+(?:the\s+)?tags?\s+(?P<list>{_LIST})", "tags"),
    (r"(?<![\w&(/])#(?P<tag>[^\W\d_][\w+-]*)", "hashtag"),
    (
        rf"\b(?:in\s+)?(?:the\s+)?(?:last|past)\s+(?P<n>{_NUMBER})\s+(?P<unit>day|week|month|year)s?\b",
        "last_units",
    ),
    (rf"\b(?:about|regarding|concerning|on)\s+(?:the\s+)?(?P<words>{_WORDS})", "about"),
    (
        rf"\b(?:mentioning|containing|that\s+mentions?|which\s+mentions?|that\s+says?|saying|with\s+the\s+words?)"
        rf"\s+(?P<words>{_WORDS})",
        "containing",
    ),
    (r"\"(?P<quoted>[^\"]+)\"", "quoted"),
    (r"\b(?:by|from|for|of)?\s*agent\s+(?P<agent>[\w.@:-]+)", "agent"),
    (r"\b(?:(?:in|during|from|of|for)\s+(?:the\s+)?run|run_id\s*[=:]?)\s+(?P<run>[\w.@:-]+)", "run"),
    (
        r"\bimportance\s*(?:(?P<min>>=?|at\s+least|above|over|of\s+at\s+least)|(?P<max><=?|at\s+most|below|under))"
        r"\s*(?P<value>[01](?:\.\d+)?|\.\d+)",
        "importance_bound",
    ),
    (r"\bmost\s+important\b", "most_important"),
    (r"\b(?:high(?:er)?|top)[-\s]+importance\b|\b(?:important|critical)\b", "important"),
    (r"\b(?:low(?:er)?[-\s]+importance|unimportant|minor)\b", "unimportant"),
    (r"\b(?:medium|moderate)[-\s]+importance\b", "medium"),
    (r"\bin[-\s]+progress\b", "in_progress"),
    (r"\b(?:any|every|all)\s+status(?:es)?\b", "any_status"),
    (r"\b(?:calls?|executions?|runs?|uses?)\s+(?:of|to)\s+(?:the\s+)?(?P<tool>[\w.:-]+)(?:\s+tool)?\b", "tool_named"),
    (r"\b(?P<tool>[\w.:-]+)\s+(?:tool\s+)?(?:calls?|executions?|runs?|uses?)\b", "tool_named"),
    (r"\btool\s+(?:calls?|executions?|runs?|uses?)\b", "tool_calls"),
    (r"\btimed[-\s]+out\b", "timed_out"),
    (
        r"\b(?:slower|longer|more)\s+than\s+(?P<n>\d+(?:\.\d+)?)\s*"
        r"(?P<unit>ms|milliseconds?|s|secs?|seconds?|min|mins|minutes?)\b",
        "slower_than",
    ),
    (r"\bslowest\b", "slowest"),
    (r"\bslow\b", "slow"),
    (r"\btool\s+(?:results?|outputs?|messages?|turns?)\b", "tool_results"),
    (
        r"\b(?:(?:what\s+)?(?:did\s+)?(?:the\s+)?(?P<said>user|assistant)\s+(?:said|say|asked|ask|wrote|write)"
        r"|(?P<role>user|assistant|system)(?:'s)?\s+(?:messages?|turns?|replies|answers|questions))\b",
        "role",
    ),
    (r"\b(?:replies|answers)\b", "replies"),
    (r"\b(?:did\s+)?(?:we|i|you)\s+(?:say|said|talk(?:ed)?|discuss(?:ed)?|write|wrote)\b", "said"),
    (rf"\b(?:limit|top|first|last|latest)\s+(?P<n>{_NUMBER})\b", "count_word"),
    (
        rf"\b(?P<n>{_NUMBER})\s+(?:most\s+)?(?P<order>recent|latest|newest|oldest|earliest)\b",
        "n_order",
    ),
    (r"\bmost\s+recent(?:ly)?\b", "newest"),
]
PHRASES = [(re.compile(pattern, re.IGNORECASE), rule) for pattern, rule in PATTERNS]
# The words that end an "about" or "mentioning" phrase: what another rule reads.
# The words that name what is listed: targets, kinds, entity types ("5 decisions", "projects").
NOUNS = frozenset(w for names in [*TARGETS.values(), *KINDS.values(), *ENTITY_TYPES.values()] for w in names)
_KEYWORDS = (
    set(FILLER) - {"the", "a", "an", "of", "on"}
    | NOUNS
    | set(STATUSES) | set(NEWEST) | set(OLDEST)
    | {"tagged", "mentioning", "containing", "saying", "top", "limit", "first", "last", "agent", "run", "importance"}
    | {"important", "critical", "today", "yesterday", "this", "past", "since", "before", "until"}
)  # fmt: skip


def _number(word: str) -> int:
    return NUMBERS.get(word.lower()) or int(word)


def _words_until_keyword(words: str) -> tuple[str, int]:
    """The start of a phrase up to the first word another rule reads ("about the migration from last week"), and
    where it ends in the phrase."""
    if words.startswith('"'):
        return words.strip('"'), len(words)
    kept: list[re.Match[str]] = []
    for word in re.finditer(r"\S+", words):
        if word.group().lower().rstrip(TRAILING) in _KEYWORDS:
            break
        kept.append(word)
    while kept and kept[-1].group().lower().rstrip(TRAILING) in FILLER:  # "about the API on" 1 Dec
        kept.pop()
    if not kept:
        return "", 0
    return " ".join(word.group() for word in kept).rstrip(TRAILING), kept[-1].end()


def _items(listed: str) -> list[str]:
    items = re.split(r"\s*(?:,|\band\b|\bor\b|&)\s*", listed)
    return [clean for item in items if (clean := item.strip().strip('"').lstrip("#").rstrip(TRAILING))]


class _Reading:
    """The filters read so far, what each phrase set, and which characters of the request were read."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.read = [False] * len(text)
        self.filters: dict[str, Any] = {}
        self.understood: list[dict[str, str]] = []
        self.target_named: str | None = None
        self.last_units: tuple[int, str] | None = None

    def take(self, start: int, end: int, meaning: str) -> None:
        self.read[start:end] = [True] * (end - start)
        self.understood.append({"words": self.text[start:end].strip(), "as": meaning})

    def unread(self) -> str:
        """The request with what was read blanked out (NUL: neither a word nor a space, so no phrase spans it)."""
        return "".join("\0" if read else char for char, read in zip(self.text, self.read, strict=True))

    def add(self, key: str, values: list[str]) -> None:
        self.filters[key] = [*self.filters.get(key, []), *(v for v in values if v not in self.filters.get(key, []))]

    def order(self, order: str) -> None:
        self.filters["order"] = order

    def count(self, n: int) -> bool:
        """Sets how many rows; False when the request already said another number (then this one is not read)."""
        if self.filters.get("k", n) != n:
            return False
        self.filters["k"] = n
        return True


def _phrase(reading: _Reading, rule: str, match: re.Match[str]) -> tuple[str, int] | None:
    """Reads one phrase into the filters: what it set and where the phrase read ends, or None when the match
    is not read after all (an "about" with no words before the next rule's)."""
    if rule in ("about", "containing"):
        words, end = _words_until_keyword(match["words"])
        if not words:
            return None
        reading.add(rule, [words])
        return f"{rule}: {words}", match.start("words") + end
    meaning = _filter(reading, rule, match)
    return None if meaning is None else (meaning, match.end())


def _filter(reading: _Reading, rule: str, match: re.Match[str]) -> str | None:
    f = reading.filters
    if rule == "quoted":
        reading.add("containing", [match["quoted"]])
        return f"containing: {match['quoted']}"
    if rule == "last_units":
        reading.last_units = (_number(match["n"]), match["unit"].lower())
        return f"period: the last {_number(match['n'])} {match['unit'].lower()}s"
    if rule in ("tags", "hashtag"):
        tags = [match["tag"]] if rule == "hashtag" else _items(match["list"])
        mode = "any" if rule == "tags" and re.search(r"\bor\b", match["list"], re.I) else "all"
        f.setdefault("tags", {})
        f["tags"][mode] = [*f["tags"].get(mode, []), *tags]
        return f"tags ({mode}): {', '.join(tags)}"
    if rule == "agent":
        f["agent_id"] = match["agent"]
        return f"agent_id: {match['agent']}"
    if rule == "run":
        f["run_id"] = match["run"]
        return f"run_id: {match['run']}"
    return _bound_or_order(reading, rule, match)


def _bound_or_order(reading: _Reading, rule: str, match: re.Match[str]) -> str | None:
    f = reading.filters
    if rule == "importance_bound":
        if float(match["value"]) > 1:
            raise ValueError(f"importance is from 0 to 1, got {match['value']}")
        side = "min" if match["min"] else "max"
        f.setdefault("importance", {})[side] = float(match["value"])
        return f"importance {side}: {float(match['value']):g}"
    if rule in ("important", "unimportant", "medium"):
        bounds = {"important": {"min": HIGH_IMPORTANCE}, "unimportant": {"max": LOW_IMPORTANCE}}.get(
            rule, {"min": LOW_IMPORTANCE, "max": HIGH_IMPORTANCE}
        )
        f.setdefault("importance", {}).update(bounds)
        return "importance " + ", ".join(f"{side}: {value:g}" for side, value in bounds.items())
    if rule == "most_important":
        reading.order("importance")
        return "order: importance"
    if rule == "in_progress":
        reading.add("statuses", ["ongoing"])
        return "statuses: ongoing"
    if rule == "any_status":
        reading.add("statuses", ALL_STATUSES)
        return "statuses: any"
    if rule == "said":
        reading.target_named = reading.target_named or "turns"
        return "target: turns"
    if rule == "tool_calls":
        reading.target_named = reading.target_named or "tool_executions"
        return "target: tool_executions"
    if rule == "tool_named":
        if _known(match["tool"]):  # "failed calls", "5 calls": a word of its own, then "calls"
            return None
        reading.add("tools", [match["tool"]])
        reading.target_named = reading.target_named or "tool_executions"
        return f"tools: {match['tool']}"
    if rule == "timed_out":
        reading.add("tool_statuses", ["timeout"])
        return "tool_statuses: timeout"
    if rule in ("slower_than", "slow"):
        f["min_duration_ms"] = SLOW_MS if rule == "slow" else round(float(match["n"]) * _milliseconds(match["unit"]))
        return f"min_duration_ms: {f['min_duration_ms']}"
    if rule == "slowest":
        reading.order("slowest")
        return "order: slowest"
    if rule in ("tool_results", "role", "replies"):
        role = (
            "tool" if rule == "tool_results" else "assistant" if rule == "replies" else (match["role"] or match["said"])
        )
        reading.add("roles", [role.lower()])
        return f"roles: {role.lower()}"
    if rule == "count_word":
        word = match.group().split()[0].lower()
        reading.count(_number(match["n"]))
        if word in ("first", "last", "latest"):
            reading.order("oldest" if word == "first" else "newest")
        return f"k: {_number(match['n'])}" + (f", order: {f['order']}" if word in ("first", "last", "latest") else "")
    if rule == "n_order":
        reading.count(_number(match["n"]))
        reading.order("oldest" if match["order"].lower() in OLDEST else "newest")
        return f"k: {_number(match['n'])}, order: {f['order']}"
    reading.order("newest")
    return "order: newest"


def _counted(following: str) -> bool:
    """Whether the words after a number name what is listed ("5 decisions", "10 high-importance tasks")."""
    return any(word in NOUNS for word in re.findall(r"[\w'-]+", following.lower())[:3])


def _word(reading: _Reading, word: str, following: str) -> str | None:
    """Reads one word left after the phrases; what it set, or None when it is not understood."""
    lower = word.lower()
    for target, names in TARGETS.items():
        if lower in names:
            reading.target_named = reading.target_named or target
            return f"target: {target}"
    for kind, names in KINDS.items():
        if lower in names:
            reading.add("kinds", [kind])
            return f"kinds: {kind}"
    for entity_type, names in ENTITY_TYPES.items():
        if lower in names:
            reading.add("entity_types", [entity_type])
            return f"about a {entity_type}"
    if lower in TOOL_STATUSES:
        reading.add("tool_statuses", [TOOL_STATUSES[lower]])
        return f"tool_statuses: {TOOL_STATUSES[lower]}"
    if lower in STATUSES:
        reading.add("statuses", STATUSES[lower])
        return "statuses: " + ", ".join(STATUSES[lower])
    if lower in NEWEST or lower in OLDEST:
        reading.order("newest" if lower in NEWEST else "oldest")
        return f"order: {reading.filters['order']}"
    if re.fullmatch(_NUMBER, lower, re.I) and _counted(following) and reading.count(_number(lower)):
        return f"k: {_number(lower)}"  # "5 decisions": a number before what is listed
    if lower in FILLER or lower == "top":
        return ""
    return None


MEMORY_ONLY = ("kinds", "statuses", "importance", "tags", "entity_types")
TURN_ONLY = ("roles",)
TOOL_ONLY = ("tools", "tool_statuses", "min_duration_ms")


def _milliseconds(unit: str) -> int:
    """The milliseconds in a unit: ms, millisecond(s); s, sec(s), second(s); min(s), minute(s)."""
    unit = unit.lower()
    return 60000 if unit.startswith("min") else 1 if unit.startswith("m") else 1000


OWN_FILTERS = {"memories": MEMORY_ONLY, "turns": TURN_ONLY, "tool_executions": TOOL_ONLY}
ORDERS_OF = {"importance": ("memories",), "slowest": ("tool_executions",)}  # orders some targets have


def _known(word: str) -> bool:
    """Whether a word before "calls" is one of the vocabulary's (not a tool's name)."""
    lower = word.lower()
    return (
        lower in FILLER
        or lower in TOOL_STATUSES
        or lower in STATUSES
        or lower in NEWEST
        or lower in OLDEST
        or lower in ("tool", "top", "first", "last", "slow", "slowest", "all", "high", "low", "medium", "moderate")
        or bool(re.fullmatch(_NUMBER, lower))
    )


def _target(reading: _Reading) -> str:
    f = reading.filters
    if reading.target_named:
        return reading.target_named
    for target in ("memories", "turns", "tool_executions"):  # the filters asked for name what is listed
        if any(key in f for key in OWN_FILTERS[target]):
            return target
    return "memories"


def read(text: str, today: date) -> dict[str, Any]:
    """The filters a request in plain words asks for (see the module's docstring)."""
    if not text or not text.strip():
        raise ValueError("the request is empty: say what to list, e.g. 'top 10 recent decisions'")
    reading = _Reading(text)
    period, mentions = period_and_mentions(text, today)
    for start, end in mentions:
        reading.take(start, end, "period")
    for pattern, rule in PHRASES:
        for match in pattern.finditer(reading.unread()):
            if (found := _phrase(reading, rule, match)) is not None:
                reading.take(match.start(), found[1], found[0])
    not_understood = []
    for match in re.finditer(r"[\w'-]+", reading.unread()):
        meaning = _word(reading, match.group(), text[match.end() :])
        if meaning is None:
            not_understood.append(match.group())
        elif meaning:
            reading.take(match.start(), match.end(), meaning)
    if reading.last_units:
        period = _union(period, _last_units(*reading.last_units, today))
    return _finished(reading, period, not_understood)


def _last_units(n: int, unit: str, today: date) -> tuple[date, date]:
    """ "the last 30 days": from n units back to today, today included."""
    days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * n
    return today - timedelta(days=days - 1), today + timedelta(days=1)


def _union(period: tuple[date, date] | None, other: tuple[date, date]) -> tuple[date, date]:
    return other if period is None else (min(period[0], other[0]), max(period[1], other[1]))


def _finished(reading: _Reading, period: Any, not_understood: list[str]) -> dict[str, Any]:
    f = reading.filters
    target = _target(reading)
    others = [keys for owner, keys in OWN_FILTERS.items() if owner != target]
    for key in [key for keys in others for key in keys if key in f]:
        not_understood.append(f"{key} (not a filter of {target})")
        del f[key]
    if f.get("order") in ORDERS_OF and target not in ORDERS_OF[f["order"]]:
        not_understood.append(f"order {f.pop('order')} (not an order of {target})")
    k = f.get("k", DEFAULT_K)
    if not 1 <= k <= MAX_K:
        raise ValueError(f"a request lists 1 to {MAX_K} rows, got {k}")
    return {
        "target": target,
        **{key: value for key, value in f.items() if key not in ("order", "k")},
        "period": None if period is None else [period[0].isoformat(), period[1].isoformat()],
        "order": f.get("order", "importance" if target == "memories" else "newest"),
        "k": k,
        "understood": reading.understood,
        "not_understood": not_understood,
    }


LLM_INSTRUCTIONS = """\
You turn a request for stored agent memory into filters. Answer with one JSON object and nothing else, with \
these keys (leave out what the request does not ask for):
  "target": "memories" (curated facts, decisions, tasks ...), "sessions" (conversations), "turns" (messages) or
    "tool_executions" (tool calls with their results)
  "kinds": memory kinds, of fact, preference, rule, decision, skill, event, observation, task
  "statuses": memory statuses, of active, ongoing, resolved, superseded, retracted, pending (leave out: what holds now)
  "importance": {"min": 0..1, "max": 0..1} (high importance: min 0.7; low: max 0.3)
  "tags": {"all": [tags every memory carries]} or {"any": [tags of which one is enough]}
  "entity_types": memories about entities of types, of project, person, tool, place, org, doc, metric, concept, topic
  "about": [subjects or words], "containing": [words the text contains]
  "roles": turn roles, of user, assistant, system, tool
  "tools": [tool names]; "tool_statuses": of success, error, timeout; "min_duration_ms": a whole number
  "agent_id": the agent named; "run_id": the run (one task or process) named
  "period": [first day, day after the last], ISO dates, relative to today
  "order": "importance" (memories), "newest", "oldest" or "slowest" (tool executions); "k": how many, 1..1000
  "not_understood": [words of the request no key above can express]"""


def llm_messages(request: dict) -> list[dict]:
    """The chat request that asks the endpoint for the filters of {"request": text, "today": ISO date}."""
    return [
        {"role": "system", "content": LLM_INSTRUCTIONS},
        {"role": "user", "content": f"Today is {request['today']}. Request: {request['request']}"},
    ]


def _strings(value: Any, key: str, allowed: tuple[str, ...] | list[str] | None = None) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{key} must be a list of words, got {value!r}")
    if allowed is not None and (wrong := [v for v in value if v not in allowed]):
        raise ValueError(f"{key} must be of {', '.join(allowed)}, got {', '.join(wrong)}")
    return value


def _checked_importance(value: Any) -> dict[str, float]:
    if not isinstance(value, dict) or not value or set(value) - {"min", "max"}:
        raise ValueError(f'importance must be {{"min": x, "max": y}}, got {value!r}')
    for side, bound in value.items():
        if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not 0 <= bound <= 1:
            raise ValueError(f"importance {side} must be a number from 0 to 1, got {bound!r}")
    return {side: float(bound) for side, bound in value.items()}


def _checked_period(value: Any) -> list[str]:
    try:
        first, end = (date.fromisoformat(day) for day in value)
    except (TypeError, ValueError):
        raise ValueError(f"period must be [first day, day after the last] as ISO dates, got {value!r}") from None
    if first >= end:
        raise ValueError(f"period must end after it begins, got {value!r}")
    return [first.isoformat(), end.isoformat()]


CHECKS = {
    "kinds": lambda v: _strings(v, "kinds", tuple(KINDS)),
    "statuses": lambda v: _strings(v, "statuses", ALL_STATUSES),
    "importance": _checked_importance,
    "entity_types": lambda v: _strings(v, "entity_types", tuple(ENTITY_TYPES)),
    "about": lambda v: _strings(v, "about"),
    "containing": lambda v: _strings(v, "containing"),
    "roles": lambda v: _strings(v, "roles", ("user", "assistant", "system", "tool")),
    "tools": lambda v: _strings(v, "tools"),
    "tool_statuses": lambda v: _strings(v, "tool_statuses", ("success", "error", "timeout")),
    "not_understood": lambda v: _strings(v, "not_understood"),
}


def from_llm(answer: dict) -> dict[str, Any]:
    """The filters an endpoint proposed, checked as the words' own are; an error names the first wrong key."""
    filters: dict[str, Any] = {"target": answer.get("target", "memories")}
    if filters["target"] not in TARGETS:
        raise ValueError(f"target must be {', '.join(TARGETS)}, got {filters['target']!r}")
    for key, value in answer.items():
        if value is None or key == "target":
            continue
        if key in CHECKS:
            filters[key] = CHECKS[key](value)
        elif key == "tags":
            if not isinstance(value, dict) or not value or set(value) - {"all", "any"}:
                raise ValueError(f'tags must be {{"all": [...]}} or {{"any": [...]}}, got {value!r}')
            filters[key] = {mode: _strings(tags, "tags") for mode, tags in value.items()}
        elif key in ("min_duration_ms", "agent_id", "run_id", "period", "order", "k"):
            filters[key] = _checked_scalar(key, value)
        else:
            raise ValueError(f"unknown filter {key!r}")
    reading = _Reading("")
    reading.filters = {k: v for k, v in filters.items() if k not in ("target", "not_understood", "period")}
    reading.target_named = filters["target"]
    period = None if "period" not in filters else tuple(date.fromisoformat(d) for d in filters["period"])
    return _finished(reading, period, list(filters.get("not_understood", [])))


def _checked_scalar(key: str, value: Any) -> Any:
    if key == "period":
        return _checked_period(value)
    if key == "min_duration_ms" and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"min_duration_ms must be a whole number of milliseconds, got {value!r}")
    if key in ("agent_id", "run_id") and not (isinstance(value, str) and value.strip()):
        raise ValueError(f"{key} must be a name, got {value!r}")
    if key == "order" and value not in ("importance", "newest", "oldest", "slowest"):
        raise ValueError(f"order must be importance, newest, oldest or slowest, got {value!r}")
    if key == "k" and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"k must be a whole number, got {value!r}")
    return value
