"""Property-based: thousands of generated calls of commit, recall, remember, feedback and settings, each
of which either works or fails with an agent_memory error that names the problem, and never leaves a
partial write. AGENT_MEMORY_PROPERTY_SCALE multiplies the number of cases (make soak)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Json, Jsonb

SCALE = float(os.environ.get("AGENT_MEMORY_PROPERTY_SCALE", "1"))
RUN = {"cases": 0}


def examples(n: int):  # type: ignore[no-untyped-def]
    return settings(
        max_examples=int(n * SCALE),
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


text = st.text(max_size=40) | st.sampled_from(["", " ", "a" * 1200, "x\\u0000y", "2024-02-30"])
# jsonb and text parameters cannot carry a NUL at all (the server refuses them before any function runs);
# json parameters (commit's messages) can, and commit must name the message that has one.
identifier = text.filter(lambda s: "\x00" not in s)


def json_values(strings):  # type: ignore[no-untyped-def]
    scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | strings
    return st.recursive(
        scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(strings, inner, max_size=3), max_leaves=6
    )


json_value = json_values(text)
jsonb_value = json_values(identifier)
scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | identifier
message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "system", "tool", "robot", ""]) | json_value,
        "content": text | st.lists(text | st.fixed_dictionaries({"text": text}), max_size=3) | json_value,
        "id": text | st.integers() | json_value,
        "name": text | json_value,
        "created_at": st.sampled_from(["2024-05-01T10:00:00Z", "2024-05-01", "2024-02-30T00:00:00Z", "+99"])
        | text
        | st.datetimes().map(lambda d: d.isoformat() + "+99:00"),
        "metadata": st.dictionaries(text, scalar, max_size=2) | json_value,
        "tool_calls": json_value,
    },
)
messages = st.lists(message, max_size=4) | json_value


def counts(db: psycopg.Connection) -> tuple:
    return db.execute(
        "select (select count(*) from memory.sessions), (select count(*) from memory.turns),"
        " (select count(*) from memory.jobs), (select count(*) from memory.feedback),"
        " (select coalesce(sum(trust), 0) from memory.turns), (select count(*) from memory.config)"
    ).fetchone()


def works_or_names_the_problem(db: psycopg.Connection, query: str, params: tuple) -> bool:
    """Run one call: True if it worked; on an error, the message must be agent_memory's and nothing changed."""
    RUN["cases"] += 1
    before = counts(db)
    try:
        cursor = db.execute(query, params)
        if cursor.description:
            cursor.fetchall()
        return True
    except psycopg.Error as exc:
        message = str(exc).splitlines()[0]
        assert message.startswith("agent_memory: "), f"{query} {params!r}: {message}"
        assert counts(db) == before, f"partial write: {query} {params!r}"
        return False


@pytest.fixture
def memory(db) -> Iterator[psycopg.Connection]:
    db.commit()
    db.autocommit = True
    db.execute("set memory.embedder = 'none'")
    db.execute("select memory.commit('seed', %s)", (Json([{"role": "user", "content": "a seed turn about tea"}]),))
    yield db


@pytest.fixture(scope="module", autouse=True)
def report(request) -> Iterator[None]:
    yield
    capmanager = request.config.pluginmanager.getplugin("capturemanager")
    with capmanager.global_and_fixture_disabled():
        print(f"\n  property-based suite: {RUN['cases']} generated cases, each worked or named its problem")


def test_commit(memory):
    @examples(2200)
    @given(session=identifier, agent=identifier, batch=messages, enrich=st.sampled_from([None, "none", "later"]))
    def commit(session, agent, batch, enrich):
        before = counts(memory)
        worked = works_or_names_the_problem(
            memory,
            "select * from memory.commit(%s, %s, agent_id => %s, enrich => %s)",
            (session, Json(batch), agent, enrich),
        )
        if worked:
            assert counts(memory)[1] >= before[1]

    commit()


def test_recall(memory):
    @examples(1100)
    @given(
        query=identifier,
        k=st.integers(min_value=-2, max_value=60),
        level=st.sampled_from(["turn", "session", "chunk"]),
        weights=st.none()
        | st.dictionaries(
            st.sampled_from(["weight_dense", "weight_period", "fusion", "nope", "rrf_k"]), scalar, max_size=2
        ),
    )
    def recall(query, k, level, weights):
        works_or_names_the_problem(
            memory,
            "select * from memory.recall(%s, k => %s, level => %s, weights => %s)",
            (query, k, level, Jsonb(weights) if weights is not None else None),
        )

    recall()


def test_remember_and_feedback(memory):
    @examples(1000)
    @given(content=identifier, kind=st.sampled_from(["fact", "preference", "rule", "wish", ""]), metadata=jsonb_value)
    def remember(content, kind, metadata):
        works_or_names_the_problem(
            memory, "select * from memory.remember(%s, %s, metadata => %s)", (content, kind, Jsonb(metadata))
        )

    remember()

    @examples(500)
    @given(
        turn=st.integers(min_value=-5, max_value=50),
        verdict=st.none() | st.sampled_from(["helpful", "unhelpful", "incorrect", "stale", "meh"]),
        note=st.none() | identifier,
    )
    def feedback(turn, verdict, note):
        works_or_names_the_problem(
            memory, "select * from memory.give_feedback(%s, turn_id => %s, note => %s)", (verdict, turn, note)
        )

    feedback()


def test_settings(memory):
    keys = [k for (k,) in memory.execute("select key from memory.setting_definitions()")]

    @examples(600)
    @given(key=st.sampled_from([*keys, "nope", ""]), value=jsonb_value)
    def config(key, value):
        if works_or_names_the_problem(
            memory, "insert into memory.config (key, value) values (%s, %s)", (key, Jsonb(value))
        ):
            # a value the table took must work where it is used
            assert works_or_names_the_problem(memory, "select * from memory.recall('tea')", ())
            memory.execute("delete from memory.config")

    config()
