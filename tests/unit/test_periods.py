"""The period of time a query names, read from its words (agent_memory_db.periods)."""

from datetime import date

import pytest

from agent_memory_db.periods import named_period

TODAY = date(2026, 11, 30)  # a Monday


@pytest.mark.parametrize(
    ("text", "first", "end"),
    [
        ("What setback did Melanie face in October 2023?", date(2023, 10, 1), date(2023, 11, 1)),
        ("What did Nate do on 25 May, 2022?", date(2022, 5, 25), date(2022, 5, 26)),
        ("the 3rd of Oct, 2023", date(2023, 10, 3), date(2023, 10, 4)),
        ("on October 3rd, 2023", date(2023, 10, 3), date(2023, 10, 4)),
        ("the deploy on 2023-10-03", date(2023, 10, 3), date(2023, 10, 4)),
        ("the 2023-10 report", date(2023, 10, 1), date(2023, 11, 1)),
        ("Sept 2024", date(2024, 9, 1), date(2024, 10, 1)),
        ("in 2023", date(2023, 1, 1), date(2024, 1, 1)),
        ("early 2023", date(2023, 1, 1), date(2023, 5, 2)),
        ("mid-June 2024", date(2024, 6, 11), date(2024, 6, 21)),
        ("at the end of March 2024", date(2024, 3, 22), date(2024, 4, 1)),
        ("in the beginning of November 2022", date(2022, 11, 1), date(2022, 11, 11)),
        ("the second week of November 2023", date(2023, 11, 8), date(2023, 11, 15)),
        ("the last week of October 2023", date(2023, 10, 25), date(2023, 11, 1)),
        ("the first weekend of October 2023", date(2023, 10, 7), date(2023, 10, 9)),
        ("between August 11 and August 15 2023", date(2023, 8, 11), date(2023, 8, 16)),
        ("between April 5, 2024, and May 1", date(2024, 4, 5), date(2024, 5, 2)),
        ("from July through September 2024", date(2024, 7, 1), date(2024, 10, 1)),
        ("since May 2025", date(2025, 5, 1), date(2026, 12, 1)),
        ("on March 20", date(2026, 3, 20), date(2026, 3, 21)),
        ("on December 20", date(2025, 12, 20), date(2025, 12, 21)),  # the latest not after today
        ("in may", date(2026, 5, 1), date(2026, 6, 1)),
        ("today", date(2026, 11, 30), date(2026, 12, 1)),
        ("what did I say yesterday", date(2026, 11, 29), date(2026, 11, 30)),
        ("last week", date(2026, 11, 23), date(2026, 11, 30)),
        ("this month", date(2026, 11, 1), date(2026, 12, 1)),
        ("last month", date(2026, 10, 1), date(2026, 11, 1)),
        ("last year", date(2025, 1, 1), date(2026, 1, 1)),
        ("3 days ago", date(2026, 11, 27), date(2026, 11, 28)),
        ("2 weeks ago", date(2026, 11, 13), date(2026, 11, 20)),
        ("4 months ago", date(2026, 7, 1), date(2026, 8, 1)),
    ],
)
def test_a_named_period(text, first, end):
    assert named_period(text, TODAY) == (first, end)


@pytest.mark.parametrize(
    "text",
    [
        "What may John do next?",  # may the verb
        "When did Caroline go to the march?",  # march the noun
        "a context of 2048 tokens",  # a number, not a year
        "Feb 30, 2023",  # no such day
        "the 2023-13 report",  # no such month
        "We hired 2 junior devs and made 1 decision",  # a month's abbreviation starts a longer word
        "Which year did Jolene start yoga?",
        "",
    ],
)
def test_no_period(text):
    assert named_period(text, TODAY) is None
