"""``straggler compare``: predictor-informed scheduling vs speculation alone (seed 004,
Tables 3 and 4).

Flow:

1. the predictors: Wrangler (:class:`mtl.WranglerSVC`, one SVM per node-workload pair) and
   the grouped multi-task SVM f0,n,l (:class:`mtl.GroupedMTLSVC`), trained with default
   hyper-parameters on every labelled original attempt of the collected trace, or loaded
   with ``--model NAME=PATH_OR_URI`` (``mtl.load_predictor``: a directory or an MLflow URI);
2. a *fresh period on the same cluster*: the training trace's cluster (its seed fixes the
   nodes' hardware, so per-node models apply) at a later time (the contention paths go on),
   with new job draws (another seed) and, for FB-2009, the second day sample
   (``FB-2009_samples_24_times_1hr_1.tsv``) when the data directory has it;
3. for each of ``seeds`` such periods, three runs on identical jobs: speculation alone
   (FIFO placement + ``--speculation``, LATE by default), Wrangler + speculation and
   MTL + speculation (:class:`sim_bridge.PredictorPlacement`);
4. Table 3: improvement (%) of the mean and the 50/75/80/85/90/95/97/98/99th percentile job
   completion time over speculation alone, per workload; Table 4: reduction (%) of total
   task-seconds. Each cell is mean ± std over the seeds, with a one-sample t-test of the
   per-seed improvements against 0 (significance is stated, not assumed).

Improvement is ``100 * (x_spec - x_pred) / x_spec`` (positive: better than speculation).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipelines._dataset import (
    DEFAULT_BETA,
    DEFAULT_MIN_TASKS,
    check_classes,
    label_stragglers,
    load_trace,
)
from pipelines._io import atomic_write_text, write_summary
from pipelines._metrics import fdr_bh, holm
from pipelines._plots import plot_jct_difference, save_figure
from pipelines._sweep import Engine, SweepTask, run_sweep

#: Table 3's statistics: name -> percentile (None: the mean).
STATISTICS: dict[str, float | None] = {
    "Average": None,
    "50p": 50,
    "75p": 75,
    "80p": 80,
    "85p": 85,
    "90p": 90,
    "95p": 95,
    "97p": 97,
    "98p": 98,
    "99p": 99,
}
#: The predictors compared, in table order (names of ``--model NAME=...``).
PREDICTORS: tuple[str, ...] = ("wrangler", "mtl")
LABELS = {
    "spec": "speculation only",
    "wrangler": "Wrangler",
    "mtl": "MTL f0,n,l",
    "random": "random refusal (control, MTL's rate)",
    "oracle": "oracle (true node state)",
}
#: FB-2009's second day sample, the fresh period of the paper's experiment.
FB2009_DAY = 1
ALL = "ALL"
#: SVM cost of the trained predictors: with C=1 the Newton solver of GroupedMTLSVC needs
#: 1000+ iterations on a 16k-row trace (minutes); C=0.1 converges in ~70 (seconds).
TRAIN_C = 0.1


class CompareError(ValueError):
    """Bad input to ``straggler compare`` (the message names the flag or file and value)."""


@dataclass
class CompareConfig:
    """Settings of one ``straggler compare`` run (see ``straggler compare --help``)."""

    traces: str
    out: str
    workloads: list[str] = field(default_factory=lambda: ["FB2009", "FB2010", "ALI2017"])
    models: dict[str, str] = field(default_factory=dict)
    seeds: int = 3
    nodes: int | None = None
    slots: int | None = None
    hours: float | None = None
    scales: dict[str, float] | None = None
    speculation: str = "late"
    max_wait: float = 20.0
    refresh: float = 10.0
    data_dir: str | None = None
    counters: str | None = None
    beta: float = DEFAULT_BETA
    min_tasks: int = DEFAULT_MIN_TASKS
    seed_offset: int = 1000
    match_load: bool = True
    oracle: bool = True
    #: predictor placement mode: "rank" (best free node) or "threshold" (Wrangler's rule)
    mode: str = "rank"
    #: run the random-refusal control at the MTL run's refusal rate (same seed)
    control: bool = True


def improvement(base: float, other: float) -> float:
    """``100 * (base - other) / base``: positive when ``other`` is smaller (better).

    Examples
    --------
    >>> improvement(200.0, 150.0)
    25.0
    >>> improvement(100.0, 120.0)
    -20.0
    """
    if not base > 0:
        return float("nan")
    return 100.0 * (base - other) / base


def jct_statistics(jct) -> dict[str, float]:
    """Mean and Table 3's percentiles of job completion times (linear interpolation).

    Examples
    --------
    >>> s = jct_statistics(np.arange(1.0, 101.0))
    >>> s["Average"], s["50p"], s["99p"]
    (50.5, 50.5, 99.01)
    """
    x = np.asarray(jct, dtype=float)
    if x.size == 0:
        return dict.fromkeys(STATISTICS, float("nan"))
    out = {}
    for name, q in STATISTICS.items():
        out[name] = float(x.mean()) if q is None else float(np.percentile(x, q))
    return out


def significance(values, alpha: float = 0.05) -> dict[str, Any]:
    """Mean, spread and a two-sided one-sample t-test of per-seed improvements against 0.

    With one seed (or no spread) no test is possible: ``p_value`` is NaN and the result is
    not significant.

    Examples
    --------
    >>> r = significance([10.0, 12.0, 11.0])
    >>> round(r["mean"], 1), r["significant"]
    (11.0, True)
    >>> significance([5.0, -4.0, 1.0])["significant"]
    False
    """
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    n = int(v.size)
    out = {
        "n": n,
        "mean": float(v.mean()) if n else float("nan"),
        "std": float(v.std(ddof=1)) if n > 1 else float("nan"),
        "min": float(v.min()) if n else float("nan"),
        "max": float(v.max()) if n else float("nan"),
        "p_value": float("nan"),
        "significant": False,
    }
    out["ci_low"] = out["ci_high"] = float("nan")
    if n > 1 and out["std"] > 0:
        from scipy.stats import t as student_t
        from scipy.stats import ttest_1samp

        p = float(ttest_1samp(v, 0.0).pvalue)
        out["p_value"] = p
        out["significant"] = bool(p < alpha)
        half = float(student_t.ppf(1 - alpha / 2, n - 1)) * out["std"] / np.sqrt(n)
        out["ci_low"], out["ci_high"] = out["mean"] - half, out["mean"] + half
    return out


# ---------------------------------------------------------------------------- inputs
def _trace_summary(traces: Path) -> dict:
    path = traces / "summary.json" if traces.is_dir() else traces.parent / "summary.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise CompareError(f"{path}: not valid JSON ({exc})") from exc


def parse_models(specs: list[str] | None) -> dict[str, str]:
    """``["wrangler=DIR", "mtl=models:/x@champion"]`` -> dict; a bare value is the MTL model.

    Examples
    --------
    >>> parse_models(["wrangler=/m/w", "runs:/abc/model"])
    {'wrangler': '/m/w', 'mtl': 'runs:/abc/model'}
    """
    out: dict[str, str] = {}
    for spec in specs or []:
        name, sep, value = spec.partition("=")
        if not sep or "/" in name or ":" in name:
            name, value = "mtl", spec
        name = name.strip().lower()
        if name not in PREDICTORS:
            raise CompareError(f"--model {spec!r}: name must be one of {list(PREDICTORS)}")
        if name in out:
            raise CompareError(f"--model gives {name!r} twice")
        if not value:
            raise CompareError(f"--model {spec!r}: empty path or URI")
        out[name] = value
    return out


def train_predictors(cfg: CompareConfig, trace: pd.DataFrame, out: Path) -> dict[str, dict]:
    """The Wrangler and MTL predictors: loaded from ``cfg.models`` or trained on ``trace``.

    Each is saved under ``out/models/<name>/`` (a safe ``mtl.Predictor`` artifact).
    """
    import mtl

    labelled = None
    result: dict[str, dict] = {}
    for name in PREDICTORS:
        t0 = time.perf_counter()
        source = cfg.models.get(name)
        if source is not None:
            pred = mtl.load_predictor(source)
            info: dict[str, Any] = {"source": source, "trained": False}
        else:
            if labelled is None:
                labelled = check_classes(
                    label_stragglers(trace, cfg.beta, cfg.min_tasks), on_single_class="drop"
                )
            if name == "mtl":
                est = mtl.GroupedMTLSVC(variant="f0nl", C=TRAIN_C)
            else:
                est = mtl.WranglerSVC(C=TRAIN_C)
            est.fit(labelled.X, labelled.y)
            pred = mtl.Predictor.from_estimator(est)
            info = {
                "source": "trained",
                "trained": True,
                "estimator": repr(est),
                "rows": int(len(labelled.frame)),
                "straggler_share": float(labelled.y.mean()),
                "dropped_workloads": dict(labelled.dropped_workloads),
            }
        path = pred.save(out / "models" / name)
        info.update(
            artifact=str(path),
            threshold=float(pred.threshold),
            kind=getattr(pred, "kind", None),
            seconds=time.perf_counter() - t0,
        )
        result[name] = {"predictor": pred, "info": info}
    return result


def _check_counters(preds: dict[str, dict]) -> None:
    """Every predictor must read counters the simulator has (a model trained on another
    counter set, e.g. FlowBench's, cannot score a simulated node)."""
    import sim_bridge

    have = {f"c_{c}" for c in sim_bridge.COUNTER_NAMES}
    for name, entry in preds.items():
        feats = list(getattr(entry["predictor"], "feature_names", []) or [])
        missing = [f for f in feats if f not in have]
        if missing:
            src = entry["info"].get("source")
            raise CompareError(
                f"--model {name}={src}: reads counters the simulator does not have "
                f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}; "
                f"{len(missing)} of {len(feats)}). A model for compare must be trained on a "
                "simulated trace (`straggler collect`)"
            )


def _shifted(workload, offset: float):
    """The same jobs, ``offset`` seconds later (explicit deadlines move with them)."""
    import sim_bridge

    jobs = [
        dataclasses.replace(
            j,
            submit_time=j.submit_time + offset,
            deadline=None if j.deadline is None else j.deadline + offset,
        )
        for j in workload.jobs
    ]
    return sim_bridge.Workload(
        workload.name,
        jobs,
        profiles=dict(workload.profiles),
        tail_alpha=workload.tail_alpha,
        source=workload.source,
    )


def _work(workload) -> float:
    return float(sum(j.map_work.sum() + j.reduce_work.sum() for j in workload.jobs))


def fresh_workloads(cfg: CompareConfig, setup: dict, k: int) -> tuple[list, dict[str, dict]]:
    """Workloads of fresh period ``k``: new draws, FB-2009's second day, shifted in time.

    With ``cfg.match_load`` each workload's data scale is set so that its total base work
    equals the training period's (FB-2009's second day sample carries ~90x more work than
    the first in its first hour at the same scale; a saturated cluster leaves placement no
    choice, an idle one no stragglers to avoid). Returns the workloads and, per name, the
    source file and the scale used.
    """
    import sim_bridge

    root = sim_bridge.resolve_data_dir(cfg.data_dir)
    day_file = root / "swim" / f"FB-2009_samples_24_times_1hr_{FB2009_DAY}.tsv"
    loaded, info = [], {}
    for j, name in enumerate(cfg.workloads):
        day = FB2009_DAY if name == "FB2009" and day_file.is_file() else 0
        scale = setup["scales"].get(name, 1.0)

        def load(scale, seed, day, name=name):
            return sim_bridge.load_workload(
                name, cfg.data_dir, hours=setup["hours"], scale=scale, seed=seed, day=day
            )

        seed = setup["test_seed"] + 17 * k + j
        w = load(scale, seed, day)
        target = None
        if cfg.match_load:
            # the training period of this workload, as straggler collect loaded it
            order = setup["train_order"]
            k_train = order.index(name) if name in order else j  # collect seeds seed + index
            target = _work(load(scale, setup["train_seed"] + k_train, 0))
            for _ in range(3):  # the task count is a step function of the scale
                got = _work(w)
                if not got > 0 or abs(got / target - 1.0) < 0.05:
                    break
                scale *= target / got
                w = load(scale, seed, day)
        info[name] = {
            "source": w.source,
            "day": day,
            "scale": scale,
            "base_work": _work(w),
            "train_base_work": target,
            "jobs": len(w.jobs),
        }
        loaded.append(_shifted(w, setup["offset"] * (k + 1)))
    return loaded, info


# ---------------------------------------------------------------------------- runs
def _metrics(result, workloads: list[str]) -> dict[str, dict[str, float]]:
    jobs, tasks = result.jobs, result.tasks
    out = {}
    for w in [*workloads, ALL]:
        jsel = jobs if w == ALL else jobs[jobs["workload"] == w]
        tsel = tasks if w == ALL else tasks[tasks["workload"] == w]
        m = jct_statistics(jsel["jct"].to_numpy())
        m["task_seconds"] = float((tsel["end_time"] - tsel["launch_time"]).sum())
        m["jobs"] = int(len(jsel))
        m["attempts"] = int(len(tsel))
        m["copies"] = int((tsel["attempt"] > 0).sum())
        out[w] = m
    return out


def _task_key(k: int, policy: str) -> str:
    return f"seed={k}/policy={policy}"


#: The last fresh period built in this process (a local sweep runs seed after seed, so every
#: policy of a seed simulates the same workload objects, as before sweeps ran on Dask).
_PERIOD_CACHE: dict[str, tuple] = {}


def _fresh_period(cfg: CompareConfig, setup: dict, k: int) -> tuple[list, dict[str, dict]]:
    key = json.dumps([dataclasses.asdict(cfg), setup, k], sort_keys=True, default=str)
    if key not in _PERIOD_CACHE:
        _PERIOD_CACHE.clear()
        _PERIOD_CACHE[key] = fresh_workloads(cfg, setup, k)
    return _PERIOD_CACHE[key]


def run_policy(
    cfg: CompareConfig,
    setup: dict,
    k: int,
    pol: str,
    predictor=None,
    upstream: dict[str, dict] | None = None,
) -> dict:
    """One run of ``compare``: policy ``pol`` + speculation on fresh period ``k``.

    A sweep task (:mod:`pipelines._sweep`): everything it draws comes from ``setup`` and
    ``k``, so it gives the same result on any worker. The random-refusal control (``pol ==
    "random"``) needs the MTL run of the same period (``upstream``) for its refusal rate.

    Returns
    -------
    dict
        ``run`` (the record of ``summary.json``'s ``runs``), ``jct`` (workload -> job
        completion times, ``ALL`` included), ``refusal_rate`` and ``sources``.
    """
    import sim_bridge
    from sim_bridge import PredictorPlacement
    from sim_bridge.policies import RandomRefusalPlacement

    workloads, sources = _fresh_period(cfg, setup, k)
    actual = [w.name for w in workloads]
    if pol == "spec":
        placement: Any = sim_bridge.DEFAULT_PLACEMENT
    elif pol == "random":
        mtl_rate = next(iter((upstream or {}).values()), {}).get("refusal_rate")
        placement = RandomRefusalPlacement(
            refusal_rate=_finite_rate(mtl_rate),
            max_wait=cfg.max_wait,
            seed=setup["test_seed"] + k,
        )
    elif pol == "oracle":
        placement = PredictorPlacement(
            _oracle(cfg, setup, workloads),
            max_wait=cfg.max_wait,
            refresh=cfg.refresh,
            mode=cfg.mode,
        )
    else:
        placement = PredictorPlacement(
            predictor, max_wait=cfg.max_wait, refresh=cfg.refresh, mode=cfg.mode
        )
    r = sim_bridge.simulate(
        workloads,
        cfg.speculation,
        placement,
        nodes=setup["nodes"],
        slots=setup["slots"],
        seed=setup["test_seed"] + k,
        cluster_seed=setup["cluster_seed"],
        data_dir=cfg.data_dir,
        counters=setup["counters"],
        beta=cfg.beta,
        progress=False,
        record_counters=False,
    )
    wl_names = sorted(set(actual))
    stats = dict(getattr(placement, "stats_", {}))
    run = {
        "seed_index": k,
        "seed": setup["test_seed"] + k,
        "policy": pol,
        "metrics": _metrics(r, wl_names),
        "placement_stats": stats,
        # the control's refusal rate: the MTL run's of the same seed
        "refusal_rate": float(placement.refusal_rate) if pol == "random" else None,
        "wall_seconds": r.summary["wall_seconds"],
        "straggler_share": r.summary.get("straggler_share"),
    }
    jct = {}
    for w in [*wl_names, ALL]:
        sel = r.jobs if w == ALL else r.jobs[r.jobs["workload"] == w]
        jct[w] = sel["jct"].to_numpy()
    return {
        "run": run,
        "jct": jct,
        "refusal_rate": placement.refusal_rate_ if stats else None,
        "sources": sources,
    }


def run_compare(cfg: CompareConfig, engine: Engine | None = None) -> dict:
    """Train or load the predictors, run the policies on ``cfg.seeds`` fresh periods, and
    write the tables, plots and ``summary.json`` to ``cfg.out``. Returns the summary.

    The runs (one per period and policy) are a sweep (:func:`pipelines._sweep.run_sweep`):
    in this process by default, or on Dask with ``engine``; the tables are the same.
    """
    wall0 = time.perf_counter()
    _check(cfg)
    traces = Path(cfg.traces)
    if not traces.exists():
        raise FileNotFoundError(f"--traces: no trace at {traces}")
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    tsum = _trace_summary(traces)
    if tsum.get("source") == "flowbench":
        raise CompareError(
            f"--traces {traces}: a FlowBench trace (real workflow runs). compare places tasks "
            "in the simulator, whose node counters are not FlowBench's causal c_exec_* "
            "counters, so no model trained on it can score a simulated node; evaluate it with "
            "`straggler evaluate --table 1|2` instead"
        )
    trace = load_trace(traces)
    in_trace = set(trace["workload"].unique())
    unseen = [w for w in cfg.workloads if w not in in_trace]
    if unseen and set(PREDICTORS) - set(cfg.models):
        raise CompareError(
            f"--workloads {unseen}: not in the training trace {traces} (it has "
            f"{sorted(in_trace)}); the models trained on it never saw them. Drop them from "
            "--workloads, or collect a trace that has them"
        )
    setup = _setup(cfg, tsum, trace)
    preds = train_predictors(cfg, trace, out)
    _check_counters(preds)

    runs: list[dict] = []
    jct_samples: dict[tuple[str, str], list[np.ndarray]] = {}
    sources: dict[str, str] = {}
    names = [
        *PREDICTORS,
        *(["random"] if cfg.control and "mtl" in PREDICTORS else []),
        *(["oracle"] if cfg.oracle else []),
    ]
    policies = ["spec", *names]
    tasks = []
    for k in range(cfg.seeds):
        for pol in policies:
            tasks.append(
                SweepTask(
                    _task_key(k, pol),
                    run_policy,
                    (cfg, setup, k, pol, preds[pol]["predictor"] if pol in preds else None),
                    after=(_task_key(k, "mtl"),) if pol == "random" else (),
                )
            )
    engine = engine or Engine()
    done = run_sweep(tasks, engine, desc="compare", unit="run")
    for t in tasks:
        res = done[t.key]
        runs.append(res["run"])
        sources = res["sources"]
        for w, jct in res["jct"].items():
            jct_samples.setdefault((w, res["run"]["policy"]), []).append(jct)
    groups = sorted({w for run in runs for w in run["metrics"] if w != ALL}) + [ALL]
    table3, table4 = _tables(runs, groups, names)
    headroom = headroom_table(runs, groups, names) if cfg.oracle else pd.DataFrame()
    verdict = _verdict(table3, table4, cfg.seeds)
    files = _write_outputs(out, table3, table4, jct_samples, groups, cfg, verdict, headroom)
    sig3 = table3[table3["significant"]]
    summary = {
        "command": "compare",
        "config": {k: v for k, v in dataclasses.asdict(cfg).items()},
        "setup": setup,
        "trace_workloads": sorted(in_trace),
        "test_workloads": sources,
        "models": {k: v["info"] for k, v in preds.items()},
        "policies": {p: LABELS[p] for p in policies},
        "predictors": names,
        "speculation": cfg.speculation,
        "runs": runs,
        "engine": engine.describe(),
        "table3": table3.to_dict(orient="records"),
        "table4": table4.to_dict(orient="records"),
        "headroom": headroom.to_dict(orient="records"),
        "placement_mode": cfg.mode,
        "significance": {
            "test": "two-sided one-sample t-test of per-seed improvements against 0, alpha = 0.05",
            "interval": "95% Student-t interval of the mean per-seed improvement (ci_low, ci_high)",
            "correction": "Benjamini-Hochberg false-discovery rate at 5% over every cell of "
            "Tables 3 and 4 (scipy.stats.false_discovery_control; columns p_fdr, "
            "significant_fdr), and Holm's family-wise correction (p_holm, significant_holm); "
            "'significant' is the uncorrected test",
            "table3_significant_fdr_cells": int(table3["significant_fdr"].sum())
            if "significant_fdr" in table3
            else 0,
            "seeds": cfg.seeds,
            "table3_significant_cells": int(len(sig3)),
            "table3_cells": int(len(table3)),
            "table4_significant_cells": int(table4["significant"].sum()),
            "verdict": verdict,
        },
        "files": files,
        "wall_seconds": time.perf_counter() - wall0,
    }
    write_summary(out, summary)
    return summary


def _oracle(cfg: CompareConfig, setup: dict, workloads: list):
    """The slowdown oracle of the test runs: a twin of their cluster, the workloads'
    profiles (an upper bound for what a predictor of the node state can gain)."""
    import sim_bridge

    data_dir = None
    if setup["counters"] == "alibaba2018":
        data_dir = sim_bridge.resolve_data_dir(cfg.data_dir)
    cluster = sim_bridge.Cluster(
        setup["nodes"],
        setup["slots"],
        setup["cluster_seed"],
        source=setup["counters"],
        data_dir=data_dir,
    )
    return sim_bridge.SlowdownOracle(cluster, workloads, beta=cfg.beta)


def _check(cfg: CompareConfig) -> None:
    import sim_bridge

    if not cfg.workloads:
        raise CompareError("--workloads is empty")
    bad = [w for w in cfg.workloads if w not in sim_bridge.WORKLOAD_NAMES]
    if bad:
        raise CompareError(
            f"--workloads: unknown {bad}; choose from {list(sim_bridge.WORKLOAD_NAMES)}"
        )
    if len(set(cfg.workloads)) != len(cfg.workloads):
        raise CompareError(f"--workloads lists a workload twice: {cfg.workloads}")
    if not (isinstance(cfg.seeds, int) and cfg.seeds >= 1):
        raise CompareError(f"--seeds must be an integer >= 1, got {cfg.seeds!r}")
    for flag, v in (("--nodes", cfg.nodes), ("--slots", cfg.slots)):
        if v is not None and not (isinstance(v, int) and v >= 1):
            raise CompareError(f"{flag} must be an integer >= 1, got {v!r}")
    if cfg.hours is not None and not (cfg.hours > 0 and math.isfinite(cfg.hours)):
        raise CompareError(f"--hours must be > 0, got {cfg.hours!r}")
    if not (cfg.max_wait >= 0 and math.isfinite(cfg.max_wait)):
        raise CompareError(f"--max-wait must be >= 0, got {cfg.max_wait!r}")
    kind = sim_bridge.list_policies("speculation")
    if cfg.speculation not in kind:
        raise CompareError(
            f"--speculation {cfg.speculation!r} is not a speculation policy; choose from "
            f"{sorted(kind)}"
        )
    unknown = set(cfg.models) - set(PREDICTORS)
    if unknown:
        raise CompareError(f"--model names {sorted(unknown)}; use {list(PREDICTORS)}")


def _setup(cfg: CompareConfig, tsum: dict, trace: pd.DataFrame) -> dict:
    """Cluster and period of the test runs, from the flags then the trace's summary.json."""
    from pipelines._collect import DEFAULT_SCALES

    nodes = cfg.nodes or tsum.get("nodes")
    if nodes is None:  # a trace without its summary: its node names tell the size
        nodes = int(trace["node"].str.extract(r"(\d+)$")[0].astype(int).max()) + 1
    slots = cfg.slots or tsum.get("slots") or 2
    hours = cfg.hours if cfg.hours is not None else tsum.get("hours") or 1.0
    scales = dict(DEFAULT_SCALES)
    scales.update(tsum.get("scales") or {})
    scales.update(cfg.scales or {})
    train_seed = int(tsum.get("seed", 0))
    # the fresh periods start after the whole training trace (hours, rounded up)
    end = float(trace["end_time"].max()) if len(trace) else 0.0
    offset = 3600.0 * max(math.ceil(end / 3600.0), math.ceil(float(hours)), 1)
    return {
        "nodes": int(nodes),
        "slots": int(slots),
        "hours": float(hours),
        "scales": {w: float(scales.get(w, 1.0)) for w in cfg.workloads},
        "cluster_seed": train_seed,
        "train_seed": train_seed,
        "test_seed": train_seed + cfg.seed_offset,
        "offset": offset,
        "counters": cfg.counters or tsum.get("counters_source") or "synthetic",
        "trace_summary": bool(tsum),
        "train_order": list(tsum.get("workloads") or cfg.workloads),
    }


def _finite_rate(rate) -> float:
    """A refusal rate for the control: the MTL run's, or 0 when it looked at no node."""
    return float(rate) if rate is not None and np.isfinite(rate) else 0.0


def headroom_table(runs: list[dict], groups: list[str], names: list[str]) -> pd.DataFrame:
    """Per workload and predictor: the share of the oracle's mean-JCT gain over speculation
    alone that the predictor captures (:func:`sim_bridge.headroom_captured`), per seed and
    pooled (gains summed over seeds: robust to a seed where the oracle gains little).

    Examples
    --------
    >>> m = lambda x: {"W": {"Average": x}}
    >>> runs = [{"seed_index": 0, "policy": p, "metrics": m(x)}
    ...         for p, x in (("spec", 100.0), ("mtl", 90.0), ("oracle", 80.0))]
    >>> headroom_table(runs, ["W"], ["mtl", "oracle"])["pooled"].tolist()
    [0.5]
    """
    from sim_bridge import headroom_captured

    by = {(r["seed_index"], r["policy"]): r["metrics"] for r in runs}
    seeds = sorted({r["seed_index"] for r in runs})
    rows = []
    for w in groups:
        for pred in names:
            if pred == "oracle":
                continue
            per, gain, room = [], 0.0, 0.0
            for k in seeds:
                try:
                    b = by[(k, "spec")][w]["Average"]
                    c = by[(k, pred)][w]["Average"]
                    o = by[(k, "oracle")][w]["Average"]
                except KeyError:
                    continue
                per.append(headroom_captured(b, c, o))
                gain += b - c
                room += b - o
            rows.append(
                {
                    "workload": w,
                    "predictor": pred,
                    "pooled": gain / room if room > 0 else float("nan"),
                    "per_seed": per,
                }
            )
    return pd.DataFrame(rows)


def _tables(
    runs: list[dict], groups: list[str], names: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:

    base = {
        (r["seed_index"], w): m
        for r in runs
        if r["policy"] == "spec"
        for w, m in r["metrics"].items()
    }
    rows3, rows4 = [], []
    for w in groups:
        for pred in names:
            mine = {
                r["seed_index"]: r["metrics"][w]
                for r in runs
                if r["policy"] == pred and w in r["metrics"]
            }
            for stat in STATISTICS:
                vals = [
                    improvement(base[(k, w)][stat], m[stat])
                    for k, m in sorted(mine.items())
                    if (k, w) in base
                ]
                rows3.append(
                    {
                        "workload": w,
                        "predictor": pred,
                        "statistic": stat,
                        **significance(vals),
                        "per_seed": vals,
                    }
                )
            vals = [
                improvement(base[(k, w)]["task_seconds"], m["task_seconds"])
                for k, m in sorted(mine.items())
                if (k, w) in base
            ]
            rows4.append({"workload": w, "predictor": pred, **significance(vals), "per_seed": vals})
    t3, t4 = pd.DataFrame(rows3), pd.DataFrame(rows4)
    if len(t3) or len(t4):
        p_all = np.concatenate(
            [t3.get("p_value", pd.Series(dtype=float)), t4.get("p_value", pd.Series(dtype=float))]
        )
        adj, sig = holm(p_all)
        t3["p_holm"], t3["significant_holm"] = adj[: len(t3)], sig[: len(t3)]
        t4["p_holm"], t4["significant_holm"] = adj[len(t3) :], sig[len(t3) :]
        q, sig = fdr_bh(p_all)
        t3["p_fdr"], t3["significant_fdr"] = q[: len(t3)], sig[: len(t3)]
        t4["p_fdr"], t4["significant_fdr"] = q[len(t3) :], sig[len(t3) :]
    return t3, t4


def _verdict(table3: pd.DataFrame, table4: pd.DataFrame, seeds: int) -> str:
    if seeds < 2:
        return "one seed: no spread, no significance test; the numbers may be noise"
    t = table3[table3["workload"] == ALL]
    parts = []
    for pred in _names(table3):
        sub = t[t["predictor"] == pred].set_index("statistic")
        sig = sub.index[sub["significant"]].tolist()
        p99 = sub.loc["99p"]
        avg = sub.loc["Average"]
        parts.append(
            f"{LABELS[pred]}: mean JCT {avg['mean']:+.1f}% ± {avg['std']:.1f} "
            f"({'significant' if avg['significant'] else 'not significant'}), p99 "
            f"{p99['mean']:+.1f}% ± {p99['std']:.1f} "
            f"({'significant' if p99['significant'] else 'not significant'}); "
            f"significant statistics over all workloads: {', '.join(sig) or 'none'}"
        )
    n_cells = len(table3) + len(table4)
    n_sig = int(table3["significant"].sum() + table4["significant"].sum())
    return (
        f"over {seeds} seeds (t-test, 5%): "
        + "; ".join(parts)
        + f". {n_sig} of {n_cells} cells are significant uncorrected (about "
        f"{0.05 * n_cells:.0f} would be by chance alone at 5%); "
        f"{int(table3['significant_fdr'].sum() + table4['significant_fdr'].sum())} stay "
        "significant at a 5% false-discovery rate (Benjamini-Hochberg over all cells), "
        f"{int(table3['significant_holm'].sum() + table4['significant_holm'].sum())} under "
        "Holm's stricter family-wise correction"
    )


# ---------------------------------------------------------------------------- outputs
def _cell(row) -> str:
    if not np.isfinite(row["mean"]):
        return "n/a"
    mark = "**" if row.get("significant_fdr", False) else "*" if row["significant"] else ""
    if row["n"] > 1:
        return f"{row['mean']:.2f}% ± {row['std']:.2f}{mark}"
    return f"{row['mean']:.2f}%"


def _names(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["predictor"]))


def _markdown(table3: pd.DataFrame, table4: pd.DataFrame, cfg: CompareConfig, headroom=None) -> str:
    groups = list(dict.fromkeys(table3["workload"]))
    names = _names(table3)
    head = ["statistic"] + [f"{w} {LABELS[p]}" for w in groups for p in names]
    lines = [
        f"# Table 3: improvement in job completion time over speculation ({cfg.speculation})",
        "",
        f"Mean ± std over {cfg.seeds} seed(s); `*`: significant (two-sided one-sample t-test "
        "of the per-seed improvements against 0, 5%, uncorrected); `**`: still significant "
        "after Holm's correction over every cell of Tables 3 and 4. Positive: faster than "
        f"speculation alone. Predictor placement mode: {cfg.mode}.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    idx = table3.set_index(["workload", "predictor", "statistic"])
    for stat in STATISTICS:
        cells = [_cell(idx.loc[(w, p, stat)]) for w in groups for p in names]
        lines.append(f"| {stat} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "# Table 4: reduction in total task-seconds over speculation",
        "",
        "| workload | " + " | ".join(LABELS[p] for p in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    idx4 = table4.set_index(["workload", "predictor"])
    for w in groups:
        lines.append(f"| {w} | " + " | ".join(_cell(idx4.loc[(w, p)]) for p in names) + " |")
    if headroom is not None and len(headroom):
        hn = list(dict.fromkeys(headroom["predictor"]))
        lines += [
            "",
            "# Headroom captured: share of the oracle's mean-JCT gain over speculation alone",
            "",
            "Pooled over seeds (sum of gains / sum of the oracle's gains); 1 = as good as the "
            "oracle, 0 = no better than speculation alone, < 0 = worse.",
            "",
            "| workload | " + " | ".join(LABELS[p] for p in hn) + " |",
            "|---|" + "---|" * len(hn),
        ]
        hidx = headroom.set_index(["workload", "predictor"])["pooled"]
        for w in dict.fromkeys(headroom["workload"]):
            lines.append(f"| {w} | " + " | ".join(f"{hidx[(w, p)]:.2f}" for p in hn) + " |")
    return "\n".join(lines) + "\n"


def _csv(frame: pd.DataFrame) -> str:
    f = frame.copy()
    f["per_seed"] = f["per_seed"].map(lambda v: ";".join(f"{x:.6g}" for x in v))
    return f.to_csv(index=False)


def _write_outputs(
    out, table3, table4, jct_samples, groups, cfg, verdict, headroom=None
) -> dict[str, str]:
    md = _markdown(table3, table4, cfg, headroom) + f"\nVerdict: {verdict}.\n"
    files = {
        "table3_csv": atomic_write_text(out / "table3.csv", _csv(table3)),
        "table4_csv": atomic_write_text(out / "table4.csv", _csv(table4)),
        "tables_md": atomic_write_text(out / "tables.md", md),
        "jct_difference_png": plot_jct_difference(
            table3,
            out / "jct_difference.png",
            labels=LABELS,
            title=f"JCT gain over {cfg.speculation} alone, all workloads "
            f"({cfg.seeds} seed{'s' if cfg.seeds > 1 else ''}, 95% t-intervals)",
        ),
        "jct_cdf_png": _plot_cdfs(jct_samples, groups, out / "jct_cdf.png", cfg),
        "table3_png": _plot_table3(table3, groups, out / "table3.png", cfg),
        "table4_png": _plot_table4(table4, groups, out / "table4.png", cfg),
    }
    return {k: str(v) for k, v in files.items()}


def _plot_cdfs(jct_samples, groups, path: Path, cfg) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.4), squeeze=False)
    for ax, w in zip(axes[0], groups, strict=True):
        for pol in dict.fromkeys(p for _w, p in jct_samples):
            parts = jct_samples.get((w, pol))
            if not parts:
                continue
            x = np.sort(np.concatenate(parts))
            if not x.size:
                continue
            ax.plot(x, np.arange(1, x.size + 1) / x.size, label=LABELS[pol])
        ax.set_xscale("log")
        ax.set_title(f"{w} (all {cfg.seeds} seeds pooled)")
        ax.set_xlabel("job completion time (s)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("CDF")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.suptitle(
        f"Job completion time: speculation ({cfg.speculation}) alone vs + predictor", y=1.04
    )
    return save_figure(fig, path)


def _plot_table3(table3, groups, path: Path, cfg) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = list(STATISTICS)
    fig, axes = plt.subplots(len(groups), 1, figsize=(9, 2.6 * len(groups)), squeeze=False)
    x = np.arange(len(stats))
    names = _names(table3)
    width = 0.8 / len(names)
    for ax, w in zip(axes[:, 0], groups, strict=True):
        for i, pred in enumerate(names):
            sub = table3[(table3["workload"] == w) & (table3["predictor"] == pred)]
            sub = sub.set_index("statistic").loc[stats]
            _range_bars(ax, x + (i - (len(names) - 1) / 2) * width, sub, width, 2, LABELS[pred])
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(x, stats)
        ax.set_ylabel("% improvement")
        ax.set_title(f"{w}: JCT improvement over {cfg.speculation} (bars: min-max over seeds)")
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def _range_bars(ax, x, sub: pd.DataFrame, width: float, capsize: int, label: str) -> None:
    """Bars at the seeds' mean with min-max error bars (missing cells drawn as 0)."""
    lo = (sub["mean"] - sub["min"]).clip(lower=0).fillna(0)
    hi = (sub["max"] - sub["mean"]).clip(lower=0).fillna(0)
    ax.bar(x, sub["mean"].fillna(0), width, yerr=[lo, hi], capsize=capsize, label=label)


def _plot_table4(table4, groups, path: Path, cfg) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(groups), 3.4))
    x = np.arange(len(groups))
    names = _names(table4)
    width = 0.8 / len(names)
    for i, pred in enumerate(names):
        sub = table4[table4["predictor"] == pred].set_index("workload").loc[groups]
        _range_bars(ax, x + (i - (len(names) - 1) / 2) * width, sub, width, 3, LABELS[pred])
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x, groups)
    ax.set_ylabel("% reduction in task-seconds")
    ax.set_title(f"Task-seconds vs {cfg.speculation} (min-max over {cfg.seeds} seeds)")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return save_figure(fig, path)
