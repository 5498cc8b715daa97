"""Build the ``sim_bridge.trace`` trace from FlowBench rows, write it as ``collect`` does."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from mtl._atomic import atomic_path
from pipelines._dataset import DEFAULT_BETA, DEFAULT_MIN_TASKS, label_stragglers, validate_trace
from pipelines._io import write_summary
from pipelines.flowbench._features import (
    DEFAULT_HALFLIFE,
    DEFAULT_REF_WINDOW,
    causal_counters,
    executor_mask,
    worker_of,
)
from pipelines.flowbench._read import list_run_files, read_flowbench, resolve_parsed_dir

#: Columns a FlowBench trace carries besides §3 and the counters; training never reads them
#: (none starts with ``c_``).
EXTRA_COLUMNS: tuple[str, ...] = (
    "anomaly_folder",
    "anomaly_type",
    "workflow",
    "transformation",
    "worker",
)


def build_trace(
    raw: pd.DataFrame,
    *,
    beta: float = DEFAULT_BETA,
    halflife: float = DEFAULT_HALFLIFE,
    ref_window: int = DEFAULT_REF_WINDOW,
) -> pd.DataFrame:
    """The trace (one row per executor job) with its causal counters.

    Mapping: ``job_id`` = ``<anomaly folder>/<workflow>-runNNNN``; ``task_id`` = the DAG node
    id; ``attempt`` 0; ``node`` = ``kickstart_hostname``; ``workload`` =
    ``<workflow>/<transformation>``; ``phase`` = the transformation; ``submit_time`` =
    ``submit``; ``launch_time``/``end_time`` = ``execute_start``/``execute_end``;
    ``outcome`` = ``failed`` when kickstart status or exit code is non-zero, else
    ``finished``. Rows are ordered by launch time (ties: job, task).

    Examples
    --------
    >>> raw = pd.DataFrame({"pegasus_type": ["compute", "auxiliary"],
    ...     "site": ["condorpool", "local"], "host": ["w1-container-0-3", "submit"],
    ...     "workflow": "wf", "transformation": ["a", "pegasus::cleanup"],
    ...     "job_id": "normal/wf-run0001", "folder": "normal", "node_id": ["a_1", "c_1"],
    ...     "anomaly_type": "None", "submit": 0.0, "start": [1.0, 2.0], "end": [5.0, 3.0],
    ...     "cpu_time": 3.0, "status": 0.0, "exitcode": 0.0, "iowait": np.nan,
    ...     "bytes_read": np.nan, "bytes_written": np.nan, "read_calls": np.nan,
    ...     "write_calls": np.nan})
    >>> t = build_trace(raw)
    >>> t[["job_id", "task_id", "node", "workload", "phase", "worker"]].iloc[0].tolist()
    ['normal/wf-run0001', 'a_1', 'w1-container-0-3', 'wf/a', 'a', 'w1']
    >>> t["duration"].tolist(), t["c_running_local"].tolist()
    ([4.0], [0.0])
    """
    mask = executor_mask(raw)
    counters = causal_counters(raw, beta=beta, halflife=halflife, ref_window=ref_window)
    ex = raw.loc[mask]
    host = ex["host"].astype(str)
    failed = (ex["status"].to_numpy() != 0) | (ex["exitcode"].to_numpy() != 0)
    trace = pd.DataFrame(
        {
            "job_id": ex["job_id"].astype(str).to_numpy(),
            "task_id": ex["node_id"].astype(str).to_numpy(),
            "attempt": np.zeros(len(ex), dtype=np.int64),
            "workload": (
                ex["workflow"].astype(str) + "/" + ex["transformation"].astype(str)
            ).to_numpy(),
            "node": host.to_numpy(),
            "phase": ex["transformation"].astype(str).to_numpy(),
            "submit_time": ex["submit"].to_numpy(np.float64),
            "launch_time": ex["start"].to_numpy(np.float64),
            "end_time": ex["end"].to_numpy(np.float64),
            "duration": (ex["end"] - ex["start"]).to_numpy(np.float64),
            "outcome": np.where(failed, "failed", "finished"),
        }
    )
    for c in counters.columns:
        trace[c] = counters[c].to_numpy()
    trace["anomaly_folder"] = ex["folder"].astype(str).to_numpy()
    trace["anomaly_type"] = ex["anomaly_type"].astype(str).to_numpy()
    trace["workflow"] = ex["workflow"].astype(str).to_numpy()
    trace["transformation"] = ex["transformation"].astype(str).to_numpy()
    trace["worker"] = host.map(worker_of).to_numpy()
    return trace.sort_values(
        ["launch_time", "job_id", "task_id"], kind="mergesort", ignore_index=True
    )


def row_categories(raw: pd.DataFrame) -> dict[str, int]:
    """Rows per category: executor jobs, and the submit-host rows by Pegasus type.

    Examples
    --------
    >>> raw = pd.DataFrame({"pegasus_type": ["compute", "compute", "transfer"],
    ...                     "site": ["condorpool", "local", "local"]})
    >>> row_categories(raw)
    {'executor_jobs': 1, 'local_compute': 1, 'local_transfer': 1}
    """
    mask = executor_mask(raw)
    out = {"executor_jobs": int(mask.sum())}
    local = raw.loc[~mask, "pegasus_type"].astype(str).value_counts().sort_index()
    out.update({f"local_{k}": int(v) for k, v in local.items()})
    return out


def _atomic_parquet(frame: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def _jobs_table(trace: pd.DataFrame) -> pd.DataFrame:
    """One row per workflow run, as the simulator's job table (``jct`` = makespan)."""
    g = trace.groupby("job_id", sort=True)
    jobs = g.agg(
        workload=("workflow", "first"),
        anomaly_folder=("anomaly_folder", "first"),
        submit_time=("submit_time", "min"),
        start_time=("launch_time", "min"),
        end_time=("end_time", "max"),
        tasks=("task_id", "size"),
    ).reset_index()
    jobs["jct"] = jobs["end_time"] - jobs["submit_time"]
    return jobs


def collect_flowbench(
    data_dir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    workflows: Iterable[str] | None = None,
    anomalies: Iterable[str] | None = None,
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
    halflife: float = DEFAULT_HALFLIFE,
    ref_window: int = DEFAULT_REF_WINDOW,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Read FlowBench runs, build the trace, write ``tasks.parquet``, ``jobs.parquet`` and
    ``summary.json`` to ``out`` (as ``straggler collect`` does); return the summary.

    Parameters
    ----------
    data_dir : path-like
        A data directory holding ``flowbench/parsed``, a FlowBench directory, or ``parsed``.
    out : path-like
        The trace directory.
    workflows, anomalies : iterable of str, optional
        Restrict to these workflows / anomaly folders (default: every one present).
    beta, min_tasks : float, int
        The straggler rule of the summary (and of ``c_exec_straggle``).
    halflife, ref_window : float, int
        See :func:`pipelines.flowbench.causal_counters`.
    progress : callable, optional
        ``progress(done, total)`` after each file read.

    Returns
    -------
    dict
        The summary: the labelled-data keys of a simulated collect (rows, pairs, nodes,
        workloads, straggler shares, exclusions) plus FlowBench's own (files, row
        categories, label base rate per anomaly folder, throttled-executor share).
    """
    t0 = time.perf_counter()
    wf = list(workflows) if workflows is not None else None
    an = list(anomalies) if anomalies is not None else None
    files = list_run_files(data_dir, wf, an)
    raw = read_flowbench(data_dir, workflows=wf, anomalies=an, progress=progress)
    categories = row_categories(raw)
    trace = build_trace(raw, beta=beta, halflife=halflife, ref_window=ref_window)
    del raw
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _atomic_parquet(trace, out / "tasks.parquet")
    _atomic_parquet(_jobs_table(trace), out / "jobs.parquet")
    labelled = label_stragglers(validate_trace(trace), beta, min_tasks)
    f = labelled.frame
    by_folder = f.groupby("anomaly_folder")["straggler"].agg(["size", "mean"])
    throttled = f["anomaly_type"] != "None"
    summary = {
        "command": "collect",
        "source": "flowbench",
        "data_dir": str(resolve_parsed_dir(data_dir)),
        "workflows": sorted(trace["workflow"].unique().tolist()),
        "anomalies": sorted(trace["anomaly_folder"].unique().tolist()),
        "files": len(files),
        "runs": int(trace["job_id"].nunique()),
        "row_categories": categories,
        "attempt_rows": len(trace),
        "workers": sorted(trace["worker"].unique().tolist()),
        "halflife_seconds": float(halflife),
        "ref_window": int(ref_window),
        **labelled.summary(),
        "straggler_share_by_folder": {str(k): float(r["mean"]) for k, r in by_folder.iterrows()},
        "rows_by_folder": {str(k): int(r["size"]) for k, r in by_folder.iterrows()},
        "throttled_share": float(throttled.mean()) if len(f) else float("nan"),
        "straggler_share_throttled": float(f.loc[throttled, "straggler"].mean())
        if throttled.any()
        else float("nan"),
        "straggler_share_unthrottled": float(f.loc[~throttled, "straggler"].mean())
        if (~throttled).any()
        else float("nan"),
        "wall_seconds": time.perf_counter() - t0,
    }
    write_summary(out, summary)
    return summary
