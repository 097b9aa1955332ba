"""Entities a text mentions, found by rules without a model: deterministic, linear in the text.

Invisible characters are removed first (normalize.drop_invisible), so "Doc<zero-width space>ker" is
Docker. Rules, in the order they claim text (a later rule never reads text an earlier one claimed):
  code       fenced code blocks and inline `code` are read for file paths and dotted identifiers
             (Session.get, os.path.join; a leading self./cls./this. is dropped) only; a backticked
             single identifier or path is one entity: `user_id` concept, `src/x.py` doc
  url        http(s)://, ftp://, file://, www. -> doc (closing punctuation left out)
  email      maria@example.com -> person (the mailbox names its owner)
  path       C:\\x\\y; /etc/nginx/nginx.conf (two segments at least); ./x.py, ../x, ~/.bashrc;
             src/app/models.py (a relative path needs a known extension, a trailing "/" or a domain
             first: github.com/x/y); .bashrc; README.md, ci.yml (FILE_EXTENSIONS); example.com -> doc.
             "Chart.js" (a capitalized name ending in .js) -> tool
  handle     @maria -> person; a decorator call @cache( or a dotted @pytest.fixture is no handle
  tag        #postgres -> topic; not #123, not a colour like #fff, not C#
  title      "The Pragmatic Programmer", 'Q3 roadmap', and in curly quotes or guillemets: two to six
             words, the first capitalized or a digit, no closing sentence punctuation, no pronoun, not
             a person's name or a place, not a JSON key ("...":) -> doc
  metric     a metric word (METRIC_WORDS) with a number next to it ("error rate of 2%", "CPU at 85%",
             "120 ms latency") or after a percentile ("p95 latency"); a percentile with a number
             ("p99 80ms"); a measure at k ("recall@5", "ndcg@10") -> metric
  gazetteer  words and runs of up to four words in the gazetteer (names.DEFAULT_GAZETTEER, extended or
             overridden by the caller's) -> its type, which a name in the gazetteer takes whichever rule
             found it (`postgres` is a tool); AMBIGUOUS names need a capital letter ("Rust");
             a trailing version is ignored ("python3", and "Postgres 16" is "Postgres": bare numbers
             are never entities)
  code word  dotted (query.get), snake_case (user_id) and camelCase/PascalCase words (getUserName,
             AssertionError) -> concept; all-capital words (LGBTQ, CPU) -> concept, or place (USA),
             unless log and SQL noise (NOISE_ACRONYMS)
  names      runs of capitalized words (up to five; "van", "de"... join them, "of" after an org or
             place word; stop words, weekdays and months break them; a possessive 's ends them):
               with an org word (Inc, Corp, University, Team...)          -> org
               in PLACES (a first name too, like Paris, only after in/at/from/to...) -> place
               ending in a place word (City, Street, Avenue, Bridge...)   -> place
               one to three words starting with a known first name           -> person
               after Mr/Dr... or a greeting ("Hey Mel", "Thanks, Jo")        -> person
               otherwise, unless at the start of a sentence               -> other
             so a sentence-initial capitalized word ("Migrate", "Thanks") is an entity only when a
             rule above types it ("Caroline went...": a first name)
  project    a name or a code word right after or right before the word "project" ("project Atlas",
             "the Atlas project", "Project Atlas", "project agent_memory") -> project
  speaker    the speaker, when given (not a bare role like "user" or "assistant") -> person
Mentions merge by key (normalize_entity, then canonical_name): the first surface form, the most
specific type, the count of mentions; keys under two characters are dropped; at most 200 entities.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agent_memory_db.entities import TYPES, Entity, Mention, merge_mentions, normalized_key
from agent_memory_db.entities.names import (
    AMBIGUOUS,
    CONNECTORS,
    DEFAULT_GAZETTEER,
    DOMAINS,
    FILE_EXTENSIONS,
    FIRST_NAMES,
    HONORIFICS,
    NOISE_ACRONYMS,
    ORG_WORDS,
    PLACE_WORDS,
    PLACES,
    STOP_WORDS,
)
from agent_memory_db.entities.normalize import ALIASES, canonical_name, drop_invisible, normalize_entity
from agent_memory_db.sentences import ABBREVIATIONS, FENCE, INLINE_CODE

ROLES = frozenset(["user", "assistant", "system", "tool", "developer", "function"])
MAX_GAZETTEER_WORDS = 4
MAX_NAME_WORDS = 5
MAX_PERSON_WORDS = 3

URL = re.compile(r"\b(?:(?:https?|ftp|file)://|www\.)[^\s<>\"'`(){}\[\]]+", re.IGNORECASE)
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_SEGMENT = r"[\w.@+-]+"
_EXTENSION = "|".join(sorted(FILE_EXTENSIONS, key=len, reverse=True))
_DOMAIN = "|".join(sorted(DOMAINS, key=len, reverse=True))
PATH = re.compile(
    r"(?<![\w/\\.~:@+-])(?:"
    r"(?P<windows>[A-Za-z]:\\[\w.\\-]+)"
    rf"|(?P<anchored>(?:~|\.{{1,2}})?/{_SEGMENT}(?:/{_SEGMENT})*/?)"
    rf"|(?P<relative>(?=[\w.@+-]*/){_SEGMENT}(?:/{_SEGMENT})*/?)"
    r"|(?P<dotfile>\.[^\W\d_][\w.-]*)"
    rf"|(?P<file>{_SEGMENT}\.(?i:{_EXTENSION}))(?![\w(-])"
    rf"|(?P<site>(?:[\w-]+\.)+(?i:{_DOMAIN}))(?![\w.-])"
    r")"
)
DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+")
RECEIVER = re.compile(r"^(?:self|cls|this)\.")
IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*(?:::[\w.]+)*(?:\(\))?")
HANDLE = re.compile(r"(?<![\w@.])@\w(?:[\w-]*\w)?(?![\w@(-]|\.\w)")
TAG = re.compile(r"(?<![\w#&/])#[^\W\d_][\w-]*(?<!-)")
COLOUR = re.compile(r"#(?:[0-9a-fA-F]{3}){1,2}")
QUOTED = re.compile(
    r"(?<![\w\"])\"(?P<double>[^\"\n]{1,80})\"(?!\w)"
    r"|(?<![\w'])'(?P<single>[^'\n]{1,80})'(?!\w)"
    r"|\u201c(?P<curly>[^\u201d\n]{1,80})\u201d"
    r"|\u2018(?P<curly_single>[^\u2019\n]{1,80})\u2019(?!\w)"
    r"|\u00ab(?P<guillemets>[^\u00bb\n]{1,80})\u00bb"
)
JSON_KEY = re.compile(r"\s*:")
PRONOUNS = frozenset(["i", "i'm", "me", "my", "we", "our", "us", "you", "your", "he", "she", "they", "it's"])
MAX_TITLE_WORDS = 6
METRIC_WORDS = [
    "cache hit rate",
    "hit rate",
    "error rate",
    "success rate",
    "conversion rate",
    "response time",
    "load time",
    "requests per second",
    "cpu usage",
    "cpu",
    "memory usage",
    "disk usage",
    "latency",
    "throughput",
    "qps",
    "rps",
    "tps",
    "uptime",
    "availability",
    "accuracy",
    "precision",
    "f1",
    "coverage",
    "heap",
]
_PERCENTILE = r"p\d{2}(?:\.\d)?"
METRIC = re.compile(
    rf"\b(?P<at_k>(?:recall|precision|ndcg|mrr|hits?)(?:_\w+)?@\d+)"
    rf"|\b(?:(?P<percentile>{_PERCENTILE})\s+)?(?:{'|'.join(METRIC_WORDS)})\b"
    rf"|\b{_PERCENTILE}\b",
    re.IGNORECASE,
)
NUMBER_AFTER = re.compile(
    r"\s*(?:(?:is|was|of|at|to|around|about|under|over|now|=|:|~|≈|<|>)\s*){0,3}[-+]?\d", re.IGNORECASE
)
NUMBER_BEFORE = re.compile(r"\d(?:\.\d+)?\s*(?:%|[a-zA-Zµ]{1,4})?\s+$")
WORD = re.compile(r"_*[^\W_]\w*(?:[.'\u2019-]\w+)*(?:\+\+|#(?![\w#]))?")
SPACES = re.compile(r"[ \t]+")
VERSION = re.compile(r"(?<=[^\W\d_])\d[\d.]*$")
CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
NAME_PREFIX = re.compile(r"(?:Mc|Mac|O')[A-Z]")
ACRONYM = re.compile(r"[A-Z][A-Z0-9]*[A-Z0-9](?P<plural>s?)")
POSSESSIVE = re.compile(r"['\u2019]s$")
SENTENCE_START = re.compile(r"(?:^|(?P<end>[.!?:;])|\n)[\s\"'\u201c\u2018(\[*_>#+-]*$")
PRIOR_WORD = re.compile(r"\b([A-Z][\w'\u2019]*)[ \t]+$")
LOOK_BACK = 40
PROJECT_BEFORE = re.compile(r"\bproject\s+$", re.IGNORECASE)
PROJECT_AFTER = re.compile(r"\s+project\b", re.IGNORECASE)
PLACE_CUE = re.compile(
    r"\b(?:in|at|from|to|near|into|around|across|through|towards?|via|visit(?:ed|ing)?)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
NOT_SENTENCE_ENDS = ABBREVIATIONS | HONORIFICS
OF_JOINS = ORG_WORDS | PLACE_WORDS
GREETING_BEFORE = re.compile(
    r"\b(?:hi|hey|hello|dear|bye|thanks|thank\s+you|congrats|congratulations)[ \t,]+$", re.IGNORECASE
)
HONORIFIC_BEFORE = re.compile(rf"\b(?:{'|'.join(sorted(HONORIFICS))})\.?\s+$", re.IGNORECASE)


@dataclass(frozen=True)
class Word:
    start: int
    end: int
    text: str
    key: str  # normalize_entity(text)


class _Scan:
    """The text, which of its characters a rule has claimed, and the mentions found so far."""

    def __init__(self, text: str, known: Mapping[str, str], longest: Mapping[str, int]) -> None:
        self.text = text
        self.known = known
        self.longest = longest  # first word -> the most words of a gazetteer name (or alias) it starts
        self.taken = bytearray(len(text))
        self.mentions: list[Mention] = []

    def free(self, start: int, end: int) -> bool:
        return self.taken.find(1, start, end) < 0

    def claim(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x01" * (end - start)

    def add(self, start: int, end: int, kind: str | None) -> None:
        """Records a mention of text[start:end] of this type, unless it is None, and claims the span."""
        if kind is None or not self.free(start, end):
            return
        self.claim(start, end)
        self.mentions.append(Mention(start, self.text[start:end], kind))


def _project_cue(text: str, start: int, end: int) -> bool:
    """Whether "project" is the word right before or right after text[start:end]."""
    return bool(PROJECT_BEFORE.search(text, max(0, start - LOOK_BACK), start) or PROJECT_AFTER.match(text, end))


def _trimmed(match: re.Match[str], closing: str) -> tuple[int, int]:
    """The span of a match without the closing punctuation after it ("see https://x.org/.")."""
    return match.start(), match.start() + len(match.group().rstrip(closing))


def _path_type(match: re.Match[str], surface: str) -> str | None:
    """doc for a path, file or site the PATH rule accepts, tool for "Chart.js", None for "and/or"."""
    if match["anchored"]:
        anchored = surface.startswith(("~", "./", "../")) or surface.strip("/").count("/") >= 1
        return "doc" if anchored else None
    if match["relative"]:
        last = surface.rstrip("/").rsplit("/", 1)[-1]
        first = surface.split("/", 1)[0]
        known = last.rsplit(".", 1)[-1].lower() in FILE_EXTENSIONS and "." in last
        site = "." in first and first.rsplit(".", 1)[-1].lower() in DOMAINS
        return "doc" if known or surface.endswith("/") or site else None
    if match["file"] and surface.endswith(".js") and surface[0].isupper():
        return "tool"
    return "doc"


def _scan_paths(scan: _Scan, start: int, end: int) -> None:
    for match in PATH.finditer(scan.text, start, end):
        first, last = _trimmed(match, ".-")
        scan.add(first, last, _path_type(match, scan.text[first:last]))


def _scan_code(scan: _Scan, start: int, end: int) -> None:
    """Code is read for paths and dotted identifiers only, then claimed whole."""
    _scan_paths(scan, start, end)
    for match in DOTTED.finditer(scan.text, start, end):
        receiver = RECEIVER.match(match.group())
        first = match.start() + (receiver.end() if receiver else 0)
        if "." in scan.text[first : match.end()]:
            scan.add(first, match.end(), "concept")
    scan.claim(start, end)


def _scan_inline_code(scan: _Scan, match: re.Match[str]) -> None:
    """A backticked single path or identifier is one entity; other inline code is read as code."""
    body = match.group()[1:-1]
    first = match.start() + 1 + len(body) - len(body.lstrip())
    last = match.start() + 1 + len(body.rstrip())
    body = scan.text[first:last]
    path = PATH.fullmatch(body)
    kind = _path_type(path, body) if path else None
    if kind:
        scan.add(first, last, kind)
    elif IDENTIFIER.fullmatch(body):
        scan.add(first, last - 2 if body.endswith("()") else last, "concept")
    _scan_code(scan, match.start(), match.end())


def _is_title(words: list[str]) -> bool:
    """Two to six words, the first capitalized or a digit, no closing sentence punctuation, no pronoun,
    and not a person's name or a place (those are left to the name rules)."""
    first, last = words[0], words[-1]
    return (
        2 <= len(words) <= MAX_TITLE_WORDS
        and (first[0].isupper() or first[0].isdigit())
        and last[-1] not in ".!?,;:"
        and not any(word.lower().strip(",.!?") in PRONOUNS for word in words)
        and first.lower() not in FIRST_NAMES
        and normalize_entity(" ".join(words)) not in PLACES
    )


def _scan_titles(scan: _Scan) -> None:
    for match in QUOTED.finditer(scan.text):
        group = next(name for name, value in match.groupdict().items() if value is not None)
        inner = match.group(group)
        key_of_object = JSON_KEY.match(scan.text, match.end())
        if inner.strip() and not key_of_object and _is_title(inner.split()) and scan.free(*match.span()):
            first = match.start(group) + len(inner) - len(inner.lstrip())
            scan.add(first, first + len(inner.strip()), "doc")
            scan.claim(match.start(), match.end())


def _scan_metrics(scan: _Scan) -> None:
    text = scan.text
    for match in METRIC.finditer(text):
        before = text[max(0, match.start() - LOOK_BACK) : match.start()]
        valued = NUMBER_AFTER.match(text, match.end()) or NUMBER_BEFORE.search(before)
        if match["at_k"] or match["percentile"] or valued:
            scan.add(match.start(), match.end(), "metric")


def _words(scan: _Scan) -> list[Word]:
    """The words no earlier rule claimed, each normalized once (a repeated word reuses its key)."""
    keys: dict[str, str] = {}
    words = []
    for match in WORD.finditer(scan.text):
        if scan.free(match.start(), match.end()):
            text = match.group()
            if text not in keys:
                keys[text] = normalize_entity(text)
            words.append(Word(match.start(), match.end(), text, keys[text]))
    return words


def _adjacent(text: str, words: list[Word], first: int, last: int) -> bool:
    """Whether words[first..last] are one run: only spaces or tabs between them."""
    return all(SPACES.fullmatch(text, words[i].end, words[i + 1].start) for i in range(first, last))


def _gazetteer_match(run: list[Word], surface: str, known: Mapping[str, str]) -> tuple[str, str] | None:
    """The part of a run of words that names a gazetteer entry, and the entry's key; a single word may
    carry a version that is left out ("python3", "python3.11")."""
    normalized = " ".join(word.key for word in run)
    if normalized in AMBIGUOUS and surface.islower():
        return None
    if canonical_name(normalized) in known:
        return surface, canonical_name(normalized)
    version = VERSION.search(surface) if len(run) == 1 else None
    if version and normalized_key(surface[: version.start()]) in known:
        return surface[: version.start()], normalized_key(surface[: version.start()])
    return None


def _gazetteer_run(scan: _Scan, words: list[Word], i: int) -> tuple[int, tuple[str, str] | None]:
    """The number of words from words[i] that name a gazetteer entry (the longest run) and the match,
    or (0, None)."""
    most = scan.longest.get(words[i].key.split(" ", 1)[0], 1)
    for n in range(min(most, len(words) - i), 0, -1):
        if n == 1 or _adjacent(scan.text, words, i, i + n - 1):
            surface = scan.text[words[i].start : words[i + n - 1].end]
            match = _gazetteer_match(words[i : i + n], surface, scan.known)
            if match is not None:
                return n, match
    return 0, None


def _code_word_type(word: str) -> str | None:
    """concept for dotted, snake_case, camelCase and all-capital words; place for USA; None otherwise."""
    acronym = ACRONYM.fullmatch(word)
    if acronym and sum(map(str.isupper, word)) >= 2:
        bare = word[: len(word) - len(acronym["plural"])].lower()
        if bare in NOISE_ACRONYMS:
            return None
        return "place" if bare in PLACES else "concept"
    if "." in word:
        identifier = all(len(part) >= 2 and (part[0].isalpha() or part[0] == "_") for part in word.split("."))
        return "concept" if identifier else None
    if "_" in word or (CAMEL.search(word) and not NAME_PREFIX.match(word)):
        return "concept"
    return None


def _is_stop_word(word: str) -> bool:
    return word.lower().replace("\u2019", "'") in STOP_WORDS


def _is_capitalized(word: str) -> bool:
    """A capitalized word that may be (part of) a name: not a stop word, weekday or month."""
    return word[0].isupper() and any(map(str.islower, word)) and not _is_stop_word(word)


def _connects(words: list[Word], k: int) -> bool:
    """Whether words[k] joins the capitalized words around it: "of" after an org or place word
    ("University of Michigan", "Gulf of Mexico"), another connector after any ("Vincent van Gogh")."""
    if k + 1 >= len(words) or not _is_capitalized(words[k + 1].text):
        return False
    if words[k].text == "of":
        return words[k - 1].text.lower() in OF_JOINS
    return words[k].text in CONNECTORS


def _name_run(scan: _Scan, words: list[Word], i: int) -> int:
    """The number of words from words[i] in one run of capitalized words (a connector may join two of
    them); a possessive ends the run, a gazetteer name breaks it."""

    def joins(k: int) -> bool:
        return _adjacent(scan.text, words, k - 1, k) and _gazetteer_run(scan, words, k)[0] == 0

    n = 1
    while i + n < len(words) and not POSSESSIVE.search(words[i + n - 1].text) and joins(i + n):
        if _is_capitalized(words[i + n].text):
            n += 1
        elif _connects(words, i + n):
            if not joins(i + n + 1):
                break
            n += 2
        else:
            break
    return n


def _sentence_start(text: str, start: int) -> bool:
    """Whether text[start] begins a sentence, a line or the text, capitalized stop words before it left
    out ("Next Steps", "The Beatles"); an abbreviation's dot ends no sentence."""
    while (prior := PRIOR_WORD.search(text, max(0, start - LOOK_BACK), start)) and _is_stop_word(prior[1]):
        start = prior.start()
    match = SENTENCE_START.search(text, max(0, start - LOOK_BACK), start)
    if match is None:
        return False
    if match["end"] != ".":
        return True
    before = re.search(r"[\w.]+$", text[max(0, match.start() - LOOK_BACK) : match.start()])
    return not (before and before.group().lower() in NOT_SENTENCE_ENDS)


def _name_type(text: str, start: int, names: list[str]) -> str | None:
    """The type of a run of capitalized words by the rules in the module's docstring, or None."""
    lowered = [name.lower() for name in names]
    key = normalize_entity(" ".join(names))
    before = text[max(0, start - LOOK_BACK) : start]
    if any(word in ORG_WORDS for word in lowered):
        return "org"
    if key in PLACES and (lowered[0] not in FIRST_NAMES or PLACE_CUE.search(before)):
        return "place"
    if len(names) > 1 and lowered[-1] in PLACE_WORDS:
        return "place"
    if lowered[0] in FIRST_NAMES and len(names) <= MAX_PERSON_WORDS:
        return "person"
    if HONORIFIC_BEFORE.search(before) or GREETING_BEFORE.search(before):
        return "person"
    return None if _sentence_start(text, start) else "other"


def _add_name(scan: _Scan, run: list[Word]) -> None:
    """Adds a run of capitalized words: "Project Atlas" and "Atlas Project" are the project Atlas, as
    is a run right after or before the word "project"; a possessive "'s" is left out."""
    if len(run) > MAX_NAME_WORDS:
        return
    lowered = [word.text.lower() for word in run]
    if len(run) > 1 and "project" in (lowered[0], lowered[-1]):
        label, named = (run[0], run[1:]) if lowered[0] == "project" else (run[-1], run[:-1])
        scan.claim(label.start, label.end)
        scan.add(named[0].start, named[-1].end, "project")
        return
    start, end = run[0].start, run[-1].end - (2 if POSSESSIVE.search(run[-1].text) else 0)
    cue = _project_cue(scan.text, start, end)
    scan.add(start, end, "project" if cue else _name_type(scan.text, start, scan.text[start:end].split()))


def _scan_words(scan: _Scan) -> None:
    """The gazetteer, code-word and name rules, over the words no earlier rule claimed."""
    words = _words(scan)
    i = 0
    while i < len(words):
        word = words[i]
        n, match = _gazetteer_run(scan, words, i)
        if match is not None:
            part, key = match
            scan.add(word.start, word.start + len(part), scan.known[key])
        elif not word.text[0].isdigit() and (kind := _code_word_type(word.text)):
            cue = kind == "concept" and _project_cue(scan.text, word.start, word.end)
            scan.add(word.start, word.end, "project" if cue else kind)
            n = 1
        elif _is_capitalized(word.text):
            n = _name_run(scan, words, i)
            _add_name(scan, words[i : i + n])
        i += max(n, 1)


def known_names(gazetteer: Mapping[str, str] | None) -> dict[str, str]:
    """The default gazetteer extended or overridden by the caller's (keys normalized here too)."""
    return dict(_known(tuple(sorted((gazetteer or {}).items())))[0])


@functools.lru_cache(maxsize=64)
def _known(gazetteer: tuple[tuple[str, str], ...]) -> tuple[dict[str, str], dict[str, int]]:
    """known_names of a gazetteer, and for each first word of a name of several words (or of an alias,
    which resolves to one) the most words such a name has: a run of words is looked up only as long as
    a name could be. Made once per gazetteer, not once per turn."""
    known = dict(DEFAULT_GAZETTEER)
    for name, kind in gazetteer:
        if kind not in TYPES:
            raise ValueError(f"the gazetteer gives {name!r} the type {kind!r}, which is not one of {', '.join(TYPES)}")
        if not normalized_key(name):
            raise ValueError(f"the gazetteer name {name!r} is empty once normalized")
        known[normalized_key(name)] = kind
    longest: dict[str, int] = {}
    for key in [*known, *ALIASES]:
        first, words = key.split(" ", 1)[0], key.count(" ") + 1
        longest[first] = min(MAX_GAZETTEER_WORDS, max(words, longest.get(first, 1)))
    return known, longest


def _scan_fences(scan: _Scan) -> None:
    for block in FENCE.finditer(scan.text):
        _scan_code(scan, block.start(), block.end())


def _scan_inline(scan: _Scan) -> None:
    for match in INLINE_CODE.finditer(scan.text):
        if scan.free(match.start(), match.end()):
            _scan_inline_code(scan, match)


def _scan_links(scan: _Scan) -> None:
    for match in URL.finditer(scan.text):
        scan.add(*_trimmed(match, ".,;:!?'\""), "doc")
    for match in EMAIL.finditer(scan.text):
        scan.add(*_trimmed(match, "."), "person")


def _scan_prose_paths(scan: _Scan) -> None:
    _scan_paths(scan, 0, len(scan.text))


def _scan_handles_and_tags(scan: _Scan) -> None:
    for match in HANDLE.finditer(scan.text):
        scan.add(match.start(), match.end(), "person")
    for match in TAG.finditer(scan.text):
        if not COLOUR.fullmatch(match.group()):
            scan.add(match.start(), match.end(), "topic")


RULES = (
    _scan_fences,
    _scan_inline,
    _scan_links,
    _scan_prose_paths,
    _scan_handles_and_tags,
    _scan_titles,
    _scan_metrics,
    _scan_words,
)


def extract_entities(
    text: str, *, speaker: str | None = None, gazetteer: Mapping[str, str] | None = None
) -> list[Entity]:
    """The entities the text mentions, in order of first mention, by the rules of this module; the
    speaker, when given, is a person mentioned first. `gazetteer` maps names to types (one of TYPES)
    and extends or overrides the built-in one."""
    known, longest = _known(tuple(sorted((gazetteer or {}).items())))
    scan = _Scan(drop_invisible(text), known, longest)
    for rule in RULES:
        rule(scan)
    return merge_mentions(scan.mentions + speaker_mentions(speaker), scan.known)


def speaker_mentions(speaker: str | None) -> list[Mention]:
    """The speaker of a turn as a person it mentions, first; none for a bare role ("user", "assistant")."""
    return [Mention(-1, speaker, "person")] if speaker and speaker.strip().lower() not in ROLES else []
