"""Whether two claims close in meaning say the same thing, or the same thing about different values.

Sentence vectors place "Deploys go out on Tuesdays." and "Deploys go out on Thursdays." as close as two
paraphrases: the vector says what a claim is about, not which value it gives. Semantic dedup therefore
merges a claim into a similar memory only when both state the same values: the same numbers (any token
with a digit: 3, v2.5, 10%, 2026-05-01), the same names (capitalized words other than a sentence's first
word and "I": weekdays, months, products, people) and the same polarity (a negation in one and not the
other is a contradiction, not a paraphrase).
"""

from __future__ import annotations

import re

WORD = re.compile(r"[\w][\w.%:/'-]*")
NEGATIONS = frozenset(["not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "without", "cannot"])
ENDS_SENTENCE = frozenset(".!?")


def values(claim: str) -> tuple[frozenset[str], bool]:
    """The values a claim states (numbers and names, case-folded) and whether it is negated."""
    found: set[str] = set()
    negated = False
    sentence_start, previous_end = True, 0
    for match in WORD.finditer(claim):
        # A word opens a sentence when the word before it, or what lies between them, ends one.
        sentence_start = sentence_start or any(char in ENDS_SENTENCE for char in claim[previous_end : match.start()])
        previous_end = match.end()
        word = match.group(0).rstrip(".:/'-")
        folded = word.casefold()
        if folded in NEGATIONS or folded.endswith("n't"):
            negated = not negated
        elif any(char.isdigit() for char in word) or (word[:1].isupper() and word != "I" and not sentence_start):
            found.add(folded)
        sentence_start = match.group(0)[-1] in ENDS_SENTENCE
    return frozenset(found), negated


def same_values(first: str, second: str) -> bool:
    """Whether two claims state the same numbers and names with the same polarity."""
    return values(first) == values(second)
