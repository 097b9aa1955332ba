"""How the client shows recall components: fused lists with their ranks, boosts that moved the score."""

from agent_memory.formatting import ranks, signals

COMPONENTS = {
    "signals": {
        "lexical": {"value": 3.2, "rank": 4, "z": 1.1, "weight": 1.0, "contribution": 1.1},
        "dense": {"value": 0.7, "rank": 1, "z": 2.0, "weight": 0.6, "contribution": 1.2},
        "session": {"value": 2.0, "weight": 0.5, "contribution": 1.0},
        "trust": {"value": -0.693, "weight": 1.0, "contribution": -0.693},
        "recency": {"value": 0.5, "weight": 0.0, "contribution": 0.0},
        "mine": {"value": 2.0, "weight": 0.25, "contribution": 0.5},
    }
}


def test_ranks_lists_every_fused_list_the_candidate_was_ranked_in():
    assert ranks(COMPONENTS) == "dense #1, lexical #4"


def test_signals_lists_the_boosts_that_moved_the_score_including_new_ones():
    assert signals(COMPONENTS) == "mine +0.50, session +1.00, trust -0.69"


def test_components_without_signals_show_nothing():
    assert (ranks({}), signals({"signals": None})) == ("", "")
