"""agent-memory stats --watch: memory.metrics read again and again, told per tenant in two lines, with what
changed since the last reading (recalls per second, latency percentiles of the recalls in between)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .results import Metric

Reading = dict[tuple[str, str, str], float]


def reading(metrics: Sequence[Metric]) -> Reading:
    return {(m.tenant_id, m.metric, m.label): m.value for m in metrics}


def quantile_bound(q: float, buckets: Sequence[tuple[float, float]]) -> float | None:
    """The upper bound of the histogram bucket that holds the q-quantile, from cumulative (bound, count)
    pairs; None when the histogram is empty."""
    ordered = sorted(buckets)
    if not ordered or ordered[-1][1] <= 0:
        return None
    wanted = q * ordered[-1][1]
    return next(bound for bound, count in ordered if count >= wanted)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if math.isinf(seconds):
        return "> 10 s"
    return f"<= {seconds * 1000:g} ms" if seconds < 1 else f"<= {seconds:g} s"


def _labelled(now: Reading, tenant: str, metric: str, order: Sequence[str]) -> str:
    values = {label: value for (t, m, label), value in now.items() if t == tenant and m == metric}
    labels = [label for label in order if label in values] + sorted(set(values) - set(order))
    return ", ".join(f"{values[label]:g} {label}" for label in labels) or "none"


def _value(reading: Reading | None, tenant: str, metric: str, label: str = "") -> float:
    return (reading or {}).get((tenant, metric, label), 0.0)


def _tenant_lines(tenant: str, previous: Reading | None, now: Reading, seconds: float) -> list[str]:
    def since(metric: str, label: str = "") -> float:
        """The change since the previous reading, or the whole count on the first."""
        return _value(now, tenant, metric, label) - _value(previous, tenant, metric, label)

    recalls = _value(now, tenant, "recalls")
    buckets = [
        (float(label.replace("+Inf", "inf")), since(metric, label))
        for (t, metric, label) in now
        if t == tenant and metric == "recall_duration_seconds_bucket"
    ]
    rate = f", {since('recalls') / seconds:.1f}/s" if previous is not None and seconds > 0 else ""
    oldest = _value(now, tenant, "queue_oldest_queued_seconds")
    return [
        f"{tenant}: recalls {recalls:g} (+{since('recalls'):g}{rate}; p50 {_duration(quantile_bound(0.5, buckets))},"
        f" p95 {_duration(quantile_bound(0.95, buckets))}; {_value(now, tenant, 'recalls_degraded'):g} degraded)"
        f" | commits {_value(now, tenant, 'commits'):g}, turns {_value(now, tenant, 'turns_committed'):g} committed,"
        f" {_value(now, tenant, 'turns_indexed'):g} indexed, {_value(now, tenant, 'chunks_indexed'):g} chunks",
        f"  queue {_labelled(now, tenant, 'queue_jobs', ['queued', 'running', 'dead', 'done'])}"
        + (f" (oldest queued {oldest:.0f} s)" if oldest else "")
        + f" | sessions {_labelled(now, tenant, 'sessions', ['hot', 'warm', 'cold'])}"
        + f" | memories {_labelled(now, tenant, 'memories', ['hot', 'warm', 'cold'])}"
        + f" | feedback {_labelled(now, tenant, 'feedback', ['helpful', 'unhelpful', 'incorrect', 'stale'])}",
    ]


def report(previous: Reading | None, now: Reading, seconds: float) -> list[str]:
    """Two lines per tenant: recalls (their rate and latency since the previous reading, or since install
    on the first), commits and indexing; then the queue, the tiers and the feedback."""
    tenants = sorted({key[0] for key in now})
    return [line for tenant in tenants for line in _tenant_lines(tenant, previous, now, seconds)]
