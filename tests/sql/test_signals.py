"""The recall signals, each against a value computed by hand, and the registry they live in."""

import math
import re
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb


def signal(db, name, settings=None, **fields):
    """The value of one signal function for a candidate with the given fields."""
    return db.execute(
        f"select memory_internal.signal_{name}(jsonb_populate_record(null::memory.recall_candidate, %s), %s)",
        (Jsonb(fields), Jsonb(settings or {})),
    ).fetchone()[0]


def bm25(db, tsv, length, context_length, context_weight):
    return db.execute(
        "select bm25 from memory_internal._chunk_bm25(%s::tsvector, %s, %s, array['cat'], array[2.0], 0.9, 0.4, 4, %s)",
        (tsv, length, context_length, context_weight),
    ).fetchone()[0]


# 'cat' twice in the turn's own words (length 3) and once in its context (weight C, length 1); idf 2,
# k1 0.9, b 0.4, average length 4.
OWN_AND_CONTEXT = "'cat':1,3 'dog':2 'cat':4C"


def test_bm25_of_a_turns_own_words(db):
    # Own words: 2 * 2 * 1.9 / (2 + 0.9 * (0.6 + 0.4 * 3 / 4)) = 7.6 / 2.81; with context at 0.5:
    # 0.5 * 2 * 3 * 1.9 / (3 + 0.9 * (0.6 + 0.4 * 4 / 4)) = 0.5 * 11.4 / 3.9, lower: own words win.
    assert bm25(db, OWN_AND_CONTEXT, 3, 1, 0.5) == pytest.approx(2.7046263, abs=1e-6)


def test_bm25_with_context_when_it_says_more_than_the_turn(db):
    # With context at weight 1: 11.4 / 3.9 beats the own words' 7.6 / 2.81.
    assert bm25(db, OWN_AND_CONTEXT, 3, 1, 1.0) == pytest.approx(2.9230769, abs=1e-6)
    # Only the context has the word: 0.5 * 2 * 1.9 / (1 + 0.9 * (0.6 + 0.4 * 2 / 4)) = 0.5 * 3.8 / 1.72.
    assert bm25(db, "'dog':1 'cat':2C", 1, 1, 0.5) == pytest.approx(1.1046512, abs=1e-6)


def test_bm25_of_a_chunk_with_none_of_the_words_is_zero(db):
    assert bm25(db, "'dog':2", 1, 0, 0.5) == 0


def test_bm25_in_recall_uses_the_scopes_term_statistics(db):
    # Three one-chunk turns (no context): lengths 2, 2, 3. 'banana' is in 1 of 3 chunks:
    # idf = ln(1 + 2.5 / 1.5) = 0.980829; bm25 = idf * 1.9 / (1 + 0.9 * (0.6 + 0.4 * 3 / (7 / 3))) = 0.930459.
    db.execute("set memory.embedder = 'none'")
    db.execute("set memory.index_context_turns = 0")
    texts = ["apples and pears", "apples everywhere", "bananas grow tropical"]
    db.execute(
        "select memory.commit('s', %s, enrich => 'now')", (Json([{"role": "user", "content": t} for t in texts]),)
    )
    value = db.execute(
        "select components #>> '{signals,lexical,value}' from memory.recall('bananas', k => 1)"
    ).fetchone()[0]
    assert float(value) == pytest.approx(0.930459, abs=1e-6)


def test_dense_is_the_turns_own_cosine_when_its_context_adds_nothing(db):
    # with context: 0.85 * (0.8 + 0.6) / sqrt(2 + 2 * 0.5) = 0.687, below the own cosine 0.8
    value = signal(db, "dense", {"context_weight": 0.85}, cosine=0.8, context_cosine=0.6, context_similarity=0.5)
    assert value == pytest.approx(0.8)


def test_dense_adds_the_context_vector_as_if_embedded_together(db):
    # 0.85 * (0.3 + 0.9) / sqrt(2 + 2 * 0.2)
    value = signal(db, "dense", {"context_weight": 0.85}, cosine=0.3, context_cosine=0.9, context_similarity=0.2)
    assert value == pytest.approx(0.6584071, abs=1e-6)


def test_dense_without_context_is_the_cosine(db):
    assert signal(db, "dense", {"context_weight": 0.5}, cosine=0.8) == pytest.approx(0.8)


def test_recency_halves_every_half_life(db):
    assert signal(db, "recency", {"recency_half_life_days": 30}, age_days=60) == pytest.approx(0.25)


def test_recency_of_a_very_old_turn_is_tiny_not_an_underflow(db):
    assert 0 < signal(db, "recency", {"recency_half_life_days": 0.001}, age_days=3650) < 1e-300


@pytest.mark.parametrize(("age_days", "expected"), [(0, 1 / (1 + math.exp(-30 / 7))), (30, 0.5), (44, 0.1192029)])
def test_sigmoid_recency_is_one_half_at_its_midpoint(db, age_days, expected):
    sigmoid = {"recency_decay": "sigmoid", "recency_midpoint_days": 30, "recency_width_days": 7}
    assert signal(db, "recency", sigmoid, age_days=age_days) == pytest.approx(expected, abs=1e-6)


def test_sigmoid_recency_far_from_its_midpoint_is_0_or_1_not_an_overflow_or_underflow(db):
    sigmoid = {"recency_decay": "sigmoid", "recency_midpoint_days": 0, "recency_width_days": 0.001}
    assert signal(db, "recency", sigmoid, age_days=3650) == pytest.approx(0, abs=1e-300)
    sigmoid = {"recency_decay": "sigmoid", "recency_midpoint_days": 400, "recency_width_days": 0.5}
    assert signal(db, "recency", sigmoid, age_days=0) == 1


def test_period_is_one_inside_and_halves_every_half_life_outside(db):
    half_life = {"period_half_life_days": 7}
    assert signal(db, "period", half_life, days_from_period=0) == 1
    assert signal(db, "period", half_life, days_from_period=14) == pytest.approx(0.25)
    assert 0 < signal(db, "period", half_life, days_from_period=1e6) < 1e-300
    assert signal(db, "period", half_life) == 0  # the query names no period


def test_recall_prefers_the_turn_said_in_the_period_the_query_names(db):
    db.execute("set memory.embedder = 'none'")
    for session, day in (("march", "2024-03-12"), ("june", "2024-06-20")):
        db.execute(
            "select memory.commit(%s, %s, enrich => 'now')",
            (
                session,
                Json([{"role": "user", "content": "we moved the billing job to the new cluster", "created_at": day}]),
            ),
        )
    named = db.execute(
        "select session_id, (components -> 'signals' -> 'period' ->> 'value')::float8 from memory.recall(%s, k => 2)",
        ("when did the billing job move to the new cluster, in June 2024?",),
    ).fetchall()
    assert [session for session, _ in named] == ["june", "march"]
    assert [value for _, value in named] == [1, pytest.approx(0.5 ** (81 / 7), abs=1e-6)]  # 81 days before June
    unnamed = db.execute(
        "select (components -> 'signals' -> 'period' ->> 'value')::float8 from memory.recall('billing job cluster')"
    ).fetchall()
    assert unnamed == [(0,), (0,)]


def test_the_period_a_query_names_is_read_in_the_database(db):
    period = "select memory_internal._named_period(%s, '2026-11-30')::text"
    assert (
        db.execute(period, ("what broke in the first week of October 2023?",)).fetchone()[0]
        == "[2023-10-01,2023-10-08)"
    )
    assert db.execute(period, ("what did we fix yesterday?",)).fetchone()[0] == "[2026-11-29,2026-11-30)"
    assert db.execute(period, ("what may we fix?",)).fetchone()[0] is None


def test_trust_is_its_logarithm(db):
    assert signal(db, "trust", trust=0.5) == pytest.approx(math.log(0.5))
    assert signal(db, "trust", trust=1) == 0


def test_access_is_the_logarithm_of_one_plus_the_count(db):
    assert signal(db, "access", access_count=3) == pytest.approx(math.log(4))


def test_length_is_minus_the_logarithm_of_the_turns_chunks(db):
    assert signal(db, "length", chunk_count=4) == pytest.approx(-math.log(4))
    assert (signal(db, "length", chunk_count=1), signal(db, "length")) == (0, 0)


def test_length_takes_its_weight_times_the_log_of_the_chunks_from_a_long_turn(db):
    """A short question and a long reply that repeats its words in one of its many chunks."""
    question = "Which PostgreSQL extension gives us vector search with HNSW indexes?"
    filler = " ".join(f"Step {n}: the staging cluster was rebuilt from its nightly snapshot." for n in range(200))
    reply = f"{filler} About which PostgreSQL extension gives us vector search with HNSW indexes: pgvector. {filler}"
    said = [{"role": "user", "content": question}, {"role": "assistant", "content": reply}]
    db.execute("select memory.commit('s', %s, enrich => 'now')", (Json(said),))
    counted = db.execute("select t.role, count(*) from memory.chunks join memory.turns as t using (turn_id) group by 1")
    chunks = dict(counted.fetchall())
    assert chunks["user"] == 1 and chunks["assistant"] > 4

    def scores(weight: float) -> dict[str, float]:
        rows = db.execute(
            "select role, score from memory.recall('which extension gives vector search with HNSW indexes?', k => 2,"
            " weights => %s)",
            (Jsonb({"weight_length": weight}),),
        )
        return dict(rows.fetchall())

    off, on = scores(0), scores(3)
    assert on["user"] == pytest.approx(off["user"])
    assert off["assistant"] - on["assistant"] == pytest.approx(3 * math.log(chunks["assistant"]))


def test_session_is_the_best_fused_score_of_the_session(db):
    assert signal(db, "session", session_best=1.25) == pytest.approx(1.25)


def test_neighbor_is_the_reply_or_a_share_of_the_turn_before(db):
    share = {"neighbor_previous_share": 0.5}
    assert signal(db, "neighbor", share, next_fused=0.75, previous_fused=1.0) == pytest.approx(0.75)
    assert signal(db, "neighbor", share, next_fused=0.25, previous_fused=1.0) == pytest.approx(0.5)
    assert signal(db, "neighbor", share, previous_fused=-1.0) == pytest.approx(-0.5)
    assert signal(db, "neighbor", share) == 0


def test_speaker_and_open_loop_are_one_or_zero(db):
    assert (signal(db, "speaker", speaker_named=True), signal(db, "speaker", speaker_named=False)) == (1, 0)
    assert (signal(db, "open_loop", holds_open_loop=True), signal(db, "open_loop")) == (1, 0)


def test_tool_result_is_minus_one_for_a_tools_output_only(db):
    assert [signal(db, "tool_result", role=role) for role in ("tool", "user", "assistant")] == [-1, 0, 0]


def test_a_tool_result_ranks_below_an_equally_relevant_turn_unless_its_weight_is_zero(db):
    text = "The migration failed with NULLS NOT DISTINCT unsupported on this server."
    messages = [{"role": "tool", "content": text}, {"role": "user", "content": text}]
    db.execute("select * from memory.commit('s1', %s, enrich => 'now', metadata => '{}')", (Json(messages),))
    ranked = "select role from memory.recall('NULLS NOT DISTINCT', weights => %s)"
    assert [r for (r,) in db.execute(ranked, (Jsonb({"weight_neighbor": 0}),))] == ["user", "tool"]
    neutral = Jsonb({"weight_neighbor": 0, "weight_tool_result": 0})
    scores = db.execute("select score from memory.recall('NULLS NOT DISTINCT', weights => %s)", (neutral,)).fetchall()
    assert scores[0][0] == pytest.approx(scores[1][0], abs=0.05)


def test_summary_and_session_vector_are_their_z_scores(db):
    assert signal(db, "summary", summary_z=1.5) == pytest.approx(1.5)
    assert signal(db, "session_vector", session_vector_z=-0.5) == pytest.approx(-0.5)


@pytest.fixture
def lexical_only(db):
    """One session of four turns, full text only, no context: every fused score is the BM25 z-score."""
    db.execute("set memory.embedder = 'none'")
    db.execute("set memory.index_context_turns = 0")
    texts = [
        "the deploy failed on friday night",
        "rollback of the deploy worked after an hour",
        "the deploy pipeline needs a canary stage and a deploy freeze",
        "lunch was pizza",
    ]
    db.execute(
        "select memory.commit('s', %s, enrich => 'now')", (Json([{"role": "user", "content": t} for t in texts]),)
    )
    rows = db.execute(
        "select turn_id, fused, components from memory.explain_recall('deploy canary', weights => %s)",
        (Jsonb({"session_candidates": 0}),),
    ).fetchall()
    return {turn: (fused, components) for turn, fused, components in rows}


def test_zscore_fusion_is_the_weighted_z_score_of_each_list(lexical_only):
    values = [c["signals"]["lexical"]["value"] for _, c in lexical_only.values()]
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    for fused, components in lexical_only.values():
        expected = (components["signals"]["lexical"]["value"] - mean) / deviation
        assert components["signals"]["lexical"]["z"] == pytest.approx(expected, abs=1e-5)
        assert fused == pytest.approx(expected, abs=1e-5)


def test_neighbor_and_session_read_the_fused_scores_of_the_session(lexical_only):
    turns = sorted(lexical_only)
    assert len(turns) == 3  # the lunch turn has no query word
    first, middle, last = (lexical_only[t] for t in turns)
    best = max(first[0], middle[0], last[0])
    for _, components in (first, middle, last):
        assert components["signals"]["session"]["value"] == pytest.approx(best, abs=1e-5)
    # The reply counts whole, the turn before half (neighbor_previous_share).
    assert middle[1]["signals"]["neighbor"]["value"] == pytest.approx(max(last[0], first[0] / 2), abs=1e-5)
    assert first[1]["signals"]["neighbor"]["value"] == pytest.approx(middle[0], abs=1e-5)
    assert last[1]["signals"]["neighbor"]["value"] == pytest.approx(middle[0] / 2, abs=1e-5)


def test_the_registry_lists_every_signal_with_its_weight_setting(db):
    rows = db.execute("select name, stage, weight_setting, weight from memory.signal_definitions()").fetchall()
    assert [r[0] for r in rows if r[1] == "fusion"] == ["dense", "lexical"]
    assert {r[0] for r in rows if r[1] == "boost"} >= {"session", "neighbor", "speaker", "recency", "trust"}
    assert all(r[2] == "weight_" + r[0] for r in rows)
    setting = db.execute("select value from memory.settings where key = 'weight_lexical'").fetchone()[0]
    assert setting == next(r[3] for r in rows if r[0] == "lexical")


@pytest.fixture
def with_position_signal(db):
    db.execute(
        "create function public.signal_later(c memory.recall_candidate, s jsonb) returns double precision"
        " language sql immutable as $$ select (c).position::double precision $$"
    )
    db.execute(
        "select memory.define_signal('later', 'boost', 'public.signal_later(memory.recall_candidate, jsonb)', 0.25,"
        " 'The turn''s position in its session.')"
    )
    db.execute("set memory.embedder = 'none'")
    texts = ["deploy notes one", "deploy notes two", "deploy notes three"]
    db.execute(
        "select memory.commit('s', %s, enrich => 'now')", (Json([{"role": "user", "content": t} for t in texts]),)
    )
    return db


def test_a_signal_added_to_the_registry_takes_part_in_recall(with_position_signal):
    hits = with_position_signal.execute("select content, components from memory.recall('deploy notes')").fetchall()
    later = {content: components["signals"]["later"] for content, components in hits}
    assert later["deploy notes three"] == {"value": 2, "weight": 0.25, "contribution": 0.5}
    assert hits[0][0] == "deploy notes three"


def test_a_signal_added_to_the_registry_shows_in_explain_and_its_weight_is_a_setting(with_position_signal):
    with_position_signal.execute("set memory.weight_later = 2")
    rows = with_position_signal.execute(
        "select components #> '{signals,later}' from memory.explain_recall('deploy notes')"
    ).fetchall()
    assert {row[0]["contribution"] for row in rows} == {0, 2, 4}
    with pytest.raises(psycopg.errors.RaiseException, match='setting "weight_later" must be between 0 and 100'):
        with_position_signal.execute("select memory.recall('deploy', weights => '{\"weight_later\": 101}')")


def test_a_signal_function_of_the_wrong_shape_is_refused(db):
    db.execute(
        "create function public.bad(c memory.recall_candidate) returns double precision language sql as 'select 1'"
    )
    with pytest.raises(psycopg.errors.InvalidParameterValue, match='signal "bad" needs a function'):
        db.execute("select memory.define_signal('bad', 'boost', 'public.bad(memory.recall_candidate)', 1, 'x')")


def test_a_volatile_signal_function_is_refused(db):
    db.execute(
        "create function public.noisy(c memory.recall_candidate, s jsonb) returns double precision"
        " language sql volatile as 'select random()'"
    )
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="must be immutable or stable"):
        db.execute(
            "select memory.define_signal('noisy', 'boost', 'public.noisy(memory.recall_candidate, jsonb)', 1, 'x')"
        )


@pytest.mark.parametrize(
    ("name", "stage", "weight", "error"),
    [
        ("Bad Name", "boost", 1, "signals_name_check"),
        ("fine", "middle", 1, "signals_stage_check"),
        ("fine", "boost", -1, "signals_default_weight_check"),
    ],
)
def test_bad_registry_rows_are_refused(db, name, stage, weight, error):
    with pytest.raises(psycopg.errors.CheckViolation, match=error):
        db.execute(
            "select memory.define_signal(%s, %s, 'memory_internal.signal_trust(memory.recall_candidate, jsonb)',"
            " %s, 'x')",
            (name, stage, weight),
        )


def test_the_docs_table_of_signals_is_the_registry(db):
    docs = (Path(__file__).resolve().parents[2] / "docs" / "recall.md").read_text()
    table = re.findall(r"^\| `(\w+)` \| (fusion|boost) \| ([\d.]+) \|", docs, re.MULTILINE)
    registry = db.execute("select name, stage, default_weight from memory.signal_definitions()").fetchall()
    assert sorted((name, stage, float(weight)) for name, stage, weight in table) == sorted(registry)
