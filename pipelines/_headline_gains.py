"""The headline's gains: what each policy ``straggler compare`` ran gains over speculation
alone, with a Student-t interval, and whether prediction helped (part of
:mod:`pipelines._headline`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Compare's statistic names of the headline figures -> (key, label).
GAIN_FIGURES: tuple[tuple[str, str, str], ...] = (
    ("Average", "mean_jct", "mean JCT"),
    ("99p", "p99_jct", "p99 JCT"),
    ("task_seconds", "task_seconds", "task-seconds"),
)


#: The workload group compare pools every workload into.
ALL = "ALL"


#: Policies that are not predictors (compared against, never "prediction").
CONTROLS: frozenset[str] = frozenset({"random", "oracle"})


#: Corrected significance columns compare may write, most preferred first, with their names.
CORRECTIONS: tuple[tuple[str, str], ...] = (
    ("significant_fdr", "Benjamini-Hochberg FDR"),
    ("significant_holm", "Holm"),
)


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """Student-t confidence interval of the mean; ``None`` with fewer than two values.

    Examples
    --------
    >>> lo, hi = t_interval([1.0, 2.0, 3.0])
    >>> round(lo, 3), round(hi, 3)
    (-0.484, 4.484)
    >>> t_interval([5.0]) is None
    True
    """
    from scipy import stats

    v = [float(x) for x in values if x is not None and math.isfinite(float(x))]
    n = len(v)
    if n < 2:
        return None
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    return mean - half, mean + half


def finite_number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _correction(rows: Sequence[Mapping[str, Any]]) -> tuple[str | None, str]:
    for col, name in CORRECTIONS:
        if any(col in r for r in rows):
            return col, name
    return None, "uncorrected"


def _cell(row: Mapping[str, Any] | None, col: str | None) -> dict[str, Any] | None:
    if row is None:
        return None
    per_seed = [x for x in (row.get("per_seed") or []) if finite_number(x) is not None]
    ci = t_interval(per_seed)
    sig = bool(row.get(col)) if col else bool(row.get("significant"))
    return {
        "mean": finite_number(row.get("mean")),
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "n": int(row.get("n") or len(per_seed)),
        "significant": sig,
    }


def compare_gains(compare: Mapping[str, Any]) -> dict[str, Any]:
    """The headline gains of a ``straggler compare`` summary (workload group ``ALL``).

    Returns
    -------
    dict
        ``policies`` (list of ``{"policy", "label", "kind", "mean_jct", "p99_jct",
        "task_seconds"}``, each figure ``{"mean", "ci_low", "ci_high", "n", "significant"}``
        in % of speculation alone, positive = better), ``seeds``, ``correction``, ``test``.
    """
    t3 = [r for r in compare.get("table3") or [] if r.get("workload") == ALL]
    t4 = [r for r in compare.get("table4") or [] if r.get("workload") == ALL]
    if not t3:  # a single workload group only
        groups = [r.get("workload") for r in compare.get("table3") or []]
        first = groups[0] if groups else None
        t3 = [r for r in compare.get("table3") or [] if r.get("workload") == first]
        t4 = [r for r in compare.get("table4") or [] if r.get("workload") == first]
    col, corr = _correction([*t3, *t4])
    labels = compare.get("policies") or {}
    order = list(compare.get("predictors") or dict.fromkeys(r.get("predictor") for r in t3))
    out = []
    for pred in order:
        rec: dict[str, Any] = {
            "policy": pred,
            "label": labels.get(pred, pred),
            "kind": pred if pred in CONTROLS else "model",
        }
        for stat, key, _ in GAIN_FIGURES:
            if stat == "task_seconds":
                row = next((r for r in t4 if r.get("predictor") == pred), None)
            else:
                row = next(
                    (r for r in t3 if r.get("predictor") == pred and r.get("statistic") == stat),
                    None,
                )
            rec[key] = _cell(row, col)
        out.append(rec)
    sig = compare.get("significance") or {}
    return {
        "policies": out,
        "seeds": sig.get("seeds", compare.get("config", {}).get("seeds")),
        "correction": corr,
        "test": sig.get("test", ""),
        "speculation": compare.get("speculation"),
    }


def prediction_verdict(gains: Mapping[str, Any]) -> tuple[bool | None, str]:
    """Whether prediction helped, as ``(helped, one plain sentence)``.

    Helped means: some model (not the random control, not the oracle) improves a headline
    figure over speculation alone and compare's corrected test calls it significant. ``None``
    when there is nothing to judge.

    Examples
    --------
    >>> cell = {"mean": 5.0, "ci_low": 1.0, "ci_high": 9.0, "n": 8, "significant": True}
    >>> g = {"policies": [{"policy": "mtl", "label": "MTL", "kind": "model",
    ...       "mean_jct": cell, "p99_jct": None, "task_seconds": None}],
    ...      "seeds": 8, "correction": "Holm"}
    >>> prediction_verdict(g)[0]
    True
    >>> worse = {**cell, "mean": -16.0, "ci_low": -30.0, "ci_high": -2.0}
    >>> g["policies"].append({"policy": "wrangler", "label": "Wrangler", "kind": "model",
    ...                       "mean_jct": worse, "p99_jct": None, "task_seconds": None})
    >>> prediction_verdict(g)[1].endswith("Wrangler makes mean JCT significantly worse (-16.0%).")
    True
    """
    models = [p for p in gains.get("policies", []) if p.get("kind") == "model"]
    if not models:
        return None, "No predictor was compared with speculation, so nothing says whether it helps."
    seeds = gains.get("seeds")
    corr = gains.get("correction", "")
    wins, losses = [], []
    for p in models:
        for _, key, label in GAIN_FIGURES:
            c = p.get(key)
            if c and c.get("significant") and c.get("mean") is not None:
                (wins if c["mean"] > 0 else losses).append((p["label"], label, c))
    hurt = ""
    if losses:  # said beside a win too: one model's gain must not hide another's loss
        name, what, c = min(losses, key=lambda w: w[2]["mean"])
        hurt = f"; {name} makes {what} significantly worse ({c['mean']:+.1f}%)"
    if wins:
        name, what, c = max(wins, key=lambda w: w[2]["mean"])
        ci = (
            f" (95% CI {c['ci_low']:+.1f} to {c['ci_high']:+.1f}%)"
            if c.get("ci_low") is not None
            else ""
        )
        ctrl = next((p for p in gains["policies"] if p.get("policy") == "random"), None)
        caveat = ""
        if ctrl and any((ctrl.get(k) or {}).get("significant") for _, k, _ in GAIN_FIGURES):
            caveat = "; the random-refusal control also gains significantly, so part of it is"
            caveat += " placement, not prediction"
        return True, (
            f"Prediction helped here: {name} improves {what} by {c['mean']:.1f}%{ci} over "
            f"speculation alone, significant after {corr} correction over {seeds} seeds"
            f"{caveat}{hurt}."
        )
    if seeds is not None and int(seeds) < 2:
        return False, (
            "No significant gain: with one seed compare runs no significance test, so these "
            "numbers may be noise."
        )
    return False, (
        f"No significant gain: no predictor improves mean JCT, p99 JCT or task-seconds over "
        f"speculation alone significantly ({corr} correction, {seeds} seeds){hurt}."
    )
