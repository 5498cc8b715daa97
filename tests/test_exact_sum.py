"""The summary's task-seconds as a running exact sum (``sim_bridge._summary_tallies``): the
oracle is :func:`math.fsum` over every value, which the tallies kept until 2026-12-02 (y)
(a float a chunk, for the whole run)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sim_bridge._summary_tallies import SummaryTallies, exact_add

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@given(st.lists(finite, max_size=60))
def test_the_running_sum_is_fsum_of_every_value(values):
    partials: list[float] = []
    for x in values:
        exact_add(partials, x)
    assert math.fsum(partials) == math.fsum(values)
    assert len(partials) <= len(values) + 1


@given(st.lists(st.floats(min_value=0.0, max_value=1e7), min_size=1, max_size=40))
def test_task_seconds_as_when_every_chunks_sum_was_kept(sums):
    acc = SummaryTallies()
    for s in sums:
        acc._tally(np.array([]), 0, 0, attempts=1, tasks=1, killed=0, seconds=s)
    kept = math.fsum(sums) if len(sums) > 1 else sum(sums, 0.0)
    assert acc.task_seconds == kept


def test_the_partials_stay_few_over_many_chunks():
    rng = np.random.default_rng(0)
    acc = SummaryTallies()
    values = rng.lognormal(8.0, 2.0, 20_000).tolist()
    for s in values:
        acc._tally(np.array([]), 0, 0, attempts=1, tasks=1, killed=0, seconds=s)
    assert acc.task_seconds == math.fsum(values)
    assert len(acc._partials) <= 40  # bounded by the exponents' span, not by the chunks
