"""Recall's signal weights fitted to one tenant's feedback (memory.tune_weights).

Each verdict with a query is a statement about an ordering: the turn judged helpful should have ranked above
the candidates recall put ahead of it, and above those judged unhelpful for the same query. The database
recalls each such query again with the weights in force without tuning and passes every candidate's signals
(``Query``); ``fit`` turns the verdicts into preferred pairs and finds the weights that order most of them
right, within bounds:

- **Pairs** (``pairs``): per query, each helpful turn among the candidates is preferred to every candidate
  ranked above it that is not helpful ("skipped above"), to every candidate judged unhelpful, and to the
  ``KEEP_BELOW`` candidates just below it (so that what was right stays right). A query without a helpful turn
  among its candidates gives no pair: "unhelpful" alone does not say what should come first.
- **Score**: a candidate's score is linear in the weights, the sum over signals of weight x feature, where a
  fusion signal's feature is its z-score among the candidates and a boost signal's its value (as recall
  scores them). Left as they were: recall's best-chunk choice, a memory's placement, and the boosts built
  from fused scores (session, neighbor), taken as the features they were.
- **Bounds**: a weight moves by a factor between 1 / max_factor and max_factor of its weight in force (so it
  keeps its sign, and a signal switched off stays off). The weights are fitted as logarithms of those
  factors, with their mean held at 0: multiplying every weight by the same number orders nothing
  differently, so the fit does not drift that way. Each step is projected exactly onto those bounds. A fit
  that moves no factor by more than ``MOVED`` (in log) keeps nothing.
- **Objective**: the mean logistic loss of the pairs plus ``REGULARIZATION`` times the sum of squared log
  factors (a factor moves only as far as the pairs pull it), minimized by gradient descent with a
  backtracking step. A signal equal on both sides of every pair keeps its weight.
- **Evidence**: below ``min_helpful`` helpful verdicts used, nothing is fitted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

KEEP_BELOW = 3
REGULARIZATION = 0.05
ITERATIONS = 300
MOVED = 1e-3  # a log factor below this moves nothing worth keeping


@dataclass(frozen=True)
class Candidate:
    turn: int
    features: Mapping[str, float]  # signal name -> the value its weight multiplies


@dataclass(frozen=True)
class Query:
    candidates: Sequence[Candidate]  # in recall's order, best first
    helpful: frozenset[int] = frozenset()
    unhelpful: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Fit:
    weights: dict[str, float]  # every weight given, tuned or not
    enough: bool
    reason: str
    helpful_used: int
    queries_used: int
    pairs: int
    ordered_before: float | None  # share of the pairs the weights order right
    ordered_after: float | None
    top_helpful_before: int  # queries whose first candidate is one judged helpful
    top_helpful_after: int
    top_changed: int  # queries whose first candidate changes
    factors: dict[str, float] = field(default_factory=dict)  # tuned signal -> new weight / weight in force


def features_of(components: Mapping, fusion_signals: set[str]) -> dict[str, float]:
    """A candidate's features from recall's components: a fusion signal's z-score, a boost signal's value
    (null as 0, as recall counts it)."""
    out = {}
    for name, signal in components["signals"].items():
        value = signal.get("z") if name in fusion_signals else signal.get("value")
        out[name] = float(value) if value is not None else 0.0
    return out


def queries_from(rows: Sequence[Mapping], fusion_signals: set[str]) -> list[Query]:
    """Queries as memory.tune_weights passes them: {"candidates": [{"turn", "components"}, ...] in recall's
    order, "helpful": [turn, ...], "unhelpful": [turn, ...]}."""
    return [
        Query(
            candidates=[Candidate(c["turn"], features_of(c["components"], fusion_signals)) for c in row["candidates"]],
            helpful=frozenset(row["helpful"]),
            unhelpful=frozenset(row["unhelpful"]),
        )
        for row in rows
    ]


def pairs(query: Query) -> list[tuple[Mapping[str, float], Mapping[str, float]]]:
    """The query's preferred pairs (better, worse), as feature mappings."""
    rank = {c.turn: n for n, c in enumerate(query.candidates)}
    out = []
    for turn in sorted(query.helpful & rank.keys(), key=rank.__getitem__):
        better = query.candidates[rank[turn]]
        for n, other in enumerate(query.candidates):
            if other.turn in query.helpful:
                continue
            if n < rank[turn] or other.turn in query.unhelpful or n <= rank[turn] + KEEP_BELOW:
                out.append((better.features, other.features))
    return out


def score(features: Mapping[str, float], weights: Mapping[str, float]) -> float:
    return sum(weight * features.get(name, 0.0) for name, weight in weights.items())


def fit(queries: Sequence[Query], weights: Mapping[str, float], max_factor: float, min_helpful: int) -> Fit:
    """Fits the weights (signal name -> weight in force) to the queries' verdicts."""
    if max_factor < 1:
        raise ValueError(f"max_factor must be at least 1, got {max_factor}")
    used = [q for q in queries if q.helpful & {c.turn for c in q.candidates}]
    helpful_used = sum(len(q.helpful & {c.turn for c in q.candidates}) for q in used)
    preferred = [pair for q in used for pair in pairs(q)]
    tuned = sorted(name for name, weight in weights.items() if weight != 0)
    base = dict(weights)
    if helpful_used < min_helpful or not preferred or not tuned:
        reason = (
            f"not enough evidence: {helpful_used} helpful verdicts on recalled turns, {min_helpful} needed"
            if helpful_used < min_helpful
            else "no pair to order"
            if not preferred
            else "no signal has a weight to tune"
        )
        return _report(used, preferred, base, base, {}, False, reason, helpful_used)
    differences = np.array([[b.get(name, 0.0) - w.get(name, 0.0) for name in tuned] for b, w in preferred])
    # A signal equal on both sides of every pair orders none of them: it keeps its weight.
    moving = np.any(differences != 0, axis=0)
    tuned = [name for name, moves in zip(tuned, moving, strict=True) if moves]
    if not tuned:
        return _report(used, preferred, base, base, {}, False, "no signal tells the pairs apart", helpful_used)
    logs = _descend(differences[:, moving], np.array([base[name] for name in tuned]), math.log(max_factor))
    if np.abs(logs).max() < MOVED:
        return _report(used, preferred, base, base, {}, False, "the verdicts move no weight", helpful_used)
    factors = {name: float(math.exp(t)) for name, t in zip(tuned, logs, strict=True)}
    fitted = {**base, **{name: base[name] * factors[name] for name in tuned}}
    return _report(used, preferred, base, fitted, factors, True, "fitted", helpful_used)


def _objective(differences: np.ndarray, base: np.ndarray, logs: np.ndarray) -> tuple[float, np.ndarray]:
    """The loss and its gradient in the log factors."""
    weights = base * np.exp(logs)
    margins = differences @ weights
    loss = float(np.mean(np.logaddexp(0.0, -margins))) + REGULARIZATION * float(logs @ logs)
    pull = 0.5 * (1 - np.tanh(margins / 2))  # sigmoid(-margin), without overflow
    gradient = -(pull @ differences) * weights / len(margins) + 2 * REGULARIZATION * logs
    return loss, gradient


def _project(logs: np.ndarray, bound: float) -> np.ndarray:
    """The nearest log factors whose mean is 0 and each within [-bound, bound]: clip(logs - shift), the shift
    found by bisection (the mean falls as the shift grows)."""
    low, high = float(logs.min()) - bound, float(logs.max()) + bound
    for _ in range(60):
        shift = (low + high) / 2
        if np.clip(logs - shift, -bound, bound).mean() > 0:
            low = shift
        else:
            high = shift
    return np.clip(logs - (low + high) / 2, -bound, bound)


def _descend(differences: np.ndarray, base: np.ndarray, bound: float) -> np.ndarray:
    """Projected gradient descent from factors of 1; the step halves until the loss falls, doubles after."""
    logs = np.zeros(len(base))
    loss, gradient = _objective(differences, base, logs)
    step = 1.0
    for _ in range(ITERATIONS):
        while step > 1e-9:
            candidate = _project(logs - step * gradient, bound)
            candidate_loss, candidate_gradient = _objective(differences, base, candidate)
            if candidate_loss < loss:
                break
            step /= 2
        else:
            break
        improved = loss - candidate_loss
        logs, loss, gradient, step = candidate, candidate_loss, candidate_gradient, step * 2
        if improved < 1e-10:
            break
    return logs


def _report(
    used: Sequence[Query],
    preferred: list,
    before: Mapping[str, float],
    after: Mapping[str, float],
    factors: dict[str, float],
    enough: bool,
    reason: str,
    helpful_used: int,
) -> Fit:
    def ordered(weights: Mapping[str, float]) -> float | None:
        if not preferred:
            return None
        return sum(score(b, weights) > score(w, weights) for b, w in preferred) / len(preferred)

    def first(query: Query, weights: Mapping[str, float]) -> int:
        return max(query.candidates, key=lambda c: score(c.features, weights)).turn

    return Fit(
        weights=dict(after),
        enough=enough,
        reason=reason,
        helpful_used=helpful_used,
        queries_used=len(used),
        pairs=len(preferred),
        ordered_before=ordered(before),
        ordered_after=ordered(after),
        top_helpful_before=sum(first(q, before) in q.helpful for q in used),
        top_helpful_after=sum(first(q, after) in q.helpful for q in used),
        top_changed=sum(first(q, before) != first(q, after) for q in used),
        factors=factors,
    )
