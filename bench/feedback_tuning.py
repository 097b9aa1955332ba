"""Weights tuned from feedback, evaluated honestly: fitted on one half of a set, scored on the other.

    .venv/bin/python bench/feedback_tuning.py [--sets locomo beam beam500]

For each set (its database bench_<set>, loaded by the set's own bench if it is not yet), and each direction
(the half where defaults are chosen -> the held-out half, and back), in one transaction that is rolled back at
the end so the loaded database stays as it was:

1. Simulated feedback on the first half: every question is recalled (top 10 turns, as the conversation's
   agent) and each hit gets a verdict with the question as its query, helpful when it is one of the question's
   evidence turns (or a memory drawn from one), unhelpful otherwise: what an agent that knew the answer would
   say of what it was shown.
2. memory.tune_weights() for the tenant.
3. The other half's questions asked with the tuned weights and without them (use_tuned_weights false), both
   scored with the LoCoMo scorer: turn recall_any@1/5/10 (LoCoMo: categories 1-4; BEAM: every category).

The other half's conversations are other agents, so the verdicts moved no trust of theirs: the difference is
the weights alone. Writes bench/results/feedback-tuning.json and prints the numbers.
"""

from __future__ import annotations

import argparse

import psycopg
from beam500_recall import BEAM500
from beam_recall import BEAM
from common import save
from conversations import KS, TURN_RECALL, Benchmark, ask_on, loaded_database, recall_hits, require, scorer
from locomo_recall import LOCOMO

SETS = {bench.name: bench for bench in (LOCOMO, BEAM, BEAM500)}
UNTUNED = {"use_tuned_weights": False}


def give_feedback(conn: psycopg.Connection, conversations: list[dict]) -> dict:
    """Verdicts on each question's top 10 hits (helpful: an evidence turn): how many of each."""
    given = {"helpful": 0, "unhelpful": 0}
    for conversation in conversations:
        for question in conversation["questions"]:
            evidence = set(question.get("evidence_turn_ids") or [])
            if not evidence:
                continue
            hits = recall_hits(conn, question["question"], conversation["conversation_id"], "turn", None)
            for message_id, _, evidence_turns, _, turn_id, memory_id in hits:
                verdict = "helpful" if evidence & set(evidence_turns or [message_id]) else "unhelpful"
                target = {"memory_id": memory_id} if memory_id else {"turn_id": turn_id}
                conn.execute(
                    "select memory.give_feedback(%(verdict)s, turn_id => %(turn_id)s, memory_id => %(memory_id)s,"
                    " query => %(query)s, judged_by => 'bench')",
                    {"turn_id": None, "memory_id": None, **target, "verdict": verdict, "query": question["question"]},
                )
                given[verdict] += 1
    return given


def direction(conn: psycopg.Connection, module, bench: Benchmark, conversations: list[dict], fit: str, scored: str):
    """Feedback on part fit, tune, score part scored with and without the tuned weights (rolled back)."""
    fit_half, scored_half = conversations[bench.parts[fit]], conversations[bench.parts[scored]]
    try:
        verdicts = give_feedback(conn, fit_half)
        tuning = conn.execute("select to_jsonb(t) from memory.tune_weights() as t").fetchone()[0]
        numbers = {}
        for name, weights in (("untuned", UNTUNED), ("tuned", None)):
            rows, _ = ask_on(conn, scored_half, "turn", weights)
            run = {row["question_id"]: row["retrieved"] for row in rows}
            score = module.score_run(scored_half, run, KS, bench.categories)["overall"]
            numbers[name] = {key: score.get(key) for key in TURN_RECALL}
    finally:
        conn.rollback()
    return {"fitted_on": fit, "scored_on": scored, "verdicts": verdicts, "tuning": tuning, **numbers}


def show(name: str, outcome: dict) -> None:
    tuning, verdicts = outcome["tuning"], outcome["verdicts"]
    print(
        f"{name}: fitted on {outcome['fitted_on']} ({verdicts['helpful']} helpful, {verdicts['unhelpful']} unhelpful"
        f" verdicts): {tuning['reason']}"
    )
    if tuning["ordered_before"] is not None:
        print(f"  pairs ordered right {tuning['ordered_before']:.3f} -> {tuning['ordered_after']:.3f}")
    moved = [f"{signal} {w['before']:g} -> {w['after']:.3g}" for signal, w in (tuning["weights"] or {}).items()]
    print(f"  weights: {', '.join(moved) or 'unchanged'}")
    for label in ("untuned", "tuned"):
        shown = "  ".join(f"{k.split('/')[1].replace('recall_any', 'R')}={v:.3f}" for k, v in outcome[label].items())
        print(f"  {outcome['scored_on']} {label:8} {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=["locomo", "beam", "beam500"])
    args = parser.parse_args()
    module = scorer()
    results = {}
    for name in args.sets:
        bench = SETS[name]
        require(bench.data, bench.variable, bench.origin)
        conversations = module.load_converted(str(bench.data))
        url, _ = loaded_database(bench, conversations, reuse=True, curated=True)
        halves = [part for part in bench.parts if part != "all"]
        results[name] = []
        with psycopg.connect(url) as conn:
            for fit, scored in (halves, halves[::-1]):
                outcome = direction(conn, module, bench, conversations, fit, scored)
                results[name].append(outcome)
                show(name, outcome)
    save("feedback-tuning.json", results)


if __name__ == "__main__":
    main()
