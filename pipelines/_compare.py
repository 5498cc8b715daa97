"""``straggler compare``: predictor-informed scheduling vs speculation alone (seed 004,
Tables 3 and 4).

Flow:

1. the predictors: Wrangler (:class:`mtl.WranglerSVC`, one SVM per node-workload pair) and
   the grouped multi-task SVM f0,n,l (:class:`mtl.GroupedMTLSVC`), trained on every labelled
   original attempt of the collected trace (Wrangler at C=0.1; f0,n,l at the seed's C=1
   with its regularisers and threshold chosen on validation rows from the ``small`` grid,
   :func:`pipelines._compare_models.fit_selected_mtl`), or loaded
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

One module per job: :mod:`pipelines._compare_config` (the settings and how they resolve
against the trace), :mod:`pipelines._compare_models` (the predictors, loaded or trained),
:mod:`pipelines._compare_runs` (fresh periods and one run per period and policy),
:mod:`pipelines._compare_stats` (improvements, significance, headroom, the verdict) and
:mod:`pipelines._compare_outputs` (tables and plots); :func:`run_compare` here joins them.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines._compare_config import (
    LABELS,
    PREDICTORS,
    CompareConfig,
    CompareError,
    check_config,
    parse_models,
    read_trace_summary,
    resolve_setup,
    resolve_workloads,
)
from pipelines._compare_models import TRAIN_C, check_counters, train_predictors
from pipelines._compare_outputs import write_outputs
from pipelines._compare_runs import FB2009_DAY, fresh_workloads, run_policy, task_key
from pipelines._compare_stats import (
    ALL,
    STATISTICS,
    headroom_table,
    improvement,
    improvement_tables,
    jct_statistics,
    significance,
    verdict_text,
)
from pipelines._dataset import load_trace
from pipelines._io import write_summary
from pipelines._metrics import fdr_bh, holm
from pipelines._sweep import Engine, SweepTask, run_sweep

#: Names other modules import from here (the jobs live in the ``_compare_*`` modules).
__all__ = [
    "ALL",
    "FB2009_DAY",
    "LABELS",
    "PREDICTORS",
    "STATISTICS",
    "TRAIN_C",
    "CompareConfig",
    "CompareError",
    "fdr_bh",
    "fresh_workloads",
    "headroom_table",
    "holm",
    "improvement",
    "jct_statistics",
    "parse_models",
    "run_compare",
    "run_policy",
    "significance",
    "train_predictors",
]


def run_compare(cfg: CompareConfig, engine: Engine | None = None) -> dict:
    """Train or load the predictors, run the policies on ``cfg.seeds`` fresh periods, and
    write the tables, plots and ``summary.json`` to ``cfg.out``. Returns the summary.

    The runs (one per period and policy) are a sweep (:func:`pipelines._sweep.run_sweep`):
    in this process by default, or on Dask with ``engine``; the tables are the same.
    """
    wall0 = time.perf_counter()
    check_config(cfg)
    traces = Path(cfg.traces)
    if not traces.exists():
        raise FileNotFoundError(f"--traces: no trace at {traces}")
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    tsum = read_trace_summary(traces)
    if tsum.get("source") == "flowbench":
        raise CompareError(
            f"--traces {traces}: a FlowBench trace (real workflow runs). compare places tasks "
            "in the simulator, whose node counters are not FlowBench's causal c_exec_* "
            "counters, so no model trained on it can score a simulated node; evaluate it with "
            "`straggler evaluate --table 1|2` instead"
        )
    trace = load_trace(traces)
    in_trace = set(trace["workload"].unique())
    order = [w for w in tsum.get("workloads") or [] if w in in_trace]
    cfg = resolve_workloads(cfg, order + sorted(in_trace - set(order)))
    unseen = [w for w in cfg.workloads if w not in in_trace]
    if unseen and set(PREDICTORS) - set(cfg.models):
        raise CompareError(
            f"--workloads {unseen}: not in the training trace {traces} (it has "
            f"{sorted(in_trace)}); the models trained on it never saw them. Drop them from "
            "--workloads, or collect a trace that has them"
        )
    setup = resolve_setup(cfg, tsum, trace)
    preds = train_predictors(cfg, trace, out)
    check_counters(preds)

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
                    task_key(k, pol),
                    run_policy,
                    (cfg, setup, k, pol, preds[pol]["predictor"] if pol in preds else None),
                    after=(task_key(k, "mtl"),) if pol == "random" else (),
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
    table3, table4 = improvement_tables(runs, groups, names)
    headroom = headroom_table(runs, groups, names) if cfg.oracle else pd.DataFrame()
    verdict = verdict_text(table3, table4, cfg.seeds)
    files = write_outputs(out, table3, table4, jct_samples, groups, cfg, verdict, headroom)
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
