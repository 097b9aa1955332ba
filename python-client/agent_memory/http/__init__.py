"""`agent-memory serve`: the API over HTTP with keys per tenant, mem0's platform API, and the inspector page
(docs/http.md). Needs the extra: pip install "agent-memory[http]"."""
