"""Load a trace (:mod:`sim_bridge.trace`), validate it, and label stragglers as Wrangler does.

A trace is one row per task attempt. :func:`label_stragglers` keeps the original attempts
(``attempt == 0``) and labels one a straggler when its duration exceeds ``beta`` times the
median duration of the finished original attempts of the same stage (``phase``) of its job:
maps against maps, reduces against reduces. Stages with fewer than ``min_tasks`` finished
original attempts have no meaningful median (with one task the median is the task itself,
with two it is their mean) and are excluded and counted; the default is 3.

An original attempt that did not finish (killed because a copy won, or failed) only gives a
lower bound on its duration: it is labelled a straggler when that bound already exceeds the
threshold, otherwise its label is unknown and it is dropped (counted as ``censored``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines._io import require_complete
from sim_bridge.trace import (
    COUNTER_PREFIX,
    DEFAULT_BETA,
    DEFAULT_MIN_TASKS,
    OUTCOMES,
    REQUIRED_COLUMNS,
    TASK_COLUMNS,
    check_beta,
    counter_columns,
    excluded_counts,
    straggler_thresholds,
)

__all__ = [
    "ATTEMPT_KEY",
    "COUNTER_PREFIX",
    "DEFAULT_BETA",
    "DEFAULT_MIN_TASKS",
    "DURATION_RTOL",
    "MAX_ABS_COUNTER",
    "REQUIRED_COLUMNS",
    "LabelledTrace",
    "TraceError",
    "check_classes",
    "counter_columns",
    "label_stragglers",
    "load_trace",
    "trace_hash",
    "validate_trace",
]

#: Optional columns of the contract a trace may carry (the simulator writes them), checked
#: as numbers when present.
_OPTIONAL_FLOAT_COLUMNS = tuple(
    c for c, dtype in TASK_COLUMNS.items() if c not in REQUIRED_COLUMNS and dtype == "float64"
)

#: Largest plausible magnitude of a node counter (bytes of memory, packets, faults, ...):
#: a larger value (e.g. 1e308) is a corrupt or hostile row, and would overflow the model's
#: scaling.
MAX_ABS_COUNTER = 1e15

#: Relative tolerance of ``duration == end_time - launch_time`` (float rounding only).
DURATION_RTOL = 1e-6

#: The key of one task attempt: no two rows of a trace may share it.
ATTEMPT_KEY = ("job_id", "task_id", "attempt")


class TraceError(ValueError):
    """A trace breaks the schema of :mod:`sim_bridge.trace`; the message names column and value."""


def load_trace(path: str | os.PathLike[str], nan_counters: str = "raise") -> pd.DataFrame:
    """Read ``tasks.parquet`` from a trace directory (or a Parquet file) and validate it.

    Parameters
    ----------
    path : path-like
        A directory holding ``tasks.parquet`` (as ``straggler simulate``/``collect`` write
        it) or the Parquet file itself.

    Returns
    -------
    pandas.DataFrame
        The validated trace (see :func:`validate_trace`).

    Raises
    ------
    FileNotFoundError
        When neither the directory's ``tasks.parquet`` nor the file exists.
    TraceError
        When the table breaks the schema; the message names the file.
    pipelines._io.OutputError
        When the trace's directory holds the incomplete-marker of an interrupted run (its
        ``tasks.parquet`` may not belong with its ``jobs.parquet`` and ``summary.json``).
    """
    path = Path(path)
    file = path / "tasks.parquet" if path.is_dir() else path
    if not file.is_file():
        raise FileNotFoundError(f"no trace at {path} (expected a directory with tasks.parquet)")
    require_complete(file.parent)
    _require_complete_footer(file)
    try:
        frame = pd.read_parquet(file)
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise TraceError(f"{file}: cannot read as Parquet: {exc}") from exc
    try:
        return validate_trace(frame, nan_counters=nan_counters)
    except TraceError as exc:
        raise TraceError(f"{file}: {exc}") from exc


def _require_complete_footer(file: Path) -> None:
    """A trace streamed by a run that stopped early says so in its Parquet footer
    (:func:`sim_bridge.trace_status`); refuse it, whatever sits beside it."""
    from pipelines._io import OutputError

    try:
        from sim_bridge import trace_status

        complete, reason = trace_status(file)
    except Exception:  # not Parquet: read_parquet names the problem next
        return
    if complete is False:
        raise OutputError(
            f"{file}: written by a simulation that stopped early ({reason}); it holds only "
            "part of the run"
        )


def validate_trace(frame: pd.DataFrame, nan_counters: str = "raise") -> pd.DataFrame:
    """Check a trace against :mod:`sim_bridge.trace` and return a normalised copy.

    The columns and their kinds are the trace contract's (:data:`sim_bridge.trace.REQUIRED_COLUMNS`,
    optional :data:`~sim_bridge.trace.TASK_COLUMNS` such as ``input_work``, and the
    ``c_*`` counters): identifier columns become ``str``, ``attempt`` ``int64``, times,
    ``input_work`` and counters ``float64``.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per task attempt.
    nan_counters : {"raise", "drop"}
        What to do with rows whose counters are NaN or infinite: raise (naming the column,
        the row and the value), or drop those rows (``frame.attrs["dropped_nan_rows"]``
        records how many).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    TraceError
        Empty trace, missing column, no counter column, a value of the wrong type, a NaN/inf
        time or duration, a negative duration, a NaN/inf counter (``nan_counters="raise"``),
        and physically impossible rows: two rows with one ``(job_id, task_id, attempt)`` key
        (duplicates would inflate the stages and the results; the message names the first
        duplicate key, its rows and the count), ``end_time < launch_time``, a finished
        attempt with ``duration <= 0`` (a killed or failed attempt may last 0 s), a
        ``duration`` that differs from ``end_time - launch_time`` by more than
        :data:`DURATION_RTOL` relative, or a counter whose magnitude exceeds
        :data:`MAX_ABS_COUNTER`. Every message names the column, the row and the value.

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["j"], "task_id": ["t"], "attempt": [0],
    ...     "workload": ["SYN"], "node": ["n0"], "phase": ["map"], "submit_time": [0.0],
    ...     "launch_time": [1.0], "end_time": [3.0], "duration": [2.0],
    ...     "outcome": ["finished"], "c_cpu": [0.5]})
    >>> validate_trace(t).dtypes["attempt"]
    dtype('int64')
    >>> validate_trace(t.assign(c_cpu=float("nan")))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pipelines._dataset.TraceError: counter column 'c_cpu' has a non-finite value nan at row 0 ...
    """
    if nan_counters not in ("raise", "drop"):
        raise ValueError(f"nan_counters must be 'raise' or 'drop', got {nan_counters!r}")
    if not isinstance(frame, pd.DataFrame):
        raise TraceError(f"a trace must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise TraceError(f"missing column(s) {missing}; a trace needs {list(REQUIRED_COLUMNS)}")
    counters = counter_columns(frame)
    if not counters:
        raise TraceError(f"no counter column (names starting with {COUNTER_PREFIX!r})")
    if len(frame) == 0:
        raise TraceError("the trace is empty (0 rows)")
    out = frame.reset_index(drop=True).copy()
    for col, kind in REQUIRED_COLUMNS.items():
        out[col] = _coerce(out[col], col, kind)
    for col in _OPTIONAL_FLOAT_COLUMNS:
        if col in out.columns:
            out[col] = _coerce(out[col], col, "float")
    for col in counters:
        out[col] = _coerce(out[col], col, "float")
    bad_outcome = ~out["outcome"].isin(OUTCOMES)
    if bad_outcome.any():
        i = int(np.flatnonzero(bad_outcome)[0])
        raise TraceError(
            f"column 'outcome' has value {out['outcome'].iloc[i]!r} at row {i}; "
            "expected finished, killed or failed"
        )
    if (out["attempt"] < 0).any():
        i = int(np.flatnonzero(out["attempt"] < 0)[0])
        raise TraceError(
            f"column 'attempt' has negative value {int(out['attempt'].iloc[i])} at row {i}"
        )
    for col in ("submit_time", "launch_time", "end_time", "duration"):
        _finite_or_raise(out, col)
    if (out["duration"] < 0).any():
        i = int(np.flatnonzero(out["duration"] < 0)[0])
        raise TraceError(
            f"column 'duration' has negative value {float(out['duration'].iloc[i])!r} at row {i}"
        )
    _physical_or_raise(out)
    values = out[counters].to_numpy()
    bad = ~np.isfinite(values)
    if bad.any():
        rows = bad.any(axis=1)
        if nan_counters == "raise":
            r, c = (int(a[0]) for a in np.nonzero(bad))
            v = float(values[r, c])
            raise TraceError(
                f"counter column {counters[c]!r} has a non-finite value {v!r} at row {r} "
                f"({int(rows.sum())} such rows); pass nan_counters='drop' to drop them"
            )
        out = out.loc[~rows].reset_index(drop=True)
        if len(out) == 0:
            raise TraceError("every row has a non-finite counter; nothing left")
    out.attrs["dropped_nan_rows"] = int(bad.any(axis=1).sum()) if bad.any() else 0
    values = out[counters].to_numpy()
    absurd = np.abs(values) > MAX_ABS_COUNTER
    if absurd.any():
        r, c = (int(a[0]) for a in np.nonzero(absurd))
        raise TraceError(
            f"counter column {counters[c]!r} has an absurd value {float(values[r, c])!r} at row "
            f"{r} (|value| > {MAX_ABS_COUNTER:g}; {int(absurd.any(axis=1).sum())} such rows)"
        )
    return out


def _physical_or_raise(out: pd.DataFrame) -> None:
    """Duplicate attempt keys, time travel, empty or inconsistent durations (see
    :func:`validate_trace`)."""
    key = list(ATTEMPT_KEY)
    dup = out.duplicated(key, keep=False)
    if dup.any():
        rows = np.flatnonzero(dup)
        first = out.iloc[rows[0]]
        same = np.flatnonzero((out[key] == first[key]).all(axis=1))
        extra = int(out.duplicated(key).sum())
        raise TraceError(
            f"duplicate row key (job_id={first['job_id']!r}, task_id={first['task_id']!r}, "
            f"attempt={int(first['attempt'])}) at rows {same.tolist()[:5]}; {extra} duplicate "
            "row(s) in all (one row per task attempt; duplicates would inflate the results)"
        )
    launch, end, dur = (out[c].to_numpy() for c in ("launch_time", "end_time", "duration"))
    back = end < launch
    if back.any():
        i = int(np.flatnonzero(back)[0])
        raise TraceError(
            f"column 'end_time' has value {float(end[i])!r} before launch_time "
            f"{float(launch[i])!r} at row {i} ({int(back.sum())} such rows)"
        )
    empty = (dur <= 0) & (out["outcome"].to_numpy() == "finished")
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise TraceError(
            f"column 'duration' has value {float(dur[i])!r} for a finished attempt at row {i} "
            f"({int(empty.sum())} such rows; a finished attempt takes time)"
        )
    gap = np.abs(dur - (end - launch)) > DURATION_RTOL * np.maximum(1.0, np.abs(end))
    if gap.any():
        i = int(np.flatnonzero(gap)[0])
        raise TraceError(
            f"column 'duration' has value {float(dur[i])!r} at row {i}, but end_time - "
            f"launch_time = {float(end[i] - launch[i])!r} ({int(gap.sum())} such rows)"
        )


def _coerce(s: pd.Series, col: str, kind: str) -> pd.Series:
    if kind == "str":
        if pd.api.types.is_float_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
            raise TraceError(f"column {col!r} must hold strings, got dtype {s.dtype}")
        if s.isna().any():
            i = int(np.flatnonzero(s.isna())[0])
            raise TraceError(f"column {col!r} has a missing value at row {i}")
        return s.astype(str)
    if kind == "int":
        if pd.api.types.is_integer_dtype(s.dtype):
            return s.astype(np.int64)
        num = pd.to_numeric(s, errors="coerce")
        bad = num.isna() | (num != np.round(num))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise TraceError(
                f"column {col!r} must hold integers, got {_py(s.iloc[i])!r} at row {i}"
            )
        return num.astype(np.int64)
    if pd.api.types.is_bool_dtype(s.dtype) or not (
        pd.api.types.is_numeric_dtype(s.dtype)
        or s.dtype == object
        or pd.api.types.is_string_dtype(s.dtype)
    ):
        raise TraceError(f"column {col!r} must be numeric, got dtype {s.dtype}")
    num = pd.to_numeric(s, errors="coerce")
    bad = num.isna() & s.notna()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TraceError(f"column {col!r} must be numeric, got {_py(s.iloc[i])!r} at row {i}")
    return num.astype(np.float64)


def _py(value):
    """A numpy scalar as the plain Python value (for readable messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _finite_or_raise(frame: pd.DataFrame, col: str) -> None:
    v = frame[col].to_numpy()
    bad = ~np.isfinite(v)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TraceError(f"column {col!r} has a non-finite value {float(v[i])!r} at row {i}")


@dataclass
class LabelledTrace:
    """Original attempts with a ``straggler`` label, and what was left out.

    Attributes
    ----------
    frame : pandas.DataFrame
        The kept original attempts (index 0..n-1) with a boolean ``straggler`` column and a
        float ``stage_median`` column (the median of the row's stage of its job), sorted by
        ``launch_time`` (ties by job, task).
    counters : list of str
        The counter columns.
    beta, min_tasks : float, int
        The labelling parameters.
    excluded_jobs : int
        Jobs none of whose stages has ``min_tasks`` finished original attempts.
    excluded_rows : int
        Original attempts of the excluded stages.
    censored_rows : int
        Unfinished original attempts whose lower-bound duration did not reach the threshold.
    excluded_stages : int
        (job, stage) pairs with fewer than ``min_tasks`` finished original attempts.
    dropped_workloads : dict
        Workloads removed by :func:`check_classes` (``on_single_class="drop"``), with why.
    """

    frame: pd.DataFrame
    counters: list[str]
    beta: float
    min_tasks: int
    excluded_jobs: int = 0
    excluded_rows: int = 0
    censored_rows: int = 0
    excluded_stages: int = 0
    dropped_workloads: dict[str, str] = field(default_factory=dict)

    @property
    def X(self) -> pd.DataFrame:  # noqa: N802 - scikit-learn naming
        """``node``, ``workload`` and the counters: the model input."""
        return self.frame[["node", "workload", *self.counters]]

    @property
    def y(self) -> np.ndarray:
        """The labels as 0/1 integers."""
        return self.frame["straggler"].to_numpy(dtype=np.int64)

    def summary(self) -> dict:
        """Rows, pairs, straggler share per workload and the exclusions, for summary.json."""
        f = self.frame
        per_wl = f.groupby("workload", sort=True)["straggler"].agg(["size", "mean"])
        return {
            "rows": len(f),
            "pairs": int(f.groupby(["node", "workload"]).ngroups),
            "nodes": int(f["node"].nunique()),
            "workloads": sorted(f["workload"].unique().tolist()),
            "counters": len(self.counters),
            "straggler_share": float(f["straggler"].mean()) if len(f) else float("nan"),
            "straggler_share_by_workload": {str(w): float(r["mean"]) for w, r in per_wl.iterrows()},
            "rows_by_workload": {str(w): int(r["size"]) for w, r in per_wl.iterrows()},
            "beta": self.beta,
            "min_tasks": self.min_tasks,
            "excluded_jobs": self.excluded_jobs,
            "excluded_stages": self.excluded_stages,
            "excluded_rows": self.excluded_rows,
            "censored_rows": self.censored_rows,
            "dropped_workloads": dict(self.dropped_workloads),
        }


def label_stragglers(
    trace: pd.DataFrame,
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
) -> LabelledTrace:
    """Label original attempts: straggler when ``duration > beta * stage median``.

    The median is that of the finished original attempts of the same stage (``phase``) of
    the same job (:func:`sim_bridge.trace.straggler_thresholds`, the one rule).

    Parameters
    ----------
    trace : pandas.DataFrame
        A validated trace (:func:`validate_trace`).
    beta : float
        Threshold factor, > 1 (Wrangler uses 1.3).
    min_tasks : int
        Minimum number of finished original attempts a stage needs for its median (>= 1).

    Returns
    -------
    LabelledTrace

    Examples
    --------
    >>> t = pd.DataFrame({"job_id": ["a"] * 4, "task_id": list("wxyz"), "attempt": 0,
    ...     "workload": "SYN", "node": "n0", "phase": "map", "submit_time": 0.0,
    ...     "launch_time": [0.0, 1.0, 2.0, 3.0], "end_time": [10.0, 11.0, 12.0, 23.0],
    ...     "duration": [10.0, 10.0, 10.0, 20.0], "outcome": "finished", "c_cpu": 0.1})
    >>> lt = label_stragglers(validate_trace(t))
    >>> lt.frame["straggler"].tolist(), lt.excluded_jobs
    ([False, False, False, True], 0)

    The long task as the job's only reduce: the maps keep their median, the reduce stage has
    none and is excluded (the job is not: its map stage is labelled).

    >>> lt = label_stragglers(validate_trace(t.assign(phase=["map"] * 3 + ["reduce"])))
    >>> lt.frame["straggler"].tolist(), lt.excluded_jobs, lt.excluded_stages, lt.excluded_rows
    ([False, False, False], 0, 1, 1)
    """
    beta = check_beta(beta, for_training=True)
    if not (isinstance(min_tasks, (int, np.integer)) and min_tasks >= 1):
        raise ValueError(f"min_tasks must be an integer >= 1, got {min_tasks!r}")
    counters = counter_columns(trace)
    orig = trace.loc[trace["attempt"] == 0]
    # the one labelling rule, shared with the simulator's summary (sim_bridge)
    median, label = straggler_thresholds(
        orig["job_id"],
        orig["attempt"],
        orig["outcome"],
        orig["duration"],
        beta,
        min_tasks,
        stage=orig["phase"],
    )
    in_ok = ~np.isnan(median)
    known = ~np.isnan(label)
    straggler = label == 1.0
    excluded_jobs, excluded_stages = excluded_counts(orig["job_id"], orig["phase"], median)
    censored = int((in_ok & ~known).sum())
    frame = orig.loc[known].assign(straggler=straggler[known], stage_median=median[known])
    frame = frame.sort_values(
        ["launch_time", "job_id", "task_id"], kind="mergesort", ignore_index=True
    )
    return LabelledTrace(
        frame=frame,
        counters=counters,
        beta=float(beta),
        min_tasks=int(min_tasks),
        excluded_jobs=excluded_jobs,
        excluded_rows=int((~in_ok).sum()),
        censored_rows=censored,
        excluded_stages=excluded_stages,
    )


def check_classes(labelled: LabelledTrace, on_single_class: str = "raise") -> LabelledTrace:
    """Refuse (or drop) workloads whose rows are all stragglers or all non-stragglers.

    A workload with a single class tells a classifier nothing about what separates
    stragglers within it, and usually means ``beta`` or the trace is wrong for it.

    Parameters
    ----------
    labelled : LabelledTrace
    on_single_class : {"raise", "drop"}
        Raise a ``TraceError`` naming the workload and its only class, or drop the workload
        (recorded in ``dropped_workloads``).

    Returns
    -------
    LabelledTrace
        ``labelled`` itself, possibly with workloads removed.
    """
    if on_single_class not in ("raise", "drop"):
        raise ValueError(f"on_single_class must be 'raise' or 'drop', got {on_single_class!r}")
    f = labelled.frame
    if len(f) == 0:
        raise TraceError(
            f"no labelled rows left: {labelled.excluded_jobs} jobs had fewer than "
            f"{labelled.min_tasks} finished original attempts in each stage "
            f"({labelled.excluded_stages} stages excluded)"
        )
    share = f.groupby("workload")["straggler"].mean()
    single = share[(share == 0) | (share == 1)]
    if single.empty:
        return labelled
    if on_single_class == "raise":
        w = single.index[0]
        cls = "straggler" if single.iloc[0] == 1 else "non-straggler"
        raise TraceError(
            f"workload {w!r} has a single class (every one of its "
            f"{int((f['workload'] == w).sum())} rows is a {cls} at beta={labelled.beta}); "
            "drop it or change beta"
        )
    for w, s in single.items():
        labelled.dropped_workloads[str(w)] = "all stragglers" if s == 1 else "no stragglers"
    labelled.frame = f.loc[~f["workload"].isin(single.index)].reset_index(drop=True)
    if len(labelled.frame) == 0:
        raise TraceError("every workload has a single class; nothing left to train on")
    return labelled


def trace_hash(frame: pd.DataFrame) -> str:
    """A SHA-256 of a table's columns, dtypes and values (row order matters), for tracking.

    Examples
    --------
    >>> a = pd.DataFrame({"x": [1.0, 2.0], "n": ["a", "b"]})
    >>> trace_hash(a) == trace_hash(a.copy()), trace_hash(a) == trace_hash(a.iloc[::-1])
    (True, False)
    """
    h = hashlib.sha256()
    h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return h.hexdigest()
