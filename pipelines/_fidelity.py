"""``straggler fidelity``: the simulated world's stylized facts beside their published bands.

Each measurement is a small pure function of a simulation's tables (or of per-seed numbers);
:func:`run_fidelity` runs the simulations, measures every fact per workload and writes
``fidelity.csv``, ``fidelity.md``, ``summary.json`` and two PNG plots. A fact passes when its
estimate (for the multi-seed comparisons: its corrected interval) sits in its band; a failed
band is a finding, not an error.

The facts (:data:`FACTS`):

- the straggler share at beta 1.3 (stage label), per workload;
- the p90 of a straggler's duration over its stage median;
- the share of stragglers that would not straggle on the median node at that instant
  (needs the simulator's ``record_truth`` columns);
- the ROC-AUC of the counters alone on a held-out later period, below the true-state AUC;
- the autocorrelation of the synthetic CPU load at 5, 20 and 60 minutes against the
  Alibaba 2018 machines;
- the oracle placement gain in mean JCT over speculation alone (paired over seeds);
- LATE and Mantri against no speculation: p99 JCT (paired over seeds).

Multi-seed comparisons use paired per-seed relative differences with a Student t-interval;
the intervals are Bonferroni-corrected over all the comparisons of a run (family-wise 95%),
and Holm-adjusted p-values are reported beside them.

Examples
--------
>>> import numpy as np
>>> round(straggler_share(np.array([0.0, 1.0, np.nan, 0.0])), 3)
0.333
>>> holm([0.01, 0.04, 0.03])[0].round(2).tolist()
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import csv
import io
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipelines._metrics import _roc_auc, holm
from sim_bridge.trace import DEFAULT_BETA, DEFAULT_MIN_TASKS, counter_columns

__all__ = [
    "FACTS",
    "PROFILES",
    "TRUTH_COLUMNS",
    "Fact",
    "FactResult",
    "FidelityProfile",
    "bonferroni_level",
    "choose_workloads",
    "counters_auc",
    "median_node_share",
    "paired_relative_gain",
    "roc_auc",
    "run_fidelity",
    "stage_medians",
    "straggler_ratios",
    "straggler_share",
    "t_interval",
    "time_split",
]

log = logging.getLogger("pipelines.fidelity")

#: The columns ``simulate(..., record_truth=True)`` adds to the tasks table.
TRUTH_COLUMNS: tuple[str, ...] = (
    "truth_work",
    "truth_noise",
    "truth_slowdown_launch",
    "truth_slowdown_median",
)
#: Lags of the CPU autocorrelation fact, in minutes.
ACF_LAGS_MIN: tuple[int, ...] = (5, 20, 60)
#: The real workloads measured by default when their files are in the data directory.
REAL_WORKLOADS: tuple[str, ...] = ("FB2009", "FB2010")
NOT_MEASURED_TRUTH = "not measured (the simulator does not record truth)"


@dataclass(frozen=True)
class Fact:
    """One stylized fact: its key, wording, band and source.

    ``lo``/``hi`` bound the band (None: open side); ``relative_to_real`` marks the ACF facts,
    whose band is the real series' value +- ``hi``.
    """

    key: str
    name: str
    lo: float | None
    hi: float | None
    source: str
    band_text: str


FACTS: tuple[Fact, ...] = (
    Fact(
        "straggler_share",
        "straggler share at beta 1.3 (stage label)",
        0.15,
        0.30,
        "Wrangler (SoCC'14); Mantri (OSDI'10); FlowBench (real, 14%)",
        "0.15-0.30",
    ),
    Fact(
        "p90_ratio",
        "p90 of straggler duration / stage median",
        3.0,
        None,
        "Dolly (NSDI'13); Mantri (OSDI'10)",
        ">= 3",
    ),
    Fact(
        "median_node_share",
        "share of stragglers that would not straggle on the median node",
        0.45,
        0.65,
        "Garraghan et al. (53% from server load)",
        "0.45-0.65",
    ),
    Fact(
        "counters_auc",
        "ROC-AUC of counters alone, held-out later 40%",
        0.65,
        0.85,
        "FlowBench (real, 0.63-0.71)",
        "0.65-0.85, < true-state AUC",
    ),
    *(
        Fact(
            f"cpu_acf_{lag}min",
            f"autocorrelation of synthetic CPU load at {lag} min",
            None,
            0.1,
            "Alibaba 2018 machine usage",
            "real +- 0.1",
        )
        for lag in ACF_LAGS_MIN
    ),
    Fact(
        "oracle_gain",
        "oracle placement gain in mean JCT over LATE alone",
        0.15,
        None,
        "-",
        ">= 15%, significant",
    ),
    Fact(
        "late_p99",
        "LATE vs no speculation: p99 JCT reduction",
        0.0,
        None,
        "LATE (OSDI'08)",
        "> 0, significant",
    ),
    Fact(
        "mantri_p99",
        "Mantri vs no speculation: p99 JCT reduction",
        0.0,
        None,
        "Mantri (OSDI'10)",
        "> 0, significant",
    ),
)
_FACT = {f.key: f for f in FACTS}


@dataclass(frozen=True)
class FidelityProfile:
    """Sizes of one fidelity run (``default``, or ``quick`` for tests and the demo)."""

    name: str
    nodes: int
    slots: int
    hours: float
    load: float
    seeds: int
    acf_nodes: int = 64
    acf_days: float = 2.0


PROFILES: dict[str, FidelityProfile] = {
    "default": FidelityProfile("default", nodes=50, slots=2, hours=3.0, load=0.7, seeds=8),
    "quick": FidelityProfile(
        "quick", nodes=20, slots=2, hours=1.0, load=0.7, seeds=3, acf_nodes=16, acf_days=1.0
    ),
}


@dataclass
class FactResult:
    """One row of the table: a fact measured on one workload (or ``-`` for cluster facts)."""

    key: str
    workload: str
    value: float | None
    interval: tuple[float, float] | None = None
    band: tuple[float | None, float | None] = (None, None)
    passed: bool | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fact(self) -> Fact:
        return _FACT[self.key]

    def value_text(self) -> str:
        """The value as the table shows it (with the interval, or the reason it is absent)."""
        if self.value is None or not math.isfinite(self.value):
            return self.note or "not measured"
        text = f"{self.value:.3f}"
        if self.interval is not None:
            text += f" [{self.interval[0]:.3f}, {self.interval[1]:.3f}]"
        truth = self.extra.get("truth_auc")
        if truth is not None and math.isfinite(truth):
            text += f" (true-state {truth:.3f})"
        if self.note:
            text += f" ({self.note})"
        return text

    def band_text(self) -> str:
        """The band as text (the ACF facts show the real value they are held to)."""
        if self.key.startswith("cpu_acf") and self.band[0] is not None:
            return f"{self.band[0]:.3f}-{self.band[1]:.3f} (real +- 0.1)"
        return self.fact.band_text

    def verdict(self) -> str:
        """``PASS``, ``FAIL`` or ``n/a`` (not measured)."""
        return "n/a" if self.passed is None else ("PASS" if self.passed else "FAIL")

    def record(self) -> dict[str, Any]:
        """The JSON record of the fact in ``summary.json``."""
        rec = asdict(self)
        rec.pop("extra")
        rec.update(
            fact=self.fact.name,
            band_text=self.band_text(),
            source=self.fact.source,
            verdict=self.verdict(),
            **self.extra,
        )
        return rec


# --------------------------------------------------------------------------- bands
def in_band(lo: float | None, hi: float | None, low: float, high: float | None = None) -> bool:
    """Whether ``[low, high]`` (a point when ``high`` is None) sits inside ``[lo, hi]``.

    Examples
    --------
    >>> in_band(0.15, 0.30, 0.2), in_band(0.15, 0.30, 0.1, 0.2), in_band(3.0, None, 4.0)
    (True, False, True)
    """
    high = low if high is None else high
    return (lo is None or low >= lo) and (hi is None or high <= hi)


# --------------------------------------------------------------------------- trace facts
def stage_medians(
    tasks: pd.DataFrame, beta: float = DEFAULT_BETA, min_tasks: int = DEFAULT_MIN_TASKS
) -> np.ndarray:
    """Per attempt: the median run time of its stage (job, phase), via the simulator's rule.

    The stage median of :func:`sim_bridge.straggler_thresholds` (finished originals, at
    least ``min_tasks`` of them; NaN otherwise), with the stage as the grouping key.

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["a"] * 6, "phase": ["map"] * 3 + ["reduce"] * 3,
    ...                   "attempt": [0] * 6, "duration": [1.0, 2.0, 9.0, 5.0, 6.0, 7.0]})
    >>> stage_medians(t).tolist()
    [2.0, 2.0, 2.0, 6.0, 6.0, 6.0]
    """
    from sim_bridge import straggler_thresholds

    stage = tasks["job_id"].astype(str) + "\x1f" + tasks["phase"].astype(str)
    outcome = tasks["outcome"] if "outcome" in tasks.columns else None
    median, _label = straggler_thresholds(
        stage, tasks["attempt"], outcome, tasks["duration"], beta, min_tasks
    )
    return median


def straggler_share(label: np.ndarray) -> float:
    """Share of stragglers among the labelled attempts (NaN labels left out).

    Examples
    --------
    >>> straggler_share(np.array([1.0, 0.0, 0.0, 0.0, np.nan]))
    0.25
    """
    lab = np.asarray(label, dtype=float)
    lab = lab[~np.isnan(lab)]
    return float(lab.mean()) if lab.size else float("nan")


def straggler_ratios(duration, median, label) -> np.ndarray:
    """Duration over stage median of each straggler (label 1, finite median).

    Examples
    --------
    >>> straggler_ratios([30.0, 10.0, 50.0], [10.0, 10.0, np.nan], [1.0, 0.0, 1.0]).tolist()
    [3.0]
    """
    dur = np.asarray(duration, dtype=float)
    med = np.asarray(median, dtype=float)
    keep = (np.asarray(label, dtype=float) == 1.0) & np.isfinite(med) & (med > 0)
    return dur[keep] / med[keep]


def median_node_share(tasks: pd.DataFrame, label, median, beta: float = DEFAULT_BETA) -> float:
    """Share of stragglers that would not straggle on the median node at that instant.

    A straggler (label 1) would not straggle on the median node when its nominal work times
    the median slowdown over all nodes at its launch (``truth_work * truth_slowdown_median``)
    stays within ``beta`` x its stage median. NaN without stragglers or truth columns.

    Examples
    --------
    >>> t = pd.DataFrame({"truth_work": [10.0, 10.0, 40.0],
    ...                   "truth_slowdown_median": [1.0, 1.0, 1.0]})
    >>> median_node_share(t, [1.0, 1.0, 1.0], [10.0, 10.0, 10.0])
    0.6666666666666666
    """
    if not {"truth_work", "truth_slowdown_median"} <= set(tasks.columns):
        return float("nan")
    med = np.asarray(median, dtype=float)
    nominal = tasks["truth_work"].to_numpy(float) * tasks["truth_slowdown_median"].to_numpy(float)
    strag = (np.asarray(label, dtype=float) == 1.0) & np.isfinite(med) & np.isfinite(nominal)
    if not strag.any():
        return float("nan")
    return float(np.mean(nominal[strag] <= beta * med[strag]))


def roc_auc(y, score) -> float:
    """ROC-AUC of ``score`` for binary ``y`` (ties count one half; NaN with one class), the
    project's one implementation (:mod:`pipelines._metrics`).

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    return _roc_auc(np.asarray(y).astype(np.int64), np.asarray(score, dtype=float))


def time_split(launch_time, train_fraction: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks of the first ``train_fraction`` of rows by launch time, and the rest.

    Examples
    --------
    >>> tr, te = time_split([5.0, 1.0, 3.0, 2.0, 4.0], 0.6)
    >>> tr.tolist(), te.tolist()
    ([False, True, True, True, False], [True, False, False, False, True])
    """
    t = np.asarray(launch_time, dtype=float)
    order = np.argsort(t, kind="stable")
    train = np.zeros(t.size, dtype=bool)
    train[order[: int(round(train_fraction * t.size))]] = True
    return train, ~train


def counters_auc(
    tasks: pd.DataFrame, label, train_fraction: float = 0.6, seed: int = 0
) -> dict[str, float]:
    """Held-out ROC-AUC of the counters alone, and of the true node state, on later rows.

    A standardized logistic regression on the ``c_*`` columns is trained on the labelled
    rows of the first ``train_fraction`` of the trace by launch time and scored on the rest.
    ``truth_auc`` ranks the same held-out rows by ``truth_slowdown_launch`` (the node's true
    slowdown at launch); ``truth_full_auc`` by ``truth_slowdown_launch * truth_work`` over
    the stage median is not computed here (the median is the label's own input).

    Returns
    -------
    dict
        ``counters_auc``, ``truth_auc`` (NaN without truth columns), ``n_train``,
        ``n_test``, ``n_counters``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=400)
    >>> t = pd.DataFrame({"launch_time": np.arange(400.0), "c_x": x,
    ...                   "truth_slowdown_launch": x})
    >>> r = counters_auc(t, (x + rng.normal(size=400) > 1).astype(float))
    >>> r["counters_auc"] > 0.7, r["n_test"]
    (True, 160)
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    lab = np.asarray(label, dtype=float)
    rows = ~np.isnan(lab)
    sub = tasks.loc[rows]
    y = lab[rows]
    cols = counter_columns(tasks)
    train, test = time_split(sub["launch_time"], train_fraction)
    out = {
        "counters_auc": float("nan"),
        "truth_auc": float("nan"),
        "n_train": int(train.sum()),
        "n_test": int(test.sum()),
        "n_counters": len(cols),
    }
    if cols and np.unique(y[train]).size == 2:
        x = sub[cols].to_numpy(float)
        x = np.where(np.isfinite(x), x, 0.0)
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        model.fit(x[train], y[train])
        out["counters_auc"] = roc_auc(y[test], model.predict_proba(x[test])[:, 1])
    if "truth_slowdown_launch" in sub.columns:
        out["truth_auc"] = roc_auc(y[test], sub["truth_slowdown_launch"].to_numpy(float)[test])
    return out


# --------------------------------------------------------------------------- autocorrelation
def _acf(series: np.ndarray, lags: Sequence[int]) -> tuple[np.ndarray, str]:
    """Within-machine autocorrelation (:func:`sim_bridge.world.autocorrelation`, the one
    estimator the persistence fit uses too) and the name of the estimator."""
    from sim_bridge.world import autocorrelation

    return (
        np.asarray(autocorrelation(series, [int(k) for k in lags]), dtype=float),
        "sim_bridge.world.autocorrelation (within-machine)",
    )


def synthetic_cpu(nodes: int, days: float, seed: int = 0, dt: float = 60.0) -> np.ndarray:
    """The synthetic CPU background levels ``(nodes, steps)`` of ``Cluster(nodes, 2, seed)``.

    Examples
    --------
    >>> synthetic_cpu(3, 0.01).shape
    (3, 14)
    """
    from sim_bridge import Cluster

    steps = int(days * 86400.0 / dt)
    cluster = Cluster(int(nodes), 2, int(seed), dt=dt)
    node = np.repeat(np.arange(nodes), steps)
    times = np.tile(np.arange(steps) * dt, nodes)
    return cluster.levels_at(node, times)[0].reshape(nodes, steps)


def real_cpu(data_dir: Path, dt: float = 60.0) -> np.ndarray | None:
    """The Alibaba 2018 machines' CPU levels ``(machines, steps)``, None without the file."""
    from sim_bridge._alibaba2018 import MACHINE_USAGE_FILE, load_machine_levels

    path = Path(data_dir) / MACHINE_USAGE_FILE
    if not path.is_file():
        return None
    _ids, levels = load_machine_levels(path, dt)
    return levels[0]


# --------------------------------------------------------------------------- intervals
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


# --------------------------------------------------------------------------- workloads
def choose_workloads(requested: Sequence[str] | None, data_dir) -> tuple[list[str], str]:
    """The workloads to measure and one line saying why.

    Requested names are kept as given; by default the real FB2009/FB2010 workloads whose
    files the data directory holds, else the synthetic ``SYN``.

    Examples
    --------
    >>> choose_workloads(["SYN"], None)
    (['SYN'], 'workloads: SYN (as requested)')
    """
    if requested:
        return list(requested), f"workloads: {', '.join(requested)} (as requested)"
    import sim_bridge
    from sim_bridge._workloads import SWIM_FILES

    root = sim_bridge.resolve_data_dir(data_dir)
    found = [w for w in REAL_WORKLOADS if (root / SWIM_FILES[w]).is_file()]
    if not found:
        return ["SYN"], (
            f"workloads: no FB2009/FB2010 files under {root}; using the synthetic workload SYN"
        )
    return found, f"workloads: real {', '.join(found)} from {root}"


# --------------------------------------------------------------------------- orchestration
def _simulate(workload: str, policy: str, placement: Any, cfg: dict, seed: int, **kw):
    import sim_bridge

    return sim_bridge.simulate(
        workload,
        policy,
        placement,
        nodes=cfg["nodes"],
        slots=cfg["slots"],
        hours=cfg["hours"],
        scale=cfg["scales"][workload],
        seed=seed,
        data_dir=cfg["data_dir"],
        beta=cfg["beta"],
        progress=False,
        **kw,
    )


def _oracle_placement(workload: str, cfg: dict, seed: int) -> tuple[Any, str]:
    import sim_bridge

    oracle = sim_bridge.SlowdownOracle.for_simulation(
        [workload],
        nodes=cfg["nodes"],
        slots=cfg["slots"],
        seed=seed,
        data_dir=cfg["data_dir"],
        hours=cfg["hours"],
        beta=cfg["beta"],
    )
    return sim_bridge.PredictorPlacement(oracle, mode="rank"), "rank"


def trace_facts(tasks: pd.DataFrame, workload: str, beta: float) -> tuple[list[FactResult], dict]:
    """The four single-run facts of one no-speculation trace, and the data of its plot."""
    import sim_bridge

    label = sim_bridge.label_stragglers(tasks, beta).to_numpy(float)
    median = stage_medians(tasks, beta)
    share = straggler_share(label)
    ratios = straggler_ratios(tasks["duration"], median, label)
    p90 = float(np.quantile(ratios, 0.9)) if ratios.size else float("nan")
    has_truth = set(TRUTH_COLUMNS) <= set(tasks.columns)
    out = [
        _point("straggler_share", workload, share, n_labelled=int((~np.isnan(label)).sum())),
        _point(
            "p90_ratio",
            workload,
            p90,
            n_stragglers=int(ratios.size),
            # > 0 when the label is not the stage rule (sim_bridge.label_stragglers by job)
            below_stage_threshold=float(np.mean(ratios <= beta)) if ratios.size else 0.0,
        ),
    ]
    if has_truth:
        out.append(_point("median_node_share", workload, median_node_share(tasks, label, median)))
    else:
        out.append(FactResult("median_node_share", workload, None, note=NOT_MEASURED_TRUTH))
    auc = counters_auc(tasks, label)
    res = _point("counters_auc", workload, auc["counters_auc"], **auc)
    if not has_truth:  # half the fact: the band alone is reported, the verdict left open
        res.extra["band_only_pass"] = res.passed
        res.passed = None
        res.note = "true-state AUC " + NOT_MEASURED_TRUTH
    elif res.passed is not None:
        res.passed = res.passed and auc["counters_auc"] < auc["truth_auc"]
    return out + [res], {"ratios": ratios}


def _point(key: str, workload: str, value: float, **extra: Any) -> FactResult:
    f = _FACT[key]
    ok = None if not math.isfinite(value) else in_band(f.lo, f.hi, value)
    return FactResult(key, workload, value, band=(f.lo, f.hi), passed=ok, extra=extra)


def acf_facts(profile: FidelityProfile, data_dir: Path, seed: int) -> tuple[list[FactResult], dict]:
    """The CPU autocorrelation facts (synthetic vs Alibaba 2018) and the curves to plot."""
    lags = [int(m) for m in ACF_LAGS_MIN]
    curve_lags = list(range(0, 121))
    syn = synthetic_cpu(profile.acf_nodes, profile.acf_days, seed)
    syn_acf, method = _acf(syn, lags)
    syn_curve, _ = _acf(syn, curve_lags)
    real = real_cpu(data_dir)
    plot = {"lags": curve_lags, "synthetic": syn_curve, "real": None}
    out = []
    if real is None:
        for lag, v in zip(lags, syn_acf, strict=True):
            out.append(
                FactResult(
                    f"cpu_acf_{lag}min",
                    "-",
                    None,
                    note=f"not measured (no Alibaba 2018 machine usage under {data_dir}); "
                    f"synthetic {v:.3f}",
                )
            )
        return out, plot
    real_acf, _ = _acf(real, lags)
    plot["real"], _ = _acf(real, curve_lags)
    for lag, s, r in zip(lags, syn_acf, real_acf, strict=True):
        band = (float(r) - 0.1, float(r) + 0.1)
        out.append(
            FactResult(
                f"cpu_acf_{lag}min",
                "-",
                float(s),
                band=band,
                passed=bool(abs(s - r) <= 0.1),
                extra={"real": float(r), "method": method},
            )
        )
    return out, plot


def seed_runs(
    workload: str, cfg: dict, seeds: int, say: Callable[[str], None]
) -> dict[str, np.ndarray]:
    """Per seed: mean JCT of LATE and LATE + oracle placement, p99 JCT of none/LATE/Mantri."""
    from sim_bridge import DEFAULT_PLACEMENT

    keys = ("none_p99", "late_p99", "mantri_p99", "late_mean", "oracle_mean")
    rec: dict[str, list[float]] = {k: [] for k in keys}
    mode = ""
    for s in range(seeds):
        t0 = time.perf_counter()
        none = _simulate(workload, "none", DEFAULT_PLACEMENT, cfg, s).summary
        late = _simulate(workload, "late", DEFAULT_PLACEMENT, cfg, s).summary
        mantri = _simulate(workload, "mantri", DEFAULT_PLACEMENT, cfg, s).summary
        placement, mode = _oracle_placement(workload, cfg, s)
        oracle = _simulate(workload, "late", placement, cfg, s).summary
        for k, v in zip(
            keys,
            (
                none["p99_jct"],
                late["p99_jct"],
                mantri["p99_jct"],
                late["mean_jct"],
                oracle["mean_jct"],
            ),
            strict=True,
        ):
            rec[k].append(float(v))
        say(
            f"  {workload} seed {s + 1}/{seeds}: p99 JCT none {none['p99_jct']:.0f} s, "
            f"LATE {late['p99_jct']:.0f}, Mantri {mantri['p99_jct']:.0f}; mean JCT LATE "
            f"{late['mean_jct']:.0f}, LATE+oracle {oracle['mean_jct']:.0f} "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    out = {k: np.array(v) for k, v in rec.items()}
    out["oracle_mode"] = mode  # type: ignore[assignment]
    return out


def comparison_facts(runs: dict[str, dict], family: float = 0.95) -> list[FactResult]:
    """The paired multi-seed facts of every workload, corrected together.

    Intervals are Student t over the per-seed relative gains at the Bonferroni level for all
    comparisons (family-wise ``family``); a fact passes when its corrected interval sits in
    the band; Holm-adjusted p-values are reported too.
    """
    pairs = {
        "oracle_gain": ("late_mean", "oracle_mean"),
        "late_p99": ("none_p99", "late_p99"),
        "mantri_p99": ("none_p99", "mantri_p99"),
    }
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


# --------------------------------------------------------------------------- outputs
def table_rows(results: Sequence[FactResult]) -> list[dict[str, str]]:
    """The table's rows: fact, workload, value (with interval), band, source, pass."""
    return [
        {
            "fact": r.fact.name,
            "workload": r.workload,
            "value": r.value_text(),
            "band": r.band_text(),
            "source": r.fact.source,
            "pass": r.verdict(),
        }
        for r in results
    ]


def to_csv(rows: list[dict[str, str]]) -> str:
    """CSV text of the table rows."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["fact"])
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def to_markdown(rows: list[dict[str, str]]) -> str:
    """A markdown table of the rows.

    Examples
    --------
    >>> print(to_markdown([{"fact": "a", "pass": "PASS"}]))
    | fact | pass |
    | --- | --- |
    | a | PASS |
    """
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    lines += ["| " + " | ".join(r[c].replace("|", "/") for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def plot_acf(plot: dict, path: Path) -> Path:
    """PNG: CPU autocorrelation by lag, synthetic vs Alibaba 2018 (when present)."""
    from pipelines._plots import _figure, save_figure

    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(plot["lags"], plot["synthetic"], label="synthetic (Cluster)")
    if plot["real"] is not None:
        ax.plot(plot["lags"], plot["real"], label="Alibaba 2018")
    for lag in ACF_LAGS_MIN:
        ax.axvline(lag, color="grey", lw=0.5, ls=":")
    ax.set_xlabel("lag (min)")
    ax.set_ylabel("autocorrelation of CPU load")
    ax.set_title("CPU load persistence")
    ax.legend()
    return save_figure(fig, path)


def plot_ratios(ratios: dict[str, np.ndarray], path: Path) -> Path:
    """PNG: the distribution (CCDF) of straggler duration / stage median per workload."""
    from pipelines._plots import _figure, save_figure

    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    for w, r in ratios.items():
        if r.size:
            x = np.sort(r)
            ax.step(x, 1.0 - np.arange(x.size) / x.size, where="post", label=f"{w} (n={x.size})")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.axvline(3.0, color="grey", ls=":", label="3x (Dolly, Mantri)")
    ax.axhline(0.1, color="grey", lw=0.5, label="10% of stragglers (p90)")
    ax.set_xscale("log")
    ticks = [1.3, 2, 3, 5, 10, 20, 50, 100]
    hi = max((float(r.max()) for r in ratios.values() if r.size), default=10.0)
    ax.set_xticks([t for t in ticks if t <= max(hi, 3.0) * 1.5])
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("straggler duration / stage median")
    ax.set_ylabel("share of stragglers above")
    ax.set_title("How slow stragglers are")
    ax.legend()
    return save_figure(fig, path)


def run_fidelity(
    out: str | Path,
    *,
    profile: str | FidelityProfile = "default",
    workloads: Sequence[str] | None = None,
    data_dir: str | Path | None = None,
    seeds: int | None = None,
    nodes: int | None = None,
    slots: int | None = None,
    hours: float | None = None,
    load: float | None = None,
    beta: float = DEFAULT_BETA,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Measure every fact, write the table, plots and ``summary.json`` into ``out``.

    Parameters
    ----------
    out : path
        Output directory (created).
    profile : {"default", "quick"} or FidelityProfile
        Sizes; ``seeds``, ``nodes``, ``slots``, ``hours`` and ``load`` override it.
    workloads : list of str, optional
        Default: FB2009 and FB2010 when their files are in the data directory, else SYN.
    data_dir : path, optional
        See :func:`sim_bridge.resolve_data_dir`.
    beta : float
        Straggler threshold factor.
    say : callable
        Receives each progress and result line.

    Returns
    -------
    dict
        The summary written to ``summary.json``.
    """
    import sim_bridge
    from pipelines._collect import scales_for_load
    from pipelines._io import atomic_write_text, write_summary

    wall0 = time.perf_counter()
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    cfg_seeds = int(seeds if seeds is not None else prof.seeds)
    if cfg_seeds < 2:
        raise ValueError(f"--seeds must be >= 2 for paired intervals, got {cfg_seeds}")
    root = sim_bridge.resolve_data_dir(data_dir)
    names, note = choose_workloads(workloads, root)
    cfg: dict[str, Any] = {
        "nodes": int(nodes or prof.nodes),
        "slots": int(slots or prof.slots),
        "hours": float(hours or prof.hours),
        "load": float(load or prof.load),
        "data_dir": root,
        "beta": float(beta),
    }
    say(
        f"profile {prof.name}: {cfg['nodes']} nodes x {cfg['slots']} slots, {cfg['hours']:g} h, "
        f"realised load {cfg['load']:g}, {cfg_seeds} seeds, beta {beta:g}"
    )
    say(note)
    quiet = logging.getLogger("sim_bridge")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        cfg["scales"] = {
            w: scales_for_load(
                [w],
                cfg["load"],
                nodes=cfg["nodes"],
                slots=cfg["slots"],
                hours=cfg["hours"],
                data_dir=root,
            )[w]
            for w in names
        }
        results: list[FactResult] = []
        ratios: dict[str, np.ndarray] = {}
        runs: dict[str, dict] = {}
        for w in names:
            kw = {"record_truth": True}
            ref = _simulate(w, "none", sim_bridge.DEFAULT_PLACEMENT, cfg, 0, **kw)
            say(f"  {w} reference run (no speculation, seed 0): {len(ref.tasks)} attempts")
            facts, plot = trace_facts(ref.tasks, w, beta)
            below = facts[1].extra["below_stage_threshold"]
            if below > 0.01:
                say(
                    f"  note: {below:.0%} of the {w} stragglers labelled by "
                    "sim_bridge.label_stragglers run within beta x their stage median (the "
                    "label is not per stage)"
                )
            results += facts
            ratios[w] = plot["ratios"]
            runs[w] = seed_runs(w, cfg, cfg_seeds, say)
        acf, acf_plot = acf_facts(prof, root, seed=0)
        results += acf
        results += comparison_facts(runs)
    finally:
        quiet.setLevel(level)
    order = {f.key: i for i, f in enumerate(FACTS)}
    results.sort(key=lambda r: (order[r.key], r.workload))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = table_rows(results)
    md = to_markdown(rows)
    atomic_write_text(out / "fidelity.csv", to_csv(rows))
    atomic_write_text(out / "fidelity.md", md + "\n")
    plot_acf(acf_plot, out / "acf_cpu.png")
    plot_ratios(ratios, out / "straggler_ratio.png")
    n_pass = sum(r.passed is True for r in results)
    n_fail = sum(r.passed is False for r in results)
    n_na = sum(r.passed is None for r in results)
    m = 3 * len(names)
    method = (
        f"paired per-seed relative differences, Student t-interval, Bonferroni over {m} "
        f"comparisons (each at {bonferroni_level(m):.4f}, family-wise 95%); Holm-adjusted "
        "p-values reported beside"
    )
    summary = {
        "command": "fidelity",
        "profile": prof.name,
        "settings": {
            **{k: v for k, v in cfg.items() if k != "data_dir"},
            "data_dir": str(root),
            "seeds": cfg_seeds,
            "workloads": names,
            "workload_note": note,
            "record_truth": True,
            "acf_nodes": prof.acf_nodes,
            "acf_days": prof.acf_days,
        },
        "interval_method": method,
        "oracle_placement_mode": sorted({str(r.get("oracle_mode")) for r in runs.values()}),
        "facts": [r.record() for r in results],
        "counts": {"pass": n_pass, "fail": n_fail, "not_measured": n_na},
        "files": {
            "csv": str(out / "fidelity.csv"),
            "markdown": str(out / "fidelity.md"),
            "acf_plot": str(out / "acf_cpu.png"),
            "ratio_plot": str(out / "straggler_ratio.png"),
        },
        "wall_seconds": time.perf_counter() - wall0,
    }
    summary["complete"] = True  # the last file written, atomically: the run finished
    write_summary(out, summary)
    say("")
    say(md)
    say("")
    say(f"intervals: {method}")
    modes = sorted({str(r.get("oracle_mode")) for r in runs.values()})
    say(f"oracle placement: PredictorPlacement(SlowdownOracle, mode {', '.join(modes)})")
    for r in results:
        say(
            f"{r.verdict():4s}  {r.fact.name} [{r.workload}]: {r.value_text()} "
            f"(band {r.band_text()})"
        )
    say(f"{n_pass} passed, {n_fail} failed, {n_na} not measured, of {len(results)} facts")
    return summary
