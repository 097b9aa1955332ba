"""Relevance scores for documents against a query from a rerank endpoint (a cross-encoder server).

The request is the one Cohere, Jina and vLLM serve: POST {url} with
{"model": ..., "query": ..., "documents": [...], "top_n": N} (no "model" when model is None or '').
Two answer shapes are read:
  {"results": [{"index": i, "relevance_score": s}, ...]}   Cohere, Jina, vLLM
  [{"index": i, "score": s}, ...]                          Hugging Face TEI's /rerank
Extra keys (document, text, id, meta, usage) are ignored. HTTP, retries and errors are
openai_compat.post_json's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from agent_memory_db.openai_compat import ProviderError, post_json


def rerank(
    url: str,
    query: str,
    documents: Sequence[str],
    *,
    model: str | None = None,
    top_n: int | None = None,
    api_key: str | None = None,
    timeout: float = 30.0,
    retries: int = 2,
    backoff: float = 0.5,
) -> list[float | None]:
    """The relevance score of each document, aligned with `documents`; None where the answer gave none.

    top_n (default: all documents, at most len(documents)) is sent to the endpoint, which then scores
    only its best top_n; the rest come back None. Scores are the server's own scale (probabilities
    or raw logits), comparable only within one answer. The URL is checked before anything else;
    no documents make no request.
    """
    if not documents:
        return []
    if top_n is not None and top_n < 1:
        raise ValueError(f"top_n must be at least 1, got {top_n}")
    count = len(documents)
    payload: dict[str, Any] = {"query": query, "documents": list(documents)}
    payload["top_n"] = count if top_n is None else min(top_n, count)
    if model:
        payload["model"] = model
    answer = post_json(url, payload, api_key, timeout, retries, backoff)
    return scores_of(answer, count, url)


def scores_of(answer: Any, count: int, url: str = "the endpoint") -> list[float | None]:
    """Scores aligned with `count` documents from either answer shape; ProviderError naming the problem
    (what the endpoint sent is in its detail only)."""

    def bad(problem: str, sent: str = "") -> ProviderError:
        detail = f"rerank answer from {url}: {problem}" + (f": {sent}" if sent else "")
        return ProviderError(f"rerank answer: {problem}", detail)

    if isinstance(answer, dict) and "results" in answer:
        results, key = answer["results"], "relevance_score"
        if not isinstance(results, list):
            raise bad(f'"results" is {type(results).__name__}, not a list')
    elif isinstance(answer, list):
        results, key = answer, "score"
    else:
        raise bad('expected {"results": [...]} or a list', str(answer)[:200])
    scores: list[float | None] = [None] * count
    for position, result in enumerate(results):
        if not isinstance(result, dict):
            raise bad(f"result {position} is {type(result).__name__}, not an object")
        index = result.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            raise bad(f"result {position} has no integer index", repr(index))
        if not 0 <= index < count:
            raise bad(f"index {index} is out of range for {count} documents")
        if scores[index] is not None:
            raise bad(f"index {index} appears more than once")
        score = result.get(key)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise bad(f"{key} of index {index} is not a finite number", repr(score))
        scores[index] = float(score)
    return scores
