"""The paired multi-seed facts: per-seed relative gains, Student t-intervals corrected
together (Bonferroni, family-wise 95%) and Holm-adjusted p-values beside them.

Examples
--------
>>> from pipelines._metrics import holm
>>> holm([0.01, 0.04, 0.03])[0].round(2).tolist()
[0.03, 0.06, 0.06]
>>> interval_method(6)[:44]
'paired per-seed relative differences, Studen'
"""

from __future__ import annotations

import math

import numpy as np

from pipelines._fidelity_bands import _FACT, FactResult, in_band
from pipelines._metrics import holm

__all__ = [
    "bonferroni_level",
    "comparison_facts",
    "interval_method",
    "paired_relative_gain",
    "t_interval",
]

#: The paired comparisons of each workload: fact key -> (baseline run, treated run).
COMPARISONS: dict[str, tuple[str, str]] = {
    "oracle_gain": ("late_mean", "oracle_mean"),
    "late_p99": ("none_p99", "late_p99"),
    "mantri_p99": ("none_p99", "mantri_p99"),
}


def paired_relative_gain(baseline, treated) -> np.ndarray:
    """Per-seed relative reduction ``(baseline - treated) / baseline`` (positive: better).

    Examples
    --------
    >>> paired_relative_gain([100.0, 200.0], [80.0, 150.0]).tolist()
    [0.2, 0.25]
    """
    b = np.asarray(baseline, dtype=float)
    return (b - np.asarray(treated, dtype=float)) / b


def t_interval(x, level: float = 0.95) -> tuple[float, float, float, float]:
    """Mean, two-sided Student t-interval at ``level`` and the t-test p-value (mean = 0).

    With one value the interval is infinite and the p-value 1; with zero spread the
    interval is the point and the p-value 0 (or 1 at a zero mean).

    Examples
    --------
    >>> m, lo, hi, p = t_interval([1.0, 2.0, 3.0], 0.95)
    >>> round(m, 3), round(lo, 3), round(hi, 3), round(p, 3)
    (2.0, -0.484, 4.484, 0.074)
    """
    from scipy import stats

    x = np.asarray(x, dtype=float)
    n = x.size
    mean = float(x.mean()) if n else float("nan")
    if n < 2:
        return mean, -math.inf, math.inf, 1.0
    se = float(x.std(ddof=1)) / math.sqrt(n)
    if se == 0.0:
        return mean, mean, mean, 0.0 if mean != 0 else 1.0
    q = float(stats.t.ppf(0.5 + level / 2.0, n - 1))
    p = float(2.0 * stats.t.sf(abs(mean) / se, n - 1))
    return mean, mean - q * se, mean + q * se, p


def bonferroni_level(m: int, family: float = 0.95) -> float:
    """Per-comparison confidence level giving ``family`` over ``m`` comparisons.

    Examples
    --------
    >>> bonferroni_level(5)
    0.99
    """
    return 1.0 - (1.0 - family) / max(int(m), 1)


def interval_method(m: int) -> str:
    """How the intervals of ``m`` comparisons were made, as ``summary.json`` states it.

    Examples
    --------
    >>> "Bonferroni over 3 comparisons (each at 0.9833" in interval_method(3)
    True
    """
    return (
        f"paired per-seed relative differences, Student t-interval, Bonferroni over {m} "
        f"comparisons (each at {bonferroni_level(m):.4f}, family-wise 95%); Holm-adjusted "
        "p-values reported beside"
    )


def comparison_facts(runs: dict[str, dict], family: float = 0.95) -> list[FactResult]:
    """The paired multi-seed facts of every workload, corrected together.

    Intervals are Student t over the per-seed relative gains at the Bonferroni level for all
    comparisons (family-wise ``family``); a fact passes when its corrected interval sits in
    the band; Holm-adjusted p-values are reported too.
    """
    pairs = COMPARISONS
    items = [(w, key) for w in runs for key in pairs]
    level = bonferroni_level(len(items), family)
    results, pvals = [], []
    for w, key in items:
        base, treat = pairs[key]
        gains = paired_relative_gain(runs[w][base], runs[w][treat])
        mean, lo, hi, p = t_interval(gains, level)
        f = _FACT[key]
        ok = bool(in_band(f.lo, f.hi, lo, hi) and (lo > 0 or hi < 0))
        results.append(
            FactResult(
                key,
                w,
                mean,
                interval=(lo, hi),
                band=(f.lo, f.hi),
                passed=ok,
                extra={
                    "per_seed": gains.tolist(),
                    "p_value": p,
                    "significant": bool(lo > 0 or hi < 0),
                    "level": level,
                },
            )
        )
        if key == "oracle_gain":
            results[-1].extra["oracle_mode"] = runs[w].get("oracle_mode")
        pvals.append(p)
    for r, ph in zip(results, holm(pvals)[0] if pvals else [], strict=True):
        r.extra["p_holm"] = float(ph)
    return results
