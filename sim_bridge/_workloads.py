"""Loading a named workload (:func:`load_workload`): SWIM, Alibaba 2017 or the generator.

The loader ties together the modules that each do one part of the job, and re-exports their
names (every name this module offered before it was split, issue 14):

- :mod:`sim_bridge._workload_spec`: :class:`JobSpec`, :class:`Workload` and the
  per-workload profiles and noise tails;
- :mod:`sim_bridge._data_dir`: :func:`resolve_data_dir`;
- :mod:`sim_bridge._workload_files`: the data files and their readers;
- :mod:`sim_bridge._workload_replay`: rows to jobs (:func:`swim_jobs`, :func:`ali2017_jobs`);
- :mod:`sim_bridge._synthetic_sizes`: the synthetic size distribution and its fit;
- :mod:`sim_bridge._synthetic_jobs`: the synthetic workload ``SYN``.

Examples
--------
>>> load_workload("SYN", hours=0.25, seed=0).jobs[0].workload
'SYN'
"""

from __future__ import annotations

import functools
import logging
import math
import os
from pathlib import Path
from typing import Any

from sim_bridge._data_dir import DATA_DIR_ENV as DATA_DIR_ENV
from sim_bridge._data_dir import resolve_data_dir
from sim_bridge._synthetic_jobs import synthetic_jobs as synthetic_jobs
from sim_bridge._synthetic_jobs import task_count_facts as task_count_facts
from sim_bridge._synthetic_sizes import SYNTHETIC_SIZES, SyntheticSizes, fit_synthetic_sizes
from sim_bridge._synthetic_sizes import fit_log_mixture as fit_log_mixture
from sim_bridge._workload_files import ALI2017_FILE as ALI2017_FILE
from sim_bridge._workload_files import SWIM_FILES as SWIM_FILES
from sim_bridge._workload_files import _CheckedText as _CheckedText
from sim_bridge._workload_files import _open_text as _open_text
from sim_bridge._workload_files import read_ali2017 as read_ali2017
from sim_bridge._workload_files import read_swim as read_swim
from sim_bridge._workload_replay import ali2017_jobs as ali2017_jobs
from sim_bridge._workload_replay import swim_jobs as swim_jobs
from sim_bridge._workload_spec import DEFAULT_PROFILE as DEFAULT_PROFILE
from sim_bridge._workload_spec import DEFAULT_TAIL_ALPHA as DEFAULT_TAIL_ALPHA
from sim_bridge._workload_spec import PROFILES as PROFILES
from sim_bridge._workload_spec import TAIL_ALPHA as TAIL_ALPHA
from sim_bridge._workload_spec import JobSpec, Workload

__all__ = [
    "WORKLOAD_NAMES",
    "SYNTHETIC_SIZES",
    "JobSpec",
    "SyntheticSizes",
    "Workload",
    "fit_synthetic_sizes",
    "load_workload",
    "resolve_data_dir",
]

log = logging.getLogger("sim_bridge")

WORKLOAD_NAMES = ("FB2009", "FB2010", "ALI2017", "SYN")


def _file_stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=8)
def _cached_rows(alibaba: bool, path: str, mtime_ns: int, size: int) -> tuple:
    """A data file's parsed rows, read once per (path, modification time, size): loading the
    same workload at several scales or windows (``collect --load`` searches scales) parses
    the file once. Rows are tuples, shared read-only."""
    return tuple(read_ali2017(path) if alibaba else read_swim(path))


def load_workload(
    name: str,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    hours: float | None = None,
    scale: float = 1.0,
    seed: int = 0,
    day: int = 0,
    **swim_kw: Any,
) -> Workload:
    """Load a named workload (``FB2009``, ``FB2010``, ``ALI2017`` or ``SYN``).

    The data directory is resolved with :func:`resolve_data_dir`. When the workload's file is
    not there, the synthetic workload is used instead and one warning line says so. ``day``
    picks a SWIM day sample (``FB-2009_samples_24_times_1hr_<day>.tsv``; 0 by default).

    Examples
    --------
    >>> w = load_workload("SYN", hours=0.5, seed=1)
    >>> w.name, w.source
    ('SYN', 'synthetic')
    """
    if name not in WORKLOAD_NAMES:
        raise ValueError(f"unknown workload {name!r}; choose one of {', '.join(WORKLOAD_NAMES)}")
    if hours is not None and not (hours > 0):
        raise ValueError(f"parameter hours must be > 0, got {hours!r}")
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"parameter scale must be > 0, got {scale!r}")
    if not (isinstance(day, int) and day >= 0) or (day and name not in SWIM_FILES):
        raise ValueError(f"parameter day must be 0, or >= 0 for a SWIM workload, got {day!r}")
    if name != "SYN":
        root = resolve_data_dir(data_dir)
        rel = SWIM_FILES.get(name, ALI2017_FILE)
        if day:
            rel = rel.replace("_1hr_0.tsv", f"_1hr_{day}.tsv")
        path = root / rel
        if path.is_file():
            rows = _cached_rows(name == "ALI2017", str(path.resolve()), *_file_stamp(path))
            if name == "ALI2017":
                jobs = ali2017_jobs(rows, hours=hours, scale=scale)
            else:
                jobs = swim_jobs(rows, name, hours=hours, scale=scale, **swim_kw)
            if not jobs:
                raise ValueError(f"{path}: no job is submitted within the first {hours} hours")
            return Workload(name, jobs, tail_alpha=TAIL_ALPHA[name], source=str(path))
        log.warning(
            "%s: no file %s in data directory %s; using the synthetic workload instead",
            name,
            rel,
            root,
        )
    # a fallback for another workload gets its own job ids, so that it can share a cluster
    # with the synthetic workload proper
    prefix = "job" if name == "SYN" else f"for{name}-job"
    jobs = synthetic_jobs(hours=hours, scale=scale, seed=seed, prefix=prefix, **swim_kw)
    if not jobs:
        raise ValueError(f"the synthetic workload has no job within {hours} hours; use more hours")
    return Workload("SYN", jobs, tail_alpha=TAIL_ALPHA["SYN"], source="synthetic")
