-- Recall, the optional rerank stage (setting rerank = http): the best rerank_candidates turns by fused
-- score, each as its best chunk's text, sent to a rerank endpoint (a cross-encoder server). The answer
-- reorders them; a failure or timeout leaves the fused order and is shown in components.

-- {"scores": [one per document, null where unscored]} or {"error": "..."}; never raises for the endpoint.
-- Runs as the owner so the key can be read; the key goes only to the origin it was stored for, and the
-- endpoint is the administrator's choice (rerank_url is set_by admin).
create or replace function memory_internal._rerank(query text, documents text[], settings jsonb) returns jsonb
language plpython3u
volatile
as $$
@load_python@
import json
from agent_memory_db import rerank, secrets
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
rows = plpy.execute("select value, origin from memory_internal._secrets where name = 'rerank_api_key'")
stored = (rows[0]["value"], rows[0]["origin"]) if rows else None
try:
    api_key = secrets.key_for("rerank_api_key", config["rerank_url"], stored)
    scores = rerank.rerank(config["rerank_url"], query, documents, model=config["rerank_model"] or None,
                           api_key=api_key, timeout=float(config["rerank_timeout_seconds"]), retries=0)
except (rerank.ProviderError, ValueError) as exc:
    if isinstance(exc, rerank.ProviderError):
        plpy.execute(plpy.prepare("select memory_internal._server_log($1)", ["text"]), ["rerank failed: " + exc.detail])
    return json.dumps({"error": str(exc)})
return json.dumps({"scores": scores})
$$;

comment on function memory_internal._rerank(text, text[], jsonb) is
'Internal: relevance scores of documents for a query from the rerank_url endpoint, or the error.';
