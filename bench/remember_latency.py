"""How the latency of memory.remember grows with the memories an agent holds.

    .venv/bin/python bench/remember_latency.py [--sizes 0 1000 4000] [--remembers 30]

For each size, a fresh database `bench_remember_<size>` gets that many memories of one agent, each under a
key of its own (as a LangGraph store or a harness notebook keeps them), remembered without enrichment and
then enriched once (memory.enrich of the session 'remembered'). Then, as a login granted memory_app
(row-level security on, as deployed), it times `remembers` new claims under new keys, each enriched in the
call (enrich 'now', remember's default: chunk, vector, mentions). Prints the median and p95 per size and
the median's ratio to the smallest size's in the same run. Writes bench/results/remember-latency.json.
"""

from __future__ import annotations

import argparse
import statistics
import time

import psycopg
from common import connect_as, fresh_database, save

SETUP = """
select count(*) from (
    select memory.remember(format('Item %%s of the catalogue: part %%s fits model %%s.', g, g * 7, g %% 40),
                           key => format('catalogue/item-%%s', g), enrich => 'none')
    from generate_series(1, %(size)s) as g
) as x
"""


def held(size: int) -> str:
    """A database whose agent holds `size` enriched memories; the URL of an application login to it."""
    url = fresh_database(f"bench_remember_{size}")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("select set_config('memory.tenant_id', 'default', false)")
        conn.execute(SETUP, {"size": size})
        if size:
            conn.execute("select memory.enrich('remembered')")
    return connect_as(url, "app")


def timed(url: str, remembers: int) -> list[float]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("select memory.embed(array['warm up']) from memory.embedding_model()")
        times = []
        for n in range(remembers + 1):
            started = time.perf_counter()
            conn.execute(
                "select outcome from memory.remember(%s, key => %s)",
                (f"New claim {n}: the order desk opens at {7 + n % 5} on weekdays.", f"desk/opening-{n}"),
            )
            times.append((time.perf_counter() - started) * 1000)
    return times[1:]  # the first loads what a backend loads once


def main(sizes: list[int], remembers: int) -> None:
    rows = []
    for size in sizes:
        times = sorted(timed(held(size), remembers))
        row = {"memories": size, "p50_ms": round(statistics.median(times), 1)}
        row["p95_ms"] = round(times[int(0.95 * (len(times) - 1))], 1)
        rows.append(row)
    for row in rows:
        row["ratio_to_smallest"] = round(row["p50_ms"] / rows[0]["p50_ms"], 2)
        print(
            f"{row['memories']:>6} memories: remember p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms, "
            f"x{row['ratio_to_smallest']} the smallest"
        )
    path = save("remember-latency.json", {"remembers": remembers, "role": "app", "sizes": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 1000, 4000])
    parser.add_argument("--remembers", type=int, default=30)
    arguments = parser.parse_args()
    main(arguments.sizes, arguments.remembers)
