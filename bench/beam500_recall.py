"""BEAM-500K conversations 11-20 retrieval benchmark (long user-assistant conversations) through the SQL API.

    .venv/bin/python bench/beam500_recall.py [--weights '{"weight_dense": 0.5}'] [--reuse] [--ablate KEY ...]

Ingests the ten long BEAM-500K conversations (about 1,100 turns each) from BEAM_DIR/beam500k-11-20.jsonl
(default ../shared/bench/beam) like beam_recall.py does, in database bench_beam500, asks every question at
turn level and scores with the LoCoMo scorer over every category (abstention questions have no evidence and are
not scored): all conversations, beam-500K-11..15 (where defaults are chosen) and 16..20 (held out). Writes
bench/results/beam500-run.jsonl and beam500-score.json, and prints turn recall_any@1/5/10 per part,
recall_any@5 per category and recall latency p50 and p95.
"""

from __future__ import annotations

from conversations import LOCOMO_DIR, TURN_RECALL, Benchmark, data_dir, main

BEAM500 = Benchmark(
    name="beam500",
    data=data_dir("BEAM_DIR", "beam") / "beam500k-11-20.jsonl",
    variable="BEAM_DIR",
    origin="mohammadtavakoli78/BEAM on GitHub, commit b2a3ee8, chats/500K conversations 11-20, converted to the "
    "LoCoMo run schema by the conventions of locomo.py convert, file beam500k-11-20.jsonl (sha256 "
    "cf7c5081c5ae0a6443144b1c1e14482cfd159ffb9c71f4249882335e930bd118). Scoring also needs the LoCoMo scorer "
    f"locomo.py in LOCOMO_DIR ({LOCOMO_DIR}).",
    parts={"all": slice(None), "conversations_11_15": slice(0, 5), "conversations_16_20": slice(5, None)},
    headline=TURN_RECALL,
    categories=None,
    levels=("turn",),
)

if __name__ == "__main__":
    main(BEAM500, __doc__)
