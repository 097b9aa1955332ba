-- Recall, the optional rerank stage (setting rerank = http): the best rerank_candidates turns by fused
-- score, each as its best chunk's text, sent to a rerank endpoint (a cross-encoder server). The answer
-- reorders them; a failure or timeout leaves the fused order and is shown in components.

-- {"scores": [one per document, null where unscored]} or {"error": "..."}; never raises for the endpoint.
create or replace function memory._rerank(query text, documents text[], settings jsonb) returns jsonb
language plpython3u
volatile
as $$
if GD.get("agent_memory_version") is None:
    plpy.execute("select memory._load_python()")
import json
from agent_memory_db import rerank
config = json.loads(settings)
try:
    with plpy.subtransaction():
        rows = plpy.execute("select value from memory._secrets where name = 'rerank_api_key'")
    api_key = rows[0]["value"] if rows else None
except plpy.SPIError:
    api_key = None  # a role that may not read secrets calls the endpoint without a key
try:
    scores = rerank.rerank(config["rerank_url"], query, documents, model=config["rerank_model"] or None,
                           api_key=api_key, timeout=float(config["rerank_timeout_seconds"]), retries=0)
except (rerank.ProviderError, ValueError) as exc:
    return json.dumps({"error": str(exc)})
return json.dumps({"scores": scores})
$$;

-- The endpoint is a setting a session may change: only roles the owner grants this may make the server call it.
revoke all on function memory._rerank(text, text[], jsonb) from public;

comment on function memory._rerank(text, text[], jsonb) is
'Internal: relevance scores of documents for a query from the rerank_url endpoint, or the error.';
