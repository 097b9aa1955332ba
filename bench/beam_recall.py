"""BEAM-100K retrieval benchmark (user-assistant conversations) through the product's own SQL API.

    .venv/bin/python bench/beam_recall.py [--weights '{"weight_dense": 0.5}'] [--reuse] [--ablate KEY ...]

Ingests the 20 BEAM-100K conversations from BEAM_DIR/beam100k.jsonl (default ../shared/bench/beam) like
locomo_recall.py does, in database bench_beam (raising max_message_chars there if a message is longer than the
default allows), asks every question at turn level and scores with the LoCoMo scorer over every category
(abstention questions have no evidence and are not scored): all conversations, beam-100K-1..10 (where defaults
are chosen) and 11..20 (held out). Writes bench/results/beam-run.jsonl and beam-score.json, and prints turn
recall_any@1/5/10 per part, recall_any@5 per category and recall latency.
"""

from __future__ import annotations

from conversations import LOCOMO_DIR, TURN_RECALL, Benchmark, data_dir, main

BEAM = Benchmark(
    name="beam",
    data=data_dir("BEAM_DIR", "beam") / "beam100k.jsonl",
    variable="BEAM_DIR",
    origin="mohammadtavakoli78/BEAM on GitHub, commit b2a3ee8, chats/100K, converted to the LoCoMo run schema by "
    "the conventions of locomo.py convert (one conversation per line: sessions with ISO timestamps and turns, "
    "questions with evidence turn ids), file beam100k.jsonl (sha256 "
    "327646815ea5521005b4d9f90f57ca448d2ec77dea4952483342bd84a746f258). Scoring also needs the LoCoMo scorer "
    f"locomo.py in LOCOMO_DIR ({LOCOMO_DIR}).",
    parts={"all": slice(None), "conversations_1_10": slice(0, 10), "conversations_11_20": slice(10, None)},
    headline=TURN_RECALL,
    categories=None,
    levels=("turn",),
)

if __name__ == "__main__":
    main(BEAM, __doc__)
