"""Who a request is: its API key, looked up in the database, and the key's limits (size and rate).

The key travels as `Authorization: Bearer <key>` (or mem0's `Token <key>`, or `X-API-Key`). The server
asks memory.authenticate_api_key for it on every request, so a revoked key is refused from the next one.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

SCHEMES = ("bearer", "token")


@dataclass(frozen=True)
class Caller:
    """What memory.authenticate_api_key says of a key: the role its requests run as, the tenant (None: the
    role chooses it per request), whether it may write, and its limits (None: the server's defaults)."""

    key_id: int
    tenant_id: str | None
    role_name: str
    may_write: bool
    max_request_bytes: int | None
    requests_per_minute: int | None


def key_from_headers(headers: Mapping[str, str]) -> str | None:
    """The API key a request carries, or None. headers: lower-case names, as ASGI gives them."""
    given = headers.get("x-api-key", "").strip()
    if given:
        return given
    scheme, _, value = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() in SCHEMES and value.strip():
        return value.strip()
    return None


class RateLimiter:
    """A token bucket per key: requests_per_minute tokens a minute, at most that many at once. take() says
    whether a request may go now, and if not, how many seconds until it may. Per server process."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[int, tuple[float, float]] = {}  # key_id: (tokens, at)
        self._lock = threading.Lock()

    def take(self, key_id: int, per_minute: int) -> float:
        """0 when the request may go (a token is taken), else the seconds to wait for the next token."""
        rate = per_minute / 60.0
        with self._lock:
            now = self._clock()
            tokens, at = self._buckets.get(key_id, (float(per_minute), now))
            tokens = min(float(per_minute), tokens + (now - at) * rate)
            if tokens >= 1.0:
                self._buckets[key_id] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key_id] = (tokens, now)
            return (1.0 - tokens) / rate


def retry_after(seconds: float) -> str:
    """The Retry-After header's value: whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds)))
