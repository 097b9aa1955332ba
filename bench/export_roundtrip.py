"""A tenant exported and imported into an empty database answers the same: LoCoMo or BEAM-100K end to end.

    .venv/bin/python bench/export_roundtrip.py locomo|beam [--reuse]

Loads the benchmark's database as bench/locomo_recall.py or bench/beam_recall.py does (bench_<name>; --reuse
keeps one already loaded), exports its tenant with memory.export_tenant into a gzipped JSON lines file,
imports that file into a fresh database (bench_<name>_restored) through the client's import_tenant (one
transaction) and enriches it there. Then every question is asked in both databases, each from the state the
export was taken in, and the runs are compared: questions whose ranked ids differ, and the scorer's recall at
1/5/10 in each. Writes bench/results/<name>-roundtrip.json with the times of export, import and enrichment as
ratios to the first database's own ingest (commit and enrichment) when this run loaded it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import tempfile
import time
from pathlib import Path

import psycopg
from beam_recall import BEAM
from common import fresh_database, run_queue, save
from conversations import evaluate, loaded_database, require, scorer
from locomo_recall import LOCOMO

from agent_memory import Memory

BENCHMARKS = {"locomo": LOCOMO, "beam": BEAM}


def export_file(url: str, path: Path) -> tuple[int, float]:
    """The tenant's records into a gzipped JSON lines file, read through a server-side cursor; (records, s)."""
    started = time.perf_counter()
    count = 0
    with psycopg.connect(url) as conn, conn.cursor(name="export") as cursor, gzip.open(path, "wt") as out:
        cursor.execute("select r from memory.export_tenant() as r")
        for (record,) in cursor:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count, time.perf_counter() - started


def import_file(url: str, path: Path) -> tuple[list, float]:
    """The file's records into the tenant through the client, in one transaction; (counts, seconds)."""
    started = time.perf_counter()
    with gzip.open(path, "rt") as lines:
        records = [json.loads(line) for line in lines]
    with Memory(url) as memory:
        counts = memory.import_tenant(records)
    return counts, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmark", choices=BENCHMARKS)
    parser.add_argument("--reuse", action="store_true", help="keep bench_<name> if it is loaded")
    args = parser.parse_args()
    bench = BENCHMARKS[args.benchmark]
    require(bench.data, bench.variable, bench.origin)
    module = scorer()
    conversations = module.load_converted(str(bench.data))

    source, ingestion = loaded_database(bench, conversations, args.reuse, curated=True)
    ingest_seconds = None if ingestion is None else ingestion["commit_seconds"] + ingestion["enrich_seconds"]

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / f"{bench.name}.jsonl.gz"
        records, export_seconds = export_file(source, path)
        size = os.path.getsize(path)
        print(f"exported {records} records ({size / 1e6:.1f} MB gzipped) in {export_seconds:.1f} s")
        summary, _, runs = evaluate(bench, module, conversations, source, ["turn"], None)

        restored = fresh_database(f"bench_{bench.name}_restored")
        with psycopg.connect(source) as conn:
            limit = conn.execute("select value from memory.config where key = 'max_message_chars'").fetchone()
        if limit:  # the database's own setting, as the benchmark set it (settings are not exported)
            with psycopg.connect(restored, autocommit=True) as conn:
                conn.execute("insert into memory.config (key, value) values ('max_message_chars', %s)", limit)
        counts, import_seconds = import_file(restored, path)
    print("imported " + ", ".join(f"{c.record_type} {c.imported}" for c in counts) + f" in {import_seconds:.1f} s")
    enrich_seconds = run_queue(restored, 2)
    print(f"enriched the restored database in {enrich_seconds:.1f} s")
    summary_restored, _, runs_restored = evaluate(bench, module, conversations, restored, ["turn"], None)

    ranked = {row["question_id"]: row["retrieved"] for row in runs["turn"]}
    differ = [row["question_id"] for row in runs_restored["turn"] if row["retrieved"] != ranked[row["question_id"]]]
    headline = {"exported": summary["turn_level"], "restored": summary_restored["turn_level"]}
    results = {
        "benchmark": bench.name,
        "records": records,
        "gzipped_bytes": size,
        "import_counts": {c.record_type: c.imported for c in counts},
        "questions": len(ranked),
        "questions_ranked_differently": len(differ),
        "differing_question_ids": differ[:20],
        "turn_recall": headline,
        "seconds": {
            "ingest_commit_and_enrich": ingest_seconds,
            "export": round(export_seconds, 1),
            "import": round(import_seconds, 1),
            "enrich_after_import": round(enrich_seconds, 1),
        },
        "ratios_to_ingest": None
        if ingest_seconds is None
        else {
            "export": round(export_seconds / ingest_seconds, 3),
            "import": round(import_seconds / ingest_seconds, 3),
            "import_and_enrich": round((import_seconds + enrich_seconds) / ingest_seconds, 3),
        },
    }
    save(f"{bench.name}-roundtrip.json", results)
    print(f"{len(differ)} of {len(ranked)} questions ranked differently after the round trip")
    for name, parts in headline.items():
        shown = "  ".join(f"{k.replace('recall_any', 'R')}={v:.3f}" for k, v in parts["all"].items())
        print(f"{name:9} {shown}")
    if results["ratios_to_ingest"]:
        print("as ratios to the ingest:", results["ratios_to_ingest"])


if __name__ == "__main__":
    main()
