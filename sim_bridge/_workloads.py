"""Workloads: jobs as stages of tasks with base work, from SWIM, Alibaba 2017 or a generator.

A :class:`JobSpec` is a job: a submit time and one or two stages (``map`` then ``reduce``, or
one ``task`` stage); the tasks of a stage become runnable when the previous stage is done.
A task's *base work* is its duration in seconds on an idle, nominal node without noise; the
cluster model stretches it (see ``sim_bridge._cluster``).
"""

from __future__ import annotations

import csv
import functools
import gzip
import logging
import math
import os
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sim_bridge._errors import DataFormatError
from sim_bridge.world._noise import NOISE_TAIL_ALPHA

__all__ = [
    "WORKLOAD_NAMES",
    "JobSpec",
    "Workload",
    "load_workload",
    "resolve_data_dir",
]

log = logging.getLogger("sim_bridge")

WORKLOAD_NAMES = ("FB2009", "FB2010", "ALI2017", "SYN")

SWIM_FILES = {
    "FB2009": "swim/FB-2009_samples_24_times_1hr_0.tsv",
    "FB2010": "swim/FB-2010_samples_24_times_1hr_0.tsv",
}
ALI2017_FILE = "alibaba-v2017-batch-task/batch_task_v2017_with_header.csv.gz"

#: sensitivity (cpu, mem, disk, net) of each workload's phases to background contention
PROFILES: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "FB2009": {"map": (0.3, 0.1, 1.2, 0.2), "reduce": (0.2, 0.2, 0.4, 1.2)},
    "FB2010": {"map": (1.2, 0.3, 0.3, 0.1), "reduce": (0.4, 0.8, 0.2, 0.8)},
    "ALI2017": {"task": (0.8, 1.0, 0.1, 0.1)},
    "SYN": {"map": (0.6, 0.2, 0.8, 0.3), "reduce": (0.2, 0.3, 0.4, 1.0)},
}
DEFAULT_PROFILE = (0.5, 0.3, 0.5, 0.5)
#: Pareto exponent of the rare tail events of the residual noise (smaller: heavier tail); see
#: :mod:`sim_bridge.world._noise` for the evidence (Dolly, Mantri). No workload-specific
#: figure is published, so every workload has the same one.
DEFAULT_TAIL_ALPHA = NOISE_TAIL_ALPHA
TAIL_ALPHA = dict.fromkeys(("FB2009", "FB2010", "ALI2017", "SYN"), DEFAULT_TAIL_ALPHA)


@dataclass
class JobSpec:
    """One job: stages of tasks given by their base work (seconds).

    Parameters
    ----------
    job_id : str
    submit_time : float
        Arrival time (s).
    map_work : sequence of float
        Base work of each task of the first stage (at least one task).
    reduce_work : sequence of float
        Base work of each task of the second stage (may be empty).
    workload : str
        Workload label written to the trace (selects the sensitivity profile and noise tail).
    deadline : float, optional
        Absolute deadline (s) for PoCD; ``None``: the simulation's default rule.
    phases : (str, str)
        Names of the two stages in the trace.

    Examples
    --------
    >>> j = JobSpec("j0", 0.0, [10.0, 20.0], [5.0])
    >>> j.n_tasks, j.critical_path
    (3, 25.0)
    """

    job_id: str
    submit_time: float
    map_work: Sequence[float]
    reduce_work: Sequence[float] = ()
    workload: str = "SYN"
    deadline: float | None = None
    phases: tuple[str, str] = ("map", "reduce")

    def __post_init__(self) -> None:
        self.map_work = np.asarray(self.map_work, dtype=float).ravel()
        self.reduce_work = np.asarray(self.reduce_work, dtype=float).ravel()
        if self.map_work.size == 0:
            raise ValueError(f"job {self.job_id!r}: map_work must hold at least one task")
        self._critical_path = 0.0
        for name, w in (("map_work", self.map_work), ("reduce_work", self.reduce_work)):
            if not w.size:
                continue
            lo, hi = (w[0], w[0]) if w.size == 1 else (w.min(), w.max())
            self._critical_path += float(hi)
            if not (lo > 0 and hi < math.inf):
                bad = w[~(np.isfinite(w) & (w > 0))][0]
                raise ValueError(f"job {self.job_id!r}: {name} must be finite and > 0, got {bad}")
        if not (math.isfinite(self.submit_time) and self.submit_time >= 0):
            raise ValueError(
                f"job {self.job_id!r}: submit_time must be >= 0, got {self.submit_time}"
            )

    @property
    def n_tasks(self) -> int:
        return int(self.map_work.size + self.reduce_work.size)

    @property
    def critical_path(self) -> float:
        """Longest chain of base work: the longest map plus the longest reduce."""
        return self._critical_path


@dataclass
class Workload:
    """A named list of jobs with its noise and sensitivity parameters.

    Examples
    --------
    >>> w = Workload("X", [JobSpec("a", 5.0, [1.0]), JobSpec("b", 1.0, [2.0])])
    >>> [j.job_id for j in w.jobs]
    ['b', 'a']
    """

    name: str
    jobs: list[JobSpec]
    profiles: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    tail_alpha: float = DEFAULT_TAIL_ALPHA
    source: str = "explicit"

    def __post_init__(self) -> None:
        self.jobs = sorted(self.jobs, key=lambda j: j.submit_time)
        if not self.profiles:
            self.profiles = dict(PROFILES.get(self.name, {}))

    def profile(self, phase: str) -> tuple[float, float, float, float]:
        return self.profiles.get(phase, DEFAULT_PROFILE)


# --------------------------------------------------------------------------- data directory
def resolve_data_dir(flag: str | os.PathLike[str] | None = None) -> Path:
    """The data directory (DESIGN.md §7): ``flag``, then ``$STRAGGLER_DATA_DIR``, then ``data/``
    in the checkout. A directory given by flag or variable must exist.

    Examples
    --------
    >>> resolve_data_dir("/nonexistent/dir")
    Traceback (most recent call last):
    ...
    FileNotFoundError: data directory given by --data-dir does not exist: /nonexistent/dir
    """
    if flag is not None:
        p = Path(flag).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"data directory given by --data-dir does not exist: {p}")
        return p
    env = os.environ.get("STRAGGLER_DATA_DIR")
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"STRAGGLER_DATA_DIR does not exist: {p}")
        return p
    return Path(__file__).resolve().parents[1] / "data"


# --------------------------------------------------------------------------- SWIM
def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return path.open("r", encoding="utf-8", newline="")


def read_swim(path: str | Path) -> list[tuple[str, float, float, float, float]]:
    """Rows ``(job_id, submit_s, input_bytes, shuffle_bytes, output_bytes)`` of a SWIM file.

    Raises :class:`DataFormatError` naming file, line and column on a malformed row.
    """
    path = Path(path)
    rows = []
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            cells = line.split("\t")
            if len(cells) < 6:
                raise DataFormatError(
                    path, lineno, len(cells), f"expected >= 6 columns, found {len(cells)}"
                )
            vals = []
            for col in (1, 3, 4, 5):
                try:
                    v = float(cells[col])
                except ValueError:
                    raise DataFormatError(
                        path, lineno, col + 1, f"{cells[col]!r} is not a number"
                    ) from None
                if not math.isfinite(v) or v < 0:
                    raise DataFormatError(path, lineno, col + 1, f"{cells[col]!r} must be >= 0")
                vals.append(v)
            rows.append((cells[0], *vals))
    return rows


def swim_jobs(
    rows: Iterable[tuple[str, float, float, float, float]],
    name: str,
    *,
    hours: float | None,
    scale: float,
    block_size: float = 64 * 2**20,
    reduce_bytes: float = 2**30,
    map_mb_s: float = 3.0,
    shuffle_mb_s: float = 4.0,
    write_mb_s: float = 6.0,
    overhead_s: float = 3.0,
) -> list[JobSpec]:
    """SWIM rows -> jobs, as SWIM's replay derives them.

    ``scale`` multiplies every byte count (SWIM scales data by the ratio of cluster sizes);
    maps = ceil(input / block_size) (at least 1); reduces = ceil(shuffle / reduce_bytes)
    (none when shuffle is 0). Map work = bytes read / map rate + start-up overhead; reduce work
    = shuffle bytes / shuffle rate + output bytes / write rate + overhead. ``hours`` keeps the
    jobs submitted in the first ``hours`` hours.

    Examples
    --------
    >>> js = swim_jobs([("job0", 10, 200 * 2**20, 0, 5), ("job1", 7300, 1, 1, 1)], "FB2009",
    ...                hours=2, scale=1.0)
    >>> len(js), js[0].map_work.size, js[0].reduce_work.size
    (1, 4, 0)
    """
    jobs = []
    limit = math.inf if hours is None else hours * 3600.0
    mb = 2.0**20
    for jid, submit, inp, shuf, out in rows:
        if submit >= limit:
            continue
        inp, shuf, out = inp * scale, shuf * scale, out * scale
        n_maps = max(1, math.ceil(inp / block_size))
        per = np.full(n_maps, block_size)
        per[-1] = max(inp - block_size * (n_maps - 1), 0.0)
        map_work = overhead_s + per / (map_mb_s * mb)
        if shuf > 0:
            n_red = max(1, math.ceil(shuf / reduce_bytes))
            red = (
                overhead_s
                + (shuf / n_red) / (shuffle_mb_s * mb)
                + (out / n_red) / (write_mb_s * mb)
            )
            reduce_work = np.full(n_red, red)
        else:
            reduce_work = np.empty(0)
        jobs.append(JobSpec(f"{name}-{jid}", float(submit), map_work, reduce_work, name))
    return jobs


# --------------------------------------------------------------------------- Alibaba 2017
def read_ali2017(path: str | Path) -> list[tuple[float, float, str, str, int]]:
    """Terminated rows ``(create, end, job_id, task_id, instances)`` of the 2017 batch_task
    table (other statuses have no completion and are skipped)."""
    path = Path(path)
    rows = []
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        for lineno, rec in enumerate(reader, start=1):
            if lineno == 1 and rec and not rec[0].strip().lstrip("-").isdigit():
                continue  # header
            if not rec:
                continue
            if len(rec) < 6:
                raise DataFormatError(
                    path, lineno, len(rec), f"expected 8 columns, found {len(rec)}"
                )
            if rec[5].strip() != "Terminated":
                continue
            vals = []
            for col in (0, 1, 4):
                try:
                    vals.append(float(rec[col]))
                except ValueError:
                    raise DataFormatError(
                        path, lineno, col + 1, f"{rec[col]!r} is not a number"
                    ) from None
            create, end, inst = vals
            if inst < 1 or inst != int(inst):
                raise DataFormatError(
                    path, lineno, 5, f"number_of_instances {rec[4]!r} must be an integer >= 1"
                )
            rows.append((create, end, rec[2].strip(), rec[3].strip(), int(inst)))
    return rows


def ali2017_jobs(rows, *, hours: float | None, scale: float) -> list[JobSpec]:
    """Alibaba 2017 rows -> jobs: one stage per job, one simulated task per instance
    (``round(instances * scale)`` of them), base work = the task's end - create time
    (at least 1 s; an upper bound of the instance run time, the trace has nothing finer).
    Arrival = the job's earliest create time, shifted so the trace starts at 0.

    A task whose ``instances * scale`` is below 1 is kept (as one instance) with that
    probability, decided by a stable hash of its job and task ids (no random state), so the
    offered work keeps shrinking in proportion to ``scale``; a job left without tasks is
    dropped."""
    if not rows:
        return []
    t0 = min(r[0] for r in rows)
    by_job: dict[str, list] = {}
    for r in rows:
        by_job.setdefault(r[2], []).append(r)
    limit = math.inf if hours is None else hours * 3600.0
    jobs = []
    for jid, rs in by_job.items():
        submit = min(r[0] for r in rs) - t0
        if submit >= limit:
            continue
        works = []
        for create, end, _j, tid, inst in sorted(rs, key=lambda r: (r[0], r[3])):
            expected = inst * scale
            if expected >= 1.0:
                n = round(expected)
            else:
                n = int(zlib.crc32(f"{jid}/{tid}".encode()) / 2.0**32 < expected)
            if n:
                works.append(np.full(n, max(end - create, 1.0)))
        if not works:
            continue
        jobs.append(
            JobSpec(
                f"ALI2017-{jid}",
                float(submit),
                np.concatenate(works),
                (),
                "ALI2017",
                phases=("task", "reduce"),
            )
        )
    return jobs


# --------------------------------------------------------------------------- synthetic
def synthetic_jobs(
    *,
    hours: float | None,
    scale: float,
    seed: int,
    rate_per_hour: float = 245.6,
    prefix: str = "job",
    **swim_kw,
) -> list[JobSpec]:
    """Poisson arrivals and heavy-tailed sizes shaped after FB-2009 (about 246 jobs per hour;
    log map input a two-component normal mixture matching FB-2009's quantiles: median ~10 kB,
    about 5% of jobs above 100 maps, 1% above 1,000; a quarter of the jobs with a shuffle
    stage), turned into jobs exactly as SWIM rows are.

    Examples
    --------
    >>> js = synthetic_jobs(hours=1, scale=1.0, seed=3)
    >>> 150 < len(js) < 350 and all(j.submit_time < 3600 for j in js)
    True
    """
    rng = np.random.default_rng([seed, 303])
    span = (24.0 if hours is None else hours) * 3600.0
    n = rng.poisson(rate_per_hour * span / 3600.0)
    submit = np.sort(rng.uniform(0.0, span, n))
    # log(map input bytes) of FB-2009 is bimodal: most jobs read kB, a fifth read GB-TB
    big = rng.random(n) < 0.18
    log_in = np.where(big, rng.normal(21.5, 2.3, n), rng.normal(9.0, 2.6, n))
    inp = np.exp(np.minimum(log_in, np.log(8e12)))
    has_shuffle = rng.random(n) < 0.25
    shuf = np.where(has_shuffle, inp * np.exp(rng.normal(0.0, 3.5, n)), 0.0)
    shuf = np.minimum(shuf, 9e12)
    out = np.where(has_shuffle, shuf, inp) * np.exp(rng.normal(0.0, 3.0, n))
    rows = [
        (f"{prefix}{i}", float(submit[i]), float(inp[i]), float(shuf[i]), float(out[i]))
        for i in range(n)
    ]
    return swim_jobs(rows, "SYN", hours=None, scale=scale, **swim_kw)


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
    **swim_kw,
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
