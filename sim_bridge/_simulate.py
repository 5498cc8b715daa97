"""``simulate``: the one-call entry point, and its result."""

from __future__ import annotations

import inspect
import logging
import math
import time
from collections.abc import Callable
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from sim_bridge._alibaba2018 import MACHINE_USAGE_FILE
from sim_bridge._cluster import _BLOCK, COUNTER_NAMES, Cluster
from sim_bridge._compiled import (
    ENGINES,
    compiled_available,
    compiled_tables,
    compiled_unsupported,
    run_compiled,
)
from sim_bridge._engine import A_FINISHED, SimulationStopped, Simulator
from sim_bridge._gc import gc_paused
from sim_bridge._metrics import summarize
from sim_bridge._trace_sink import ROW_GROUP_ROWS, TraceSink, write_trace
from sim_bridge._workload_replay import swim_jobs
from sim_bridge._workloads import (
    DEFAULT_TAIL_ALPHA,
    TAIL_ALPHA,
    WORKLOAD_NAMES,
    JobSpec,
    Workload,
    load_workload,
    resolve_data_dir,
)
from sim_bridge.policies._registry import get_policy
from sim_bridge.policies.base import PlacementPolicy, Policy, SpeculationPolicy
from sim_bridge.trace import DEFAULT_BETA, check_beta, jobs_table, node_names, task_ids, tasks_table
from sim_bridge.world._bad_nodes import BAD_NODE_SHARE
from sim_bridge.world._interference import TENANT_LOAD
from sim_bridge.world._skew import SKEW_SIGMA

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_PLACEMENT", "SimulationResult", "simulate"]

#: The default placement: fair sharing. Facebook's Hadoop clusters, whose 2009 and 2010 days
#: SWIM replays, ran the Hadoop Fair Scheduler (Zaharia et al., *Delay scheduling*, EuroSys
#: 2010, describe its deployment there); Alibaba's Fuxi shares its batch cluster by quota
#: (Zhang et al., VLDB 2014); the synthetic workload is shaped after FB-2009. Under FIFO one
#: big job holds every slot and the small jobs behind it wait, so the order in which big jobs
#: finish dominates every job's completion time (the effect the old default showed).
DEFAULT_PLACEMENT = "fair"

log = logging.getLogger("sim_bridge")

_P = TypeVar("_P", bound=Policy)

#: A streamed run records each launch's four background levels (32 bytes an attempt, kept
#: until its job is written) and then lets the contention paths go with its live attempts'
#: reads, when one day-block of the cluster's levels is at least this big; on a smaller
#: cluster the paths are held from the oldest live job's submission instead. 0: every
#: streamed run with contention paths records them (since 2026-11-28 (d)). Holding by the
#: submission kept days of paths behind a job whose stragglers run for days: Alibaba 2017's
#: first 0.25 h without speculation on 1,300 x 176 (60 MB of levels a day-block, its last job
#: done at 206 simulated h) peaked at 1,615 MB that way and at 623 MB with the records
#: (LATE: 500 -> 394 MB), the FB-2009 day with LATE on 600 x 2 at 231 MB and 226-228 MB
#: (``bench/bench_sim.py``'s docstring; the same traces). A positive value (the old default
#: was 64 MiB, chosen when the records cost the FB-2009 day 9 MB) brings the old rule back.
LAUNCH_LEVELS_MIN_BYTES = 0
#: A streamed run draws the contention paths in parts of at most this many bytes of levels
#: when a day-block is bigger (:func:`path_part_steps`): its window then ends a part past the
#: clock, not at the end of the clock's day. On 33,000 nodes a day of levels, rates and
#: sums is 2.9 GB; parts of 120 steps (2 h, 127 MB of levels) keep one part, not a day,
#: ahead of the clock. The block's first part draws its whole stream and marks where each
#: row's later parts start (``sim_bridge.world._block_marks``, 73 MiB there); the others draw
#: only their own steps (``bench/bench_path_parts.py``): 7.8 s a block in 12 parts (7.2 s in
#: 6 parts of 240 steps, 47.6 s drawing the stream again a part). Until 2026-11-29 (e) the
#: parts were 256 MiB (240 steps): the levels' and the rates' windows each swing by a part
#: (1 MB a step each with FB-2010's two profiles), so halving it takes ~250 MB off a day's
#: peak for 37 MiB more marks and ~0.6 s a block.
PATH_PART_BYTES = 128 << 20


#: A streamed run computes every node's rates and running sums of the contention paths (16
#: bytes a node, step and sensitivity profile) in parts of at most this many bytes a profile
#: when a part of the paths holds more (:func:`path_rate_steps`; ``Cluster(rate_steps=)``).
#: The rates are kept from the engine's rates hold (the clock, moved every 10 steps) to the
#: end of the part read last, so on 33,000 nodes parts of the paths' 120 steps held up to 130
#: steps of them: 2 profiles x 2 arrays x 33,000 x 8 bytes = 1 MB a step, ~130 MB at every
#: even simulated hour of the FB-2010 day (``bench/results/FB2010_late_j.jsonl``).
PATH_RATE_BYTES = 8 << 20


def path_rate_steps(n_nodes: int, extend_steps: int, max_bytes: int | None = None) -> int:
    """The steps of every node's rates a streamed run computes at once on ``n_nodes`` nodes
    whose paths grow by ``extend_steps``: the largest divisor of ``extend_steps`` whose rates
    and running sums of one profile (2 x 8 bytes a node and step) fit in ``max_bytes``
    (default :data:`PATH_RATE_BYTES`), one step at least.

    Examples
    --------
    >>> path_rate_steps(600, 1440), path_rate_steps(33_000, 120), path_rate_steps(10, 1440)
    (720, 15, 1440)
    """
    if not (isinstance(n_nodes, (int, np.integer)) and n_nodes >= 1):
        return extend_steps  # the cluster says what is wrong with it
    cap = PATH_RATE_BYTES if max_bytes is None else max_bytes
    fit = [
        d for d in range(1, extend_steps + 1) if extend_steps % d == 0 and 16 * n_nodes * d <= cap
    ]
    return max(fit, default=1)


def path_part_steps(n_nodes: int, max_bytes: int | None = None) -> int:
    """The steps a streamed run's paths grow by on ``n_nodes`` nodes: the largest divisor of
    the day-block whose levels (4 resources x 8 bytes a node and step) fit in ``max_bytes``
    (default :data:`PATH_PART_BYTES`), the whole block when it fits, one step at least.

    Examples
    --------
    >>> path_part_steps(600), path_part_steps(33_000), path_part_steps(33_000, 1)
    (1440, 120, 1)
    """
    if not (isinstance(n_nodes, (int, np.integer)) and n_nodes >= 1):
        return _BLOCK  # the cluster says what is wrong with it
    cap = PATH_PART_BYTES if max_bytes is None else max_bytes
    fit = [d for d in range(1, _BLOCK + 1) if _BLOCK % d == 0 and 32 * n_nodes * d <= cap]
    return max(fit, default=1)


class SimulationResult:
    """What a simulation produced.

    Attributes
    ----------
    jobs : DataFrame
        One row per job: ``job_id, workload, submit_time, finish_time, jct, deadline,
        met_deadline, n_tasks, n_attempts``. A streaming run builds it on first access (it
        imports pandas then, not before); the constructor also takes a function returning it.
    tasks : DataFrame or None
        None after a streaming run (``trace_sink``: the rows are in the file). Else one row
        per attempt (:mod:`sim_bridge.trace`): ``job_id, task_id, attempt, workload, node, phase,
        submit_time, launch_time, end_time, duration, outcome`` and the ``c_*`` counters
        snapshotted at launch.
    summary : dict
        ``jobs, tasks, attempts, mean_jct, p50_jct, p90_jct, p99_jct, task_seconds, makespan,
        pocd, events, wall_seconds`` and more (policy names, parameters, straggler share).
        ``task_seconds`` sums every attempt's run time (killed copies too); ``events`` counts
        the events the engine processed (arrivals, attempt ends, speculation scans,
        wake-ups; stale ends of killed attempts excluded); ``pocd`` is the share of jobs that
        met their deadline; ``complete`` says whether every job ran to its end (False only
        for a streaming run stopped early, which adds ``stop_reason``).
    """

    def __init__(
        self,
        jobs: pd.DataFrame | Callable[[], pd.DataFrame],
        tasks: pd.DataFrame | None,
        summary: dict[str, Any] | None = None,
    ):
        self._jobs = jobs
        self.tasks = tasks
        self.summary: dict[str, Any] = {} if summary is None else summary

    @property
    def jobs(self) -> pd.DataFrame:
        if callable(self._jobs):
            self._jobs = self._jobs()
        return self._jobs

    @jobs.setter
    def jobs(self, value: pd.DataFrame) -> None:
        self._jobs = value

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its job table built (a Dask worker's result travels whole)."""
        return {"_jobs": self.jobs, "tasks": self.tasks, "summary": self.summary}

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"SimulationResult(jobs={s.get('jobs')}, attempts={s.get('attempts')}, "
            f"p99_jct={s.get('p99_jct', float('nan')):.1f})"
        )


#: the SWIM conversion's options, the extra keywords :func:`simulate` passes on
SWIM_OPTIONS = frozenset(
    k
    for k, p in inspect.signature(swim_jobs).parameters.items()
    if p.kind is p.KEYWORD_ONLY and p.default is not p.empty
)


def _check_swim_kw(items, swim_kw: dict[str, Any]) -> None:
    """A keyword :func:`simulate` does not know is an error naming it, not a value silently
    dropped (``speculation="late"`` for ``policy``); so is a SWIM conversion option with no
    workload given by name to convert."""
    unknown = sorted(set(swim_kw) - SWIM_OPTIONS)
    if unknown:
        raise TypeError(
            f"simulate() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"its extra keywords are the SWIM conversion's: {', '.join(sorted(SWIM_OPTIONS))}"
        )
    if swim_kw and not any(isinstance(item, str) for item in items):
        raise TypeError(
            f"simulate(): the SWIM conversion options {', '.join(map(repr, sorted(swim_kw)))} "
            "apply only to a workload given by name, and none is"
        )


def _as_workloads(workload, *, data_dir, hours, scale, seed, swim_kw) -> list[Workload]:
    items = workload if isinstance(workload, (list, tuple)) else [workload]
    if not items:
        raise ValueError("parameter workload is empty")
    _check_swim_kw(items, swim_kw)
    out: list[Workload] = []
    loose: dict[str, list[JobSpec]] = {}
    for k, item in enumerate(items):
        if isinstance(item, str):
            out.append(
                load_workload(item, data_dir, hours=hours, scale=scale, seed=seed + k, **swim_kw)
            )
        elif isinstance(item, Workload):
            out.append(item)
        elif isinstance(item, JobSpec):
            loose.setdefault(item.workload, []).append(item)
        else:
            raise ValueError(
                f"parameter workload: expected a name ({', '.join(WORKLOAD_NAMES)}), a Workload "
                f"or a JobSpec, got {item!r}"
            )
    for name, jobs in loose.items():
        out.append(Workload(name, jobs, tail_alpha=TAIL_ALPHA.get(name, DEFAULT_TAIL_ALPHA)))
    seen: set[str] = set()
    for w in out:
        for j in w.jobs:
            if j.job_id in seen:
                raise ValueError(f"parameter workload: job id {j.job_id!r} appears twice")
            seen.add(j.job_id)
    return out


def _resolve_policy(value, params, kind: type[_P], what: str) -> _P:
    pol = get_policy(value, **(params or {}))
    if not isinstance(pol, kind):
        raise ValueError(
            f"parameter {what}: {getattr(pol, 'name', pol)!r} is a {pol.kind} policy, "
            f"not a {kind.kind} policy"
        )
    pol.validate()
    pol.reset()
    return pol


@gc_paused()  # the run's objects live until it returns: see sim_bridge._gc
def simulate(
    workload: Any = "SYN",
    policy: str | SpeculationPolicy = "none",
    placement: str | PlacementPolicy = DEFAULT_PLACEMENT,
    *,
    nodes: int = 50,
    slots: int = 2,
    hours: float | None = None,
    scale: float = 1.0,
    seed: int = 0,
    cluster_seed: int | None = None,
    data_dir: str | Path | None = None,
    counters: str = "synthetic",
    beta: float = DEFAULT_BETA,
    progress: bool | None = None,
    policy_params: dict[str, Any] | None = None,
    placement_params: dict[str, Any] | None = None,
    duration_dist: Any = None,
    ideal: bool = False,
    noise: bool = True,
    interference: float = TENANT_LOAD,
    tail_pressure: float = 0.0,
    kappa: float = 1.0,
    skew: tuple[float, float] = SKEW_SIGMA,
    bad_node_share: float = BAD_NODE_SHARE,
    record_truth: bool = False,
    deadline_factor: float = 3.0,
    record_counters: bool = True,
    max_events: int | None = None,
    engine: str = "auto",
    trace_sink: str | Path | None = None,
    max_wall_seconds: float | None = None,
    row_group_rows: int = ROW_GROUP_ROWS,
    **swim_kw: Any,
) -> SimulationResult:
    """Run the cluster simulator once.

    Parameters
    ----------
    workload : str, Workload, JobSpec or a list of them
        ``"FB2009"``, ``"FB2010"``, ``"ALI2017"``, ``"SYN"`` (loaded from ``data_dir``; the
        synthetic workload is used, with one warning line, when the file is missing),
        explicit :class:`Workload`/:class:`JobSpec` objects, or a list mixing them: several
        workloads then share the same cluster, interleaved by arrival time.
    policy : str or SpeculationPolicy
        A registered speculation policy name (``straggler policies``) or an instance.
    placement : str or PlacementPolicy
        A registered placement policy name or an instance (default ``"fair"``: the Fair
        Scheduler the replayed clusters ran, see :data:`DEFAULT_PLACEMENT`).
    nodes, slots : int
        Cluster size: ``nodes`` nodes with ``slots`` slots each. Two slots by default: Hadoop
        0.20, which the SWIM traces' clusters ran, gives a TaskTracker two map slots and two
        reduce slots (``mapred.tasktracker.{map,reduce}.tasks.maximum``); a slot here runs
        maps and reduces alike, and a job's reduces only start once its maps are done, so
        two slots hold what the node ran at once most of the time.
    hours : float, optional
        Keep the jobs submitted during the first ``hours`` hours (all when None).
    scale : float
        Data scale factor (SWIM bytes, Alibaba instance counts).
    seed : int
        Seed of every random draw; the same inputs and seed give identical tables.
    cluster_seed : int, optional
        Seed of the cluster alone (node hardware, contention paths, counter noise; default
        ``seed``): the same cluster with fresh job draws, e.g. to test a trained predictor.
    data_dir : path, optional
        Data directory (then ``$STRAGGLER_DATA_DIR``, then ``data/`` of the checkout).
    counters : {"synthetic", "alibaba2018"}
        Source of the nodes' background contention (replay needs the Alibaba 2018 subset).
    beta : float
        Straggler threshold for the summary's ``straggler_share``.
    progress : bool, optional
        Show a tqdm bar (default: for runs of more than 2,000 jobs; ``TQDM_DISABLE`` wins).
    policy_params, placement_params : dict, optional
        Constructor parameters when the policies are given by name.
    duration_dist : frozen scipy distribution, optional
        Replace the node model: an attempt lasts ``work * (1 - start_fraction) * X`` with ``X``
        an independent draw (e.g. one job of n tasks of work 1 and i.i.d. durations).
    ideal : bool
        Homogeneous nodes without contention (and, with ``noise=False`` and ``skew=(0, 0)``,
        durations equal to the base work exactly).
    noise : bool
        Residual noise on durations (:func:`sim_bridge.world.residual_noise`).
    interference : float
        Self-inflicted contention (:mod:`sim_bridge.world._interference`): the load a node
        full of one workload's tasks puts on its dominant resource; co-located attempts slow
        each other and their end times are re-solved when a node's tenants change (Python
        loop). 0 turns it off.
    kappa : float
        Strength of contention on the slowdown.
    tail_pressure : float in [0, 1)
        How much contention met at launch makes the noise tail heavier (0: the residual noise
        is node-independent; other values need the Python loop).
    skew : (float, float)
        Lognormal sigma of a task's input within its stage, maps and reduces
        (:func:`sim_bridge.world.input_skew`); ``(0, 0)`` turns data skew off.
    bad_node_share : float
        Share of persistently degraded nodes (:class:`sim_bridge.world.BadNodes`; 0: none).
    record_truth : bool
        Add the hidden truth of each attempt to ``tasks``, in columns training never reads:
        ``truth_work`` (nominal work: base work x input skew x residual noise),
        ``truth_noise``, ``truth_slowdown_launch`` (the node's slowdown for this task at its
        launch, co-located tasks included) and ``truth_slowdown_median`` (the median node's at
        that instant, same profile, no co-located tasks). Runs the Python loop.
    deadline_factor : float
        Deadline of a job without one: ``submit + factor * critical path`` (for PoCD).
    record_counters : bool
        Add the ``c_*`` counter columns to ``tasks``.
    max_events : int, optional
        Stop after this many events (a guard for policy experiments): an error
        (:class:`SimulationStopped`, a ``RuntimeError``), or with ``trace_sink`` an incomplete
        result.
    engine : {"auto", "compiled", "python"}
        Event loop. ``"auto"`` runs the compiled loop when no policy hook can act (no
        speculation, FIFO placement) and the general Python loop otherwise; both give
        bit-identical tables. ``"compiled"`` insists (an error names why it cannot run);
        ``"python"`` always runs the general loop.
    trace_sink : path, optional
        Stream the trace to this Parquet file (its directory must exist) instead of keeping
        it: memory then follows the jobs alive, not the attempts ever run. The engine forgets
        each finished job; its attempts are written in row groups of ``row_group_rows``
        rows (the rows of whole jobs, in the order jobs finish); the job table and the
        summary come from exact accumulators (:class:`sim_bridge.SummaryAccumulator`).
        ``tasks`` of the result is then None. Where the compiled loop runs (no speculation,
        FIFO placement, no early-stop limit) it keeps its flat columns to the end and the
        file is written after the run (a Ctrl-C then interrupts it with no file). The
        Python loop stops early -- with ``summary["complete"]`` False and
        ``summary["stop_reason"]`` -- on SIGINT (Ctrl-C; a second one interrupts at once),
        SIGTERM, ``max_events`` or ``max_wall_seconds``; the file then holds every job
        finished so far, and is a valid Parquet file either way.
    max_wall_seconds : float, optional
        Stop the event loop after this many seconds (with ``trace_sink``: an incomplete
        result; without: :class:`SimulationStopped`).
    row_group_rows : int
        Attempts per Parquet row group of a streaming run.
    **swim_kw
        Passed to the SWIM conversion (``block_size``, ``reduce_bytes``, ``map_mb_s``, ...).

    Returns
    -------
    SimulationResult

    Examples
    --------
    >>> from sim_bridge import JobSpec
    >>> r = simulate([JobSpec("j", 0.0, [4.0, 6.0], [5.0])], nodes=2, slots=1, ideal=True,
    ...              noise=False, skew=(0, 0))
    >>> r.summary["mean_jct"], r.tasks["duration"].tolist()
    (11.0, [4.0, 6.0, 5.0])
    """
    wall0 = time.perf_counter()
    check_beta(beta)
    if not (isinstance(seed, (int, np.integer)) and seed >= 0):
        raise ValueError(f"parameter seed must be an integer >= 0, got {seed!r}")
    for name, v in (
        ("interference", interference),
        ("kappa", kappa),
        ("deadline_factor", deadline_factor),
    ):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise ValueError(f"parameter {name} must be >= 0, got {v!r}")
    if duration_dist is not None and not hasattr(duration_dist, "rvs"):
        raise ValueError(f"parameter duration_dist needs an rvs method, got {duration_dist!r}")
    if engine not in ENGINES:
        raise ValueError(f"parameter engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    spec_pol = _resolve_policy(policy, policy_params, SpeculationPolicy, "policy")
    place_pol = _resolve_policy(placement, placement_params, PlacementPolicy, "placement")
    why_not = compiled_unsupported(spec_pol, place_pol)
    if why_not is None and record_truth:
        why_not = "record_truth needs the Python loop"
    if why_not is None and interference and not ideal and duration_dist is None:
        why_not = "interference > 0 re-solves end times when tenants change (Python loop only)"
    if why_not is None and noise and tail_pressure and duration_dist is None:
        why_not = "tail_pressure > 0 makes the noise node-dependent (Python loop only)"
    if why_not is None and not compiled_available():
        why_not = "the extension sim_bridge._fifo_core is not built"
    if why_not is None and trace_sink is not None and (max_events or max_wall_seconds):
        why_not = "a streaming run that may stop early needs the Python loop"
    if engine == "compiled" and why_not is not None:
        raise ValueError(f"parameter engine='compiled': {why_not}")
    use_compiled = engine != "python" and why_not is None
    workloads = _as_workloads(
        workload, data_dir=data_dir, hours=hours, scale=scale, seed=seed, swim_kw=swim_kw
    )
    source_dir = None
    if counters == "alibaba2018" and not ideal:
        root = resolve_data_dir(data_dir)
        if (root / MACHINE_USAGE_FILE).is_file():
            source_dir = root
        else:
            log.warning(
                "counters: no file %s in data directory %s; using synthetic contention",
                MACHINE_USAGE_FILE,
                root,
            )
            counters = "synthetic"
    if cluster_seed is not None and not (
        isinstance(cluster_seed, (int, np.integer)) and cluster_seed >= 0
    ):
        raise ValueError(f"parameter cluster_seed must be an integer >= 0, got {cluster_seed!r}")
    streamed = trace_sink is not None and not use_compiled
    part = path_part_steps(nodes)
    cluster = Cluster(
        nodes,
        slots,
        seed if cluster_seed is None else int(cluster_seed),
        source=counters,
        data_dir=source_dir,
        ideal=ideal or duration_dist is not None,  # the node model is not used then
        kappa=kappa,
        bad_node_share=bad_node_share,
        extend_steps=part if streamed and counters != "markov" else None,
        rate_steps=path_rate_steps(nodes, part) if streamed and counters != "markov" else None,
    )
    sink = None
    if streamed:
        sink = TraceSink(
            cluster,
            path=trace_sink,
            record_counters=record_counters,
            record_truth=record_truth,
            beta=beta,
            row_group_rows=row_group_rows,
        )
    sim = Simulator(
        cluster,
        workloads,
        spec_pol,
        place_pol,
        seed=seed,
        duration_dist=duration_dist,
        noise=noise,
        interference=interference,
        tail_pressure=tail_pressure,
        deadline_factor=deadline_factor,
        max_events=max_events,
        skew=skew,
        record_truth=record_truth,
        keep_history=sink is None,
        on_job_done=None if sink is None else sink.add_job,
        max_wall_seconds=max_wall_seconds,
    )
    if sink is not None:
        sink.tenancy = sim._tenancy
        # the counters at each launch come from the levels recorded then (not the paths),
        # so the paths go with the live attempts' reads (Simulator._hold_paths), unless the
        # cluster is under LAUNCH_LEVELS_MIN_BYTES; without counters nothing reads a
        # launch's step later
        big = cluster.n_nodes * 4 * 8 * _BLOCK >= LAUNCH_LEVELS_MIN_BYTES
        sim._hold_live = not cluster.ideal and (big or not record_counters)
        sim._launch_levels = sink.launch_levels = record_counters and sim._hold_live
        sim._spill = sink.spill  # live jobs' launch records past 64 KiB a job go to disk
        sim._rows = sink.rows  # big live jobs' done rows: file mappings (None on tmpfs)
    n_jobs = len(sim._specs)
    show = (n_jobs > 2000) if progress is None else bool(progress)
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=n_jobs, unit="job", desc=f"simulate {spec_pol.name}")
    stop_reason = None
    restore = _stop_on_signals(sim) if sink is not None else None
    try:
        if use_compiled:
            compiled_run = run_compiled(sim, progress_bar=bar)
        else:
            sim.run(progress_bar=bar)
    except SimulationStopped as exc:
        if sink is None:
            raise
        stop_reason = exc.reason
    except KeyboardInterrupt:
        if sink is None:
            raise
        stop_reason = "KeyboardInterrupt"
    finally:
        if restore is not None:
            restore()
        if bar is not None:
            bar.close()
    if sink is not None:
        sink.finish(stop_reason is None, stop_reason)
        # the DataFrame built on access (no pandas before) from the job rows alone: the
        # result holds neither the sink nor the cluster
        jobs, tasks = partial(jobs_table, **sink.job_rows()), None
        summary = sink.summary()
        summary.update(
            complete=stop_reason is None,
            stop_reason=stop_reason,
            jobs_submitted=n_jobs,
            jobs_arrived=int(sim.n_arrived),
            trace_path=str(sink.path),
            trace_row_groups=int(sink.row_groups),
        )
    else:
        if use_compiled:
            jobs, tasks = compiled_tables(sim, compiled_run, record_counters)
        else:
            jobs, tasks = _tables(sim, record_counters)
        summary = summarize(jobs, tasks, beta=beta)
        summary["complete"] = True
        if trace_sink is not None:  # the compiled loop's flat columns, written at the end
            groups = write_trace(tasks, trace_sink, row_group_rows)
            tasks = None
            summary.update(
                stop_reason=None,
                jobs_submitted=n_jobs,
                jobs_arrived=n_jobs,
                trace_path=str(trace_sink),
                trace_row_groups=groups,
            )
    summary.update(
        events=int(sim.events),
        wall_seconds=time.perf_counter() - wall0,
        engine_seconds=float(sim.wall_seconds),
        engine_cpu_seconds=float(sim.cpu_seconds),
        engine="compiled" if use_compiled else "python",
        policy=spec_pol.name,
        policy_params=spec_pol.get_params(),
        placement=place_pol.name,
        placement_params=place_pol.get_params(),
        workloads=[w.name for w in workloads],
        workload_sources=[w.source for w in workloads],
        nodes=int(nodes),
        slots=int(slots),
        hours=hours,
        scale=float(scale),
        seed=int(seed),
        counters=counters,
    )
    _dismantle(sim)
    return SimulationResult(jobs=jobs, tasks=tasks, summary=summary)


def _dismantle(sim: Simulator) -> None:
    """Break a finished run's reference cycles once its tables are built: each done job's
    job <-> task <-> attempt cycles (:meth:`~sim_bridge._jobs.Job.release`) and the
    simulator <-> view cycle. Reference counting then frees the run when ``simulate``
    returns, instead of the first collection after :func:`~sim_bridge._gc.gc_paused`
    re-enables the collector walking the whole run (0.2-0.5 s for ~170k objects on FB-2010's
    first 0.05 h). Nothing reads the simulator after this; a job not done (a stopped
    streaming run) keeps its cycles."""
    for job in sim.jobs:
        if job.done:
            job.release()
    del sim.view


def _stop_on_signals(sim: Simulator):
    """Turn SIGINT and SIGTERM into a stop request for ``sim`` (a second SIGINT interrupts at
    once); returns the function restoring the previous handlers. Only in the main thread
    (elsewhere signals cannot be caught and nothing changes)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {}

    def handler(signum, _frame):
        name = signal.Signals(signum).name
        if signum == signal.SIGINT and sim.stop_reason is not None:
            raise KeyboardInterrupt
        sim.request_stop(name)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handler)

    def restore():
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


#: The hidden-truth columns (``truth_<name>``) a ``record_truth`` run adds, in record order.
_TRUTH = ("work", "noise", "slowdown_launch", "slowdown_median")


def _tables(sim: Simulator, record_counters: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``jobs`` and ``tasks`` tables of a finished Python-loop run, from column arrays
    (:func:`sim_bridge.trace.tasks_table` and :func:`~sim_bridge.trace.jobs_table`)."""
    atts = sim.attempts
    n = len(atts)
    # attributes read with C-level getters, column by column (no per-row tuples)
    node = np.fromiter(map(attrgetter("node"), atts), np.int64, n)
    launch = np.fromiter(map(attrgetter("launch_time"), atts), float, n)
    tasks_of = list(map(attrgetter("task"), atts))
    tjobs = list(map(attrgetter("job"), tasks_of))
    job_uid = np.fromiter(map(attrgetter("uid"), tjobs), np.int64, n)
    jobs = sim.jobs  # indexed by uid

    def per_job(name: str) -> list:
        return list(map(attrgetter(name), jobs))

    job_ids = np.array(per_job("job_id"), dtype=object)
    row_job_ids = job_ids[job_uid] if n else np.empty(0, dtype=object)
    phase = list(map(attrgetter("phase"), tasks_of))
    truth = None
    if sim.record_truth:
        t4 = np.frombuffer(sim._truth, dtype=float).reshape(n, 4)
        truth = {name: t4[:, k] for k, name in enumerate(_TRUTH)}
    counters = None
    if record_counters:
        rs = np.frombuffer(sim._rstates, dtype=float).reshape(n, 4)
        dem = None
        if len(sim._dstates):  # co-located contention: the tenants' demand at each launch
            dem = np.frombuffer(sim._dstates, dtype=float).reshape(n, 4).T
        c = sim.cluster.counters(node, launch, rs[:, 0], rs[:, 1], rs[:, 2], rs[:, 3], dem)
        counters = {name: c[name] for name in COUNTER_NAMES}
    state = np.fromiter(map(attrgetter("state"), atts), np.int64, n)
    tasks = tasks_table(
        job_id=row_job_ids,
        task_id=task_ids(row_job_ids.tolist(), phase, list(map(attrgetter("index"), tasks_of))),
        attempt=np.fromiter(map(attrgetter("index"), atts), np.int64, n),
        workload=np.array(per_job("workload"), dtype=object)[job_uid]
        if n
        else np.empty(0, dtype=object),
        node=node,
        node_names=node_names(sim.cluster.n_nodes),
        phase=phase,
        submit_time=np.array(per_job("submit_time"), np.float64)[job_uid] if n else np.empty(0),
        launch_time=launch,
        end_time=np.fromiter(map(attrgetter("end_time"), atts), float, n),
        outcome=np.where(state == A_FINISHED, "finished", "killed").astype(object),
        input_work=np.fromiter(map(attrgetter("work"), tasks_of), float, n),
        truth=truth,
        counters=counters,
    )
    n_att = np.bincount(job_uid, minlength=len(jobs))
    jobs_df = jobs_table(
        job_id=job_ids,
        workload=per_job("workload"),
        submit_time=per_job("submit_time"),
        finish_time=per_job("finish_time"),
        deadline=per_job("deadline"),
        n_tasks=per_job("n_tasks"),
        n_attempts=n_att,
    )
    return jobs_df, tasks
