"""Through a Citus coordinator against one node, on the same data (issue 28).

    .venv/bin/python bench/citus.py [--tenants 100] [--enriched-turns 20] [--commits 10] [--turns 20]
        [--queries 200] [--rounds 3] [--connections 2]

The cluster is the test suite's (tests/citus/cluster.py: a coordinator and two workers on this machine, Citus
built by `make test-citus`); the single node is a database of the coordinator's server where the extension is not
distributed (the same server settings, the same machine). Everything is called as an application would: through
memory.call(tenant, function, arguments), by a login granted memory_app (row-level security on), on
`--connections` connections at once, each taking its share of the tenants.

- Enrichment: each of `--tenants` tenants commits `--enriched-turns` turns enriched at once (enrich now: chunks,
  the in-database model's vectors, summary, entities), on the single node and on the cluster: turns per second.
- Commit: each tenant then commits `--commits` sessions of `--turns` turns (enrichment queued): turns per second.
- Recall: `--queries` queries, each a sentence a tenant said, for that tenant, alternately on the single node and
  through the coordinator over `--rounds` rounds: p50 and p95, and their ratio (the cluster's over the node's).
- Spread: how many tenants each worker holds.

Results: bench/results/citus.json.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time

import psycopg
from common import APP_ROLE, ROOT, save
from psycopg import sql
from psycopg.types.json import Jsonb
from recall_latency import vocabulary, zipf_text

sys.path.insert(0, str(ROOT / "tests" / "citus"))
from cluster import COORDINATOR, NODES, distributed_database, fresh_database

CLUSTER = "bench_citus"
SINGLE = "bench_citus_single"


def prepare() -> None:
    """The cluster's database, distributed, and the single node's; the application's login on both."""
    for node in NODES:
        node.start()
    distributed_database(CLUSTER)
    fresh_database(COORDINATOR, SINGLE, citus=False)
    with COORDINATOR.connect(dbname=CLUSTER) as conn:
        if conn.execute("select 1 from pg_roles where rolname = %s", (APP_ROLE,)).fetchone() is None:
            conn.execute(sql.SQL("create role {} login").format(sql.Identifier(APP_ROLE)))  # on every node
        conn.execute(sql.SQL("grant memory_app to {}").format(sql.Identifier(APP_ROLE)))
    with COORDINATOR.connect(dbname=SINGLE) as conn:
        conn.execute(sql.SQL("grant memory_app to {}").format(sql.Identifier(APP_ROLE)))


def app(dbname: str) -> psycopg.Connection:
    return COORDINATOR.connect(user=APP_ROLE, dbname=dbname)


def call(conn: psycopg.Connection, tenant: str, function: str, arguments: dict) -> list:
    return [r[0] for r in conn.execute("select memory.call(%s, %s, %s)", (tenant, function, Jsonb(arguments)))]


def on_connections(dbname: str, connections: int, work) -> float:
    """Runs work(conn, share) for each share of the tenants on a connection of its own; the seconds it took."""
    errors: list[BaseException] = []

    def run(share: int) -> None:
        try:
            with app(dbname) as conn:
                # Outside the clock, each backend this connection reaches loads the model (once per backend): a
                # commit enriched at once for tenants of each worker.
                for n in range(8):
                    message = [{"role": "user", "content": "Warming up."}]
                    call(conn, f"warm-{share}-{n}", "commit", {"session_id": "w", "messages": message, "enrich": "now"})
                ready.wait()
                work(conn, share)
        except BaseException as error:
            errors.append(error)

    ready = threading.Event()
    threads = [threading.Thread(target=run, args=(share,)) for share in range(connections)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    started = time.perf_counter()
    ready.set()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - started


def session(rng: random.Random, words: list[str], weights: list[float], turns: int) -> list[dict]:
    return [
        {"role": "user" if n % 2 == 0 else "assistant", "content": zipf_text(rng, words, weights, rng.randint(8, 20))}
        for n in range(turns)
    ]


def sizes(tenants: list[str]) -> dict:
    """On the single node, with every vector in its tenant's graph (as a tenant past exact search has them): the
    bytes of each table and its indexes per row, and of the vector graphs (HNSW) and full-text indexes (GIN) per
    row they index, for the capacity plan (docs/SCALING.md)."""
    with COORDINATOR.connect(dbname=SINGLE) as conn:
        for tenant in tenants:
            conn.execute("select memory_internal._join_graph(%s, 100000)", (tenant,))
        conn.execute("vacuum analyze")
        rows = conn.execute(
            """
            select c.relname, c.reltuples::bigint, pg_table_size(c.oid),
                   coalesce(sum(pg_relation_size(i.indexrelid)) filter (where a.amname = 'hnsw'), 0),
                   coalesce(sum(pg_relation_size(i.indexrelid)) filter (where a.amname = 'gin'), 0),
                   coalesce(sum(pg_relation_size(i.indexrelid)) filter (where a.amname not in ('hnsw', 'gin')), 0)
            from pg_class as c
            left join pg_index as i on i.indrelid = c.oid
            left join pg_class as x on x.oid = i.indexrelid
            left join pg_am as a on a.oid = x.relam
            where c.relnamespace = 'memory'::regnamespace and c.relkind = 'r'
                and c.relname in ('turns', 'chunks', 'chunk_embeddings', 'sessions', 'summaries',
                                  'session_embeddings', 'entity_mentions', 'lexicon')
            group by c.oid, c.relname
            """
        ).fetchall()
    return {
        name: {
            "rows": count,
            "table": round(table / max(count, 1)),
            "hnsw": round(hnsw / max(count, 1)),
            "gin": round(gin / max(count, 1)),
            "btree": round(btree / max(count, 1)),
        }
        for name, count, table, hnsw, gin, btree in rows
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--enriched-turns", type=int, default=20)
    parser.add_argument("--commits", type=int, default=10)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=2)
    args = parser.parse_args()

    prepare()
    tenants = [f"tenant-{n:04d}" for n in range(args.tenants)]
    words = vocabulary()
    weights = [1 / (rank + 1) for rank in range(len(words))]
    rng = random.Random(28)
    enriched = {t: session(rng, words, weights, args.enriched_turns) for t in tenants}
    committed = {t: [session(rng, words, weights, args.turns) for _ in range(args.commits)] for t in tenants}
    queries = [(t, rng.choice(enriched[t])["content"]) for t in rng.choices(tenants, k=args.queries)]

    def mine(share: int) -> list[str]:
        return tenants[share :: args.connections]

    results: dict = {"settings": vars(args), "enrichment": {}, "commit": {}, "recall": {}}
    for name, dbname in (("single", SINGLE), ("cluster", CLUSTER)):

        def enrich(conn: psycopg.Connection, share: int) -> None:
            for tenant in mine(share):
                call(conn, tenant, "commit", {"session_id": "first", "messages": enriched[tenant], "enrich": "now"})

        def commit(conn: psycopg.Connection, share: int) -> None:
            for tenant in mine(share):
                for n, messages in enumerate(committed[tenant]):
                    call(conn, tenant, "commit", {"session_id": f"s{n}", "messages": messages, "enrich": "queue"})

        seconds = on_connections(dbname, args.connections, enrich)
        results["enrichment"][name] = {
            "seconds": round(seconds, 2),
            "turns_per_second": round(args.tenants * args.enriched_turns / seconds, 1),
        }
        seconds = on_connections(dbname, args.connections, commit)
        turns = args.tenants * args.commits * args.turns
        results["commit"][name] = {"seconds": round(seconds, 2), "turns_per_second": round(turns / seconds, 1)}
        print(name, results["enrichment"][name], results["commit"][name], flush=True)

    timings: dict[str, list[float]] = {"single": [], "cluster": []}
    found: dict[str, int] = {"single": 0, "cluster": 0}
    with app(SINGLE) as single, app(CLUSTER) as cluster:
        for conn in (single, cluster):  # each backend the connection reaches loads the model, outside the clock
            for tenant in tenants[:8]:
                call(conn, tenant, "recall", {"query": "warm up"})
        for _ in range(args.rounds):
            for name, conn in (("single", single), ("cluster", cluster)):
                for tenant, query in queries:
                    started = time.perf_counter()
                    hits = call(conn, tenant, "recall", {"query": query, "k": 10})
                    timings[name].append((time.perf_counter() - started) * 1000)
                    found[name] += bool(hits) and hits[0]["content"] == query
    for name, values in timings.items():
        values.sort()
        results["recall"][name] = {
            "p50_ms": round(statistics.median(values), 2),
            "p95_ms": round(values[int(len(values) * 0.95)], 2),
            "top_hit_is_the_sentence": round(found[name] / len(values), 3),
        }
    recall = results["recall"]
    recall["ratio_p50"] = round(recall["cluster"]["p50_ms"] / recall["single"]["p50_ms"], 2)
    recall["ratio_p95"] = round(recall["cluster"]["p95_ms"] / recall["single"]["p95_ms"], 2)
    for kind in ("enrichment", "commit"):
        results[kind]["ratio"] = round(
            results[kind]["cluster"]["turns_per_second"] / results[kind]["single"]["turns_per_second"], 2
        )
    with COORDINATOR.connect(dbname=CLUSTER) as conn:
        results["tenants_per_worker"] = {
            str(port): count
            for port, count in conn.execute(
                "select n.nodeport, count(*) from unnest(%s::text[]) as t (tenant)"
                " inner join pg_dist_placement as p"
                " on p.shardid = get_shard_id_for_distribution_column('memory.turns', t.tenant)"
                " inner join pg_dist_node as n on n.groupid = p.groupid group by 1 order by 1",
                (tenants,),
            )
        }
    results["bytes"] = sizes(tenants)
    print(results["recall"], results["tenants_per_worker"], results["bytes"])
    print("saved", save("citus.json", results))


if __name__ == "__main__":
    main()
