"""agent_memory's LangGraph store against LangGraph's own PostgresStore, on the same small data.

    .venv/bin/python bench/langgraph_store.py [--repeats 30]

Both stores get the same items (one user's profile, put through the BaseStore API, two of them updated
by a later put) and the same searches; PostgresStore indexes the field "text" with the same embedding
model agent_memory runs in the database (all-MiniLM-L6-v2, in this process), in a database of its own.
agent_memory's store runs as a login granted memory_app (row-level security on, as deployed) and also
has one conversation of the agent committed, which PostgresStore has no place for: with search_turns, its
search finds what was only said, and with recency weighed (weight_recency 1, a 30-day half-life) the newer
of two things said months apart first. Prints, for each search, the keys each store returns first, then the
median latency of search (each query `repeats` times, after one warm-up) and its ratio to PostgresStore's
in the same run. Writes bench/results/langgraph-store.json.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from common import SERVER, connect_as, fresh_database, save
from langgraph.store.base import BaseStore
from langgraph.store.postgres import PostgresStore
from psycopg import sql

from agent_memory import Memory
from agent_memory.integrations.langgraph import AgentMemoryStore
from agent_memory_db.embedder import LocalEmbedder

USER = ("users", "ana", "profile")
PROFILE = {
    "diet": "Ana does not eat meat or fish.",
    "job": "Ana works night shifts as a nurse at the city hospital.",
    "city": "Ana lives in Porto, near the river.",
    "pet": "Ana has a grey cat called Miso.",
    "sport": "Ana swims twice a week before work.",
    "language": "Ana is learning Japanese for a trip next spring.",
    "car": "Ana drives an old red Fiat.",
    "music": "Ana plays the cello in an amateur orchestra.",
    "allergy": "Ana is allergic to penicillin.",
    "sister": "Ana's sister Lena is a pilot.",
}
# Later puts under the same keys: what holds now.
UPDATES = {"city": "Ana moved to Lisbon in March.", "car": "Ana sold the Fiat and now cycles to work."}
CONVERSATION = [
    {"role": "user", "id": "c1", "content": "Can you remind me that the dentist appointment is on the 14th at 9?"},
    {"role": "assistant", "id": "c2", "content": "Sure: dentist on the 14th at 9am."},
]
# Two conversations that say one thing at two times: recall ranks the newer first when recency is weighed.
EARLIER = [{"role": "user", "id": "e1", "content": "My gym is FitHub downtown.", "created_at": "2026-01-06T10:00:00Z"}]
LATER = [{"role": "user", "id": "l1", "content": "My gym is Iron Temple now."}]
RECENCY = {"weight_recency": 1, "recency_half_life_days": 30}
SEARCHES = [
    ("the same words", "Ana is allergic to penicillin"),
    ("a paraphrase", "is she vegetarian?"),
    ("a paraphrase", "what instrument does she play?"),
    ("an updated fact", "where does Ana live now?"),
    ("an updated fact", "how does she get to work?"),
    ("said only in conversation", "when is the dentist appointment?"),
    ("said twice, months apart", "which gym do I go to?"),
]


def load(store: BaseStore) -> None:
    for key, text in PROFILE.items():
        store.put(USER, key, {"text": text})
    for key, text in UPDATES.items():
        store.put(USER, key, {"text": text})


def top_keys(store: BaseStore, query: str) -> list[str]:
    return [f"{'/'.join(hit.namespace[:1])}:{hit.key}" for hit in store.search(USER[:2], query=query, limit=3)]


def timed(search: Callable[[], object], repeats: int) -> float:
    search()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        search()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def postgres_store_url() -> str:
    with psycopg.connect(SERVER.url(), autocommit=True) as conn:
        conn.execute("drop database if exists bench_langgraph_pgstore with (force)")
        conn.execute("create database bench_langgraph_pgstore")
    url = SERVER.url("bench_langgraph_pgstore")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("create extension vector"))
    return url


def main(repeats: int) -> None:
    embedder = LocalEmbedder()

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return embedder.embed(list(texts))

    app_url = connect_as(fresh_database("bench_langgraph_store"), "app")
    rows: list[dict[str, Any]] = []
    with (
        Memory(app_url) as memory,
        PostgresStore.from_conn_string(
            postgres_store_url(), index={"dims": 384, "embed": embed, "fields": ["text"]}
        ) as pg_store,
    ):
        pg_store.setup()
        ours = AgentMemoryStore(memory, agent_id="assistant", search_turns=True)
        recent = AgentMemoryStore(memory, agent_id="assistant", search_turns=True, weights=RECENCY)
        for session, said in (("chat-7", CONVERSATION), ("chat-1", EARLIER), ("chat-9", LATER)):
            memory.commit(session, said, agent_id="assistant", enrich="now")
        load(ours)
        load(pg_store)
        for what, query in SEARCHES:
            row = {"kind": what, "query": query, "agent_memory": top_keys(ours, query)}
            row["agent_memory_recency"] = top_keys(recent, query)
            row["postgres_store"] = top_keys(pg_store, query)
            row["agent_memory_ms"] = timed(lambda q=query: ours.search(USER[:2], query=q, limit=3), repeats)
            row["postgres_store_ms"] = timed(lambda q=query: pg_store.search(USER[:2], query=q, limit=3), repeats)
            rows.append(row)
            print(f"{what:26} {query!r}")
            print(f"  agent_memory   {row['agent_memory']}\n  with recency   {row['agent_memory_recency']}")
            print(f"  PostgresStore  {row['postgres_store']}")
        ours_ms = statistics.median(row["agent_memory_ms"] for row in rows)
        theirs_ms = statistics.median(row["postgres_store_ms"] for row in rows)
    print(
        f"search, median of {repeats} x {len(SEARCHES)}: agent_memory {ours_ms:.1f} ms,"
        f" PostgresStore {theirs_ms:.1f} ms"
    )
    print(f"ratio agent_memory / PostgresStore: {ours_ms / theirs_ms:.2f}")
    path = save(
        "langgraph-store.json",
        {
            "repeats": repeats,
            "searches": rows,
            "search_ms": {"agent_memory": round(ours_ms, 2), "postgres_store": round(theirs_ms, 2)},
            "ratio": round(ours_ms / theirs_ms, 2),
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    main(parser.parse_args().repeats)
