"""stats --watch: percentiles from histogram buckets, and what changed between two readings."""

import math

from agent_memory.results import Metric
from agent_memory.watch import quantile_bound, reading, report

BOUNDS = ["0.005", "0.01", "0.025", "0.05", "0.1", "+Inf"]


def metrics(recalls: int, buckets: list[int], **gauges: float) -> list[Metric]:
    rows = [Metric("acme", "recalls", "", recalls, "counter")]
    rows += [
        Metric("acme", "recall_duration_seconds_bucket", b, c, "counter") for b, c in zip(BOUNDS, buckets, strict=True)
    ]
    rows += [Metric("acme", name, label, value, "gauge") for name, (label, value) in gauges.items()]
    return rows


def test_the_quantile_is_the_bound_of_the_bucket_that_holds_it():
    cumulative = [(0.01, 2), (0.05, 9), (0.1, 10), (math.inf, 10)]
    assert quantile_bound(0.5, cumulative) == 0.05
    assert quantile_bound(0.2, cumulative) == 0.01
    assert quantile_bound(0.95, cumulative) == 0.1
    assert quantile_bound(0.5, [(0.01, 0), (math.inf, 0)]) is None
    assert quantile_bound(0.5, []) is None
    assert quantile_bound(0.99, [(0.1, 1), (math.inf, 4)]) == math.inf


def test_the_first_reading_tells_totals_and_the_next_what_changed():
    first = reading(metrics(10, [0, 5, 10, 10, 10, 10], queue_jobs=("queued", 3)))
    (line, queue) = report(None, first, 0)
    assert line.startswith("acme: recalls 10 (+10; p50 <= 10 ms, p95 <= 25 ms; 0 degraded)")
    assert queue.startswith("  queue 3 queued | sessions none")
    # Four more recalls in two seconds, all slow: the percentiles are theirs alone.
    second = reading(metrics(14, [0, 5, 10, 10, 14, 14], queue_jobs=("queued", 0)))
    (line, queue) = report(first, second, 2.0)
    assert line.startswith("acme: recalls 14 (+4, 2.0/s; p50 <= 100 ms, p95 <= 100 ms; 0 degraded)")
    assert queue.startswith("  queue 0 queued")


def test_no_recalls_in_between_has_no_percentiles():
    same = reading(metrics(3, [3, 3, 3, 3, 3, 3]))
    (line, _) = report(same, same, 5.0)
    assert "recalls 3 (+0, 0.0/s; p50 -, p95 -;" in line
