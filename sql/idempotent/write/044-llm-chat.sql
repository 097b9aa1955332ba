-- The chat endpoint (openai_base_url, openai_chat_model, secret openai_api_key) as the database uses it:
-- for an llm summary of a session, the llm entity extractor, the llm memory extractor, the llm
-- supersession judge and memory.query's llm reading of a request. One function holds the key.

-- The endpoint's answer to the request of one purpose (agent_memory_db.chat_requests: 'summary',
-- 'entities' or 'memories', built from a session's turns; 'supersession', from a claim and the claims
-- held; 'query', from a request in plain words). Runs as the owner to read the key; the endpoint,
-- model, timeouts and whether the purpose's setting chose llm at all come from the configuration (the
-- caller's settings only when the login administers), so a caller cannot send text, or the key, anywhere
-- else.
drop function if exists memory_internal._llm_chat(text, jsonb, jsonb);
create or replace function memory_internal._llm_chat(purpose text, request jsonb, settings jsonb) returns text
language plpython3u
as $$
@load_python@
import json
from agent_memory_db import embedding, openai_compat, secrets
from agent_memory_db.chat_requests import PURPOSES
if purpose not in PURPOSES:
    plpy.error("agent_memory: no chat request for purpose %r" % purpose)
chosen = PURPOSES[purpose]
config = json.loads(plpy.execute(plpy.prepare("select memory_internal._trusted_settings($1) as s", ["jsonb"]), [settings])[0]["s"])
if config[chosen.setting] != "llm":
    plpy.error("agent_memory: %s is not configured: setting %s is %r" % (chosen.label, chosen.setting, config[chosen.setting]))
rows = plpy.execute("select value, origin from memory_internal._secrets where name = 'openai_api_key'")
stored = (rows[0]["value"], rows[0]["origin"]) if rows else None
try:
    key = secrets.key_for("openai_api_key", config["openai_base_url"], stored)
    return openai_compat.chat(embedding.endpoint(config, key), config["openai_chat_model"], chosen.messages(json.loads(request)))
except openai_compat.ProviderError as exc:
    plpy.execute(plpy.prepare("select memory_internal._server_log($1)", ["text"]), ["%s failed: %s" % (chosen.label, exc.detail)])
    plpy.error("agent_memory: %s failed: %s" % (chosen.label, exc))
$$;

comment on function memory_internal._llm_chat(text, jsonb, jsonb) is
'Internal: the chat endpoint''s answer to a request of one purpose: a session''s llm summary, llm entities or '
'llm memories, the llm supersession judge''s, or the filters of a request in plain words (owner-run: reads '
'the key; endpoint and model from the configuration).';
