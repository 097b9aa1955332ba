"""Sentences of text that mixes prose with code: where the summarizer and the chunker may cut.

A sentence ends at . ! or ? followed by white space, or at a line break. A dot with no space after it
(versions like 1.4, dotted names like Session.get, httpx==0.27, paths like .github/ci.yml, URLs) ends
nothing, nor does the dot of a common abbreviation ("e.g. ", "vs. "). Inline `code` and fenced code
blocks are never cut inside: a fenced block is one span of its own, marked as code.

Spans are offsets into the text, so a chunk made of several spans keeps the text exactly as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]+`")
# The end of a sentence: terminators (and closing quotes or brackets) then white space, or a line break.
SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n")
ABBREVIATIONS = frozenset(
    ["e.g", "i.e", "etc", "vs", "cf", "approx", "mr", "mrs", "ms", "dr", "prof", "fig", "incl", "resp"]
)
LONGEST_ABBREVIATION = max(len(word) for word in ABBREVIATIONS) + 1  # the word, and a character before it


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    code: bool = False


def _abbreviation(text: str, dot: int) -> bool:
    """Whether the dot at this offset ends an abbreviation such as "e.g." rather than a sentence."""
    word = re.search(r"[\w.]+$", text[max(0, dot - LONGEST_ABBREVIATION) : dot])
    return word is not None and word.group(0).lower() in ABBREVIATIONS


def _prose_spans(text: str, start: int, end: int) -> list[Span]:
    protected = iter(m.span() for m in INLINE_CODE.finditer(text, start, end))
    code = next(protected, None)
    spans: list[Span] = []
    begin = start
    for match in SENTENCE_END.finditer(text, start, end):
        while code is not None and code[1] <= match.start():
            code = next(protected, None)
        if code is not None and code[0] < match.start():
            continue  # inside inline code
        if match.group(0).startswith(".") and _abbreviation(text, match.start()):
            continue
        cut = match.end()
        if text[begin:cut].strip():
            spans.append(Span(begin, cut))
        begin = cut
    if text[begin:end].strip():
        spans.append(Span(begin, end))
    return spans


def spans(text: str) -> list[Span]:
    """The sentences and code blocks of the text, in order, each with white space around it left out."""
    out: list[Span] = []
    position = 0
    for block in FENCE.finditer(text):
        out.extend(_prose_spans(text, position, block.start()))
        out.append(Span(block.start(), block.end(), code=True))
        position = block.end()
    out.extend(_prose_spans(text, position, len(text)))
    return [_stripped(text, span) for span in out]


def _stripped(text: str, span: Span) -> Span:
    piece = text[span.start : span.end]
    start = span.start + len(piece) - len(piece.lstrip())
    return Span(start, span.start + len(piece.rstrip()), span.code)


def sentences(text: str) -> list[str]:
    """The prose sentences of the text (code blocks left out)."""
    return [text[span.start : span.end] for span in spans(text) if not span.code]
