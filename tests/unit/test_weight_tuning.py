"""Recall's weights fitted to feedback (agent_memory_db.weight_tuning): pairs, bounds, evidence, the fit."""

import math
import random

import numpy as np
import pytest

from agent_memory_db.weight_tuning import (
    Candidate,
    Query,
    _descend,
    _objective,
    _project,
    features_of,
    fit,
    pairs,
    queries_from,
)


def candidates(*rows: tuple[int, float, float]) -> list[Candidate]:
    return [Candidate(turn, {"lexical": lexical, "dense": dense}) for turn, lexical, dense in rows]


def test_features_are_a_fusion_signals_z_score_and_a_boost_signals_value():
    components = {
        "signals": {
            "lexical": {"value": 7.5, "z": 1.25, "weight": 1, "contribution": 1.25},
            "dense": {"value": 0.61, "z": None, "weight": 1.2, "contribution": 0},
            "speaker": {"value": 1, "weight": 2, "contribution": 2},
            "trust": {"value": None, "weight": 1, "contribution": 0},
        }
    }
    assert features_of(components, {"lexical", "dense"}) == {
        "lexical": 1.25,
        "dense": 0.0,
        "speaker": 1.0,
        "trust": 0.0,
    }


def test_a_helpful_turn_is_preferred_to_those_above_it_the_unhelpful_and_three_below():
    ranked = candidates(*((turn, 0.0, 0.0) for turn in range(10)))
    query = Query(ranked, helpful=frozenset({4, 1}), unhelpful=frozenset({9}))
    worse = {(id(b), id(w)) for b, w in pairs(query)}
    by_turn = {c.turn: id(c.features) for c in ranked}
    expected = {(by_turn[1], by_turn[n]) for n in (0, 2, 3, 9)}  # 4 is helpful: never the worse of a pair
    expected |= {(by_turn[4], by_turn[n]) for n in (0, 2, 3, 5, 6, 7, 9)}
    assert worse == expected


def test_a_query_without_a_helpful_candidate_gives_no_pair():
    ranked = candidates((1, 1, 1), (2, 0, 0))
    assert pairs(Query(ranked, unhelpful=frozenset({1}))) == []
    assert pairs(Query(ranked, helpful=frozenset({99}))) == []


def synthetic(queries: int, seed: int) -> list[Query]:
    """Queries whose helpful turn is the one with the best dense value, but lexical ranks them."""
    rng = random.Random(seed)
    out = []
    for _ in range(queries):
        rows = [(turn, rng.gauss(0, 1), rng.gauss(0, 1)) for turn in range(20)]
        best_dense = max(rows, key=lambda r: r[2])[0]
        ranked = sorted(rows, key=lambda r: -(r[1] + 0.5 * r[2]))
        out.append(Query(candidates(*ranked), helpful=frozenset({best_dense})))
    return out


def test_the_fit_moves_weight_to_the_signal_that_orders_the_verdicts():
    result = fit(synthetic(40, seed=1), {"lexical": 1.0, "dense": 0.5, "recency": 0.0}, max_factor=2, min_helpful=20)
    assert result.enough and result.reason == "fitted"
    assert result.weights["dense"] / 0.5 > 1.5 and result.weights["lexical"] < 0.75
    assert result.weights["recency"] == 0  # a signal switched off stays off
    assert result.ordered_after > result.ordered_before
    assert result.top_helpful_after > result.top_helpful_before
    assert result.helpful_used == 40 and result.queries_used == 40
    # Held-out queries of the same kind are ordered better too.
    held_out = fit(synthetic(40, seed=2), result.weights, max_factor=1, min_helpful=1)
    baseline = fit(synthetic(40, seed=2), {"lexical": 1.0, "dense": 0.5}, max_factor=1, min_helpful=1)
    assert held_out.top_helpful_before > baseline.top_helpful_before


def test_factors_stay_within_bounds_and_keep_their_geometric_mean():
    result = fit(synthetic(60, seed=3), {"lexical": 1.0, "dense": 0.5}, max_factor=1.3, min_helpful=1)
    assert all(1 / 1.3 - 1e-9 <= f <= 1.3 + 1e-9 for f in result.factors.values())
    assert result.factors["lexical"] * result.factors["dense"] == pytest.approx(1.0)


def test_negative_weights_keep_their_sign():
    queries = synthetic(30, seed=4)
    result = fit(queries, {"lexical": 1.0, "dense": 0.5, "age": -0.3}, max_factor=2, min_helpful=1)
    assert result.weights["age"] == -0.3  # equal on both sides of every pair (absent): not tuned
    mixed = [
        Query([Candidate(c.turn, {**c.features, "age": -c.features["dense"]}) for c in q.candidates], q.helpful)
        for q in queries
    ]
    result = fit(mixed, {"lexical": 1.0, "dense": 0.5, "age": -0.3}, max_factor=2, min_helpful=1)
    assert result.weights["age"] < 0


def test_below_the_evidence_needed_nothing_moves():
    result = fit(synthetic(5, seed=5), {"lexical": 1.0, "dense": 0.5}, max_factor=2, min_helpful=20)
    assert not result.enough
    assert result.weights == {"lexical": 1.0, "dense": 0.5}
    assert result.reason == "not enough evidence: 5 helpful verdicts on recalled turns, 20 needed"


def test_the_fit_reaches_the_optimum_when_a_weight_sits_on_its_bound():
    """Against plain small steps: the backtracking descent must not stop on a step that returns to its point."""
    rng = np.random.default_rng(7)
    for _ in range(5):
        differences = rng.normal(size=(60, 4)) + rng.normal(size=4)
        base = np.array([1.0, 1.2, 0.5, 2.0])
        found = _descend(differences, base, math.log(2))
        slow = np.zeros(4)
        for _ in range(1500):
            slow = _project(slow - 0.05 * _objective(differences, base, slow)[1], math.log(2))
        assert _objective(differences, base, found)[0] <= _objective(differences, base, slow)[0] + 1e-6
        assert abs(found.mean()) < 1e-9 and np.abs(found).max() <= math.log(2) + 1e-12


def test_a_single_signal_that_orders_the_pairs_keeps_its_weight():
    only = [Query([Candidate(1, {"lexical": 1.0}), Candidate(2, {"lexical": 0.0})], helpful=frozenset({2}))]
    result = fit(only, {"lexical": 1.0}, max_factor=2, min_helpful=1)
    assert (result.enough, result.reason, result.weights) == (False, "the verdicts move no weight", {"lexical": 1.0})


def test_no_pair_and_no_weight_are_said():
    lone = Query(candidates((1, 1, 1)), helpful=frozenset({1}))
    assert fit([lone], {"lexical": 1.0}, max_factor=2, min_helpful=1).reason == "no pair to order"
    assert fit(synthetic(3, 6), {"lexical": 0.0, "dense": 0.0}, 2, 1).reason == "no signal has a weight to tune"
    flat = Query(candidates((1, 0, 0), (2, 0, 0)), helpful=frozenset({2}))
    assert fit([flat], {"lexical": 1.0, "dense": 1.0}, 2, 1).reason == "no signal tells the pairs apart"


def test_a_bound_below_one_is_refused():
    with pytest.raises(ValueError, match=r"max_factor must be at least 1, got 0\.5"):
        fit([], {"lexical": 1.0}, max_factor=0.5, min_helpful=1)


def test_queries_are_read_as_the_database_passes_them():
    components = {"signals": {"lexical": {"value": 3.0, "z": 0.5}, "speaker": {"value": 1}}}
    rows = [{"candidates": [{"turn": 7, "components": components}], "helpful": [7], "unhelpful": [8, 9]}]
    (query,) = queries_from(rows, {"lexical"})
    assert query.candidates == [Candidate(7, {"lexical": 0.5, "speaker": 1.0})]
    assert query.helpful == {7} and query.unhelpful == {8, 9}
