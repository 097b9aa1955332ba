"""memory.recall and memory.explain_recall against real enriched memory and the real embedder."""

import math

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb

TRIP = [
    {"role": "user", "name": "Maria", "content": "I finally booked the flights to Lisbon for our anniversary."},
    {"role": "assistant", "name": "Joe", "content": "That sounds lovely, when do you leave?"},
    {"role": "user", "name": "Maria", "content": "We fly out on the twelfth of June and stay for a week."},
]
WORK = [
    {"role": "user", "name": "Joe", "content": "The billing service crashed again because the token expired."},
    {"role": "assistant", "name": "Maria", "content": "Rotate the signing keys and add an alert for expiry."},
    {"role": "user", "name": "Joe", "content": "Good idea, I will set up the alert tomorrow morning."},
]
PETS = [
    {"role": "user", "name": "Maria", "content": "My dog Biscuit learned to fetch the newspaper this week."},
    {"role": "assistant", "name": "Joe", "content": "Ha, Biscuit is a clever pup. What breed is he?"},
]


def signal_names(db, stage):
    return [row[0] for row in db.execute("select name from memory.signal_definitions() where stage = %s", (stage,))]


def contribution(components, name):
    return components["signals"][name]["contribution"]


@pytest.fixture
def memory(db):
    for session, messages, when in (
        ("trip", TRIP, "2024-05-01T10:00:00Z"),
        ("work", WORK, "2024-03-01T10:00:00Z"),
        ("pets", PETS, "2024-01-01T10:00:00Z"),
    ):
        db.execute(
            "select memory.commit(%s, %s, agent_id => 'bot', started_at => %s, source => %s, enrich => 'now')",
            (session, Json(messages), when, "chat" if session != "work" else "slack"),
        )
    return db


def recall(db, query, **options):
    names = "".join(f", {name} => %({name})s" for name in options)
    cur = db.execute(f"select * from memory.recall(%(query)s{names})", {"query": query, **options})
    columns = [c.name for c in cur.description]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]


def test_the_turn_that_answers_a_paraphrase_comes_first(memory):
    hits = recall(memory, "When is Maria's vacation to Portugal?", k=3)
    assert hits[0]["session_id"] == "trip"
    assert "twelfth of June" in hits[0]["content"] or "Lisbon" in hits[0]["content"]


def test_rows_carry_session_turn_speaker_time_summary_and_components(memory):
    hit = recall(memory, "billing crash expired token", k=1)[0]
    assert (hit["session_id"], hit["agent_id"], hit["role"], hit["speaker"]) == ("work", "bot", "user", "Joe")
    assert hit["summary"] and hit["created_at"] is not None and hit["turn_id"] > 0
    parts = hit["components"]
    assert set(parts["signals"]) == set(signal_names(memory, "fusion") + signal_names(memory, "boost"))
    assert parts["signals"]["lexical"]["rank"] == 1 and parts["model"] == "all-MiniLM-L6-v2"
    assert parts["chunk_no"] == 0 and parts["rerank"] is None


def test_score_is_the_fused_score_plus_the_boosts_and_fused_the_sum_of_the_lists(memory):
    hit = recall(memory, "billing crash expired token", k=1)[0]
    parts = hit["components"]
    fused = sum(contribution(parts, name) for name in signal_names(memory, "fusion"))
    boosts = sum(contribution(parts, name) for name in signal_names(memory, "boost"))
    assert math.isclose(parts["fused"], fused, abs_tol=1e-4)
    assert math.isclose(hit["score"], parts["fused"] + boosts, abs_tol=1e-4)


def test_scores_are_strictly_ordered_without_ties_at_the_top(memory):
    scores = [hit["score"] for hit in recall(memory, "alert for the signing keys", k=5)]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


def test_k_limits_the_rows(memory):
    assert len(recall(memory, "Biscuit the dog", k=2)) == 2


def test_session_level_gives_one_row_per_session_with_its_best_turn(memory):
    hits = recall(memory, "Biscuit the dog fetch", k=3, level="session")
    assert hits[0]["session_id"] == "pets"
    assert len({hit["session_id"] for hit in hits}) == len(hits)
    assert "Biscuit" in hits[0]["content"]


def test_filters_by_time_range_source_and_agent(memory):
    assert {h["session_id"] for h in recall(memory, "week", since="2024-04-01T00:00:00Z")} == {"trip"}
    assert {h["session_id"] for h in recall(memory, "week", until="2024-02-01T00:00:00Z")} == {"pets"}
    assert {h["session_id"] for h in recall(memory, "alert", source="slack")} == {"work"}
    assert recall(memory, "alert", agent_id="someone-else") == []


def test_an_entity_the_query_names_lifts_the_turns_that_mention_it(memory):
    hits = recall(memory, "what happened with Biscuit", k=10)
    assert "Biscuit" in hits[0]["content"] and hits[0]["components"]["entities_matched"] == ["Biscuit"]
    lifted = {h["content"] for h in hits if contribution(h["components"], "entity") > 0}
    assert lifted == {PETS[0]["content"], PETS[1]["content"]}
    # A name said in 2 of the scope's 8 chunks weighs ln(1 + 8/2) / ln(1 + 8).
    assert contribution(hits[0]["components"], "entity") == pytest.approx(math.log(5) / math.log(9), abs=1e-5)


def test_a_lower_case_word_is_no_name_unless_the_gazetteer_knows_it(memory):
    assert recall(memory, "what happened with biscuit", k=1)[0]["components"]["entities_matched"] == []


def test_a_speaker_the_query_names_is_not_also_an_entity_of_it(memory):
    hit = recall(memory, "What did Joe say about the alert?", k=1)[0]
    assert hit["components"]["entities_matched"] == [] and contribution(hit["components"], "entity") == 0


def test_passed_entities_any_lift_without_filtering(memory):
    def ranked(**entities):
        return [h["content"] for h in recall(memory, "where are we flying", k=10, **entities)]

    lifted = recall(memory, "where are we flying", entities=["Lisbon"], entity_mode="any", k=10)
    assert {h["session_id"] for h in lifted} == {"pets", "trip", "work"}
    assert [h["content"] for h in lifted if contribution(h["components"], "entity") == 1] == [TRIP[0]["content"]]
    assert ranked(entities=["Lisbon"]).index(TRIP[0]["content"]) < ranked().index(TRIP[0]["content"])


def test_passed_entities_all_keep_to_sessions_that_mention_every_one(memory):
    both = recall(memory, "what happened", entities=["maria", "BISCUIT"], entity_mode="all", k=10)
    assert sorted(h["content"] for h in both) == sorted(m["content"] for m in PETS)
    assert recall(memory, "what happened", entities=["Biscuit", "Lisbon"], entity_mode="all") == []
    assert recall(memory, "what happened", entities=["Biscuit", "Atlantis"], entity_mode="all") == []


def test_a_graph_neighbour_lifts_only_with_its_weight(memory):
    # Lisbon is mentioned in a turn of Maria's: she is its neighbour, Joe is not.
    hits = recall(memory, "Lisbon", k=10, weights=Jsonb({"weight_entity_neighbor": 0.5}))
    values = {(h["speaker"], h["components"]["signals"]["entity_neighbor"]["value"]) for h in hits}
    assert ("Maria", 1) in values and ("Joe", 1) not in values
    assert all(h["speaker"] == "Maria" for h in hits if contribution(h["components"], "entity_neighbor") == 0.5)
    unweighted = recall(memory, "Lisbon", k=10)
    assert all(contribution(h["components"], "entity_neighbor") == 0 for h in unweighted)


def test_a_named_speaker_lifts_their_turns(memory):
    hit = recall(memory, "What did Joe say about the alert?", k=1)[0]
    assert hit["speaker"] == "Joe" and contribution(hit["components"], "speaker") > 0
    assert hit["components"]["speakers_matched"] == ["Joe"]


def test_trust_changes_ranking(memory):
    before = recall(memory, "alert", k=2)
    second = before[1]["turn_id"]
    memory.execute("update memory.turns set trust = 20 where turn_id = %s", (second,))
    after = recall(memory, "alert", k=2)
    assert after[0]["turn_id"] == second
    assert contribution(after[0]["components"], "trust") == pytest.approx(math.log(20), abs=1e-4)


def test_precedence_per_call_over_session_over_config_over_default(memory):
    def speaker_weight():
        components = recall(memory, "What did Joe say about the alert?", k=1, weights=Jsonb(weights))[0]["components"]
        return components["signals"]["speaker"]["weight"]

    weights = {}
    assert speaker_weight() == pytest.approx(2.0)
    memory.execute("insert into memory.config (key, value) values ('weight_speaker', '0.9')")
    assert speaker_weight() == pytest.approx(0.9)
    memory.execute("set memory.weight_speaker = 1.5")
    assert speaker_weight() == pytest.approx(1.5)
    weights = {"weight_speaker": 2.5}
    assert speaker_weight() == pytest.approx(2.5)


def test_rrf_fusion_ranks_with_reciprocal_ranks(memory):
    hit = recall(memory, "billing crash expired token", k=1, weights=Jsonb({"fusion": "rrf", "rrf_k": 10}))[0]
    assert hit["components"]["fusion"] == "rrf"
    signals = hit["components"]["signals"]
    expected = 1 / (10 + signals["lexical"]["rank"]) + signals["dense"]["weight"] / (10 + signals["dense"]["rank"])
    assert hit["components"]["fused"] == pytest.approx(expected, abs=1e-5)


def test_without_an_embedder_recall_uses_full_text_and_says_so(memory):
    memory.execute("set memory.embedder = 'none'")
    hits = recall(memory, "Biscuit", k=2)
    assert hits and hits[0]["components"]["degraded"] == ["no embedder configured: full-text only"]
    assert hits[0]["components"]["signals"]["dense"]["value"] is None


def test_a_failing_embedder_degrades_to_full_text(db):
    db.execute("select memory.commit('s', %s, enrich => 'now')", (Json(WORK),))
    db.execute("set memory.embedder = 'openai'")
    db.execute("set memory.openai_base_url = 'http://127.0.0.1:9/v1'")
    db.execute("set memory.http_retries = 0")
    db.execute(
        "insert into memory.embedding_models (model, provider, dimensions, state, ready_at)"
        " values ('text-embedding-3-small', 'openai', 1536, 'ready', now())"
    )
    hits = recall(db, "token expired", k=1)
    assert "query embedding failed" in hits[0]["components"]["degraded"][0]


def test_with_no_embeddings_yet_recall_uses_full_text(db):
    db.execute("set memory.embedder = 'none'")
    db.execute("select memory.commit('s', %s, enrich => 'now')", (Json(WORK),))
    db.execute("reset memory.embedder")
    hits = recall(db, "token expired", k=1)
    assert hits[0]["components"]["degraded"] == ["no embeddings yet: full-text only"]


def test_callers_query_vector_is_used_and_checked(memory):
    vector = memory.execute("select (memory.embed(array['dog that fetches']))[1]").fetchone()[0]
    hits = recall(memory, "pets", k=1, query_vector=vector)
    assert hits[0]["session_id"] == "pets"
    with pytest.raises(psycopg.errors.RaiseException, match="query_vector has 3 dimensions but model"):
        recall(memory, "pets", query_vector="[1,2,3]")


def test_a_zero_query_vector_is_refused_not_scored_nan(memory):
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="query_vector is all zeros"):
        recall(memory, "pets", query_vector="[" + ",".join(["0"] * 384) + "]")


def test_approximate_search_with_a_filter_still_fills_the_list(memory):
    for i in range(30):
        memory.execute(
            "select memory.commit(%s, %s, agent_id => 'other', enrich => 'now')",
            (f"o{i}", Json([{"role": "user", "content": f"Unrelated chatter number {i} about weather."}])),
        )
    exact = recall(memory, "clever dog", k=5, agent_id="bot", weights=Jsonb({"embedder": "local"}))
    approximate = recall(memory, "clever dog", k=5, agent_id="bot", weights=Jsonb({"exact_search_max_chunks": 0}))
    assert len(approximate) == len(exact) == 5
    assert {h["turn_id"] for h in approximate} == {h["turn_id"] for h in exact}


def test_recall_is_read_only_by_default(memory):
    memory.execute("set transaction read only")
    assert recall(memory, "Lisbon", k=1)


def test_access_counting_is_opt_in(memory):
    recall(memory, "Lisbon", k=1)
    assert memory.execute("select sum(access_count) from memory.turns").fetchone()[0] == 0
    hit = recall(memory, "Lisbon", k=1, weights=Jsonb({"recall_count_access": True}))[0]
    assert (
        memory.execute("select access_count from memory.turns where turn_id = %s", (hit["turn_id"],)).fetchone()[0] == 1
    )


def test_explain_lists_every_candidate_with_its_ranks(memory):
    rows = memory.execute(
        "select rank, turn_id, score, components from memory.explain_recall('Lisbon flights')"
    ).fetchall()
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
    assert len(rows) == memory.execute("select count(*) from memory.chunks").fetchone()[0]
    top = recall(memory, "Lisbon flights", k=1)[0]
    assert (rows[0][1], rows[0][2]) == (top["turn_id"], top["score"])
    assert all(r[3]["signals"]["dense"]["rank"] is not None for r in rows)


def test_explain_gives_the_first_k_candidates_and_names_a_bad_k(memory):
    every = memory.execute("select turn_id from memory.explain_recall('Lisbon flights')").fetchall()
    first = memory.execute("select turn_id from memory.explain_recall('Lisbon flights', k => 2)").fetchall()
    assert first == every[:2] and len(every) > 2
    for k in (0, -1):
        with pytest.raises(psycopg.errors.InvalidParameterValue, match=f"k must be at least 1, got {k}"):
            memory.execute("select * from memory.explain_recall('Lisbon flights', k => %s)", (k,))
        memory.rollback()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"query": ""}, "recall needs a query"),
        ({"k": 0}, "k must be at least 1"),
        ({"level": "word"}, "level must be turn or session"),
        ({"entity_mode": "some"}, "entity_mode must be any or all"),
        ({"entities": [" ", "ok", "?!"]}, "nothing left once normalized: ' ', '\\?!'"),
        ({"since": "2024-02-01", "until": "2024-01-01"}, "since .* is after until"),
        ({"weights": Jsonb({"weight_bogus": 1})}, 'unknown setting "weight_bogus"'),
        ({"weights": Jsonb({"weight_dense": "high"})}, '"weight_dense" must be a JSON number'),
        ({"weights": Jsonb([1])}, "weights must be a JSON object"),
    ],
)
def test_bad_arguments_are_named(memory, options, error):
    query = options.pop("query", "Lisbon")
    with pytest.raises(psycopg.errors.RaiseException, match=error):
        recall(memory, query, **options)


def test_sessions_found_by_summary_or_vector_bring_their_best_chunks(memory):
    def candidates(weights):
        return memory.execute(
            "select count(*) from memory.explain_recall('Biscuit fetch', weights => %s)", (Jsonb(weights),)
        ).fetchone()[0]

    for i in range(12):
        filler = [
            {"role": "user", "content": f"Weekly status number {i} about quarterly budget planning."},
            {"role": "assistant", "content": f"Noted item {i}, the budget review moves to next month."},
        ]
        memory.execute("select memory.commit(%s, %s, agent_id => 'bot', enrich => 'now')", (f"f{i}", Json(filler)))
    alone = candidates({"recall_candidates": 5, "session_candidates": 0})
    with_sessions = candidates({"recall_candidates": 5, "session_candidates": 5})
    assert alone <= 10 < with_sessions


def test_very_common_terms_score_but_bring_no_candidates_alone(memory):
    def candidates(max_df):
        weights = {"embedder": "none", "session_candidates": 0, "lexical_max_df": max_df}
        return memory.execute(
            "select count(*), bool_and((components #>> '{signals,lexical,value}')::float8 > 0)"
            " from memory.explain_recall('Lisbon week', weights => %s)",
            (Jsonb(weights),),
        ).fetchone()

    everything, _ = candidates(1000)
    rare_only, all_scored = candidates(1)
    assert rare_only < everything and all_scored


def test_the_scoring_statement_is_prepared_once_per_session_and_again_after_deallocate(memory):
    first = recall(memory, "Lisbon flights", k=3)
    prepared = "select count(*) from pg_prepared_statements where name like 'memory_recall_score_%'"
    assert memory.execute(prepared).fetchone()[0] == 1
    recall(memory, "Biscuit", k=1)
    assert memory.execute(prepared).fetchone()[0] == 1
    memory.execute("deallocate all")
    assert recall(memory, "Lisbon flights", k=3) == first


def signal_values(hits, name):
    return [(h["content"], h["components"]["signals"][name]["value"]) for h in hits]


def test_recency_is_opt_in_and_with_a_weight_lifts_the_newer_sessions(memory):
    # The sessions are of January, March and May 2024: at a half-life of a year their turns' values are
    # 0.5 ^ (age / 365), newer higher, and a weight lifts May's turns past others that match as well.
    query = "What did Maria say?"
    unweighted = recall(memory, query, k=10)
    assert all(contribution(h["components"], "recency") == 0 for h in unweighted)
    hits = recall(memory, query, k=10, weights=Jsonb({"weight_recency": 100, "recency_half_life_days": 365}))
    now = memory.execute("select now()").fetchone()[0]
    for hit in hits:
        days = (now - hit["created_at"]).total_seconds() / 86400
        assert math.isclose(hit["components"]["signals"]["recency"]["value"], 0.5 ** (days / 365), rel_tol=1e-3)
    by_date = sorted(hits, key=lambda h: h["created_at"])
    assert [contribution(h["components"], "recency") for h in by_date] == sorted(
        contribution(h["components"], "recency") for h in hits
    )

    def first_of(ranked, session):
        return [h["session_id"] for h in ranked].index(session)

    assert first_of(hits, "trip") < first_of(unweighted, "trip")
    assert first_of(hits, "pets") > first_of(unweighted, "pets")


def test_access_lifts_what_recall_returned_before_only_with_its_weight(memory):
    counted = Jsonb({"recall_count_access": True})
    (first,) = recall(memory, "the billing service crashed", k=1, weights=counted)
    for _ in range(2):
        recall(memory, "the billing service crashed", k=1, weights=counted)
    hits = recall(memory, "billing alert", k=10, weights=Jsonb({"weight_access": 1}))
    lifted = {h["turn_id"]: contribution(h["components"], "access") for h in hits}
    assert math.isclose(lifted[first["turn_id"]], math.log(1 + 3), rel_tol=1e-6)
    assert all(value == 0 for turn, value in lifted.items() if turn != first["turn_id"])
    assert all(contribution(h["components"], "access") == 0 for h in recall(memory, "billing alert", k=10))


def test_decayed_importance_lifts_the_more_important_of_two_memories_only_with_its_weight(memory):
    for content, importance in (("The on-call phone is the red one.", 0.1), ("The on-call rota is on the wiki.", 1)):
        memory.execute(
            "select memory.remember(%s, 'fact', agent_id => 'bot', importance => %s, enrich => 'now')",
            (content, importance),
        )
    weights = Jsonb({"weight_decayed_importance": 5, "weight_importance": 0})
    hits = [h for h in recall(memory, "on-call", k=10, weights=weights) if h["kind"] == "fact"]
    assert [h["content"] for h in hits][:1] == ["The on-call rota is on the wiki."]
    values = dict(signal_values(hits, "decayed_importance"))
    assert values["The on-call rota is on the wiki."] > values["The on-call phone is the red one."] > 0
    plain = [h for h in recall(memory, "on-call", k=10, weights=Jsonb({"weight_importance": 0})) if h["kind"] == "fact"]
    assert all(contribution(h["components"], "decayed_importance") == 0 for h in plain)


def test_importance_adds_its_weight_times_a_memorys_importance(memory):
    for content, importance in (("The on-call phone is the red one.", 1), ("The on-call rota is on the wiki.", 0.1)):
        memory.execute(
            "select memory.remember(%s, 'fact', agent_id => 'bot', importance => %s, enrich => 'now')",
            (content, importance),
        )

    def facts(weights=None):
        hits = recall(memory, "on-call rota", k=10, weights=Jsonb(weights or {}))
        return {h["content"]: h for h in hits if h["kind"] == "fact"}

    by_default = facts()
    contributions = {content: contribution(h["components"], "importance") for content, h in by_default.items()}
    assert contributions == {"The on-call phone is the red one.": 1, "The on-call rota is on the wiki.": 0.1}
    # The rota answers the query better; a heavier importance puts the important phone first.
    assert next(iter(facts({"weight_importance": 0}))) == "The on-call rota is on the wiki."
    assert next(iter(facts({"weight_importance": 5}))) == "The on-call phone is the red one."
    assert all(contribution(h["components"], "importance") == 0 for h in facts({"weight_importance": 0}).values())
