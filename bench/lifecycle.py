"""Memory lifecycle at scale: one tenant of many turns, aged through maintenance.

    .venv/bin/python bench/lifecycle.py --turns 1000000 [--queries 200] [--embedder local|client|none] [--reuse]
        [--role app|superuser] [--recall-only] [--profile]

Builds `bench_lifecycle_<turns>`: one tenant and agent, sessions of 20 turns of Zipf text (the generator of
bench/recall_latency.py), committed and enriched through the product (memory.commit, memory.work), with the
local embedding model or, with --embedder none, full-text only. With --embedder client each turn is two sentences
of a pool the local model embeds and comes with its vector, mixed from theirs as bench/tenants.py does (the model
would take hours to embed a million chunks on two cores; the graph still holds a million distinct points laid out
as the model's are); its sessions are aged and moved down the tiers before they are enriched, so that each vector
is put into the graph of its side once (that maintenance run is not timed: the timed runs have nothing to move), and
its queries are sentences of the pool, given to recall with their model vectors. Runs maintenance once (one-off
work such as putting a grown tenant's earlier vectors in the HNSW graph), then ages the tenant in simulated time: each
session's last write is moved to a moment drawn uniformly over the past two years. Then times
`call memory.maintain()`, which moves the sessions down the tiers (decay, then the agent's tier capacities), a
second run, which puts the vectors that changed side into their side's graph (graph_join_batch of them), the runs
it takes until none waits, the tenant's graphs of its own if it holds tenant_graph_min_chunks (built as
`agent-memory graphs` builds them) and the vacuum autovacuum would run after them; then recall p50 and p95 of
the same queries with the default tiers (cold sessions left out) and with every tier
(`tiers => '{hot,warm,cold}'`: no tier filter, the same tenant as without tiers), with tier_promote_on_recall off
so that both see the same tiers, and, for a tenant with vectors, the lower bound of bench/recall_latency.py over
what is not cold (one HNSW and one GIN probe) and the query's embedding, as the same role in the same run. Recall
runs as deployed, as a login granted memory_app (row-level security on),
unless --role superuser; maintenance runs as the superuser, as pg_cron's job does. Writes
bench/results/lifecycle-<turns>[-client][-superuser].json. --recall-only (with --reuse) times recall alone, on
the tenant as an earlier run left it (lifecycle-<turns>[-client][-superuser]-recall.json); --profile adds where
recall's time goes, function by function (track_functions, as the same role). With the client's vectors
recall embeds nothing: the result gives recall over the bound alone, and (recall + the local model's embedding of
the query) over (bound + that embedding), what a tenant of the local model would see.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time

import numpy as np
import psycopg
from common import APP_ROLE, ROLES, SERVER, connect_as, fresh_database, on_two_connections, run_queue, save
from psycopg import sql
from psycopg.types.json import Json, Jsonb
from recall_latency import MODEL, SESSION_TURNS, bound_timer, commit_sessions, percentiles, vocabulary, zipf_text
from tenants import sentence_pool, session_messages

# A pool of sentences and their vectors by the local model (bench/tenants.py's sentence_pool).
Pool = tuple[list[str], np.ndarray]

EVERY_TIER = ["hot", "warm", "cold"]
NO_PROMOTION = Jsonb({"tier_promote_on_recall": False})


def build(turns: int, embedder: str, words: list[str], weights: list[float], pool: Pool | None) -> str:
    url = fresh_database(f"bench_lifecycle_{turns}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("insert into memory.config (key, value) values ('embedder', %s)", (Jsonb(embedder),))
    if pool is None:
        commit_sessions(url, turns, words, weights)
    else:
        # Aged and moved down the tiers before enrichment, so that each vector is written once, into the graph of
        # its side: enriched first, the 950,000 that go cold would each leave the graph of what is not cold and be
        # put into the cold one by maintenance (graph_join_batch a run, a hundred runs at 1M turns).
        commit_with_vectors(url, turns, pool)
        with psycopg.connect(url, autocommit=True) as conn:
            age(conn)
            conn.execute("call memory.maintain()")
    run_queue(url, workers=2, batch=20)
    return url


def commit_with_vectors(url: str, turns: int, pool: Pool) -> None:
    """Commits `turns` turns of two pool sentences each with their vectors (bench/tenants.py's turn()), on two
    connections that take every other session."""
    sentences, vectors = pool

    def commit_some(first: int, failed: threading.Event) -> None:
        rng = random.Random(turns + first)
        with psycopg.connect(url, autocommit=True) as conn:
            for number in range(first, turns // SESSION_TURNS, 2):
                if failed.is_set():
                    return
                messages = session_messages(rng, sentences, vectors)
                conn.execute("select memory.commit(%s, %s, agent_id => 'bench')", (f"s{number}", Json(messages)))

    on_two_connections(commit_some)


def loaded(turns: int, embedder: str) -> str | None:
    url = SERVER.url(f"bench_lifecycle_{turns}")
    try:
        with psycopg.connect(url) as conn:
            done = (
                conn.execute("select count(*) from memory.turns").fetchone()[0] >= turns
                and conn.execute("select memory.setting('embedder')").fetchone()[0] == embedder
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


# Vectors outside the graphs of a tenant grown past exact search (a smaller one's stay outside: recall scans them).
WAITING_FOR_GRAPH = """
    select exists (select from memory.chunk_embeddings where not in_graph)
        and (select count(*) from memory.chunks) > (memory.setting('exact_search_max_chunks'))::bigint
"""


def age_and_maintain(url: str, aged: bool) -> dict:
    """Ages the tenant (unless its build did, before enrichment) and times the maintenance (and vacuum) that moves
    it down the tiers, then builds its graphs of its own if it is that big, as `agent-memory graphs` does."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("call memory.maintain()")  # one-off work first (a grown tenant's vectors join the graph)
        if not aged:
            age(conn)
        first = timed(conn, "call memory.maintain()")
        # The next run puts the vectors that changed side into their side's graph (graph_join_batch a run); the
        # runs after it, until none waits, are the catch-up.
        again = timed(conn, "call memory.maintain()")
        catch_up, runs = 0.0, 0
        while conn.execute(WAITING_FOR_GRAPH).fetchone()[0]:
            catch_up += timed(conn, "call memory.maintain()")
            runs += 1
        # The tiers the first timed run moved (the catch-up runs and the second are newer).
        (moved,) = conn.execute(
            "select actions -> 'tiers_moved' from memory.maintenance_runs order by run_id desc offset %s limit 1",
            (runs + 1,),
        ).fetchone()
        started = time.perf_counter()
        for (statement,) in conn.execute("select statement from memory.tenant_graph_statements()").fetchall():
            conn.execute(statement)
        graphs = time.perf_counter() - started
        # What moved to cold left dead rows in the indexes of what is not cold until autovacuum comes by.
        vacuum = timed(conn, "vacuum analyze")
    return {
        "aged": "before enrichment" if aged else "after enrichment",
        "maintain_seconds": round(first, 2),
        "maintain_again_seconds": round(again, 2),
        "catch_up_runs": runs,
        "catch_up_seconds": round(catch_up, 2),
        "tenant_graphs_seconds": round(graphs, 2),
        "vacuum_seconds": round(vacuum, 2),
        "tiers_moved": moved,
    }


def recall_times(url: str, queries: list[str], role: str, vectors: list[str] | None) -> dict:
    """Recall p50/p95 with the default tiers and with every tier, as the role given; for a tenant with vectors,
    the lower bound (recall_latency.py's, of what is not cold) and the query's embedding by the local model too, in
    the same run. `vectors`: the queries' vectors, given to recall as query_vector (a client's tenant)."""
    with psycopg.connect(url, autocommit=True) as conn:
        tiers = dict(conn.execute("select tier, count(*) from memory.sessions group by tier").fetchall())
        turns_by_tier = dict(
            conn.execute(
                "select s.tier, count(*) from memory.turns as t join memory.sessions as s using (tenant_id,"
                " session_key) group by s.tier"
            ).fetchall()
        )
        (stored,) = conn.execute("select exists (select from memory.chunk_embeddings)").fetchone()
    app_url = connect_as(url, role)
    # The local model's embedding of the queries, timed beside a client's tenant's recall as a reference (as the
    # superuser: the embedder is the administrator's setting, which an application's role may not change).
    with (
        psycopg.connect(app_url, autocommit=True) as conn,
        psycopg.connect(url, autocommit=True, options="-c memory.embedder=local")
        if vectors
        else psycopg.connect(app_url, autocommit=True) as embedding,
    ):
        recall = "select count(*) from memory.recall(%s, k => 10, weights => %s, tiers => %s, query_vector => %s)"
        given = vectors or [None] * len(queries)
        for query, vector in zip(queries[:10], given, strict=False):  # warm the caches the same way for both
            for tiers_asked in (None, EVERY_TIER):
                conn.execute(recall, (query, NO_PROMOTION, tiers_asked, vector)).fetchone()
        bound_of = None
        if stored:  # (a tenant of embedder none has no model to embed with)
            embedding.execute("select memory.embed(array['warm up'])")
            bound_of = bound_timer(conn, queries, vectors, "client" if vectors else MODEL, embedding)
        default, every, bound, embed = [], [], [], []
        for i, (query, vector) in enumerate(zip(queries, given, strict=True)):
            default.append(timed(conn, recall, (query, NO_PROMOTION, None, vector)))
            every.append(timed(conn, recall, (query, NO_PROMOTION, EVERY_TIER, vector)))
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
        bound, embedding = result["lower_bound"]["p50_ms"], result["query_embedding"]["p50_ms"]
        if vectors:
            # Recall was given the query's vector: a tenant of the local model would pay its embedding on top.
            result["p50_over_bound"] = round(result["recall_cold_left_out"]["p50_ms"] / bound, 2)
            result["p50_over_bound_and_embedding"] = round(
                (result["recall_cold_left_out"]["p50_ms"] + embedding) / (bound + embedding), 2
            )
        else:
            result["p50_over_bound_and_embedding"] = round(
                result["recall_cold_left_out"]["p50_ms"] / (bound + embedding), 2
            )
    return result


FUNCTION_TIMES = """
    select funcid, schemaname || '.' || funcname, calls, total_time, self_time from pg_stat_xact_user_functions
"""


def profile(url: str, queries: list[str], role: str, vectors: list[str] | None) -> dict:
    """Where recall's time goes, with the default tiers: each function's calls and milliseconds per recall, with
    what it calls (total) and without (self), from track_functions, which only a superuser may set (the connection
    sets it, then becomes the role). Counted as the difference over the recalls within one transaction (the view
    also shows counts of earlier transactions the backend has not yet reported)."""
    app_url = connect_as(url, role)
    recall = "select count(*) from memory.recall(%s, k => 10, weights => %s, query_vector => %s)"
    given = vectors or [None] * len(queries)
    with psycopg.connect(url) as conn:
        conn.execute("set track_functions = 'all'")
        if app_url != url:
            conn.execute(sql.SQL("set role {}").format(sql.Identifier(APP_ROLE)))
        for query, vector in zip(queries[:10], given, strict=False):
            conn.execute(recall, (query, NO_PROMOTION, vector)).fetchone()
        # By oid: overloads share a name (pgvector's among them).
        before = {oid: row for oid, _, *row in conn.execute(FUNCTION_TIMES).fetchall()}
        started = time.perf_counter()
        for query, vector in zip(queries, given, strict=True):
            conn.execute(recall, (query, NO_PROMOTION, vector)).fetchone()
        seconds = time.perf_counter() - started
        after = conn.execute(FUNCTION_TIMES).fetchall()
        conn.rollback()
    n = len(queries)
    functions = []
    for oid, name, calls, total, own in after:
        was = before.get(oid, (0, 0.0, 0.0))
        if own - was[2] > 0.005 * n:  # at least 5 microseconds a recall
            functions.append(
                {
                    "function": name,
                    "calls": round((calls - was[0]) / n, 1),
                    "total_ms": round((total - was[1]) / n, 2),
                    "self_ms": round((own - was[2]) / n, 2),
                }
            )
    functions.sort(key=lambda f: -f["self_ms"])
    return {"recall_mean_ms": round(1000 * seconds / n, 2), "functions": functions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", choices=["local", "client", "none"], default="local")
    parser.add_argument("--pool", type=int, default=4000, help="with --embedder client: sentences the model embeds")
    parser.add_argument("--reuse", action="store_true", help="keep a database already built for the size")
    parser.add_argument("--role", choices=ROLES, default="app", help="who recalls (app: memory_app, RLS on)")
    parser.add_argument(
        "--recall-only", action="store_true", help="with --reuse: time recall on the tenant as an earlier run aged it"
    )
    parser.add_argument("--profile", action="store_true", help="and where recall's time goes (track_functions)")
    args = parser.parse_args()

    words = vocabulary()
    weights = [1 / (rank + 1) for rank in range(len(words))]
    rng = random.Random(99)
    pool, vectors = None, None
    if args.embedder == "client":
        # A query is a sentence of the pool, with its model vector as query_vector (as bench/tenants.py asks).
        pool = sentence_pool(args.pool)
        chosen = [rng.randrange(args.pool) for _ in range(args.queries)]
        queries = [pool[0][c] for c in chosen]
        vectors = ["[" + ",".join(map(str, pool[1][c].tolist())) + "]" for c in chosen]
    else:
        queries = [zipf_text(rng, words, weights, rng.randint(3, 8)) for _ in range(args.queries)]
    url = (args.reuse and loaded(args.turns, args.embedder)) or None
    if args.recall_only and url is None:
        parser.error("--recall-only needs --reuse and a database an earlier run built and aged")
    built = None
    if url is None:
        started = time.perf_counter()
        url = build(args.turns, args.embedder, words, weights, pool)
        built = round(time.perf_counter() - started)
        print(f"built {args.turns} turns in {built} s", file=sys.stderr)
    result = {} if args.recall_only else age_and_maintain(url, aged=args.embedder == "client")
    result.update(recall_times(url, queries, args.role, vectors))
    if args.profile:
        result["profile"] = profile(url, queries, args.role, vectors)
        for row in result["profile"]["functions"][:15]:
            print(f"{row['function']:60} {row['calls']:6} calls, {row['self_ms']:7} ms self, {row['total_ms']:7} total")
    print(
        f"{args.turns} turns: maintain {result.get('maintain_seconds')} s (again {result.get('maintain_again_seconds')}"
        f" s, vacuum {result.get('vacuum_seconds')} s), sessions by tier {result['sessions_by_tier']}"
        f" | recall p50 cold left out"
        f" {result['recall_cold_left_out']['p50_ms']} ms, every tier {result['recall_every_tier']['p50_ms']} ms"
        f" ({result['p50_every_tier_over_cold_left_out']}x)"
        + (
            f" | lower bound {result['lower_bound']['p50_ms']} ms + embedding {result['query_embedding']['p50_ms']}"
            f" ms: recall {result['p50_over_bound_and_embedding']}x"
            + (f" (given the vector: {result['p50_over_bound']}x the bound alone)" if vectors else "")
            if "lower_bound" in result
            else ""
        )
    )
    role = "" if args.role == "app" else f"-{args.role}"
    embedder = "-client" if args.embedder == "client" else ""
    name = f"lifecycle-{args.turns}{embedder}{role}{'-recall' if args.recall_only else ''}.json"
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
