"""Recall and commit of two builds of the extension, timed in the same run, alternately.

    .venv/bin/python bench/compare_builds.py --before ../before [--after .] [--turns 10000 100000]
        [--commit-turns 10000] [--rounds 5] [--role app]

Installs each build (`make install` in its checkout; both must have the same version) and makes its databases: a
tenant of `turns` turns for recall (bench/recall_latency.py's sessions, committed, enriched and maintained through
the build's own functions) and an empty database to copy for commit. A database keeps the SQL of the build that
created it, so the rounds then alternate between the builds' databases without installing again (the C library and
the in-database Python on disk are the last build's: equal for what is timed here, unless the builds differ there).
Each round times recall on each build's databases (bench/recall_latency.py's queries and its lower bound in the
same round) and the commit of `commit-turns` turns (bench/ingest.py's conversations) into a fresh copy of each
build's empty database, as the database's superuser or, with --role app, as a login granted memory_app (row-level
security on). Prints each round and the medians, with after / before, and writes
bench/results/compare-builds[-app].json.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg
from common import ROLES, SERVER, connect_as, fresh_database, save
from ingest import commit_all, settle
from psycopg import sql
from recall_latency import measure, populate, vocabulary, zipf_text


def install(checkout: Path) -> None:
    subprocess.run(["make", "-s", "install"], cwd=checkout, check=True, stdout=subprocess.DEVNULL)


def build_databases(label: str, sizes: list[int], words: list[str], weights: list[float]) -> dict[str, str]:
    """The URLs of the build's recall databases, one per size (the settled database commit is timed on is
    compare_<label>_empty)."""
    settle(fresh_database(f"compare_{label}_empty"))
    urls = {}
    for turns in sizes:
        started = time.perf_counter()
        url = fresh_database(f"compare_{label}_{turns}")
        populate(url, turns, words, weights)
        urls[str(turns)] = url
        print(f"{label}: built {turns} turns in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return urls


def timed_commit(label: str, turns: int, role: str) -> int:
    """Turns per second committing `turns` turns into a fresh copy of the build's settled database."""
    name = f"compare_{label}_commit"
    with psycopg.connect(SERVER.url(), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
        conn.execute(
            sql.SQL("create database {} template {}").format(
                sql.Identifier(name), sql.Identifier(f"compare_{label}_empty")
            )
        )
    return commit_all(connect_as(SERVER.url(name), role), turns, 20)["turns_per_second"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout of the build to compare with")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument(
        "--turns", type=int, nargs="*", default=[10000, 100000], help="recall sizes (none: commit only)"
    )
    parser.add_argument("--commit-turns", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--role", choices=ROLES, default="superuser")
    args = parser.parse_args()

    words = vocabulary()
    weights = [1 / (rank + 1) for rank in range(len(words))]
    rng = random.Random(99)
    queries = [zipf_text(rng, words, weights, rng.randint(3, 8)) for _ in range(args.queries)]
    builds = {"before": args.before.resolve(), "after": args.after.resolve()}
    urls = {}
    for label, checkout in builds.items():
        install(checkout)
        urls[label] = build_databases(label, args.turns, words, weights)
    rounds: list[dict] = []
    for number in range(args.rounds):
        row: dict = {}
        for label in builds if number % 2 == 0 else reversed(list(builds)):
            for turns in args.turns:
                result = measure(connect_as(urls[label][str(turns)], args.role), queries)
                row[f"{label} recall {turns}"] = result["recall"]["p50_ms"]
                row[f"{label} lower bound {turns}"] = result["lower_bound"]["p50_ms"]
            row[f"{label} commit"] = timed_commit(label, args.commit_turns, args.role)
        rounds.append(row)
        print(f"round {number + 1}: " + ", ".join(f"{key} {value}" for key, value in sorted(row.items())))
    medians = {key: statistics.median(row[key] for row in rounds) for key in rounds[0]}
    ratios = {
        key.removeprefix("after "): round(medians[key] / medians["before " + key.removeprefix("after ")], 3)
        for key in medians
        if key.startswith("after ")
    }
    for key, ratio in sorted(ratios.items()):
        unit = "turns/s" if key == "commit" else "ms p50"
        print(f"{key}: before {medians['before ' + key]} after {medians['after ' + key]} {unit}, after/before {ratio}")
    name = "compare-builds.json" if args.role == "superuser" else f"compare-builds-{args.role}.json"
    commits = {
        label: subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=path, capture_output=True, text=True
        ).stdout.strip()
        for label, path in builds.items()
    }
    path = save(
        name,
        {
            "role": args.role,
            "builds": commits,
            "turns": args.turns,
            "commit_turns": args.commit_turns,
            "queries": args.queries,
            "rounds": rounds,
            "medians": medians,
            "after_over_before": ratios,
        },
    )
    print(f"saved {path.relative_to(path.parents[2])}")


if __name__ == "__main__":
    main()
