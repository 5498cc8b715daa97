"""Check a trace table against the schema of :mod:`sim_bridge.trace` (:func:`validate_trace`).

Column kinds, outcomes, finite times and counters, and physically possible rows (one row per
attempt key, no time travel, consistent durations, plausible counters); every message names
the column, the row and the value.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"job_id": ["j"], "task_id": ["t"], "attempt": [0.0],
...     "workload": ["SYN"], "node": ["n0"], "phase": ["map"], "submit_time": [0.0],
...     "launch_time": [1.0], "end_time": [3.0], "duration": [2.0],
...     "outcome": ["finished"], "c_cpu": [0.5]})
>>> validate_trace(t)["attempt"].tolist()
[0]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines._dataset_errors import TraceError
from sim_bridge.trace import (
    COUNTER_PREFIX,
    OUTCOMES,
    REQUIRED_COLUMNS,
    TASK_COLUMNS,
    counter_columns,
)

__all__ = ["ATTEMPT_KEY", "DURATION_RTOL", "MAX_ABS_COUNTER", "validate_trace"]

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
    pipelines._dataset_errors.TraceError: counter column 'c_cpu' has a non-finite value nan ...
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
