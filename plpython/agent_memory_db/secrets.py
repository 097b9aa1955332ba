"""A secret (an API key) is sent only to the host it was stored for.

memory.set_secret stores each secret with a host[:port]; the functions that call an endpoint ask
key_for() for the key, which answers it only when the endpoint's URL has that host.
"""

from __future__ import annotations

from agent_memory_db.openai_compat import ProviderError, check_url


def key_for(name: str, url: str, stored: tuple[str, str | None] | None) -> str | None:
    """The value of secret `name` (stored as (value, host)) for a request to url: None when no
    secret is stored; ProviderError when it was stored for another host."""
    host = check_url(url)
    if stored is None:
        return None
    value, stored_host = stored
    if stored_host != host:
        raise ProviderError(
            f"secret {name} is stored for host {stored_host or '(none)'} and is not sent to {host}; "
            f"store it again with memory.set_secret('{name}', ..., '<url or host>') to use it there"
        )
    return value
