"""``straggler evaluate``: our versions of the seed's Table 1 and Table 2 (seed 004, §4.2-4.3).

Table 1: accuracy (with precision and recall alongside) of Wrangler's per-pair SVMs and the
six MTL variants f0, fn, fl, f0nl, f0t, f0tl, trained on the first 1..66% of every (node,
workload) pair's rows and tested on the same later rows (:func:`pipelines.fraction_split`).
Wrangler gets no model for a pair with too few rows or a single class; those pairs are
counted ("insufficient data") and predicted with WranglerSVC's documented fallback, and the
accuracy on the supported pairs alone is reported as well. A majority-class row (always
"not a straggler") shows what accuracy means on the data.

Table 2: f0nl against f0t on pairs whose later 95% of rows are left out of training
(:func:`pipelines.leave_pair_out_splits`), tested on those rows.

Hyper-parameters come from a grid (``straggler evaluate`` uses the shipped ``small`` one unless
told otherwise; with ``grid=None`` the estimators' defaults, regularisers 1 and threshold 0.5):
every model and fraction picks its regularisers and threshold by validation
accuracy on the latest ``val_share`` of each pair's training rows and is refitted on all of
them. Fits run in ``jobs`` processes.

Each part lives in its own module, and every name is re-exported here: the fits
(:mod:`pipelines._evaluate_fits`), the tables and their models
(:mod:`pipelines._evaluate_tables`), their formatting (:mod:`pipelines._evaluate_pivots`) and
the paper's claims (:mod:`pipelines._evaluate_claims`). This module checks the settings
(:func:`check_config`) and runs the command (:func:`run_evaluate`): it reads the trace,
computes the table and writes its CSV, Markdown, plot and ``summary.json``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines._evaluate_claims import table1_claims, table2_claims, verdict_lines
from pipelines._evaluate_fits import anomaly_flags, fit_and_score
from pipelines._evaluate_pivots import (
    pivot_markdown,
    table1_markdown,
    table1_pivot,
    table2_markdown,
    table2_pivot,
)
from pipelines._evaluate_tables import (
    MULTI_TASK,
    SINGLE_BLOCK,
    TABLE1_MODELS,
    TABLE2_MODELS,
    table1,
    table2,
)

if TYPE_CHECKING:
    from pipelines._evaluate_config import EvaluateConfig
    from pipelines._sweep import Engine

__all__ = [
    "MULTI_TASK",
    "SINGLE_BLOCK",
    "TABLE1_MODELS",
    "TABLE2_MODELS",
    "anomaly_flags",
    "check_config",
    "fit_and_score",
    "pivot_markdown",
    "run_evaluate",
    "table1",
    "table1_claims",
    "table1_markdown",
    "table1_pivot",
    "table2",
    "table2_claims",
    "table2_markdown",
    "table2_pivot",
    "verdict_lines",
]


def _trace_source(traces: str) -> str:
    """Where the trace came from (its ``summary.json`` ``source``: ``flowbench`` for real
    runs), ``simulator`` when the summary does not say."""
    import json

    p = Path(traces)
    path = p / "summary.json" if p.is_dir() else p.parent / "summary.json"
    try:
        return str(json.loads(path.read_text()).get("source") or "simulator")
    except (OSError, ValueError):
        return "simulator"


def check_config(cfg: EvaluateConfig) -> None:
    """Refuse settings no table can run with, before any file is read or written.

    Raises
    ------
    ValueError
        ``table`` not 1 or 2, ``jobs`` not a positive integer, or ``models`` naming a model
        the table does not have (the message names the flag and the bad value).

    Examples
    --------
    >>> from pipelines._evaluate_config import EvaluateConfig
    >>> check_config(EvaluateConfig(traces="t", table=2, out="o", models=("f0t",)))
    >>> check_config(EvaluateConfig(traces="t", table=2, out="o", models=("fn",)))
    Traceback (most recent call last):
    ...
    ValueError: --models: ['fn'] not in Table 2's ['f0nl', 'f0t']
    """
    if cfg.table not in (1, 2):
        raise ValueError(f"--table must be 1 or 2, got {cfg.table!r}")
    if not (isinstance(cfg.jobs, int) and cfg.jobs >= 1):
        raise ValueError(f"--jobs must be a positive integer, got {cfg.jobs!r}")
    if cfg.models:
        allowed = TABLE1_MODELS if cfg.table == 1 else TABLE2_MODELS
        bad = [m for m in cfg.models if m not in allowed]
        if bad:
            raise ValueError(f"--models: {bad} not in Table {cfg.table}'s {list(allowed)}")


def run_evaluate(cfg: EvaluateConfig, engine: Engine | None = None) -> dict:
    """Compute Table 1 or 2 on the trace ``cfg.traces``; write CSV, Markdown, PNG and
    ``summary.json`` into ``cfg.out``.

    ``cfg.on_single_class`` is :func:`pipelines._dataset.check_classes`'s: ``"drop"`` removes
    workloads whose rows are all one class (listed in the summary's ``data``).
    ``cfg.min_rows`` is the least number of labelled rows a (node, workload) pair needs to be
    held out in Table 2. ``engine`` (:class:`pipelines._sweep.Engine`) sends the fits to
    Dask instead of ``cfg.jobs`` local processes; the fits are seeded by ``cfg.seed``, so the
    table is the same.

    Returns
    -------
    dict
        ``markdown`` (the table), ``verdicts`` (the paper's claims, one line each) and
        ``summary`` (what ``summary.json`` holds).

    Raises
    ------
    ValueError
        Settings :func:`check_config` refuses, or a Table 1 fraction outside (0, 0.66].
    """
    from pipelines._dataset import check_classes, label_stragglers, load_trace, trace_hash
    from pipelines._grid import load_grid
    from pipelines._io import atomic_write_text, write_summary
    from pipelines._plots import plot_heldout, plot_metric_by_fraction
    from pipelines._splits import TABLE1_FRACTIONS

    check_config(cfg)
    traces, table, grid, seed, jobs = cfg.traces, cfg.table, cfg.grid, cfg.seed, cfg.jobs
    t0 = time.perf_counter()
    labelled = check_classes(
        label_stragglers(load_trace(traces), cfg.beta, cfg.min_tasks),
        on_single_class=cfg.on_single_class,
    )
    frame, counters = labelled.frame, labelled.counters
    g = None if grid in (None, "none") else load_grid(grid)
    outp = Path(cfg.out)
    outp.mkdir(parents=True, exist_ok=True)
    summary = {
        "command": "evaluate",
        "table": table,
        "traces": str(traces),
        "trace_source": _trace_source(traces),
        "data": labelled.summary(),
        "data_hash": trace_hash(frame[["node", "workload", *counters, "straggler"]]),
        "grid": grid or "none",
        "seed": seed,
    }
    if table == 1:
        fr = tuple(cfg.fractions or TABLE1_FRACTIONS)
        for f in fr:
            if not 0 < f <= 0.66:
                raise ValueError(
                    f"--fractions: {f!r} is not in (0, 0.66] (give percentages such as "
                    "1,5,66 or fractions such as 0.01,0.05,0.66)"
                )
        res = table1(
            frame,
            counters,
            fr,
            cfg.models or TABLE1_MODELS,
            g,
            seed=seed,
            jobs=jobs,
            engine=engine,
        )
        pivot = table1_pivot(res)
        claims = table1_claims(res)
        plot_metric_by_fraction(
            res[res["status"] == "ok"], outp / "table1.png", "Table 1: accuracy by training data"
        )
        summary["fractions"] = list(fr)
    else:
        res = table2(
            frame,
            counters,
            cfg.pairs,
            models=cfg.models or TABLE2_MODELS,
            grid=g,
            seed=seed,
            jobs=jobs,
            engine=engine,
            min_rows=cfg.min_rows,
        )
        pivot = table2_pivot(res)
        claims = table2_claims(res)
        plot_heldout(res[res["status"] == "ok"], outp / "table2.png", "Table 2: held-out pairs")
    res = res.assign(params=res.get("params", pd.Series(dtype=object)).astype(str))
    name = f"table{table}"
    atomic_write_text(outp / f"{name}.csv", res.to_csv(index=False))
    lines = verdict_lines(table, claims)
    md = pivot_markdown(pivot)
    summary["pivot"] = pivot
    atomic_write_text(outp / f"{name}.md", md + "\n" + "\n".join(f"- {s}" for s in lines) + "\n")
    summary["claims"] = claims
    summary["verdicts"] = lines
    summary["results"] = res.drop(columns=["params"]).to_dict("records")
    summary["wall_seconds"] = time.perf_counter() - t0
    write_summary(outp, summary)
    return {"markdown": md, "verdicts": lines, "summary": summary}
