"""Memory lifecycle at scale: one tenant of many turns, aged through maintenance.

    .venv/bin/python bench/lifecycle.py --turns 1000000 [--queries 200] [--embedder local|none] [--reuse]
        [--role app|superuser] [--recall-only]

Builds `bench_lifecycle_<turns>`: one tenant and agent, sessions of 20 turns of Zipf text (the generator of
bench/recall_latency.py), committed and enriched through the product (memory.commit, memory.work), with the
local embedding model or, with --embedder none, full-text only. Runs maintenance once (one-off work such
as putting a grown tenant's earlier vectors in the HNSW graph), then ages the tenant in simulated time: each
session's last write is moved to a moment drawn uniformly over the past two years. Then times
`call memory.maintain()`, which moves the sessions down the tiers (decay, then the agent's tier capacities), a
second run, which puts the vectors that changed side into their side's graph (graph_join_batch of them), the runs
it takes until none waits, and the vacuum autovacuum would run after them; then recall p50 and p95 of
the same queries with the default tiers (cold sessions left out) and with every tier
(`tiers => '{hot,warm,cold}'`: no tier filter, the same tenant as without tiers), with tier_promote_on_recall off
so that both see the same tiers, and, for a tenant with vectors, the lower bound of bench/recall_latency.py over
what is not cold (one HNSW and one GIN probe) and the query's embedding, as the same role in the same run. Recall
runs as deployed, as a login granted memory_app (row-level security on),
unless --role superuser; maintenance runs as the superuser, as pg_cron's job does. Writes
bench/results/lifecycle-<turns>.json (lifecycle-<turns>-superuser.json with --role superuser). --recall-only
(with --reuse) times recall alone, on the tenant as an earlier run left it (lifecycle-<turns>[-superuser]-recall.json).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import psycopg
from common import ROLES, SERVER, connect_as, fresh_database, run_queue, save
from psycopg.types.json import Jsonb
from recall_latency import bound_timer, commit_sessions, percentiles, vocabulary, zipf_text

EVERY_TIER = ["hot", "warm", "cold"]
NO_PROMOTION = Jsonb({"tier_promote_on_recall": False})


def build(turns: int, embedder: str, words: list[str], weights: list[float]) -> str:
    url = fresh_database(f"bench_lifecycle_{turns}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("insert into memory.config (key, value) values ('embedder', %s)", (Jsonb(embedder),))
    commit_sessions(url, turns, words, weights)
    run_queue(url, workers=2, batch=20)
    return url


def loaded(turns: int) -> str | None:
    url = SERVER.url(f"bench_lifecycle_{turns}")
    try:
        with psycopg.connect(url) as conn:
            done = (
                conn.execute("select count(*) from memory.turns").fetchone()[0] >= turns
                and not conn.execute("select exists (select from memory.jobs where status <> 'done')").fetchone()[0]
            )
    except psycopg.OperationalError:
        return None
    return url if done else None


def age(conn: psycopg.Connection) -> None:
    """Every session back to its original tier, last written at a moment of the past two years."""
    conn.execute("select setseed(0.42)")
    conn.execute(
        "update memory.sessions set tier = 'hot', used_at = null, updated_at = now() - random() * interval '730 days'"
    )
    conn.execute("vacuum analyze")


def timed(conn: psycopg.Connection, statement: str, params: tuple = ()) -> float:
    started = time.perf_counter()
    cursor = conn.execute(statement, params)
    if cursor.description is not None:
        cursor.fetchall()
    return time.perf_counter() - started


def age_and_maintain(url: str) -> dict:
    """Ages the tenant and times the maintenance (and vacuum) that moves it down the tiers."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("call memory.maintain()")  # one-off work first (a grown tenant's vectors join the graph)
        age(conn)
        first = timed(conn, "call memory.maintain()")
        # The next run puts the vectors that changed side into their side's graph (graph_join_batch a run); the
        # runs after it, until none waits, are the catch-up.
        again = timed(conn, "call memory.maintain()")
        catch_up, runs = 0.0, 0
        while conn.execute("select exists (select from memory.chunk_embeddings where not in_graph)").fetchone()[0]:
            catch_up += timed(conn, "call memory.maintain()")
            runs += 1
        # What moved to cold left dead rows in the indexes of what is not cold until autovacuum comes by.
        vacuum = timed(conn, "vacuum analyze")
        (moved,) = conn.execute(
            "select actions -> 'tiers_moved' from memory.maintenance_runs order by run_id desc offset 1 limit 1"
        ).fetchone()
    return {
        "maintain_seconds": round(first, 2),
        "maintain_again_seconds": round(again, 2),
        "catch_up_runs": runs,
        "catch_up_seconds": round(catch_up, 2),
        "vacuum_seconds": round(vacuum, 2),
        "tiers_moved": moved,
    }


def recall_times(url: str, queries: list[str], role: str) -> dict:
    """Recall p50/p95 with the default tiers and with every tier, as the role given; for a tenant with vectors,
    the lower bound (recall_latency.py's, of what is not cold) and the query's embedding too, in the same run."""
    with psycopg.connect(url, autocommit=True) as conn:
        tiers = dict(conn.execute("select tier, count(*) from memory.sessions group by tier").fetchall())
        turns_by_tier = dict(
            conn.execute(
                "select s.tier, count(*) from memory.turns as t join memory.sessions as s using (tenant_id,"
                " session_key) group by s.tier"
            ).fetchall()
        )
        (vectors,) = conn.execute("select exists (select from memory.chunk_embeddings)").fetchone()
    with psycopg.connect(connect_as(url, role), autocommit=True) as conn:
        recall = "select count(*) from memory.recall(%s, k => 10, weights => %s, tiers => %s)"
        for query in queries[:10]:  # warm the caches the same way for both
            for tiers_asked in (None, EVERY_TIER):
                conn.execute(recall, (query, NO_PROMOTION, tiers_asked)).fetchone()
        bound_of = bound_timer(conn, queries) if vectors else None
        default, every, bound, embed = [], [], [], []
        for i, query in enumerate(queries):
            default.append(timed(conn, recall, (query, NO_PROMOTION, None)))
            every.append(timed(conn, recall, (query, NO_PROMOTION, EVERY_TIER)))
            if bound_of is not None:
                seconds = bound_of(i)
                bound.append(seconds[0])
                embed.append(seconds[1])
    result = {
        "sessions_by_tier": tiers,
        "turns_by_tier": turns_by_tier,
        "recall_cold_left_out": percentiles(default),
        "recall_every_tier": percentiles(every),
    }
    result["p50_every_tier_over_cold_left_out"] = round(
        result["recall_every_tier"]["p50_ms"] / result["recall_cold_left_out"]["p50_ms"], 2
    )
    if bound:
        result["lower_bound"] = percentiles(bound)
        result["query_embedding"] = percentiles(embed)
        result["p50_over_bound_and_embedding"] = round(
            result["recall_cold_left_out"]["p50_ms"]
            / (result["lower_bound"]["p50_ms"] + result["query_embedding"]["p50_ms"]),
            2,
        )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", choices=["local", "none"], default="local")
    parser.add_argument("--reuse", action="store_true", help="keep a database already built for the size")
    parser.add_argument("--role", choices=ROLES, default="app", help="who recalls (app: memory_app, RLS on)")
    parser.add_argument(
        "--recall-only", action="store_true", help="with --reuse: time recall on the tenant as an earlier run aged it"
    )
    args = parser.parse_args()

    words = vocabulary()
    weights = [1 / (rank + 1) for rank in range(len(words))]
    rng = random.Random(99)
    queries = [zipf_text(rng, words, weights, rng.randint(3, 8)) for _ in range(args.queries)]
    url = (args.reuse and loaded(args.turns)) or None
    if args.recall_only and url is None:
        parser.error("--recall-only needs --reuse and a database an earlier run built and aged")
    built = None
    if url is None:
        started = time.perf_counter()
        url = build(args.turns, args.embedder, words, weights)
        built = round(time.perf_counter() - started)
        print(f"built {args.turns} turns in {built} s", file=sys.stderr)
    result = {} if args.recall_only else age_and_maintain(url)
    result.update(recall_times(url, queries, args.role))
    print(
        f"{args.turns} turns: maintain {result.get('maintain_seconds')} s (again {result.get('maintain_again_seconds')}"
        f" s, vacuum {result.get('vacuum_seconds')} s), sessions by tier {result['sessions_by_tier']}"
        f" | recall p50 cold left out"
        f" {result['recall_cold_left_out']['p50_ms']} ms, every tier {result['recall_every_tier']['p50_ms']} ms"
        f" ({result['p50_every_tier_over_cold_left_out']}x)"
        + (
            f" | lower bound {result['lower_bound']['p50_ms']} ms + embedding {result['query_embedding']['p50_ms']}"
            f" ms: recall {result['p50_over_bound_and_embedding']}x"
            if "lower_bound" in result
            else ""
        )
    )
    role = "" if args.role == "app" else f"-{args.role}"
    name = f"lifecycle-{args.turns}{role}{'-recall' if args.recall_only else ''}.json"
    path = save(
        name,
        {
            "turns": args.turns,
            "embedder": args.embedder,
            "queries": args.queries,
            "role": args.role,
            "build_seconds": built,
            **result,
        },
    )
    print(f"saved {path.relative_to(path.parents[2])}")


if __name__ == "__main__":
    main()
