"""The conversation-retrieval harness shared by the LoCoMo and BEAM benchmarks.

Both read conversations in the schema of LoCoMo's `locomo.py convert`, ingest them through memory.commit (one
agent per conversation, one session per session), enrich with memory.work() on two workers, ask every question
through memory.recall and score the runs with the LoCoMo scorer (locomo.py in LOCOMO_DIR)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import psycopg
from common import RESULTS, ROOT, SERVER, fresh_database, run_queue, save
from psycopg.types.json import Json, Jsonb

KS = [1, 5, 10]
TURN_RECALL = ("turn/recall_any@1", "turn/recall_any@5", "turn/recall_any@10")
# LoCoMo's two speakers; BEAM's roles are user and assistant already.
ROLES = {"speaker_a": "user", "speaker_b": "assistant"}


def data_dir(variable: str, name: str) -> Path:
    """The directory named by the environment variable, else ../shared/bench/<name> beside the repository."""
    return Path(os.environ.get(variable, ROOT.parent / "shared" / "bench" / name))


LOCOMO_DIR = data_dir("LOCOMO_DIR", "locomo")


@dataclass(frozen=True)
class Benchmark:
    name: str  # source of the commits, database bench_<name>, results <name>-run.jsonl, -score.json, -ablation.json
    data: Path
    variable: str  # the environment variable that names the data directory
    origin: str  # where the data file comes from, said when it is missing
    parts: dict[str, slice]  # scored parts: slices of the conversations
    headline: tuple[str, ...]  # the scorer's overall metrics printed and saved per part
    categories: set[str] | None  # categories scored; None: every category
    levels: tuple[str, ...]  # recall levels asked by default


def require(path: Path, variable: str, origin: str) -> Path:
    """The path, or exit saying where to get the file."""
    if not path.is_file():
        sys.exit(f"{path} not found (set {variable} to the directory that holds it).\nWhere to get it: {origin}")
    return path


def scorer() -> ModuleType:
    """The LoCoMo scorer, loaded from locomo.py in LOCOMO_DIR."""
    path = require(
        LOCOMO_DIR / "locomo.py",
        "LOCOMO_DIR",
        "the LoCoMo scorer locomo.py (standard library only) is kept in the LoCoMo benchmark directory, next to "
        "locomo10.json (snap-research/LoCoMo, commit 3eb6f2c, data/locomo10.json).",
    )
    spec = importlib.util.spec_from_file_location("locomo_scorer", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def messages(session: dict) -> list[dict]:
    """A converted session's turns as memory.commit messages (image captions kept with their message)."""
    out = []
    for turn in session["turns"]:
        text = turn["text"]
        if turn.get("image_caption"):
            text = f"{text} [shared an image: {turn['image_caption']}]"
        message = {
            "id": turn["turn_id"],
            "role": ROLES.get(turn["role"], turn["role"]),
            "content": text,
            "created_at": session["timestamp"],
        }
        if turn["role"] in ROLES:
            message["name"] = turn["speaker"]
        out.append(message)
    return out


def fit_message_limit(url: str, longest: int) -> None:
    """Raises max_message_chars in this database when the extension's default is below the longest message."""
    with psycopg.connect(url, autocommit=True) as conn:
        default = conn.execute(
            "select (default_value #>> '{}')::integer from memory.setting_definitions() where key = 'max_message_chars'"
        ).fetchone()[0]
        if longest > default:
            conn.execute(
                "insert into memory.config (key, value) values ('max_message_chars', %s)"
                " on conflict (key) do update set value = excluded.value",
                (Jsonb(longest),),
            )
            print(
                f"max_message_chars raised from the default {default} to {longest}, the longest message,"
                f" in database {conn.info.dbname} only"
            )


def ingest(url: str, bench: Benchmark, conversations: list[dict], curated: bool, workers: int = 2) -> dict:
    sessions = [(c["conversation_id"], s, messages(s)) for c in conversations for s in c["sessions"]]
    fit_message_limit(url, max(len(m["content"]) for _, _, batch in sessions for m in batch))
    if not curated:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("insert into memory.config (key, value) values ('memory_extractor', '\"none\"')")
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        for agent, session, batch in sessions:
            conn.execute(
                "select memory.commit(%s, %s, agent_id => %s, started_at => %s, source => %s)",
                (session["session_id"], Json(batch), agent, session["timestamp"], bench.name),
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
    with psycopg.connect(url, autocommit=True) as conn:
        return ask_on(conn, conversations, level, weights)


def recall_hits(conn: psycopg.Connection, question: str, agent: str, level: str, weights: dict | None) -> list[tuple]:
    """recall's first 10 hits: (message_id, session_id, evidence turns, evidence sessions, turn_id, memory_id)."""
    # A memory's evidence by primary key (tenant first), for memory hits only: timed with recall.
    return conn.execute(
        "select r.message_id, r.session_id, e.turns, e.sessions, r.turn_id, r.memory_id"
        " from memory.recall(%s, k => 10, agent_id => %s, level => %s, weights => %s) with ordinality as r"
        " left join lateral (select array_agg(t.message_id order by t.turn_id) as turns,"
        " array_agg(s.session_id order by t.turn_id) as sessions from memory.turns as t"
        " join memory.sessions as s on s.tenant_id = t.tenant_id and s.session_key = t.session_key"
        " where t.tenant_id = memory.current_tenant() and t.turn_id = any(r.evidence_turn_ids)) as e"
        " on r.evidence_turn_ids is not null order by r.ordinality",
        (question, agent, level, Jsonb(weights) if weights else None),
    ).fetchall()


def ask_on(
    conn: psycopg.Connection, conversations: list[dict], level: str, weights: dict | None
) -> tuple[list[dict], list[float]]:
    """Every question of the conversations through recall on this connection: run rows and latencies."""
    rows, latencies = [], []
    for conversation in conversations:
        for question in conversation["questions"]:
            started = time.perf_counter()
            hits = recall_hits(conn, question["question"], conversation["conversation_id"], level, weights)
            latencies.append(time.perf_counter() - started)
            rows.append({"question_id": question["question_id"], "retrieved": retrieved(hits, level)})
    return rows, latencies


def retrieved(hits: list[tuple], level: str) -> list[str]:
    """The run's ids, best first: a memory hit counts as the turns (or sessions) it came from."""
    out: list[str] = []
    for message_id, session_id, evidence_turns, evidence_sessions, *_ in hits:
        ids = (evidence_turns or [message_id]) if level == "turn" else (evidence_sessions or [session_id])
        out += [i for i in ids if i not in out]
    return out


def evaluate(
    bench: Benchmark, module: ModuleType, conversations: list[dict], url: str, levels: list[str], weights: dict | None
) -> tuple[dict, dict, dict]:
    """Asks every question at each level and scores each part: (summary, scores, run rows by level)."""
    scores, runs, latencies = {}, {}, []
    for level in levels:
        rows, level_latencies = ask(url, conversations, level, weights)
        latencies += level_latencies
        run = {row["question_id"]: row["retrieved"] for row in rows}
        scores[f"{level}_level"] = {
            part: module.score_run(conversations[share], run, KS, bench.categories)
            for part, share in bench.parts.items()
        }
        runs[level] = rows
    latencies.sort()
    summary = {
        "weights": weights,
        **{
            level: {part: {key: score["overall"].get(key) for key in bench.headline} for part, score in parts.items()}
            for level, parts in scores.items()
        },
        "recall_ms": {
            "p50": round(1000 * latencies[len(latencies) // 2], 1),
            "p95": round(1000 * latencies[int(len(latencies) * 0.95)], 1),
        },
    }
    return summary, scores, runs


def by_category(scores: dict) -> dict:
    """recall_any@5 of every category, at each level, over all conversations."""
    return {
        level: {
            name: numbers.get("turn/recall_any@5" if level == "turn_level" else "session/recall_any@5", 0)
            for name, numbers in parts["all"]["by_category"].items()
        }
        for level, parts in scores.items()
    }


def report(summary: dict, scores: dict) -> None:
    for level in scores:
        width = max(17, *map(len, summary[level]))
        for part, numbers in summary[level].items():
            shown = "  ".join(f"{k.replace('recall_any', 'R')}={v:.3f}" for k, v in numbers.items() if v is not None)
            print(f"{level:13} {part:{width}} {shown}")
    for level, categories in by_category(scores).items():
        shown = "  ".join(f"{name}={value:.3f}" for name, value in categories.items())
        print(f"{level:13} R@5 by category: {shown}")
    print(f"recall latency p50 {summary['recall_ms']['p50']} ms, p95 {summary['recall_ms']['p95']} ms")


def loaded_database(bench: Benchmark, conversations: list[dict], reuse: bool, curated: bool) -> tuple[str, dict | None]:
    """The URL of bench_<name> (bench_<name>_uncurated without curated memory), ingested unless --reuse
    finds it loaded, and the ingest's numbers (None when it was reused)."""
    database = f"bench_{bench.name}" if curated else f"bench_{bench.name}_uncurated"
    url = SERVER.url(database)
    if reuse:
        try:
            with psycopg.connect(url) as conn:
                if conn.execute("select count(*) from memory.turns").fetchone()[0]:
                    return url, None
        except psycopg.Error:
            pass
    url = fresh_database(database)
    ingestion = ingest(url, bench, conversations, curated)
    print(
        f"ingested {ingestion['turns']} turns: commit {ingestion['commit_seconds']} s, "
        f"enrichment {ingestion['enrich_seconds']} s"
    )
    return url, ingestion


def main(bench: Benchmark, doc: str) -> None:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--weights", type=json.loads, default=None, help="per-call recall settings (JSON)")
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database if there is one")
    parser.add_argument("--quiet", action="store_true", help="print only the headline numbers, save nothing")
    parser.add_argument("--levels", nargs="+", default=list(bench.levels), choices=["turn", "session"])
    parser.add_argument(
        "--ablate",
        nargs="+",
        default=[],
        metavar="KEY",
        help="then once more per setting KEY set to 0 (per call, on top of --weights)",
    )
    parser.add_argument(
        "--no-curated-memory",
        action="store_true",
        help="ingest with memory_extractor none (database bench_<name>_uncurated, results <name>-uncurated-*)",
    )
    args = parser.parse_args()
    curated = not args.no_curated_memory
    results_name = bench.name if curated else f"{bench.name}-uncurated"

    require(bench.data, bench.variable, bench.origin)
    module = scorer()
    conversations = module.load_converted(str(bench.data))
    url, _ = loaded_database(bench, conversations, args.reuse, curated)
    with psycopg.connect(url) as conn:
        extension = conn.execute("select memory.version()").fetchone()[0]
    ablations = [{**(args.weights or {}), key: 0} for key in args.ablate]
    with psycopg.connect(url, autocommit=True) as conn:  # a setting recall refuses fails here, not after a run
        for weights in ablations:
            conn.execute("select from memory.recall('check', k => 1, weights => %s)", (Jsonb(weights),))

    summary, scores, runs = evaluate(bench, module, conversations, url, args.levels, args.weights)
    if not args.quiet:
        for level, rows in runs.items():
            name = f"{results_name}-run.jsonl" if level == "turn" else f"{results_name}-session-run.jsonl"
            RESULTS.mkdir(parents=True, exist_ok=True)
            (RESULTS / name).write_text("".join(json.dumps(row) + "\n" for row in rows))
        save(f"{results_name}-score.json", {**summary, "extension": extension, "scores": scores})
    report(summary, scores)

    if args.ablate:
        results = [{"ablated": None, **summary, "r5_by_category": by_category(scores)}]
        for key, weights in zip(args.ablate, ablations, strict=True):
            print(f"ablation: {key} = 0")
            ablated, ablated_scores, _ = evaluate(bench, module, conversations, url, args.levels, weights)
            report(ablated, ablated_scores)
            results.append({"ablated": key, **ablated, "r5_by_category": by_category(ablated_scores)})
        if not args.quiet:
            save(f"{results_name}-ablation.json", {"extension": extension, "runs": results})
