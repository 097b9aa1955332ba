"""The key an entity is stored under, so that one name written many ways is one entity.

normalize_entity(text) applies, in order:
  1. invisible characters removed: zero-width space, non-joiner and joiner (U+200B-U+200D), word
     joiner (U+2060), BOM (U+FEFF), soft hyphen (U+00AD) and bidi controls (U+200E, U+200F,
     U+202A-U+202E, U+2066-U+2069, U+061C). A zero-width joiner between two symbols is kept: it
     glues emoji sequences (woman + ZWJ + laptop), which are left alone.
  2. NFKC: fullwidth letters (U+FF41...) are ASCII letters, the ligature U+FB01 is "fi", e + U+0301
     is é.
  3. look-alike letters: in a word that is mostly Latin (at least half its letters), Cyrillic and Greek
     letters that look like Latin ones become those (CONFUSABLES: "Postgres" spelt with a Cyrillic
     small o, U+043E, is "postgres"). A word with no Latin majority keeps its letters: Moscow and
     Athens written in Cyrillic and Greek stay themselves.
  4. full Unicode case folding (str.casefold, then NFKC again): "Straße" and "STRASSE" are one. Case
     folding is not Turkish-aware: the capital I with a dot (U+0130) folds to "i" plus a combining dot
     (U+0307), which is dropped, so "Istanbul" written with U+0130, "ISTANBUL" and "istanbul" are one;
     "I" folds to "i", never to the dotless small i (U+0131), which stays a letter of its own.
     Accents are kept: "José" and "Jose" differ.
  5. dash variants are "-", dot variants ".", curly quotes and guillemets ASCII quotes, CJK and other
     brackets ASCII brackets (PUNCTUATION).
  6. white space of any kind is one space; punctuation and spaces are stripped at both ends, except a
     leading "@" or "#" before a word (handles, tags), a leading ".", "/", "./", "../" or "~" (paths)
     and one or two trailing "+" or "#" after a word ("C++", "C#", "F#").
  7. a result without a letter, digit or symbol (only punctuation) is "" - the caller refuses it.

Aliases are not applied here: canonical_name(key) maps a normalized key to its canonical one
("postgres" -> "postgresql", "k8s" -> "kubernetes"), from the ALIASES table below.
"""

from __future__ import annotations

import functools
import re
import unicodedata

INVISIBLE = re.compile("[\u00ad\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")
JOINER = re.compile("\u200d")
DOTTED_I = re.compile("i\u0307")
WHITESPACE = re.compile(r"\s+")
LETTER_RUN = re.compile(r"[^\W\d_]+")
# Look-alikes of Latin letters, applied only inside mostly-Latin words.
CONFUSABLES = str.maketrans(
    {
        unicodedata.lookup(name): latin
        for name, latin in [
            ("CYRILLIC CAPITAL LETTER A", "A"),
            ("CYRILLIC CAPITAL LETTER VE", "B"),
            ("CYRILLIC CAPITAL LETTER IE", "E"),
            ("CYRILLIC CAPITAL LETTER KA", "K"),
            ("CYRILLIC CAPITAL LETTER EM", "M"),
            ("CYRILLIC CAPITAL LETTER EN", "H"),
            ("CYRILLIC CAPITAL LETTER O", "O"),
            ("CYRILLIC CAPITAL LETTER ER", "P"),
            ("CYRILLIC CAPITAL LETTER ES", "C"),
            ("CYRILLIC CAPITAL LETTER TE", "T"),
            ("CYRILLIC CAPITAL LETTER U", "Y"),
            ("CYRILLIC CAPITAL LETTER HA", "X"),
            ("CYRILLIC CAPITAL LETTER DZE", "S"),
            ("CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I", "I"),
            ("CYRILLIC CAPITAL LETTER JE", "J"),
            ("CYRILLIC CAPITAL LETTER STRAIGHT U", "Y"),
            ("CYRILLIC CAPITAL LETTER SHHA", "H"),
            ("CYRILLIC LETTER PALOCHKA", "I"),
            ("CYRILLIC SMALL LETTER A", "a"),
            ("CYRILLIC SMALL LETTER IE", "e"),
            ("CYRILLIC SMALL LETTER O", "o"),
            ("CYRILLIC SMALL LETTER ER", "p"),
            ("CYRILLIC SMALL LETTER ES", "c"),
            ("CYRILLIC SMALL LETTER U", "y"),
            ("CYRILLIC SMALL LETTER HA", "x"),
            ("CYRILLIC SMALL LETTER KA", "k"),
            ("CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I", "i"),
            ("CYRILLIC SMALL LETTER JE", "j"),
            ("CYRILLIC SMALL LETTER DZE", "s"),
            ("CYRILLIC SMALL LETTER KOMI DE", "d"),
            ("CYRILLIC SMALL LETTER SHHA", "h"),
            ("CYRILLIC SMALL LETTER QA", "q"),
            ("CYRILLIC SMALL LETTER WE", "w"),
            ("CYRILLIC SMALL LETTER PALOCHKA", "l"),
            ("CYRILLIC SMALL LETTER STRAIGHT U", "y"),
            ("GREEK CAPITAL LETTER ALPHA", "A"),
            ("GREEK CAPITAL LETTER BETA", "B"),
            ("GREEK CAPITAL LETTER EPSILON", "E"),
            ("GREEK CAPITAL LETTER ZETA", "Z"),
            ("GREEK CAPITAL LETTER ETA", "H"),
            ("GREEK CAPITAL LETTER IOTA", "I"),
            ("GREEK CAPITAL LETTER KAPPA", "K"),
            ("GREEK CAPITAL LETTER MU", "M"),
            ("GREEK CAPITAL LETTER NU", "N"),
            ("GREEK CAPITAL LETTER OMICRON", "O"),
            ("GREEK CAPITAL LETTER RHO", "P"),
            ("GREEK CAPITAL LETTER TAU", "T"),
            ("GREEK CAPITAL LETTER UPSILON", "Y"),
            ("GREEK CAPITAL LETTER CHI", "X"),
            ("GREEK SMALL LETTER OMICRON", "o"),
            ("GREEK SMALL LETTER ALPHA", "a"),
            ("GREEK SMALL LETTER NU", "v"),
            ("GREEK SMALL LETTER RHO", "p"),
            ("GREEK SMALL LETTER TAU", "t"),
            ("GREEK SMALL LETTER IOTA", "i"),
            ("GREEK SMALL LETTER KAPPA", "k"),
            ("GREEK SMALL LETTER UPSILON", "u"),
            ("GREEK SMALL LETTER CHI", "x"),
            ("GREEK SMALL LETTER GAMMA", "y"),
            ("GREEK SMALL LETTER ETA", "n"),
            ("LATIN SMALL LETTER SCRIPT G", "g"),
            ("LATIN SMALL LETTER ALPHA", "a"),
        ]
    }
)
PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u2024\u2027\u30fb\uff61\uff65\u3002\ufe52", "."),
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2039\u203a", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\u300c\u300d\u300e\u300f", '"'),
        **dict.fromkeys("\u2768\u276a\ufe59", "("),
        **dict.fromkeys("\u2769\u276b\ufe5a", ")"),
        **dict.fromkeys("\u3010\u3014\u3016\u3018\u301a", "["),
        **dict.fromkeys("\u3011\u3015\u3017\u3019\u301b", "]"),
        **dict.fromkeys("\u2329\u27e8\u3008\u300a", "<"),
        **dict.fromkeys("\u232a\u27e9\u3009\u300b", ">"),
    }
)
# Edge characters that are not Unicode punctuation; "_" is kept (it is part of identifiers).
EDGE_SYMBOLS = frozenset(" <>|=^`+~")
# A leading character that starts a handle, tag or path is kept.
KEPT_LEAD = re.compile(r"[@#](?=\w)|~(?=[/\w])|\.{0,2}/(?=[\w.])|\.(?=\w)")
# Canonical names of common tools written several ways; keys and values are normalized.
ALIASES = {
    "postgres": "postgresql",
    "postgre": "postgresql",
    "pgsql": "postgresql",
    "k8s": "kubernetes",
    "js": "javascript",
    "ts": "typescript",
    "py": "python",
    "gh": "github",
    "node": "node.js",
    "nodejs": "node.js",
    "reactjs": "react",
    "react.js": "react",
    "vue.js": "vue",
    "vuejs": "vue",
    "nextjs": "next.js",
    "mongo": "mongodb",
    "sklearn": "scikit-learn",
    "torch": "pytorch",
    "vscode": "visual studio code",
    "vs code": "visual studio code",
    "gcp": "google cloud",
    "google cloud platform": "google cloud",
    "amazon web services": "aws",
    "mssql": "sql server",
    "gha": "github actions",
    "cpp": "c++",
    "c sharp": "c#",
    "dotnet": ".net",
    "objc": "objective-c",
    "osx": "macos",
    "os x": "macos",
    "mac os": "macos",
    "gpt4": "gpt-4",
    "elastic search": "elasticsearch",
}


def drop_invisible(text: str) -> str:
    """Removes invisible characters; a joiner between two symbols (an emoji sequence) stays."""

    def joiner(match: re.Match[str]) -> str:
        before, after = text[match.start() - 1 : match.start()], text[match.end() : match.end() + 1]
        glued = before and after and unicodedata.category(after) == "So"
        return match.group() if glued and (before == "\ufe0f" or unicodedata.category(before) in ("So", "Sk")) else ""

    return INVISIBLE.sub("", JOINER.sub(joiner, text))


def _is_latin(letter: str) -> bool:
    return letter.isascii() or unicodedata.name(letter, "").startswith("LATIN")


def _unspoof_word(match: re.Match[str]) -> str:
    """A mostly-Latin word with its Cyrillic and Greek look-alikes made Latin; any other word as is."""
    word = match.group()
    latin = sum(map(_is_latin, word))
    return word.translate(CONFUSABLES) if latin and 2 * latin >= len(word) else word


def _is_edge(char: str) -> bool:
    return char in EDGE_SYMBOLS or (unicodedata.category(char).startswith("P") and char != "_")


def _keeps_trailing(text: str, end: int) -> bool:
    """Whether text[:end] ends with one or two "+" or "#" after a word character ("C++", "C#")."""
    start = end
    while start > 0 and text[start - 1] in "+#":
        start -= 1
    return 1 <= end - start <= 2 and start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def _strip_edges(text: str) -> str:
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]) and not KEPT_LEAD.match(text, start, end):
        start += 1
    while end > start and _is_edge(text[end - 1]) and not _keeps_trailing(text, end):
        end -= 1
    return text[start:end]


def _meaningful(char: str) -> bool:
    """A letter, a digit or a symbol such as an emoji: what a name needs at least one of."""
    return unicodedata.category(char)[0] in "LN" or unicodedata.category(char) == "So"


@functools.lru_cache(maxsize=65536)
def normalize_entity(text: str) -> str:
    """The key an entity is stored under (see the module's rules); "" when nothing is left. Memoized: the
    same words come back turn after turn."""
    text = unicodedata.normalize("NFKC", drop_invisible(text))
    text = LETTER_RUN.sub(_unspoof_word, text)
    text = DOTTED_I.sub("i", unicodedata.normalize("NFKC", text.casefold()))
    text = WHITESPACE.sub(" ", text.translate(PUNCTUATION))
    text = _strip_edges(text)
    return text if any(map(_meaningful, text)) else ""


def canonical_name(key: str) -> str:
    """The canonical key of a normalized key: its alias resolved ("postgres" -> "postgresql")."""
    return ALIASES.get(key, key)
