"""The names a recall query mentions an entity by: the runs of one to four of its words written as a name.

A query is short and often lower-case ("when did we move to postgres?"), so it is not run through the
extractor; instead every run of up to MAX_WORDS words is keyed (entity_key) and recall looks the keys up
among the entities of its scope. A run counts only when it is written as a name, by the extractor's own
rule: with a capital letter ("Flask", "LGBTQ", "Grand Canyon"), a digit or a symbol inside ("app.route",
"Flask-Login", "gpt-4"), or as a name the gazetteer knows that is not also a common word ("postgres",
"kubernetes"; "flask" or "rust" in lower case are words). So "the project" or "user login" in a question
does not find an entity found as a capitalized "Project" heading. A possessive "'s" is not part of a name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from agent_memory_db.entities import MIN_KEY_CHARS, entity_key
from agent_memory_db.entities.extract import known_names
from agent_memory_db.entities.names import AMBIGUOUS

MAX_WORDS = 4
POSSESSIVE = re.compile(r"['\u2019]s$", re.IGNORECASE)
NAME_MARK = re.compile(r"\w[._/@#+:\\-]+\w|\d|[+#]$")


def _written_as_name(run: str, key: str, known: Mapping[str, str]) -> bool:
    return any(char.isupper() for char in run) or bool(NAME_MARK.search(key)) or (key in known and key not in AMBIGUOUS)


def query_names(query: str, gazetteer: Mapping[str, str] | None = None) -> list[str]:
    """The distinct keys of the runs of one to MAX_WORDS words of the query written as a name, in order of
    first word (gazetteer: the setting entity_gazetteer, on top of the built-in one)."""
    known = known_names(gazetteer)
    words = [POSSESSIVE.sub("", word) for word in query.split()]
    keys: dict[str, None] = {}
    for first in range(len(words)):
        for last in range(first + 1, min(first + MAX_WORDS, len(words)) + 1):
            run = " ".join(words[first:last])
            key = entity_key(run)
            if len(key) >= MIN_KEY_CHARS and _written_as_name(run, key, known):
                keys[key] = None
    return list(keys)
