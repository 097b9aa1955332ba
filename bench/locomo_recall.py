"""LoCoMo retrieval benchmark through the product's own SQL API.

    .venv/bin/python bench/locomo_recall.py [--weights '{"weight_dense": 0.5}'] [--reuse] [--ablate KEY ...]

Ingests every LoCoMo conversation from LOCOMO_DIR (default ../shared/bench/locomo) through memory.commit (one
agent per conversation, one session per LoCoMo session with its date, the caller's message id = the turn id,
the speaker's name, image captions kept with the message they belong to), enriches with memory.work() on two
workers, asks every question through memory.recall(question, agent_id => conversation) at turn level and at
session level, and scores the runs with LoCoMo's scorer (categories 1-4): all conversations, conversations 0-4
(where defaults are chosen) and 5-9 (held out). Writes bench/results/locomo-run.jsonl,
locomo-session-run.jsonl and locomo-score.json, and prints the headline numbers. --reuse skips ingestion when
the database is already loaded; --ablate runs again per setting KEY set to 0 (bench/results/locomo-ablation.json).
"""

from __future__ import annotations

from conversations import LOCOMO_DIR, TURN_RECALL, Benchmark, main

LOCOMO = Benchmark(
    name="locomo",
    data=LOCOMO_DIR / "locomo10.json",
    variable="LOCOMO_DIR",
    origin="snap-research/LoCoMo on GitHub, commit 3eb6f2c, data/locomo10.json (sha256 "
    "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4), with the LoCoMo scorer locomo.py "
    "in the same directory.",
    parts={"all": slice(None), "conversations_0_4": slice(0, 5), "conversations_5_9": slice(5, None)},
    headline=(*TURN_RECALL, "session/recall_any@5", "session/recall_any@10"),
    categories={"1", "2", "3", "4"},
    levels=("turn", "session"),
)

if __name__ == "__main__":
    main(LOCOMO, __doc__)
