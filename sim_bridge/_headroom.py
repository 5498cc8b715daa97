"""How much of an oracle's gain a candidate policy captures."""

from __future__ import annotations

import math

__all__ = ["headroom_captured"]


def headroom_captured(baseline: float, candidate: float, oracle: float) -> float:
    """Share of the oracle's gain over the baseline that the candidate captures.

    For a lower-is-better metric (mean or p99 job completion time, makespan, ...)::

        (baseline - candidate) / (baseline - oracle)

    1 means the candidate does as well as the oracle, 0 as well as the baseline. The value is
    not clipped: above 1 the candidate beats the oracle, below 0 it is worse than the
    baseline. For a higher-is-better metric (PoCD, throughput) pass the negated values.

    Parameters
    ----------
    baseline : float
        The metric without the candidate's idea (e.g. FIFO placement).
    candidate : float
        The metric of the policy under study (e.g. a learned predictor's placement).
    oracle : float
        The metric of the best reference (e.g. the same placement with a perfect predictor).

    Returns
    -------
    float
        The captured share, or NaN when it is undefined: when the oracle gains nothing
        (``oracle >= baseline``: there is no headroom to capture), when an input is NaN or
        infinite, or when ``baseline - oracle`` or the share overflows (a gain so small that
        the share is beyond the float range).

    Examples
    --------
    >>> headroom_captured(100.0, 80.0, 60.0)
    0.5
    >>> headroom_captured(100.0, 60.0, 60.0), headroom_captured(100.0, 100.0, 60.0)
    (1.0, 0.0)
    >>> headroom_captured(100.0, 110.0, 60.0)  # worse than the baseline
    -0.25
    >>> headroom_captured(100.0, 90.0, 100.0)  # the oracle gains nothing
    nan
    >>> round(headroom_captured(-0.80, -0.86, -0.90), 6)  # PoCD 0.80 -> 0.86, oracle 0.90
    0.6
    """
    b, c, o = float(baseline), float(candidate), float(oracle)
    gain = b - o
    if not (math.isfinite(c) and math.isfinite(gain) and gain > 0.0):
        return math.nan
    share = (b - c) / gain
    return share if math.isfinite(share) else math.nan  # a subnormal gain overflows it
