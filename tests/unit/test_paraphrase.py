"""The guard of semantic dedup: paraphrases state the same values; a changed value is a new claim."""

from __future__ import annotations

import pytest

from agent_memory_db.paraphrase import same_values, values


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Deploys go out on Tuesdays.", "Every Tuesdays deploy, the release goes out."),
        ("The user prefers dark mode.", "Prefers a dark theme in the editor."),
        ("Budget is 1,200 dollars a month.", "The monthly budget: 1,200 dollars."),
        ("Don't push to main.", "Never push to main."),
        ("The team is led by Ana.", "Our team lead is Ana."),
    ],
)
def test_paraphrases_state_the_same_values(first: str, second: str) -> None:
    assert same_values(first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Deploys go out on Tuesdays.", "Deploys go out on Thursdays."),
        ("The daily quota is 1,000 calls.", "The daily quota is 1,200 calls."),
        ("The user likes olives.", "The user does not like olives."),
        ("Coverage reached 65%.", "Coverage reached 78%."),
        ("We use Postgres for auth.", "We use MySQL for auth."),
    ],
)
def test_a_changed_value_or_polarity_is_another_claim(first: str, second: str) -> None:
    assert not same_values(first, second)


def test_a_sentences_first_word_and_i_are_not_names() -> None:
    assert values("Always answer briefly. I prefer Vim.") == (frozenset({"vim"}), False)
    # So a name that opens one claim and not the other keeps two paraphrases apart: dedup errs on keeping both.
    assert not same_values("Ana leads the team.", "The team is led by Ana.")


def test_a_long_claim_is_read_in_linear_time() -> None:
    claim = "The Team met Ana. " * 20_000
    assert values(claim) == (frozenset({"team", "ana"}), False)
