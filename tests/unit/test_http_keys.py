"""The HTTP server's key handling without a database: where a key is read from, the rate limiter, and the role
`agent-memory keys create` makes for a tenant."""

from __future__ import annotations

import pytest

from agent_memory.commands.http import default_role
from agent_memory.http.keys import RateLimiter, key_from_headers, retry_after


@pytest.mark.parametrize(
    ("headers", "key"),
    [
        ({"authorization": "Bearer amk_1"}, "amk_1"),
        ({"authorization": "bearer  amk_1 "}, "amk_1"),
        ({"authorization": "Token amk_2"}, "amk_2"),  # mem0's client
        ({"x-api-key": "amk_3", "authorization": "Bearer amk_1"}, "amk_3"),
        ({"authorization": "Basic dXNlcg=="}, None),
        ({"authorization": "Bearer "}, None),
        ({}, None),
    ],
)
def test_key_from_headers(headers, key):
    assert key_from_headers(headers) == key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_key_may_burst_its_rate_then_waits_for_tokens():
    clock = Clock()
    limiter = RateLimiter(clock)
    assert [limiter.take(1, 60) for _ in range(60)] == [0.0] * 60
    assert limiter.take(1, 60) == pytest.approx(1.0)
    clock.now += 0.5
    assert limiter.take(1, 60) == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.take(1, 60) == 0.0
    assert limiter.take(2, 60) == 0.0  # another key has its own bucket


def test_tokens_never_pile_up_beyond_a_minutes_worth():
    clock = Clock()
    limiter = RateLimiter(clock)
    limiter.take(1, 3)
    clock.now += 3600
    assert [limiter.take(1, 3) for _ in range(4)][-1] == pytest.approx(20.0)


def test_retry_after_is_whole_seconds_at_least_one():
    assert retry_after(0.01) == "1"
    assert retry_after(2.2) == "3"


def test_default_role_of_a_tenant():
    assert default_role("acme") == "http_acme"
    made = default_role("Acme Corp/EU")
    assert made.startswith("http_acme_corp_eu_") and len(made) == len("http_acme_corp_eu_") + 8
    assert default_role("Acme") != default_role("acme")
    assert len(default_role("x" * 200)) <= 63
