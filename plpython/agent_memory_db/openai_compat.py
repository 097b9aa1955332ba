"""Clients for OpenAI-compatible endpoints: /v1/embeddings and /v1/chat/completions, the JSON POST
they share (post_json, also used by rerank.py), and the reading of a chat answer asked to be JSON.

Standard library only. Only http and https URLs with a host are called, and redirects are not
followed (a key must not travel to where a redirect points). Retries connection failures, 429 and
5xx answers with exponential backoff; other answers are errors. An error's message says what failed and
how (the HTTP status and its standard phrase, a timeout), never what the endpoint wrote, because it
reaches tenants; its detail adds the URL and the endpoint's own words, for the server log.
"""

from __future__ import annotations

import http
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


class ProviderError(RuntimeError):
    """The endpoint failed or answered with something unusable. str() is the summary a tenant may see;
    `detail` is the whole story (the URL, the body the endpoint sent: a provider's 401 may echo the key,
    masked), for the server log and administrators."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.detail = detail or message


def _status(code: int) -> str:
    """An HTTP status with its standard phrase: 401 Unauthorized."""
    try:
        return f"{code} {http.HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


SCHEMES = ("http", "https")

# How to wait between retries; the database replaces it with pg_sleep, which a cancel interrupts.
wait: Callable[[float], object] = time.sleep


def check_url(url: str) -> str:
    """The URL's host[:port], lower case; ProviderError unless it is an http or https URL with a host."""
    parts = urllib.parse.urlsplit(url)
    if not parts.scheme:
        raise ProviderError(f"URL {url!r} has no scheme; use http or https")
    if parts.scheme.lower() not in SCHEMES:
        raise ProviderError(f"URL scheme {parts.scheme!r} is not allowed; use http or https")
    host = parts.netloc.rpartition("@")[2].lower()
    if not host:
        raise ProviderError(f"URL {url!r} has no host")
    return host


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None  # the 3xx answer is raised as an HTTPError


_OPENER = urllib.request.build_opener(_NoRedirect)


def post_json(
    url: str,
    payload: dict,
    api_key: str | None = None,
    timeout: float = 30.0,
    retries: int = 2,
    backoff: float = 0.5,
) -> Any:
    """POST payload as JSON to the full url and return the decoded JSON answer.

    Connection failures, timeouts, 429 and 5xx are retried `retries` times with exponential backoff;
    the last failure, or any other error answer, is a ProviderError whose detail names the url and
    keeps the endpoint's message.
    """
    check_url(url)
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    body = json.dumps(payload).encode()
    last, last_detail = "", ""
    for attempt in range(retries + 1):
        if attempt:
            wait(backoff * 2 ** (attempt - 1))
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with _OPENER.open(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400:
                location = exc.headers.get("Location") if exc.headers else None
                raise ProviderError(
                    f"the endpoint answered {_status(exc.code)}, a redirect, not followed",
                    f"{url} answered {exc.code}: redirect to {location} not followed",
                ) from exc
            said = exc.read().decode(errors="replace")[:500]
            last, last_detail = f"the endpoint answered {_status(exc.code)}", f"{url} answered {exc.code}: {said}"
            if exc.code != 429 and exc.code < 500:
                break
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            last, last_detail = f"the endpoint could not be reached: {reason}", f"{url} failed: {reason}"
        except json.JSONDecodeError as exc:
            raise ProviderError(
                "the endpoint answered with invalid JSON", f"{url} answered with invalid JSON: {exc}"
            ) from exc
    attempts = f" (after {attempt + 1} attempt{'s' if attempt else ''})"
    raise ProviderError(last + attempts, last_detail + attempts)


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    api_key: str | None = None
    timeout: float = 30.0
    retries: int = 2
    backoff: float = 0.5

    def post(self, path: str, payload: dict) -> dict:
        url = self.base_url.rstrip("/") + path
        return post_json(url, payload, self.api_key, self.timeout, self.retries, self.backoff)


def embed(endpoint: Endpoint, model: str, texts: Sequence[str], dimensions: int) -> list[list[float]]:
    if not texts:
        return []
    answer = endpoint.post("/embeddings", {"model": model, "input": list(texts)})
    try:
        rows = sorted(answer["data"], key=lambda row: row["index"])
        vectors = [list(map(float, row["embedding"])) for row in rows]
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError(
            "the endpoint's embeddings answer has no data[].embedding list",
            f"unexpected embeddings answer: {str(answer)[:300]}",
        ) from exc
    if len(vectors) != len(texts):
        raise ProviderError(f"asked for {len(texts)} embeddings, got {len(vectors)}")
    for vector in vectors:
        if len(vector) != dimensions:
            raise ProviderError(f"{model} returned {len(vector)} dimensions, configured {dimensions}")
    return vectors


FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def json_object(content: str, what: str) -> dict:
    """A chat answer asked to be a JSON object, as a dict (a ```json fence around it is allowed); a
    ValueError naming `what` ("the LLM summary") when it is not JSON or not an object."""
    text = content.strip()
    fenced = FENCED.match(text)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{what} is not a JSON object")
    return data


def chat(endpoint: Endpoint, model: str, messages: list[dict]) -> str:
    answer = endpoint.post(
        "/chat/completions",
        {"model": model, "messages": messages, "temperature": 0, "response_format": {"type": "json_object"}},
    )
    try:
        return str(answer["choices"][0]["message"]["content"])
    except (KeyError, IndexError, TypeError) as exc:
        raise ProviderError(
            "the endpoint's chat answer has no choices[0].message.content",
            f"unexpected chat answer: {str(answer)[:300]}",
        ) from exc
