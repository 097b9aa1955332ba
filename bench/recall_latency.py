"""Recall latency at scale, against the bare lower bound on the same data.

    .venv/bin/python bench/recall_latency.py --turns 10000 100000 [--queries 200] [--reuse] [--role app]

For each size, builds a database `bench_recall_<turns>` of one tenant and agent: sessions of 20 turns whose
words follow a Zipf distribution whose head is PostgreSQL's English stop words and whose tail is 20,000
words of the all-MiniLM-L6-v2 vocabulary -- as in real text, where the most frequent words are function
words (about half of all words) that full-text search drops, so full-text selectivity is realistic --
committed and enriched through the product (memory.commit, memory.work) and maintained once
(memory.maintain, which pg_cron runs every ten minutes where the extension is deployed). Then times
memory.recall(query, k => 10) with the query embedded in the database, and in the same run the lower
bound: the nearest 100 vectors by cosine (one HNSW probe, or an exact scan while the tenant is too small
for the graph) plus one GIN probe (100 chunks matching any query word), with the query vector computed
beforehand. Both are timed as the database's superuser, or with --role app as a
login granted memory_app (row-level security on, as an application is deployed). Writes
bench/results/recall-latency.json (recall-latency-app.json with --role app).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg
from common import ROLES, SERVER, connect_as, fresh_database, run_queue, save
from psycopg import sql
from psycopg.types.json import Json

SESSION_TURNS = 20
MODEL = "all-MiniLM-L6-v2"


STOP_WORDS = Path("/usr/share/postgresql/15/tsearch_data/english.stop")


def vocabulary() -> list[str]:
    """Words by rank: the stop words first, then content words in a fixed random order."""
    from agent_memory_db.embedder import model_files

    stop = [w.strip() for w in STOP_WORDS.read_text().splitlines() if w.strip()]
    _, tokenizer = model_files()
    vocab = json.loads(tokenizer.read_text())["model"]["vocab"]
    words = [w for w in vocab if w.isalpha() and w.isascii() and len(w) > 2 and w not in set(stop)]
    random.Random(1).shuffle(words)
    return stop + words[:20000]


def zipf_text(rng: random.Random, words: list[str], weights: list[float], length: int) -> str:
    return " ".join(rng.choices(words, weights=weights, k=length)).capitalize() + "."


def commit_sessions(url: str, turns: int, words: list[str], weights: list[float]) -> None:
    """Commits `turns` turns of Zipf text to agent bench, in sessions of SESSION_TURNS."""
    rng = random.Random(turns)
    with psycopg.connect(url, autocommit=True) as conn:
        for number in range(turns // SESSION_TURNS):
            messages = [
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": zipf_text(rng, words, weights, rng.randint(6, 30)),
                }
                for i in range(SESSION_TURNS)
            ]
            conn.execute("select memory.commit(%s, %s, agent_id => 'bench')", (f"s{number}", Json(messages)))


def populate(url: str, turns: int, words: list[str], weights: list[float]) -> None:
    """Commits and enriches `turns` turns, then runs maintenance once, as pg_cron does every ten minutes where
    the extension is deployed: the vectors a tenant wrote before it grew past exact_search_max_chunks join the
    HNSW graph there (until then recall scans them exactly)."""
    commit_sessions(url, turns, words, weights)
    run_queue(url, workers=2, batch=20)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("call memory.maintain()")
        conn.execute("vacuum analyze")


def build(turns: int, words: list[str], weights: list[float]) -> str:
    url = fresh_database(f"bench_recall_{turns}")
    populate(url, turns, words, weights)
    return url


def loaded(turns: int) -> str | None:
    url = SERVER.url(f"bench_recall_{turns}")
    try:
        with psycopg.connect(url) as conn:
            count = conn.execute("select count(*) from memory.chunk_embeddings").fetchone()[0]
    except psycopg.OperationalError:
        return None
    return url if count >= turns * 0.9 else None


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * ordered[int(len(ordered) * 0.95)], 2),
    }


# The nearest 100 vectors as the data lets them be found (the HNSW graph, at half precision, for the vectors in
# it; an exact scan for those of a tenant too small for the graph) and 100 chunks matching any query word, of what
# is not cold (what recall searches by default; a build before 0.4.0's split has no cold: compare_builds.py).
LOWER_BOUND = """
    select (select count(*) from (
                (select e.chunk_no from memory.chunk_embeddings as e
                 where e.model = {model} and e.in_graph {vector_not_cold}
                 order by e.embedding::halfvec(384) <=> %(vector)s::halfvec(384) limit 100)
                union all
                (select e.chunk_no from memory.chunk_embeddings as e
                 where e.model = {model} and not e.in_graph {vector_not_cold}
                 order by e.embedding::vector(384) <=> %(vector)s::vector(384) limit 100)) as ann),
           (select count(*) from (
                select c.chunk_no from memory.chunks as c
                where c.tsv @@ %(tsquery)s::tsquery {chunk_not_cold} limit 100) as fts)
"""


def lower_bound(conn: psycopg.Connection, model: str = MODEL) -> str:
    """The lower bound's statement for this database's build (with or without the cold half of the indexes), over
    the vectors of `model` (384 dimensions: the local model's, or the client's of bench/lifecycle.py)."""
    (split,) = conn.execute(
        "select exists (select from pg_attribute where attrelid = 'memory.chunks'::regclass and attname = 'cold')"
    ).fetchone()
    return LOWER_BOUND.format(
        model=sql.Literal(model).as_string(conn),
        vector_not_cold="and not e.cold" if split else "",
        chunk_not_cold="and not c.cold" if split else "",
    )


def bound_timer(
    conn: psycopg.Connection,
    queries: list[str],
    vectors: list[str] | None = None,
    model: str = MODEL,
    embedding: psycopg.Connection | None = None,
) -> Callable[[int], tuple[float, float]]:
    """For query i of `queries`, the seconds of the lower bound's probes (its vector and words prepared
    beforehand) and of the query's embedding in the database by the local model. The probe's vectors are the
    queries' by that model unless `vectors` gives them (a client's, stored under `model`); then the embedding is
    timed on `embedding`, a connection whose embedder is the local model."""
    embedding = embedding or conn
    if vectors is None:
        vectors = [conn.execute("select (memory.embed(array[%s]))[1]::text", (q,)).fetchone()[0] for q in queries]
    tsqueries = [
        conn.execute("select replace(plainto_tsquery('english', %s)::text, '&', '|')", (q,)).fetchone()[0]
        for q in queries
    ]
    statement = lower_bound(conn, model)

    def timed(i: int) -> tuple[float, float]:
        started = time.perf_counter()
        conn.execute(statement, {"vector": vectors[i], "tsquery": tsqueries[i] or "nothing"}).fetchone()
        bound = time.perf_counter() - started
        started = time.perf_counter()
        embedding.execute("select memory.embed(array[%s])", (queries[i],)).fetchone()
        return bound, time.perf_counter() - started

    return timed


def measure(url: str, queries: list[str]) -> dict:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("select memory.embed(array['warm up'])")
        for query in queries[:10]:  # warm the caches the same way for both
            conn.execute("select count(*) from memory.recall(%s, k => 10)", (query,))
        bound_of = bound_timer(conn, queries)
        recall, bound, embed = [], [], []
        for i, query in enumerate(queries):
            started = time.perf_counter()
            conn.execute("select count(*) from memory.recall(%s, k => 10)", (query,)).fetchone()
            recall.append(time.perf_counter() - started)
            seconds = bound_of(i)
            bound.append(seconds[0])
            embed.append(seconds[1])
        chunks = conn.execute("select count(*) from memory.chunks").fetchone()[0]
    result = {
        "chunks": chunks,
        "recall": percentiles(recall),
        "lower_bound": percentiles(bound),
        "query_embedding": percentiles(embed),
    }
    result["recall_over_lower_bound_p50"] = round(result["recall"]["p50_ms"] / result["lower_bound"]["p50_ms"], 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="keep a database already built for a size")
    parser.add_argument("--role", choices=ROLES, default="superuser", help="who recalls (app: memory_app, RLS on)")
    args = parser.parse_args()

    words = vocabulary()
    weights = [1 / (rank + 1) for rank in range(len(words))]
    rng = random.Random(99)
    queries = [zipf_text(rng, words, weights, rng.randint(3, 8)) for _ in range(args.queries)]
    results = {}
    for turns in args.turns:
        url = (args.reuse and loaded(turns)) or None
        if url is None:
            started = time.perf_counter()
            url = build(turns, words, weights)
            print(f"built {turns} turns in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        results[str(turns)] = measure(connect_as(url, args.role), queries)
        r = results[str(turns)]
        print(
            f"{turns} turns ({r['chunks']} chunks): recall p50 {r['recall']['p50_ms']} ms p95 "
            f"{r['recall']['p95_ms']} ms | lower bound p50 {r['lower_bound']['p50_ms']} ms p95 "
            f"{r['lower_bound']['p95_ms']} ms | query embedding p50 {r['query_embedding']['p50_ms']} ms | "
            f"ratio {r['recall_over_lower_bound_p50']}x"
        )
    name = "recall-latency.json" if args.role == "superuser" else f"recall-latency-{args.role}.json"
    path = save(name, {"queries": args.queries, "role": args.role, "sizes": results})
    print(f"saved {path.relative_to(path.parents[2])}")


if __name__ == "__main__":
    main()
