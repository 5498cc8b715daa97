"""Load a trace (:mod:`sim_bridge.trace`), validate it, and label stragglers as Wrangler does.

This module reads a trace from disk (:func:`load_trace`) and hashes a table for tracking
(:func:`trace_hash`); the other jobs live in their own modules and are re-exported here:

- :mod:`pipelines._dataset_errors`: :class:`TraceError`;
- :mod:`pipelines._dataset_validate`: :func:`validate_trace` and its limits
  (:data:`MAX_ABS_COUNTER`, :data:`DURATION_RTOL`, :data:`ATTEMPT_KEY`);
- :mod:`pipelines._dataset_labels`: :class:`LabelledTrace` and :func:`label_stragglers`
  (the straggler rule of :func:`sim_bridge.trace.straggler_thresholds`);
- :mod:`pipelines._dataset_classes`: :func:`check_classes` (single-class workloads).

Examples
--------
>>> a = pd.DataFrame({"x": [1.0, 2.0]})
>>> len(trace_hash(a))
64
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pandas as pd

from pipelines._dataset_classes import check_classes
from pipelines._dataset_errors import TraceError
from pipelines._dataset_labels import LabelledTrace, label_stragglers
from pipelines._dataset_validate import (
    ATTEMPT_KEY,
    DURATION_RTOL,
    MAX_ABS_COUNTER,
    validate_trace,
)
from pipelines._io import require_complete
from sim_bridge.trace import (
    COUNTER_PREFIX,
    DEFAULT_BETA,
    DEFAULT_MIN_TASKS,
    REQUIRED_COLUMNS,
    counter_columns,
)
from sim_bridge.trace import (
    straggler_thresholds as straggler_thresholds,  # the one labelling rule, as before
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
