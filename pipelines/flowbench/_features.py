"""Causal node counters at launch for FlowBench jobs (no node time series exists).

For an executor job ``j`` launched at ``t`` on executor ``e`` every ``c_*`` value uses only
what the cluster had seen before ``t``:

* **history** — jobs that had *finished* strictly before ``t`` (``end < t``); a job that
  ends at or after ``t`` never contributes, whatever its counters or run time;
* **concurrency** — jobs *running* at ``t`` (``start <= t < end``; that a job started and has
  not ended is known at ``t``; its end time and counters are not used).

A finished job's *slowdown* is ``log(runtime / ref)``, where ``ref`` is the median run time
of the last ``ref_window`` finished jobs of the same (workflow, transformation) cluster-wide,
in end-time order, up to and including this one: itself causal (known when the job ends).
Run times are floored at 1 s (timestamps are whole seconds).

History crosses run boundaries (runs are sequential on one testbed, ~200 s apart, and an
executor runs only 2-4 jobs of a run): the averages are normalised exponentially
time-weighted means with half-life ``halflife`` seconds (default 600 s, a few runs), so the
current and previous runs dominate and a year-old job weighs nothing. The ``c_run_*`` pair
restricts the history to the current run (the scheduler knows which run a job belongs to).
Because history is wall-clock causal, counters depend on which files were read together.

Columns (``0`` where there is no history yet; the count columns tell the model so):

========================  ==================================================================
``c_exec_jobs``           log1p(jobs finished on ``e`` before ``t``, all time)
``c_exec_jobs_1h``        jobs finished on ``e`` in ``[t - 3600, t)``
``c_exec_idle``           log1p(min(seconds since ``e``'s last finish, 1 day)); 1 day if none
``c_exec_slowdown``       EW mean slowdown of ``e``'s finished jobs
``c_exec_straggle``       EW share of them with ``runtime > beta * ref``
``c_exec_cpu_eff``        EW mean ``cpu_time / runtime``
``c_exec_online_jobs``    log1p(finished jobs on ``e`` with kickstart online counters)
``c_exec_iowait``         EW mean ``iowait / runtime`` (online counters only)
``c_exec_read_rate``      EW mean log1p(bytes read / s); ``c_exec_write_rate`` likewise
``c_exec_read_calls``     EW mean log1p(read syscalls / s); ``c_exec_write_calls`` likewise
``c_run_exec_jobs``       jobs of the same run finished on ``e`` before ``t``
``c_run_exec_slowdown``   their mean slowdown
``c_cluster_slowdown``    EW mean slowdown of every executor's finished jobs
``c_running_exec``        other executor jobs running on ``e`` at ``t``
``c_running_worker``      other executor jobs running on ``e``'s physical worker at ``t``
``c_running_cluster``     other executor jobs running anywhere at ``t``
``c_running_local``       auxiliary/transfer jobs running on the submit host at ``t``
========================  ==================================================================

Everything is computed with sorts, grouped exponentially-weighted means, rolling medians,
``merge_asof`` (strictly earlier ends) and ``searchsorted``; no per-job Python loop.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from sim_bridge.trace import DEFAULT_BETA

#: Default half-life (seconds) of the time-weighted history means.
DEFAULT_HALFLIFE = 600.0

#: Default number of finished same-type jobs whose median is a job's reference run time.
DEFAULT_REF_WINDOW = 50

#: The counter columns :func:`causal_counters` returns, in order.
COUNTER_NAMES: tuple[str, ...] = (
    "c_exec_jobs",
    "c_exec_jobs_1h",
    "c_exec_idle",
    "c_exec_slowdown",
    "c_exec_straggle",
    "c_exec_cpu_eff",
    "c_exec_online_jobs",
    "c_exec_iowait",
    "c_exec_read_rate",
    "c_exec_write_rate",
    "c_exec_read_calls",
    "c_exec_write_calls",
    "c_run_exec_jobs",
    "c_run_exec_slowdown",
    "c_cluster_slowdown",
    "c_running_exec",
    "c_running_worker",
    "c_running_cluster",
    "c_running_local",
)

_ONLINE = ("iowait", "bytes_read", "bytes_written", "read_calls", "write_calls")
_IDLE_CAP = 86400.0
_WORKER_RE = re.compile(r"^(?P<worker>.+?)-container-")


def worker_of(host: str) -> str:
    """The physical worker of an executor hostname (the part before ``-container-``).

    Examples
    --------
    >>> worker_of("poseidon-worker-2-container-40-43"), worker_of("worker1-container-0-3")
    ('poseidon-worker-2', 'worker1')
    >>> worker_of("host-10-100-100-12.openstacklocal")
    'host-10-100-100-12.openstacklocal'
    """
    m = _WORKER_RE.match(str(host))
    return m["worker"] if m else str(host)


def executor_mask(raw: pd.DataFrame) -> np.ndarray:
    """Rows that are executor jobs: Pegasus ``compute`` jobs not run on the ``local`` site.

    The other rows (auxiliary, transfer, sub-workflow jobs, and compute wrappers of
    sub-workflows on the submit host) are load on the submit host, not on an executor.
    """
    return ((raw["pegasus_type"] == "compute") & (raw["site"] != "local")).to_numpy()


def _ordered(groups: np.ndarray, end: np.ndarray, start: np.ndarray) -> np.ndarray:
    """A total order: by group, end, start, then table position (deterministic ties)."""
    return np.lexsort((np.arange(len(end)), start, end, groups))


def reference_runtime(
    type_codes: np.ndarray, start: np.ndarray, end: np.ndarray, window: int = DEFAULT_REF_WINDOW
) -> np.ndarray:
    """Per job: the median run time of the last ``window`` finished jobs of its type.

    Jobs of a type are taken in end-time order (ties by start, then position) up to and
    including the job itself, so the value is known when the job ends.

    Examples
    --------
    >>> reference_runtime(np.array([0, 0, 0, 1]), np.zeros(4), np.array([4.0, 2.0, 6.0, 1.0]), 2)
    array([3., 2., 5., 1.])
    """
    order = _ordered(type_codes, end, start)
    rt = pd.Series(np.maximum(end - start, 1.0)[order])
    med = rt.groupby(type_codes[order]).rolling(window, min_periods=1).median()
    out = np.empty(len(end))
    out[order] = med.to_numpy()
    return out


def _ew_at_launch(
    groups: np.ndarray,
    end: np.ndarray,
    start: np.ndarray,
    values: dict[str, np.ndarray],
    q_groups: np.ndarray,
    q_time: np.ndarray,
    halflife: float | None,
) -> pd.DataFrame:
    """Time-weighted means (and counts, last end) of each group's rows with ``end < q_time``.

    ``halflife=None`` gives plain means. Returns one row per query (in query order) with the
    value columns (NaN: no history), ``n`` (rows finished before) and ``last_end``.
    """
    order = _ordered(groups, end, start)
    g = groups[order]
    e = end[order]
    frame = pd.DataFrame({k: np.asarray(v, dtype=np.float64)[order] for k, v in values.items()})
    count = pd.Series(g).groupby(g).cumcount().to_numpy() + 1.0
    if halflife is None:
        ew = frame.groupby(g).cumsum().div(count, axis=0)
    else:
        times = pd.to_datetime(pd.Series(e * 1e9).round().astype("int64"), unit="ns")
        ew = frame.groupby(g).ewm(halflife=pd.Timedelta(seconds=halflife), times=times).mean()
    right = pd.DataFrame(
        {
            "g": g,
            "last_end": e,
            "n": count,
            **{k: ew[k].to_numpy() for k in values},
        }
    )
    # ewm comes back grouped (by group, then row): the order of `order` above, as is cumsum
    right = right.sort_values("last_end", kind="mergesort")
    left = pd.DataFrame({"g": q_groups, "t": q_time, "q": np.arange(len(q_time))})
    left = left.sort_values("t", kind="mergesort")
    got = pd.merge_asof(
        left,
        right,
        left_on="t",
        right_on="last_end",
        by="g",
        allow_exact_matches=False,
        direction="backward",
    )
    got = got.sort_values("q").reset_index(drop=True)
    got["n"] = got["n"].fillna(0.0)
    return got


def _grouped_running(
    groups: np.ndarray, start: np.ndarray, end: np.ndarray, q_groups: np.ndarray, q_t: np.ndarray
) -> np.ndarray:
    """Per query: rows of the same group with ``start <= t < end`` (searchsorted sweep)."""
    lo = min(start.min(initial=np.inf), q_t.min(initial=np.inf))
    hi = max(end.max(initial=-np.inf), q_t.max(initial=-np.inf))
    span = (hi - lo) + 10.0 if np.isfinite(hi - lo) else 10.0
    sk = np.sort(groups * span + (start - lo))
    ek = np.sort(groups * span + (end - lo))
    qk = q_groups * span + (q_t - lo)
    return (np.searchsorted(sk, qk, "right") - np.searchsorted(ek, qk, "right")).astype(float)


def _grouped_ended_within(
    groups: np.ndarray, end: np.ndarray, t: np.ndarray, window: float
) -> np.ndarray:
    """Per row ``i``: rows of its group with ``t[i] - window <= end < t[i]``."""
    lo = min(end.min(initial=np.inf), (t - window).min(initial=np.inf))
    hi = max(end.max(initial=-np.inf), t.max(initial=-np.inf))
    span = (hi - lo) + 10.0 if np.isfinite(hi - lo) else 10.0
    keys = np.sort(groups * span + (end - lo))
    qk = groups * span + (t - lo)
    return (np.searchsorted(keys, qk, "left") - np.searchsorted(keys, qk - window, "left")).astype(
        float
    )


def causal_counters(
    raw: pd.DataFrame,
    *,
    beta: float = DEFAULT_BETA,
    halflife: float = DEFAULT_HALFLIFE,
    ref_window: int = DEFAULT_REF_WINDOW,
) -> pd.DataFrame:
    """The ``c_*`` counters of every executor job of ``raw``, at its launch, causally.

    Parameters
    ----------
    raw : pandas.DataFrame
        A raw table as :func:`pipelines.flowbench.read_flowbench` returns (columns
        ``pegasus_type, site, host, workflow, transformation, job_id, start, end,
        cpu_time`` and the online counters).
    beta : float
        Threshold of the ``c_exec_straggle`` history (runtime > beta x reference).
    halflife : float
        Half-life (s) of the time-weighted history means.
    ref_window : int
        Finished same-type jobs in a reference median.

    Returns
    -------
    pandas.DataFrame
        Index: the executor rows' index in ``raw``; columns :data:`COUNTER_NAMES`, finite.

    Examples
    --------
    >>> raw = pd.DataFrame({"pegasus_type": "compute", "site": "condorpool",
    ...     "host": ["w-container-0", "w-container-0", "w-container-1"],
    ...     "workflow": "wf", "transformation": "a", "job_id": "r",
    ...     "start": [0.0, 20.0, 5.0], "end": [10.0, 30.0, 25.0], "cpu_time": [5.0, 5.0, 5.0],
    ...     "iowait": np.nan, "bytes_read": np.nan, "bytes_written": np.nan,
    ...     "read_calls": np.nan, "write_calls": np.nan})
    >>> c = causal_counters(raw)
    >>> c["c_exec_jobs_1h"].tolist(), c["c_running_worker"].tolist()
    ([0.0, 1.0, 0.0], [0.0, 1.0, 1.0])
    """
    if not (np.isfinite(halflife) and halflife > 0):
        raise ValueError(f"halflife must be a positive number of seconds, got {halflife!r}")
    if not (isinstance(ref_window, (int, np.integer)) and ref_window >= 1):
        raise ValueError(f"ref_window must be an integer >= 1, got {ref_window!r}")
    mask = executor_mask(raw)
    ex = raw.loc[mask]
    start = ex["start"].to_numpy(np.float64)
    end = ex["end"].to_numpy(np.float64)
    host_codes, hosts = pd.factorize(ex["host"].astype(str))
    worker_codes = pd.factorize(pd.Series(hosts).map(worker_of))[0][host_codes]
    type_codes = pd.factorize(ex["workflow"].astype(str) + "/" + ex["transformation"].astype(str))[
        0
    ]
    run_codes = pd.factorize(ex["job_id"].astype(str))[0]
    rt = np.maximum(end - start, 1.0)
    ref = reference_runtime(type_codes, start, end, ref_window)
    slow = np.log(rt / np.maximum(ref, 1.0))
    out: dict[str, np.ndarray] = {}

    base = _ew_at_launch(
        host_codes,
        end,
        start,
        {
            "slow": slow,
            "strag": (rt > beta * ref).astype(float),
            "cpu": ex["cpu_time"].to_numpy(np.float64) / rt,
        },
        host_codes,
        start,
        halflife,
    )
    out["c_exec_jobs"] = np.log1p(base["n"].to_numpy())
    out["c_exec_jobs_1h"] = _grouped_ended_within(host_codes, end, start, 3600.0)
    idle = np.minimum(start - base["last_end"].to_numpy(), _IDLE_CAP)
    out["c_exec_idle"] = np.log1p(np.where(np.isnan(idle), _IDLE_CAP, idle))
    out["c_exec_slowdown"] = base["slow"].to_numpy()
    out["c_exec_straggle"] = base["strag"].to_numpy()
    out["c_exec_cpu_eff"] = base["cpu"].to_numpy()

    online = np.ones(len(ex), dtype=bool)
    for c in _ONLINE:
        online &= np.isfinite(ex[c].to_numpy(np.float64))
    on = {c: ex[c].to_numpy(np.float64)[online] for c in _ONLINE}
    rt_on = rt[online]
    hist = _ew_at_launch(
        host_codes[online],
        end[online],
        start[online],
        {
            "iowait": on["iowait"] / rt_on,
            "read_rate": np.log1p(np.maximum(on["bytes_read"], 0) / rt_on),
            "write_rate": np.log1p(np.maximum(on["bytes_written"], 0) / rt_on),
            "read_calls": np.log1p(np.maximum(on["read_calls"], 0) / rt_on),
            "write_calls": np.log1p(np.maximum(on["write_calls"], 0) / rt_on),
        },
        host_codes,
        start,
        halflife,
    )
    out["c_exec_online_jobs"] = np.log1p(hist["n"].to_numpy())
    for k in ("iowait", "read_rate", "write_rate", "read_calls", "write_calls"):
        out[f"c_exec_{k}"] = hist[k].to_numpy()

    pair = run_codes.astype(np.int64) * (len(hosts) + 1) + host_codes
    run = _ew_at_launch(pair, end, start, {"slow": slow}, pair, start, halflife=None)
    out["c_run_exec_jobs"] = run["n"].to_numpy()
    out["c_run_exec_slowdown"] = run["slow"].to_numpy()

    zeros = np.zeros(len(ex), dtype=np.int64)
    clus = _ew_at_launch(zeros, end, start, {"slow": slow}, zeros, start, halflife)
    out["c_cluster_slowdown"] = clus["slow"].to_numpy()

    self_running = (end > start).astype(float)
    out["c_running_exec"] = (
        _grouped_running(host_codes, start, end, host_codes, start) - self_running
    )
    out["c_running_worker"] = (
        _grouped_running(worker_codes, start, end, worker_codes, start) - self_running
    )
    out["c_running_cluster"] = _grouped_running(zeros, start, end, zeros, start) - self_running
    aux = raw.loc[~mask]
    out["c_running_local"] = _grouped_running(
        np.zeros(len(aux), dtype=np.int64),
        aux["start"].to_numpy(np.float64),
        aux["end"].to_numpy(np.float64),
        zeros,
        start,
    )
    frame = pd.DataFrame({k: out[k] for k in COUNTER_NAMES}, index=ex.index)
    return frame.fillna(0.0)
