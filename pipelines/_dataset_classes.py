"""Refuse or drop the single-class workloads of a labelled trace (:func:`check_classes`).

Examples
--------
>>> import pandas as pd
>>> from pipelines._dataset_labels import LabelledTrace
>>> f = pd.DataFrame({"workload": ["A", "A", "B"], "straggler": [True, False, False]})
>>> lt = check_classes(LabelledTrace(f, [], 1.3, 3), on_single_class="drop")
>>> lt.dropped_workloads, len(lt.frame)
({'B': 'no stragglers'}, 2)
"""

from __future__ import annotations

from pipelines._dataset_errors import TraceError
from pipelines._dataset_labels import LabelledTrace

__all__ = ["check_classes"]


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
