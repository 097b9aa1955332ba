"""A secret (an API key) is sent only to the origin it was stored for.

memory.set_secret stores each secret with an origin, scheme://host[:port]; the functions that call an
endpoint ask key_for() for the key, which answers it only when the endpoint's URL has that origin: the
same host and port, and the same scheme (a key stored for https never travels over plain http).
"""

from __future__ import annotations

import urllib.parse

from agent_memory_db.openai_compat import ProviderError, check_url


def origin_of(url: str) -> str:
    """scheme://host[:port] of an http or https URL, lower case (ProviderError for any other URL)."""
    return f"{urllib.parse.urlsplit(url).scheme.lower()}://{check_url(url)}"


def key_for(name: str, url: str, stored: tuple[str, str | None] | None) -> str | None:
    """The value of secret `name` (stored as (value, origin)) for a request to url: None when no
    secret is stored; ProviderError when it was stored for another origin."""
    origin = origin_of(url)
    if stored is None:
        return None
    value, stored_origin = stored
    if stored_origin != origin:
        raise ProviderError(
            f"secret {name} is stored for {stored_origin or '(no origin)'} and is not sent to {origin}; "
            f"store it again with memory.set_secret('{name}', ..., '<url>') to use it there"
        )
    return value
