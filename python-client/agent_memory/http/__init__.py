"""`agent-memory serve`: the API over HTTP with keys per tenant, and mem0's platform API (docs/http.md). Needs
the extra: pip install "agent-memory[http]"."""
