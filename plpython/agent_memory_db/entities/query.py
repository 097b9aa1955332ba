"""The names a recall query mentions an entity by: the runs of one to four of its words written as a name.

A query is short and often lower-case ("when did we move to postgres?"), so it is not run through the
extractor; instead every run of up to MAX_WORDS words is keyed (normalized_key) and recall looks the keys up
among the entities of its scope. A run counts only when it is written as a name, by the extractor's own
rule: with a capital letter ("Flask", "LGBTQ", "Grand Canyon"), a digit or a symbol inside ("app.route",
"Flask-Login", "gpt-4"), or as a name the gazetteer knows that is not also a common word ("postgres",
"kubernetes"; "flask" or "rust" in lower case are words). The capital that starts a question or a sentence
is no sign of a name ("Meeting notes from Tuesday?"), unless the word is a known first name, place or tool. So
"the project" or "user login" in a question does not find an entity found as a capitalized "Project"
heading. A possessive "'s" is not part of a name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from agent_memory_db.entities import MIN_KEY_CHARS, normalized_key
from agent_memory_db.entities.extract import known_names
from agent_memory_db.entities.names import AMBIGUOUS, FIRST_NAMES, PLACES, STOP_WORDS

MAX_WORDS = 4
POSSESSIVE = re.compile(r"['\u2019]s(?=\W*$)", re.IGNORECASE)
NAME_MARK = re.compile(r"\w[._/@#+:\\-]+\w|\d|[+#]$")
SENTENCE_END = re.compile(r"[.!?:;]$")


def _capital(word: str, at_start: bool) -> bool:
    """Whether a word's capitals mark a name: not the one that starts a sentence, not a stop word's ("I")."""
    return word.casefold() not in STOP_WORDS and any(char.isupper() for char in (word[1:] if at_start else word))


def _written_as_name(words: list[str], starts: list[bool], key: str, known: Mapping[str, str]) -> bool:
    run = " ".join(words)
    if any(map(_capital, words, starts)) or NAME_MARK.search(key):
        return True
    if key in known:
        return key not in AMBIGUOUS or any(char.isupper() for char in run)
    return starts[0] and words[0][:1].isupper() and (words[0].casefold() in FIRST_NAMES or key in PLACES)


def query_names(query: str, gazetteer: Mapping[str, str] | None = None) -> list[str]:
    """The distinct keys of the runs of one to MAX_WORDS words of one sentence of the query written as a
    name, in order of first word (gazetteer: the setting entity_gazetteer, on top of the built-in one)."""
    known = known_names(gazetteer)
    raw = query.split()
    words = [POSSESSIVE.sub("", word) for word in raw]
    starts = [i == 0 or bool(SENTENCE_END.search(raw[i - 1])) for i in range(len(raw))]
    keys: dict[str, None] = {}
    for first in range(len(words)):
        for last in range(first + 1, min(first + MAX_WORDS, len(words)) + 1):
            if last - 1 > first and starts[last - 1]:
                break  # a name does not run on into the next sentence
            key = normalized_key(" ".join(words[first:last]))
            if len(key) >= MIN_KEY_CHARS and _written_as_name(words[first:last], starts[first:last], key, known):
                keys[key] = None
    return list(keys)
