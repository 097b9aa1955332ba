"""Session summaries: a deterministic extractive summarizer, and the structured LLM summary's parsing.

The extractive summary picks the sentences that carry the session's most frequent content words,
in their original order, and lists decisions and open loops found by their wording.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_memory_db.openai_compat import json_object
from agent_memory_db.sentences import sentences as prose_sentences

WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "yes",
        "ok",
        "okay",
        "oh",
        "hey",
        "hi",
        "thanks",
        "thank",
        "really",
        "like",
        "just",
        "get",
        "got",
        "going",
        "go",
        "know",
        "think",
        "one",
        "well",
        "yeah",
        "sure",
        "much",
        "many",
    ]
)
DECISION = re.compile(
    r"\b(we decided|decided to|decision|we'll go with|let's go with|we will use|agreed|settled on|chose|going with)\b",
    re.IGNORECASE,
)
OPEN_LOOP = re.compile(
    r"\b(todo|to do|follow up|follow-up|next step|need to|needs to|should we|remind me|later|"
    r"not yet|pending|open question|tbd|will check|i'll check|let me check)\b",
    re.IGNORECASE,
)


@dataclass
class Summary:
    text: str
    decisions: list[str] = field(default_factory=list)
    open_loops: list[str] = field(default_factory=list)
    method: str = "extractive"


def _sentences(turns: Sequence[dict]) -> list[tuple[int, str, str]]:
    out = []
    for turn in turns:
        if turn["role"] == "tool":  # a tool's output is what the summary's sentences talk about, not one
            continue
        speaker = turn.get("name") or turn["role"]
        for sentence in prose_sentences(turn["content"]):
            if len(WORD.findall(sentence)) >= 3:
                out.append((len(out), speaker, sentence))
    return out


def extractive(turns: Sequence[dict], max_sentences: int = 5, max_items: int = 5) -> Summary:
    """Turns are dicts with role, content and optionally name (the speaker)."""
    sentences = _sentences(turns)
    if not sentences:
        return Summary(text="")
    counts = Counter(
        word
        for _, _, sentence in sentences
        for word in (w.lower() for w in WORD.findall(sentence))
        if word not in STOPWORDS
    )

    def score(sentence: str) -> float:
        words = [w.lower() for w in WORD.findall(sentence)]
        content = [w for w in words if w not in STOPWORDS]
        return sum(counts[w] for w in set(content)) / (len(words) ** 0.5)

    best = sorted(sentences, key=lambda item: (-score(item[2]), item[0]))[:max_sentences]
    text = " ".join(f"{speaker}: {sentence}" for _, speaker, sentence in sorted(best))
    decisions = [s for _, _, s in sentences if DECISION.search(s)][:max_items]
    open_loops = [s for _, _, s in sentences if OPEN_LOOP.search(s) or (s.endswith("?") and "should" in s.lower())]
    return Summary(text=text, decisions=decisions, open_loops=open_loops[:max_items])


LLM_INSTRUCTIONS = (
    "Summarize the conversation for an agent's long-term memory. Answer with a JSON object with keys "
    '"summary" (at most 5 sentences, naming people, places, dates and decisions), "decisions" (list of '
    'strings) and "open_loops" (list of strings: questions or tasks left unresolved).'
)


def llm_messages(turns: Sequence[dict]) -> list[dict]:
    transcript = "\n".join(f"{t.get('name') or t['role']}: {t['content']}" for t in turns)
    return [{"role": "system", "content": LLM_INSTRUCTIONS}, {"role": "user", "content": transcript}]


def parse_llm_summary(content: str) -> Summary:
    """The model's answer as a Summary; a reply that is not the asked-for JSON is an error."""
    data = json_object(content, "the LLM summary")
    if not isinstance(data.get("summary"), str):
        raise ValueError('the LLM summary has no "summary" string')

    def strings(key: str) -> list[str]:
        value = data.get(key) or []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError(f'the LLM summary\'s "{key}" is not a list of strings')
        return value

    return Summary(data["summary"], strings("decisions"), strings("open_loops"), method="llm")
