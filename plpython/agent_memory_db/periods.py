"""The span of days a query names, if it names one ("in March 2024", "on 3 May 2023", "last week").

named_period(text, today) returns (first day, day after the last) or None. English expressions:
  dates        2023-10-03, 3 October 2023, 3rd of Oct, 2023, October 3rd, 2023, October 3
  months       2023-10, October 2023, Oct, 2023, and a month after a preposition or a part
               ("in May", "during March"; a bare "may" or "march" is a verb)
  years        2023 after a preposition or a part ("in 2023", "early 2023")
  parts        early / beginning of / start of, mid / middle of, late / end of (a third of the span);
               first..fourth / last week of, first / last weekend of
  open-ended   since / after a date, month or year: up to today
  relative     today, yesterday, this / last week, month, year, N days / weeks / months ago
A date without a year takes the year another mention of the query gives, else its latest
occurrence not after today. Several mentions give the span from the first to the last
("between August 11 and August 15, 2023").
"""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

Period = tuple[date, date]

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
MONTH = r"(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")(?:\.|\b)"  # "dec" is not "decision"
DAY = r"\d{1,2}(?:st|nd|rd|th)?(?!\d)"
YEAR = r"(?:19|20)\d\d(?!\d)"
# A bare month or year counts after one of these ("in May", not "may"; "since 2023", not "2023 tokens").
AFTER_PREPOSITION = re.compile(
    r"\b(?:in|during|since|until|till|by|from|between|through|before|after|around)\s+$", re.IGNORECASE
)
PART = (
    r"(?P<part>early|beginning\s+of|start\s+of|mid|middle\s+of|late|end\s+of"
    r"|(?:first|second|third|fourth|last)\s+week(?:end)?\s+of)"
)
SINCE = re.compile(r"\b(?:since|after)\s+(?:the\s+)?$", re.IGNORECASE)
ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3}

MENTION = re.compile(
    rf"(?:{PART}[\s-]+(?:the\s+)?)?"
    r"(?:"
    rf"(?P<iso>(?P<iso_year>{YEAR})-(?P<iso_month>\d{{1,2}})(?:-(?P<iso_day>\d{{1,2}}))?)(?![\d-])"
    rf"|(?P<dmy_day>{DAY})\s+(?:of\s+)?(?P<dmy_month>{MONTH})(?:,?\s+(?P<dmy_year>{YEAR}))?"
    rf"|(?P<mdy_month>{MONTH})\s+(?P<mdy_day>{DAY})(?:,?\s+(?P<mdy_year>{YEAR}))?"
    rf"|(?P<my_month>{MONTH}),?\s+(?P<my_year>{YEAR})"
    rf"|\b(?P<m_month>{MONTH})(?=\W|$)"
    rf"|\b(?P<y_year>{YEAR})"
    r")",
    re.IGNORECASE,
)
RELATIVE = re.compile(
    r"\b(?:(?P<day>today|yesterday)|(?P<which>this|last|past)\s+(?P<unit>week|month|year)"
    r"|(?P<count>\d{1,3})\s+(?P<ago_unit>day|week|month|year)s?\s+ago)\b",
    re.IGNORECASE,
)


def _month_span(year: int, month: int) -> Period:
    return date(year, month, 1), _add_months(date(year, month, 1), 1)


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        first = date(year, month, day)
    except ValueError:
        return None
    return first, first + timedelta(days=1)


def _latest(month: int, day: int | None, today: date) -> int:
    """The year of the latest occurrence of month (and day) not after today."""
    if (month, day or 1) <= (today.month, today.day):
        return today.year
    return today.year - 1


def _part(span: Period, part: str | None) -> Period:
    """The part of a span a qualifier names (a third, a week or a weekend), or the span."""
    if not part:
        return span
    words = part.lower().split()
    first, end = span
    if words[-1] == "of" and words[1:2] in (["week"], ["weekend"]):
        ordinal, unit = words[0], words[1]
        if unit == "week":
            if ordinal == "last":
                return max(first, end - timedelta(days=7)), end
            start = first + timedelta(days=7 * ORDINALS[ordinal])
            return min(start, end), min(start + timedelta(days=7), end)
        days = (first + timedelta(days=n) for n in range((end - first).days))
        saturdays = [day for day in days if day.weekday() == 5]
        if not saturdays:
            return span
        saturday = saturdays[-1] if ordinal == "last" else saturdays[min(ORDINALS[ordinal], len(saturdays) - 1)]
        return saturday, min(saturday + timedelta(days=2), end)
    third = max((end - first).days // 3, 1)
    if words[0] in ("early", "beginning", "start"):
        return first, first + timedelta(days=third)
    if words[0] in ("mid", "middle"):
        return first + timedelta(days=third), end - timedelta(days=third)
    return end - timedelta(days=third), end


def _anchored(match: re.Match[str]) -> bool:
    """Whether a bare month or year is meant as a time: a part or a preposition before it."""
    return bool(match["part"] or AFTER_PREPOSITION.search(match.string[: match.start()]))


def _open_ended(span: Period, match: re.Match[str], today: date) -> Period:
    """ "since May 2023" and "after May 2023" run up to today."""
    if SINCE.search(match.string[: match.start()]):
        return span[0], max(span[1], today + timedelta(days=1))
    return span


def _absolute(match: re.Match[str], default_year: int | None, today: date) -> Period | None:
    g = match.groupdict()
    if g["iso"]:
        year, month = int(g["iso_year"]), int(g["iso_month"])
        if not 1 <= month <= 12:
            return None
        return _day(year, month, int(g["iso_day"])) if g["iso_day"] else _month_span(year, month)
    for kind in ("dmy", "mdy"):
        if g[f"{kind}_month"]:
            month = MONTHS[g[f"{kind}_month"].lower().rstrip(".")]
            day = int(re.match(r"\d+", g[f"{kind}_day"]).group())
            year = g[f"{kind}_year"]
            return _day(int(year) if year else default_year or _latest(month, day, today), month, day)
    if g["my_month"]:
        return _month_span(int(g["my_year"]), MONTHS[g["my_month"].lower().rstrip(".")])
    if g["m_month"]:
        if not _anchored(match):
            return None
        month = MONTHS[g["m_month"].lower().rstrip(".")]
        return _month_span(default_year or _latest(month, None, today), month)
    if not _anchored(match):
        return None
    year = int(g["y_year"])
    return date(year, 1, 1), date(year + 1, 1, 1)


def _relative(match: re.Match[str], today: date) -> Period:
    g = {key: (value or "").lower() for key, value in match.groupdict().items()}
    if g["day"]:
        day = today - timedelta(days=1 if g["day"] == "yesterday" else 0)
        return day, day + timedelta(days=1)
    if g["unit"]:
        back = 0 if g["which"] == "this" else 1
        if g["unit"] == "week":
            monday = today - timedelta(days=today.weekday() + 7 * back)
            return monday, monday + timedelta(days=7)
        if g["unit"] == "month":
            first = _add_months(today.replace(day=1), -back)
            return first, _add_months(first, 1)
        return date(today.year - back, 1, 1), date(today.year - back + 1, 1, 1)
    count, unit = int(g["count"]), g["ago_unit"]
    if unit == "day":
        day = today - timedelta(days=count)
        return day, day + timedelta(days=1)
    if unit == "week":
        day = today - timedelta(days=7 * count)
        return day - timedelta(days=3), day + timedelta(days=4)
    if unit == "month":
        then = _add_months(today, -count)
        return _month_span(then.year, then.month)
    return date(today.year - count, 1, 1), date(today.year - count + 1, 1, 1)


def named_period(text: str, today: date) -> Period | None:
    """The days the text names: (first, day after the last), or None when it names none."""
    return period_and_mentions(text, today)[0]


def period_and_mentions(text: str, today: date) -> tuple[Period | None, list[tuple[int, int]]]:
    """The days the text names, and where it names them: the (start, end) of each mention read."""
    mentions = list(MENTION.finditer(text))
    years = [
        int(year)
        for m in mentions
        for year in (m["iso_year"], m["dmy_year"], m["mdy_year"], m["my_year"], m["y_year"] if _anchored(m) else None)
        if year
    ]
    default_year = years[0] if years else None
    absolute = [(m, span) for m in mentions if (span := _absolute(m, default_year, today))]
    spans = [_open_ended(_part(span, m["part"]), m, today) for m, span in absolute]
    taken = [range(m.start(), m.end()) for m, _ in absolute]
    relative = [r for r in RELATIVE.finditer(text) if not any(r.start() in t or r.end() - 1 in t for t in taken)]
    spans += [_relative(r, today) for r in relative]
    if not spans:
        return None, []
    read = sorted((m.start(), m.end()) for m in [*(m for m, _ in absolute), *relative])
    return (min(s for s, _ in spans), max(e for _, e in spans)), read
