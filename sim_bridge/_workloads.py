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
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sim_bridge._errors import DataFormatError
from sim_bridge.world._noise import NOISE_TAIL_ALPHA

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

SWIM_FILES = {
    "FB2009": "swim/FB-2009_samples_24_times_1hr_0.tsv",
    "FB2010": "swim/FB-2010_samples_24_times_1hr_0.tsv",
}
ALI2017_FILE = "alibaba-v2017-batch-task/batch_task_v2017_with_header.csv.gz"

#: sensitivity (cpu, mem, disk, net) of each workload's phases to background contention.
#:
#: Evidence: none. These were set by hand in the first engine commit (a disk-bound FB2009 map,
#: a CPU-bound FB2010 map, network-bound reduces); no public source in ``../shared/data`` or
#: the seeds gives per-workload, per-resource sensitivities (SWIM has bytes per job, not
#: resource use; FlowBench's throttled runs measure other workflows). They are kept as they
#: are rather than re-chosen, because the fidelity facts depend on them and choosing them by
#: those facts would fit the world to the bands. Measured (``straggler fidelity``'s trace facts,
#: 50 nodes x 2 slots x 3 h at realised load 0.7, seeds 0-2): the share of stragglers that
#: would not straggle on the median node is 0.62 (FB2009) and 0.78 (FB2010) as they are; with
#: FB2009's profile FB2010 gives 0.61, with FB2010's FB2009 gives 0.81, and with
#: :data:`DEFAULT_PROFILE` both give about 0.85. That fact (band 0.45-0.65, Garraghan et al.)
#: is a property of the profile, not of the jobs.
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
    #: stored as 1-d float arrays; the constructor takes any sequence of float (below)
    map_work: np.ndarray
    reduce_work: np.ndarray = ()  # type: ignore[assignment]  # an array after __post_init__
    workload: str = "SYN"
    deadline: float | None = None
    phases: tuple[str, str] = ("map", "reduce")

    if TYPE_CHECKING:  # the signature the dataclass generates, with the inputs it converts

        def __init__(
            self,
            job_id: str,
            submit_time: float,
            map_work: Sequence[float] | np.ndarray,
            reduce_work: Sequence[float] | np.ndarray = (),
            workload: str = "SYN",
            deadline: float | None = None,
            phases: tuple[str, str] = ("map", "reduce"),
        ) -> None: ...

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
#: Environment variable naming the data directory when no flag is given.
DATA_DIR_ENV = "STRAGGLER_DATA_DIR"


def resolve_data_dir(
    flag: str | os.PathLike[str] | None = None, *, must_exist: bool = True
) -> Path:
    """The data directory (README, data directory): ``flag``, then ``$STRAGGLER_DATA_DIR``, then
    ``data/`` in the checkout (beside the installed package), as an absolute path.

    The one resolver of the project: ``pipelines.resolve_data_dir`` is this function with
    ``must_exist=False``.

    Parameters
    ----------
    flag : path-like or None
        The value of a ``--data-dir`` option; ``None`` or ``""`` means not given.
    must_exist : bool, default True
        A directory named by the flag or the variable must exist (a reader's typo fails here
        instead of reading as "no data files"). False for a command that creates it
        (``straggler data fetch``). The checkout's ``data/`` need not exist either way.

    Examples
    --------
    >>> resolve_data_dir("/nonexistent/dir")
    Traceback (most recent call last):
    ...
    FileNotFoundError: data directory given by --data-dir does not exist: /nonexistent/dir
    >>> str(resolve_data_dir("/nonexistent/dir", must_exist=False))
    '/nonexistent/dir'
    """
    if flag:
        given_by, p = "data directory given by --data-dir", Path(flag)
    else:
        env = os.environ.get(DATA_DIR_ENV, "").strip()
        if not env:
            return Path(__file__).resolve().parents[1] / "data"
        given_by, p = DATA_DIR_ENV, Path(env)
    p = p.expanduser().resolve()
    if must_exist and not p.is_dir():
        raise FileNotFoundError(f"{given_by} does not exist: {p}")
    return p


# --------------------------------------------------------------------------- SWIM
class _CheckedText:
    """A data file's lines; a damaged file (truncated or corrupt gzip, bytes that are not
    UTF-8) raises :class:`DataFormatError` naming the file and the line reached, instead of a
    zlib/EOF/Unicode traceback."""

    def __init__(self, path: Path):
        self.path = path
        if path.suffix == ".gz":
            self._fh = gzip.open(path, "rt", encoding="utf-8", newline="")
        else:
            self._fh = path.open("r", encoding="utf-8", newline="")

    def __enter__(self) -> _CheckedText:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[str]:
        done = 0
        try:
            for line in self._fh:
                yield line
                done += 1
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
            raise DataFormatError(
                self.path,
                done + 1,
                "-",
                f"damaged file ({type(exc).__name__}: {exc}); `straggler data check` "
                "verifies it, `straggler data fetch` replaces it",
            ) from exc


def _open_text(path: Path) -> _CheckedText:
    return _CheckedText(path)


def read_swim(path: str | Path) -> list[tuple[str, float, float, float, float]]:
    """Rows ``(job_id, submit_s, input_bytes, shuffle_bytes, output_bytes)`` of a SWIM file.

    Raises :class:`DataFormatError` naming file, line and column on a malformed row.
    """
    path = Path(path)
    rows: list[tuple[str, float, float, float, float]] = []
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
            submit_s, input_bytes, shuffle_bytes, output_bytes = vals
            rows.append((cells[0], submit_s, input_bytes, shuffle_bytes, output_bytes))
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


def ali2017_jobs(
    rows: Sequence[tuple[float, float, str, str, int]], *, hours: float | None, scale: float
) -> list[JobSpec]:
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
#: Probabilities at which :func:`fit_synthetic_sizes` matches the map-input distribution.
_FIT_PROBS = np.linspace(0.01, 0.99, 99)


@dataclass(frozen=True)
class SyntheticSizes:
    """Parameters of the synthetic workload, each measured by :func:`fit_synthetic_sizes`.

    Sizes are natural logs of bytes. ``ln(map input)`` is a two-component normal mixture
    (``big_share`` of the jobs in the big component); a ``shuffle_share`` of the jobs have a
    shuffle stage, with ``ln(shuffle / input) ~ N(shuffle_mu, shuffle_sd)`` and
    ``ln(output / shuffle) ~ N(output_mu, output_sd)``; byte counts are capped at the
    largest of the real traces (``max_bytes``).
    """

    rate_per_hour: float
    big_share: float
    small_mu: float
    small_sd: float
    big_mu: float
    big_sd: float
    shuffle_share: float
    shuffle_mu: float
    shuffle_sd: float
    output_mu: float
    output_sd: float
    max_bytes: float


#: The synthetic default: ``fit_synthetic_sizes(data_dir)`` on the real SWIM files, rounded
#: as that function states (``tests/test_sim_workloads.py`` checks the two agree).
SYNTHETIC_SIZES = SyntheticSizes(
    rate_per_hour=245.6,
    big_share=0.384,
    small_mu=8.77,
    small_sd=3.41,
    big_mu=20.3,
    big_sd=3.68,
    shuffle_share=0.452,
    shuffle_mu=-0.29,
    shuffle_sd=2.71,
    output_mu=-1.74,
    output_sd=2.59,
    max_bytes=8.6e13,
)


def _robust_normal(x: np.ndarray) -> tuple[float, float]:
    """Median and IQR / 1.349 of ``x``: a normal fit the far tails cannot drag.

    Examples
    --------
    >>> _robust_normal(np.array([-1.349, 0.0, 0.0, 1.349, 50.0]))
    (0.0, 1.0)
    """
    q1, med, q3 = np.quantile(x, [0.25, 0.5, 0.75])
    return float(med), float((q3 - q1) / 1.349)


def _mixture_cdf(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    from scipy.special import expit, ndtr

    w, mu1, ls1, mu2, ls2 = theta
    return (1 - expit(w)) * ndtr((x - mu1) / np.exp(ls1)) + expit(w) * ndtr((x - mu2) / np.exp(ls2))


def _pooled_quantiles(samples: Sequence[np.ndarray], probs: np.ndarray) -> np.ndarray:
    """Quantiles of the samples pooled with equal total weight per sample.

    Examples
    --------
    >>> _pooled_quantiles([np.array([0.0, 1.0]), np.arange(10.0, 20.0)], np.array([0.25, 0.75]))
    array([ 0.5, 14.5])
    """
    x = np.concatenate([np.asarray(s, dtype=float) for s in samples])
    w = np.concatenate([np.full(len(s), 1.0 / len(s)) for s in samples])
    order = np.argsort(x, kind="mergesort")
    cum = (np.cumsum(w[order]) - 0.5 * w[order]) / w.sum()
    return np.interp(probs, cum, x[order])


def _mixture_quantiles(theta: np.ndarray, probs: np.ndarray, grid: np.ndarray) -> np.ndarray:
    cdf = _mixture_cdf(grid, theta)
    return np.interp(probs, cdf, grid)


def fit_log_mixture(samples: Sequence[np.ndarray]) -> tuple[float, float, float, float, float]:
    """Two-component normal mixture matched to the pooled quantiles of ``samples``.

    Each sample weighs the same (a long trace does not outvote a short one). The mixture's
    1%, 2%, ..., 99% quantiles are fitted to the pooled ones by least squares (Nelder-Mead
    from the pooled quartiles, deterministic); matching quantiles rather than CDF values
    keeps the far tail, which holds most of the work, in place.

    Returns
    -------
    big_share, small_mu, small_sd, big_mu, big_sd : float
        The component with the larger mean is ``big``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0, 1, 8000), rng.normal(10, 2, 2000)])
    >>> np.round(fit_log_mixture([x]), 1).tolist()
    [0.2, 0.0, 1.0, 10.1, 1.9]
    """
    from scipy.optimize import minimize

    target = _pooled_quantiles(samples, _FIT_PROBS)
    lo, hi = target[0], target[-1]
    grid = np.linspace(lo - (hi - lo), hi + (hi - lo), 4001)

    def loss(theta: np.ndarray) -> float:
        return float(np.sum((_mixture_quantiles(theta, _FIT_PROBS, grid) - target) ** 2))

    # a few deterministic starts (the split between the components, their spread): the
    # quantile loss has local minima where one component collapses
    starts = [
        np.array(
            [
                math.log(p / (1 - p)),
                np.quantile(target, p / 2),
                ls,
                np.quantile(target, (1 + p) / 2),
                ls,
            ]
        )
        for p in (0.2, 0.5, 0.8)
        for ls in (0.0, math.log((hi - lo) / 8))
    ]
    fits = [
        minimize(
            loss,
            theta0,
            method="Nelder-Mead",
            options={"xatol": 1e-6, "fatol": 1e-10, "maxiter": 20000, "maxfev": 20000},
        )
        for theta0 in starts
    ]
    res = min(fits, key=lambda r: r.fun)
    w, mu1, ls1, mu2, ls2 = res.x
    share = float(1.0 / (1.0 + np.exp(-w)))
    if mu1 > mu2:
        share, mu1, ls1, mu2, ls2 = 1.0 - share, mu2, ls2, mu1, ls1
    return share, float(mu1), float(np.exp(ls1)), float(mu2), float(np.exp(ls2))


def fit_synthetic_sizes(data_dir: str | os.PathLike[str] | None = None) -> SyntheticSizes:
    """Fit :class:`SyntheticSizes` to the real SWIM FB-2009 and FB-2010 day samples.

    - ``rate_per_hour``: FB-2009's jobs per hour (its day sample spans 24 hours);
    - the ``ln(map input)`` mixture: :func:`fit_log_mixture` on FB-2009 and FB-2010 (jobs
      with input > 0), the two traces weighing the same;
    - ``shuffle_share``: the mean over the two traces of their share of jobs with a shuffle;
    - ``shuffle_*`` and ``output_*``: :func:`_robust_normal` of ``ln(shuffle / input)`` and
      ``ln(output / shuffle)`` over the jobs with input, shuffle and output > 0 of both traces,
      each trace weighing the same (the median and IQR are taken over the two traces' values
      resampled to equal size by quantiles);
    - ``max_bytes``: the largest byte count of either trace.

    Rounding: the rate to 0.1 job/h, shares to 0.001, log parameters to 0.01, ``max_bytes``
    to two significant digits (rounded up).

    Examples
    --------
    >>> fit_synthetic_sizes("/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: ...
    """
    root = resolve_data_dir(data_dir)
    rows = {n: np.array([r[1:] for r in read_swim(root / SWIM_FILES[n])]) for n in SWIM_FILES}
    fb09 = rows["FB2009"]
    rate = fb09.shape[0] / 24.0
    logs_in = [np.log(r[r[:, 1] > 0, 1]) for r in rows.values()]
    big_share, small_mu, small_sd, big_mu, big_sd = fit_log_mixture(logs_in)
    shuffle_share = float(np.mean([np.mean(r[:, 2] > 0) for r in rows.values()]))
    probs = (np.arange(2000) + 0.5) / 2000  # each trace resampled to 2,000 quantiles
    ok = [r[(r[:, 1] > 0) & (r[:, 2] > 0) & (r[:, 3] > 0)] for r in rows.values()]
    shuffle_mu, shuffle_sd = _robust_normal(
        np.concatenate([np.quantile(np.log(r[:, 2] / r[:, 1]), probs) for r in ok])
    )
    output_mu, output_sd = _robust_normal(
        np.concatenate([np.quantile(np.log(r[:, 3] / r[:, 2]), probs) for r in ok])
    )
    top = max(float(r[:, 1:].max()) for r in rows.values())
    digits = 10.0 ** (math.floor(math.log10(top)) - 1)
    return SyntheticSizes(
        rate_per_hour=round(rate, 1),
        big_share=round(big_share, 3),
        small_mu=round(small_mu, 2),
        small_sd=round(small_sd, 2),
        big_mu=round(big_mu, 2),
        big_sd=round(big_sd, 2),
        shuffle_share=round(shuffle_share, 3),
        shuffle_mu=round(shuffle_mu, 2),
        shuffle_sd=round(shuffle_sd, 2),
        output_mu=round(output_mu, 2),
        output_sd=round(output_sd, 2),
        max_bytes=math.ceil(top / digits) * digits,
    )


def synthetic_jobs(
    *,
    hours: float | None,
    scale: float,
    seed: int,
    rate_per_hour: float | None = None,
    prefix: str = "job",
    sizes: SyntheticSizes | None = None,
    **swim_kw: Any,
) -> list[JobSpec]:
    """The synthetic workload ``SYN``: SWIM-like rows drawn from :data:`SYNTHETIC_SIZES`,
    turned into jobs exactly as SWIM rows are (:func:`swim_jobs`, ``scale`` on the bytes).

    Poisson arrivals at FB-2009's rate; ``ln(map input)`` from the two-component mixture
    fitted to the FB-2009 and FB-2010 map-input quantiles; a shuffle stage for
    ``shuffle_share`` of the jobs, with shuffle and output bytes lognormal multiples of the
    input and shuffle (robust fits: the median and IQR of the real ratios, so the far tail of
    the real ratios cannot make a few giant reduces carry the hour's work).

    Why this fit (measured by :func:`fit_synthetic_sizes` and :func:`task_count_facts` on
    the files in ``/work/shared/data``, SWIM rows at scale 1, 64 MB blocks, 1 GB reduces):

    ==========================  ===========  ===========  =========================
    per day sample              FB-2009      FB-2010      Alibaba 2017 (batch)
    ==========================  ===========  ===========  =========================
    jobs per hour               245.6        1018.3       684 (17 h)
    median / p90 tasks per job  1 / 11       2 / 483      141 / 1559 instances
    jobs with >= 3 tasks        13.7%        38.9%        82.1%
    tasks in stages of >= 3     98.5%        99.8%        99.96% (99.6% per DAG task)
    base work per hour (s)      6.4e5        2.2e7        4.6e8
    ==========================  ===========  ===========  =========================

    FB-2009 alone is the smallest; FB-2010 has much bigger jobs; the two pooled (each
    weighing the same) give a default between them. At scale 1 (one day, seed 0) 26.5% of
    its jobs have 3+ tasks (the two traces: 13.7% and 38.9%), 99.9% of its tasks sit in
    stages of 3+ (98.5-99.8%), and a median hour holds ~1.3e7 s of base work (the previous
    generator: ~4.4e6 s in a median hour, ~1.4e8 s on average, 16% of jobs with 3+ tasks).
    When ``collect --load`` shrinks the data scale to a small cluster (4e4-1.5e5 s of work
    per hour), bytes shrink and so do task counts: this generator keeps 3-15% of its jobs
    with 3+ tasks and 26-92% of its tasks in stages of 3+ (the previous one: 2-14% and
    13-89%; real FB-2009 at those loads: 7-10% and 86-97%, FB-2010's big jobs fare worse).
    Alibaba's instance counts describe a different system (a task is a DAG node with
    hundreds of instances) and are reported for comparison only.

    Parameters
    ----------
    hours : float or None
        Length of the arrival window (None: 24 hours).
    scale : float
        Multiplies every byte count (SWIM's data scale).
    seed : int
    rate_per_hour : float, optional
        Jobs per hour (default: ``sizes.rate_per_hour``, FB-2009's 245.6).
    prefix : str
        Job id prefix.
    sizes : SyntheticSizes, optional
        The size distribution (default :data:`SYNTHETIC_SIZES`).
    **swim_kw
        Passed to :func:`swim_jobs` (block size, rates, overhead).

    Examples
    --------
    >>> js = synthetic_jobs(hours=1, scale=1.0, seed=3)
    >>> 150 < len(js) < 350 and all(j.submit_time < 3600 for j in js)
    True
    """
    s = SYNTHETIC_SIZES if sizes is None else sizes
    rate = s.rate_per_hour if rate_per_hour is None else rate_per_hour
    rng = np.random.default_rng([seed, 303])
    span = (24.0 if hours is None else hours) * 3600.0
    n = rng.poisson(rate * span / 3600.0)
    submit = np.sort(rng.uniform(0.0, span, n))
    big = rng.random(n) < s.big_share
    log_in = np.where(big, rng.normal(s.big_mu, s.big_sd, n), rng.normal(s.small_mu, s.small_sd, n))
    inp = np.minimum(np.exp(np.minimum(log_in, 64.0)), s.max_bytes)
    has_shuffle = rng.random(n) < s.shuffle_share
    shuf = inp * np.exp(rng.normal(s.shuffle_mu, s.shuffle_sd, n))
    shuf = np.where(has_shuffle, np.minimum(shuf, s.max_bytes), 0.0)
    out = np.minimum(shuf * np.exp(rng.normal(s.output_mu, s.output_sd, n)), s.max_bytes)
    rows = [
        (f"{prefix}{i}", float(submit[i]), float(inp[i]), float(shuf[i]), float(out[i]))
        for i in range(n)
    ]
    return swim_jobs(rows, "SYN", hours=None, scale=scale, **swim_kw)


def task_count_facts(jobs: Sequence[JobSpec], hours: float) -> dict[str, float]:
    """Task-count figures of a list of jobs (the table of :func:`synthetic_jobs`).

    ``jobs_per_hour``, ``median_tasks`` and ``p90_tasks`` per job, ``jobs_3plus`` (share of
    jobs with >= 3 tasks), ``tasks_in_stages_3plus`` (share of tasks whose stage has >= 3
    tasks: the rows a per-stage straggler label can use) and ``work_per_hour`` (base work, s).

    Examples
    --------
    >>> js = [JobSpec("a", 0.0, [1.0] * 4, [2.0]), JobSpec("b", 1.0, [3.0])]
    >>> f = task_count_facts(js, hours=1.0)
    >>> f["jobs_3plus"], f["tasks_in_stages_3plus"], f["work_per_hour"]
    (0.5, 0.6666666666666666, 9.0)
    """
    n = np.array([j.n_tasks for j in jobs])
    stages = np.array([w.size for j in jobs for w in (j.map_work, j.reduce_work) if w.size])
    work = sum(float(j.map_work.sum() + j.reduce_work.sum()) for j in jobs)
    return {
        "jobs_per_hour": len(jobs) / hours,
        "median_tasks": float(np.median(n)),
        "p90_tasks": float(np.quantile(n, 0.9)),
        "jobs_3plus": float(np.mean(n >= 3)),
        "tasks_in_stages_3plus": float(stages[stages >= 3].sum() / stages.sum()),
        "work_per_hour": work / hours,
    }


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
