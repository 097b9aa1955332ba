"""`agent-memory demo` (and `make demo`): a tour of the product on a small bundled example.

Six conversations of a product team (examples/northwind.jsonl, written for this project) are imported
into tenant "demo" of the database, enriched in the database, then recalled, explained, bootstrapped
from, and judged, showing feedback changing the ranking. Each run starts the tenant afresh.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from agent_memory import importers
from agent_memory.client import Memory
from agent_memory.formatting import print_table, ranks, signals
from agent_memory.progress import Progress

TENANT = "demo"
QUESTION = "Which day do we deploy to production?"
OUTDATED_SESSION = "2026-09-01-kickoff"  # "we deploy to production every Friday afternoon", replaced later


def _heading(number: int, title: str, sql: str) -> None:
    print(f"\n\033[1m{number}. {title}\033[0m")
    print(f"   \033[2m{sql}\033[0m\n")


def _outdated(memory: Memory) -> tuple[int, int] | None:
    """Rank and turn of the best recalled turn that states the old Friday rule."""
    for rank, hit in enumerate(memory.recall(QUESTION, k=10), start=1):
        if hit.session_id == OUTDATED_SESSION and "Friday" in hit.content:
            return rank, hit.turn_id
    return None


def _rank_of(memory: Memory, turn_id: int) -> str:
    ranks = [n for n, hit in enumerate(memory.recall(QUESTION, k=10), start=1) if hit.turn_id == turn_id]
    return str(ranks[0]) if ranks else "out of the top 10"


def _show_hits(memory: Memory, query: str, k: int = 5) -> None:
    hits = memory.recall(query, k=k)
    rows = [
        {"#": n, "score": hit.score, "when": f"{hit.created_at:%Y-%m-%d}", "speaker": hit.speaker or hit.role}
        | {"content": hit.content}
        for n, hit in enumerate(hits, start=1)
    ]
    print_table(rows, ["#", "score", "when", "speaker", "content"], {"content": 90})


def run(dsn: str, tenant: str | None = None) -> int:
    example = Path(str(resources.files("agent_memory") / "examples" / "northwind.jsonl"))
    with Memory(dsn, tenant=tenant or TENANT, max_connections=2) as memory:
        for stored in memory.export():
            memory.forget(stored["session_id"], agent_id=stored["agent_id"])

        read = importers.read_jsonl([example])
        _heading(1, f"Import {len(read.sessions)} conversations", "select * from memory.commit(session_id, messages)")
        turns = 0
        for session in read.sessions:
            committed = memory.commit(  # the sessions forgotten above, stored again on purpose
                session.session_id,
                session.messages,
                agent_id=session.agent_id,
                source=session.source,
                allow_forgotten=True,
            )
            turns += committed.turns_added
        print(f"   {turns} turns stored; enrichment queued")
        progress = Progress("   enrichment", len(read.sessions), "sessions")
        while (worked := memory.work(2)).processed + worked.failed:
            progress.advance(worked.processed + worked.failed)
        progress.finish()
        print_table(memory.stats(), ["agent_id", "sessions", "turns", "chunks", "embedded_chunks", "summaries"])

        _heading(2, f"Recall: {QUESTION!r}", f"select * from memory.recall('{QUESTION}', k => 5)")
        _show_hits(memory, QUESTION)

        _heading(3, "Why they ranked there", f"select * from memory.explain_recall('{QUESTION}')")
        rows = [
            {
                "rank": candidate.rank,
                "score": candidate.score,
                "list ranks": ranks(candidate.components),
                "fused": candidate.fused,
                "other signals": signals(candidate.components),
                "content": candidate.content,
            }
            for candidate in memory.explain_recall(QUESTION)[:5]
        ]
        print_table(rows, list(rows[0]) if rows else [], {"content": 50, "other signals": 50})

        _heading(4, "Bootstrap a new conversation", "select * from memory.bootstrap(max_chars => 900)")
        print("   " + memory.bootstrap(max_chars=900).text().replace("\n", "\n   "))

        _heading(
            5,
            "Feedback: the Friday rule is outdated",
            "select * from memory.give_feedback('unhelpful', turn_id => ...)",
        )
        found = _outdated(memory)
        if found is None:
            print("   (the Friday rule was not recalled; nothing to judge)")
            return 0
        before, turn = found
        verdict = memory.give_feedback("unhelpful", turn_id=turn, query=QUESTION, note="replaced by the Tuesday rule")
        print(
            f"   turn {turn} (rank {before}): trust {verdict.trust_before:.2f} -> {verdict.trust_after:.2f}, "
            f"now rank {_rank_of(memory, turn)}\n"
        )
        _show_hits(memory, QUESTION)
    print("\nEverything above is SQL in the database; try it in psql: agent-memory db url")
    return 0
