"""LoCoMo retrieval benchmark through the product's own SQL API.

    .venv/bin/python bench/locomo_recall.py [--weights '{"weight_dense": 0.5}'] [--reuse]

Ingests every LoCoMo conversation from ../shared/bench/locomo through memory.commit (one agent per
conversation, one session per LoCoMo session with its date, the caller's message id = the turn id, image
captions kept with the message they belong to), enriches with memory.work() on two workers, asks every
question through memory.recall(question, agent_id => conversation) at turn level and at session level,
and scores the runs with LoCoMo's scorer (categories 1-4): all conversations, conversations 0-4 (where
defaults are chosen) and 5-9 (held out). Writes bench/results/locomo-run.jsonl, locomo-session-run.jsonl
and locomo-score.json, and prints the headline numbers. --reuse skips ingestion when the database is
already loaded.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from pathlib import Path

import psycopg
from common import RESULTS, ROOT, SERVER, fresh_database, run_queue, save
from psycopg.types.json import Json, Jsonb

LOCOMO_DIR = Path(os.environ.get("LOCOMO_DIR", ROOT.parent / "shared" / "bench" / "locomo"))
DATABASE = "bench_locomo"
KS = [1, 5, 10]


def scorer():
    spec = importlib.util.spec_from_file_location("locomo_scorer", LOCOMO_DIR / "locomo.py")
    assert spec and spec.loader, f"no LoCoMo scorer in {LOCOMO_DIR}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def messages(session: dict) -> list[dict]:
    out = []
    for turn in session["turns"]:
        text = turn["text"]
        if turn.get("image_caption"):
            text = f"{text} [shared an image: {turn['image_caption']}]"
        out.append(
            {
                "id": turn["turn_id"],
                "role": "user" if turn["role"] == "speaker_a" else "assistant",
                "name": turn["speaker"],
                "content": text,
                "created_at": session["timestamp"],
            }
        )
    return out


def ingest(url: str, conversations: list[dict], workers: int = 2) -> dict:
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        for conversation in conversations:
            for session in conversation["sessions"]:
                conn.execute(
                    "select memory.commit(%s, %s, agent_id => %s, started_at => %s, source => 'locomo')",
                    (
                        session["session_id"],
                        Json(messages(session)),
                        conversation["conversation_id"],
                        session["timestamp"],
                    ),
                )
    committed = time.perf_counter() - started

    enriched = run_queue(url, workers)
    with psycopg.connect(url) as conn:
        turns = conn.execute("select count(*) from memory.turns").fetchone()[0]
    return {
        "turns": turns,
        "commit_seconds": round(committed, 1),
        "enrich_seconds": round(enriched, 1),
    }


def ask(url: str, conversations: list[dict], level: str, weights: dict | None) -> tuple[list[dict], list[float]]:
    rows, latencies = [], []
    with psycopg.connect(url, autocommit=True) as conn:
        for conversation in conversations:
            for question in conversation["questions"]:
                started = time.perf_counter()
                hits = conn.execute(
                    "select message_id, session_id from memory.recall(%s, k => 10, agent_id => %s, level => %s,"
                    " weights => %s)",
                    (question["question"], conversation["conversation_id"], level, Jsonb(weights) if weights else None),
                ).fetchall()
                latencies.append(time.perf_counter() - started)
                retrieved = [m for m, _ in hits] if level == "turn" else [s for _, s in hits]
                rows.append({"question_id": question["question_id"], "retrieved": retrieved})
    return rows, latencies


def headline(score: dict) -> dict:
    overall = score["overall"]
    return {
        name: overall.get(name)
        for name in (
            "turn/recall_any@1",
            "turn/recall_any@5",
            "turn/recall_any@10",
            "session/recall_any@5",
            "session/recall_any@10",
        )
    }


def score_parts(module, conversations: list[dict], rows: list[dict]) -> dict:
    run = {row["question_id"]: row["retrieved"] for row in rows}
    categories = {"1", "2", "3", "4"}
    return {
        "all": module.score_run(conversations, run, KS, categories),
        "conversations_0_4": module.score_run(conversations[:5], run, KS, categories),
        "conversations_5_9": module.score_run(conversations[5:], run, KS, categories),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=json.loads, default=None, help="per-call recall settings (JSON)")
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database if there is one")
    parser.add_argument("--quiet", action="store_true", help="print only the headline numbers, save nothing")
    parser.add_argument("--levels", nargs="+", default=["turn", "session"], choices=["turn", "session"])
    args = parser.parse_args()

    module = scorer()
    conversations = module.load_locomo(str(LOCOMO_DIR / "locomo10.json"))
    url = SERVER.url(DATABASE)
    loaded = None
    if args.reuse:
        try:
            with psycopg.connect(url) as conn:
                loaded = conn.execute("select count(*) from memory.turns").fetchone()[0]
        except psycopg.OperationalError:
            loaded = None
    if not loaded:
        url = fresh_database(DATABASE)
        ingestion = ingest(url, conversations)
        print(
            f"ingested {ingestion['turns']} turns: commit {ingestion['commit_seconds']} s, "
            f"enrichment {ingestion['enrich_seconds']} s"
        )

    scores, latencies = {}, []
    for level in args.levels:
        rows, level_latencies = ask(url, conversations, level, args.weights)
        latencies += level_latencies
        scores[f"{level}_level"] = score_parts(module, conversations, rows)
        if not args.quiet:
            RESULTS.mkdir(parents=True, exist_ok=True)
            name = "locomo-run.jsonl" if level == "turn" else "locomo-session-run.jsonl"
            (RESULTS / name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    latencies.sort()
    summary = {
        "weights": args.weights,
        **{level: {part: headline(score) for part, score in parts.items()} for level, parts in scores.items()},
        "recall_ms": {
            "p50": round(1000 * latencies[len(latencies) // 2], 1),
            "p95": round(1000 * latencies[int(len(latencies) * 0.95)], 1),
        },
    }
    if not args.quiet:
        save("locomo-score.json", {**summary, "scores": scores})
    for level in scores:
        for part, numbers in summary[level].items():
            shown = "  ".join(f"{k.replace('recall_any', 'R')}={v:.3f}" for k, v in numbers.items() if v is not None)
            print(f"{level:13} {part:17} {shown}")
    for level, parts in scores.items():
        categories = parts["all"]["by_category"]
        key = "turn/recall_any@5" if level == "turn_level" else "session/recall_any@5"
        shown = "  ".join(f"{name}={numbers.get(key, 0):.3f}" for name, numbers in categories.items())
        print(f"{level:13} R@5 by category: {shown}")
    print(f"recall latency p50 {summary['recall_ms']['p50']} ms, p95 {summary['recall_ms']['p95']} ms")


if __name__ == "__main__":
    main()
