"""The API's calls on the three-node cluster answer as on a single node: the same sequence of calls (commit and
enrich, curated memory, recall with each filter, feedback, forget, export, stats) made through memory.call on
the coordinator and in a database of the coordinator's server where the extension is not distributed gives the
same answers, each call one task on the worker that holds the tenant, writing only there."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from cluster import COORDINATOR, fresh_database, worker_of
from psycopg.types.json import Jsonb

PUSHED_DOWN = "pushing down the function call"
SINGLE = "am_citus_single"
# What differs between two databases by construction: keys (each node counts in a range of its own: any integer
# *_id, and those of KEYS), times (*_at and TIMES), keys in lists, and components (signals of time, recency among
# them, move between the two runs).
UNCOMPARED = {"evidence_turn_ids", "components"}
KEYS = {"id", "memory", "memory_words", "created_memory", "by_memory", "supersedes", "superseded_by"}
TIMES = {"at", "valid_from", "valid_to", "tier_since"}


def messages(*lines: str) -> list[dict[str, str]]:
    return [{"role": "user" if n % 2 == 0 else "assistant", "content": line} for n, line in enumerate(lines)]


# Each call: (function, arguments[, suffix of the tenant's name: another tenant]); "{memory:N}" stands for the
# memory_id of the N-th call's first row, "{export}" for the rows of the last export_tenant.
CALLS: list[tuple[Any, ...]] = [
    (
        "commit",
        {
            "session_id": "trip",
            "enrich": "now",
            "messages": messages(
                "Alice moved the cache to Paris on Friday; Bob from Acme agreed.",
                "Noted: the cache is in Paris now, Alice and Bob agreed.",
                "Next week Alice flies to Lisbon for the offsite.",
            ),
        },
    ),
    (
        "commit",
        {
            "session_id": "tea",
            "source": "slack",
            "run_id": "r1",
            "enrich": "now",
            "messages": messages(
                "Bob likes green tea in the morning.",
                "Green tea for Bob, noted.",
            ),
        },
    ),
    ("remember", {"content": "Alice prefers coffee.", "kind": "preference", "key": "alice.drink"}),
    ("remember", {"content": "Deploys happen on Fridays.", "kind": "rule", "tags": ["ops"]}),
    ("remember", {"content": "Alice prefers tea now.", "kind": "preference", "key": "alice.drink"}),
    ("get", {"key": "alice.drink"}),
    ("memory_history", {"memory_id": "{memory:4}"}),
    ("list_memories", {}),
    ("share", {"memory_id": "{memory:3}"}),
    ("recall", {"query": "where is the cache?"}),
    ("recall", {"query": "what does Bob drink?", "since": "2000-01-01", "until": "2100-01-01", "source": "slack"}),
    ("recall", {"query": "tea", "tiers": ["hot"], "run_id": "r1"}),
    ("recall", {"query": "deploys", "tags": ["ops"]}),
    ("recall", {"query": "Alice", "level": "session", "entities": ["Alice"], "entity_mode": "all"}),
    ("explain_recall", {"query": "Lisbon offsite"}),
    ("context_for_task", {"task": "plan the offsite"}),
    ("bootstrap", {}),
    ("give_feedback", {"verdict": "helpful", "memory_id": "{memory:3}", "query": "deploy day"}),
    ("list_sessions", {}),
    ("list_entities", {}),
    ("entity_sessions", {"entity": "Alice"}),
    ("set_entity_state", {"entity": "Alice", "attribute": "city", "value": "Paris"}),
    ("entity_state", {"entity": "Alice"}),
    ("retract", {"memory_id": "{memory:3}"}),
    ("export", {"session_id": "trip"}),
    ("stats", {}),
    ("export_tenant", {}),
    ("forget", {"session_id": "tea"}),
    ("recall", {"query": "what does Bob drink?"}),
    # The export imported as another tenant, enriched, answers as the first did.
    ("import_tenant", {"records": "{export}"}, "-copy"),
    ("enrich", {"session_id": "trip"}, "-copy"),
    ("enrich", {"session_id": "tea"}, "-copy"),
    ("recall", {"query": "where is the cache?"}, "-copy"),
    ("list_memories", {}, "-copy"),
]


def comparable(value: Any) -> Any:
    """A call's answer without what two databases differ in by construction: keys, times, and scores past the
    fourth digit."""
    if isinstance(value, dict):
        return {
            k: comparable(v)
            for k, v in value.items()
            if k not in UNCOMPARED
            and not ((k.endswith("_id") or k in KEYS) and isinstance(v, int))
            and not (k.endswith("_at") or k in TIMES)
        }
    if isinstance(value, list):
        return [comparable(v) for v in value]
    if isinstance(value, float):
        return round(value, 4)
    return value


def run_calls(conn: psycopg.Connection, tenant: str) -> tuple[list[Any], list[bool]]:
    """Every call of CALLS for a tenant: its rows, comparable, and whether Citus pushed it down whole."""
    notices: list[str] = []
    conn.add_notice_handler(lambda notice: notices.append(notice.message_primary))
    conn.execute("set client_min_messages = debug1")
    answers, pushed, firsts, export = [], [], [], []
    for function, arguments, *suffix in CALLS:
        filled = {k: fill(v, firsts, export) for k, v in arguments.items()}
        notices.clear()
        rows = [
            r[0]
            for r in conn.execute("select memory.call(%s, %s, %s)", (tenant + "".join(suffix), function, Jsonb(filled)))
        ]
        firsts.append(rows[0] if rows else None)
        export = rows if function == "export_tenant" else export
        answers.append(comparable(rows))
        pushed.append(PUSHED_DOWN in notices)
    return answers, pushed


def fill(value: Any, firsts: list[Any], export: list[Any]) -> Any:
    """An argument with what it stands for filled in."""
    if value == "{export}":
        return export
    if isinstance(value, str) and value.startswith("{memory:"):
        return firsts[int(value[len("{memory:") : -1])]["memory_id"]
    return value


@pytest.fixture(scope="module")
def single() -> Iterator[psycopg.Connection]:
    """A database of the coordinator's server where the extension is not distributed: one node."""
    fresh_database(COORDINATOR, SINGLE, citus=False)
    with COORDINATOR.connect(dbname=SINGLE) as conn:
        yield conn


def test_the_apis_calls_answer_on_the_cluster_as_on_one_node_each_one_task_on_the_tenants_worker(
    cluster, coordinator, single
):
    tenant = f"api-{uuid.uuid4().hex[:8]}"
    expected, _ = run_calls(single, tenant)
    answers, pushed = run_calls(coordinator, tenant)
    for (function, *_), answer, wanted in zip(CALLS, answers, expected, strict=True):
        assert answer == wanted, function
    assert all(pushed), [function for (function, *_), was in zip(CALLS, pushed, strict=True) if not was]
    # Recall found what was said, after the forget no longer finds it, and finds it in the import.
    recalls = [a for (function, *_), a in zip(CALLS, answers, strict=True) if function == "recall"]
    assert "cache is in Paris" in recalls[0][0]["content"]
    assert all("tea" not in hit["content"] for hit in recalls[-2] if hit["kind"] == "turn")
    assert recalls[-1][0]["content"] == recalls[0][0]["content"]
    # Every row of the tenant is on its worker.
    port = worker_of(coordinator, "memory.turns", tenant)
    for table in ("turns", "chunks", "memories", "feedback", "entity_mentions", "tombstones"):
        command = f"select count(*) from %s where tenant_id = '{tenant}'"
        placed = {
            p: int(n)
            for p, n in coordinator.execute(
                "select nodeport, result from run_command_on_placements(%s, %s)", (f"memory.{table}", command)
            )
            if int(n)
        }
        assert set(placed) == {port}, table
