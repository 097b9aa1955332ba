"""Ingest benchmark: commit throughput and enrichment throughput with the local embedder.

    .venv/bin/python bench/ingest.py --turns 10000 [--workers 2] [--commit-only] [--role app] [--fresh]

Commits synthetic conversations (sessions of 20 turns, batched one session per memory.commit call, each
call its own transaction) into a settled database (see settle; --fresh: a brand-new one), then runs
`--workers` connections calling memory.work() until the queue is empty, then embeds the very same chunk
texts outside the database with the same model and the same number of threads, and prints and saves the
ratio. Results: bench/results/ingest-<turns>.json. With --role app the commits are made by a login granted
memory_app (row-level security on, as an application is deployed; the results file then ends in -app.json);
the workers are the database's superuser either way.
"""

from __future__ import annotations

import argparse
import random
import time

import psycopg
from common import ROLES, connect_as, fresh_database, run_queue, save
from psycopg.types.json import Json

SUBJECTS = [
    "the auth service",
    "the billing job",
    "our Postgres cluster",
    "the mobile app",
    "the onboarding flow",
    "Maria's team",
    "the staging deploy",
    "the search index",
    "the design review",
    "the Q3 roadmap",
]
VERBS = [
    "broke after",
    "needs a fix before",
    "was discussed in",
    "got faster since",
    "should move to",
    "depends on",
    "was blocked by",
    "will be demoed at",
    "failed during",
    "was rewritten for",
]
OBJECTS = [
    "the token rotation",
    "Friday's release",
    "the vendor call",
    "the new logging stack",
    "the outage",
    "the budget meeting",
    "the migration plan",
    "the load test",
    "the security audit",
    "the offsite",
]
TAILS = [
    "Can you check it?",
    "I'll write it down.",
    "Let's decide tomorrow.",
    "That was a surprise.",
    "We agreed to revisit it.",
    "Nobody expected that.",
    "Please remind me next week.",
    "",
]


def conversation(rng: random.Random, turns: int) -> list[dict]:
    messages = []
    for i in range(turns):
        sentence = f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}."
        messages.append(
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"{sentence} {rng.choice(TAILS)}".strip(),
                "id": f"m{i}",
            }
        )
    return messages


def settle(url: str, turns: int = 10000) -> None:
    """Brings a new database to where a deployed one is after its first minutes: some turns stored (agent
    warm-up, not enriched) and the tables vacuumed and analyzed, as autovacuum does. A brand-new database plans
    commit's statements on empty tables, where every index that starts with tenant_id costs the same and the
    planner takes one that does not hold session_key, and a database of a few pages of sessions reads them
    whole; a connection keeps those plans (the foreign keys' checks among them) until the tables are analyzed
    again, so that each check reads every session of the tenant as it grows. 500 sessions are past that.
    `url` is the database's superuser."""
    rng = random.Random(11)
    with psycopg.connect(url, autocommit=True) as conn:
        for number in range(turns // 20):
            conn.execute(
                "select memory.commit(%s, %s, agent_id => 'warm-up', enrich => 'none')",
                (f"w{number}", Json(conversation(rng, 20))),
            )
        conn.execute("vacuum analyze")


def commit_all(url: str, turns: int, per_session: int) -> dict:
    rng = random.Random(7)
    sessions = [conversation(rng, per_session) for _ in range(turns // per_session)]
    with psycopg.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        for number, messages in enumerate(sessions):
            conn.execute("select memory.commit(%s, %s, agent_id => 'bench')", (f"s{number}", Json(messages)))
        seconds = time.perf_counter() - started
    return {
        "turns": turns,
        "sessions": len(sessions),
        "seconds": round(seconds, 2),
        "turns_per_second": round(turns / seconds),
    }


def enrich_all(url: str, workers: int) -> dict:
    seconds = run_queue(url, workers)
    with psycopg.connect(url) as conn:
        chunks = conn.execute("select count(*) from memory.chunk_embeddings").fetchone()[0]
    return {
        "workers": workers,
        "chunks_embedded": chunks,
        "seconds": round(seconds, 2),
        "chunks_per_second": round(chunks / seconds, 1),
    }


def raw_model(url: str, threads: int) -> dict:
    """The same model on the same texts outside the database: `threads` processes' worth of cores."""
    from agent_memory_db.embedder import LocalEmbedder

    with psycopg.connect(url) as conn:
        texts = [row[0] for row in conn.execute("select text from memory.chunks order by turn_id, chunk_no")]
    model = LocalEmbedder(threads=threads)
    model.embed(["warm up"])
    started = time.perf_counter()
    model.embed(texts, batch_tokens=None, batch_size=32)
    seconds = time.perf_counter() - started
    return {
        "threads": threads,
        "texts": len(texts),
        "seconds": round(seconds, 2),
        "texts_per_second": round(len(texts) / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10000)
    parser.add_argument("--per-session", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--commit-only", action="store_true", help="measure commit alone (ingest-commit-<turns>.json)")
    parser.add_argument("--role", choices=ROLES, default="superuser", help="who commits (app: memory_app, RLS on)")
    parser.add_argument(
        "--fresh", action="store_true", help="commit into a brand-new database, not a settled one (see settle)"
    )
    args = parser.parse_args()
    suffix = ("" if args.role == "superuser" else f"-{args.role}") + ("-fresh" if args.fresh else "")
    url = fresh_database("bench_ingest")
    if not args.fresh:
        settle(url)
    commit = commit_all(connect_as(url, args.role), args.turns, args.per_session)
    commit["role"] = args.role
    commit["database"] = "brand-new" if args.fresh else "settled (10,000 turns of another agent, vacuumed and analyzed)"
    print(f"commit: {commit['turns']} turns in {commit['seconds']} s = {commit['turns_per_second']} turns/s")
    if args.commit_only:
        path = save(f"ingest-commit-{args.turns}{suffix}.json", {"commit": commit})
        print(f"saved {path.relative_to(path.parents[2])}")
        return
    enrich = enrich_all(url, args.workers)
    print(
        f"enrich: {enrich['chunks_embedded']} chunks in {enrich['seconds']} s = "
        f"{enrich['chunks_per_second']} chunks/s with {args.workers} workers"
    )
    raw = raw_model(url, args.workers)
    print(f"raw model outside the database, {raw['threads']} threads: {raw['texts_per_second']} texts/s")
    ratio = round(enrich["chunks_per_second"] / raw["texts_per_second"], 3)
    print(f"enrichment / raw model = {ratio:.1%}")
    path = save(
        f"ingest-{args.turns}{suffix}.json",
        {"commit": commit, "enrich": enrich, "raw_model": raw, "enrich_over_raw": ratio},
    )
    print(f"saved {path.relative_to(path.parents[2])}")


if __name__ == "__main__":
    main()
