"""`agent-memory serve`: the API over HTTP with keys per tenant (docs/http.md). Needs the extra:
pip install "agent-memory[http]"."""
