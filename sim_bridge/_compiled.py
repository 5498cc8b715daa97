"""The compiled path: runs without speculation under FIFO placement, on flat arrays.

``simulate(engine="auto")`` takes this path when no policy hook can act -- the speculation
policy overrides no hook and has no scan interval (``none``) and placement is ``fifo`` --
and the extension ``sim_bridge._fifo_core`` was built. It prepares the same inputs the
Python engine draws (the :class:`~sim_bridge._engine.Simulator` constructor does that for
both paths), runs the compiled loop and builds the result tables from its columns. The two
paths give bit-identical tables; ``engine="python"`` forces the general loop.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from sim_bridge._cluster import COUNTER_NAMES
from sim_bridge._engine import Simulator
from sim_bridge._progress_bar import advance_bar
from sim_bridge.policies._placement import FIFOPlacement
from sim_bridge.policies.base import SpeculationPolicy
from sim_bridge.trace import jobs_table, node_names, task_ids, tasks_table

if TYPE_CHECKING:
    import pandas as pd

try:  # built by setup.py; optional (no C compiler: the Python engine runs everything)
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._fifo_core import FifoCore
except ImportError:  # pragma: no cover - exercised only on installs without the extension
    FifoCore = None

__all__ = [
    "ENGINES",
    "CompiledRun",
    "compiled_available",
    "compiled_tables",
    "compiled_unsupported",
    "run_compiled",
]

ENGINES = ("auto", "compiled", "python")
_HOOKS = ("on_job_arrival", "on_attempt_launched", "on_attempt_finished", "on_tick", "on_wake")
_CHUNK = 1 << 16  # events between progress-bar updates


def compiled_available() -> bool:
    """Whether the compiled loop was built with this install.

    Examples
    --------
    >>> isinstance(compiled_available(), bool)
    True
    """
    return FifoCore is not None


def compiled_unsupported(speculation, placement) -> str | None:
    """Why the compiled loop cannot run this pair of policies (None when it can).

    Examples
    --------
    >>> from sim_bridge.policies import get_policy
    >>> compiled_unsupported(get_policy("none"), get_policy("fifo")) is None
    True
    >>> compiled_unsupported(get_policy("late"), get_policy("fifo"))
    "speculation policy 'late' overrides on_attempt_finished"
    """
    if type(placement) is not FIFOPlacement:
        return f"placement {placement.name!r} is not 'fifo'"
    kind = type(speculation)
    for hook in _HOOKS:
        if getattr(kind, hook) is not getattr(SpeculationPolicy, hook):
            return f"speculation policy {speculation.name!r} overrides {hook}"
    if speculation.interval is not None:
        return f"speculation policy {speculation.name!r} scans every {speculation.interval} s"
    return None


@dataclass
class CompiledRun:
    """A finished compiled run: the loop (its columns) and the task layout it ran on."""

    core: Any
    task_start: np.ndarray
    task_job: np.ndarray
    n_map: np.ndarray
    n_red: np.ndarray
    #: each task's skewed base work (its ``input_work``)
    task_work: np.ndarray


def run_compiled(sim: Simulator, progress_bar=None) -> CompiledRun:
    """Run ``sim``'s model on the compiled loop; ``sim`` keeps its inputs, not the result.

    Sets ``sim.events``, ``sim.now``, ``sim.wall_seconds`` and ``sim.cpu_seconds`` as
    :meth:`Simulator.run` does; :func:`compiled_tables` turns the returned run into the
    result tables.
    """
    if FifoCore is None:
        raise RuntimeError("sim_bridge._fifo_core is not built: reinstall with a C compiler")
    specs = sim._specs
    n_jobs = len(specs)
    cluster = sim.cluster
    # the profile pair of each (workload, phases), registered in first-arrival order as the
    # Python loop does
    pid_of: dict = {}
    jobs = list(map(itemgetter(0), specs))
    wls = list(map(itemgetter(1), specs))
    keys = list(zip(map(id, wls), map(attrgetter("phases"), jobs), strict=True))
    for spec, w, key in zip(jobs, wls, keys, strict=True):
        if key not in pid_of:
            pid_of[key] = (
                cluster.profile_id(w.profile(spec.phases[0])),
                cluster.profile_id(w.profile(spec.phases[1])),
            )
    pair = np.array(list(pid_of.values()), np.int64).reshape(-1, 2)
    code = dict(zip(pid_of, range(len(pid_of)), strict=True))
    pids = pair[np.fromiter(map(code.__getitem__, keys), np.int64, n_jobs)]
    alpha = np.fromiter(map(attrgetter("tail_alpha"), wls), float, n_jobs)
    draws = sim._draws
    n_map, n_red = draws.n_map, draws.n_red
    if sim._tenancy:
        raise ValueError("the compiled loop does not re-solve end times: interference must be 0")
    if sim.noise and sim.tail_pressure and sim.duration_dist is None:
        raise ValueError("the compiled loop draws no node-dependent noise: tail_pressure must be 0")
    # the skewed base work of each task times its residual noise: the same product the Python
    # loop forms at launch (sim_bridge.world), so the loop itself draws no noise
    u_all, task_work, m_all = draws.whole()
    work = task_work * m_all if sim.duration_dist is None else task_work
    task_start = draws.task_start
    task_job = np.repeat(np.arange(n_jobs, dtype=np.int64), n_map + n_red)
    core = FifoCore(
        cluster,
        np.asarray(sim._arrival_times, dtype=float),
        task_start,
        task_job,
        n_map,
        n_red,
        alpha,
        np.ascontiguousarray(pids[:, 0]),
        np.ascontiguousarray(pids[:, 1]),
        work,
        np.ascontiguousarray(u_all, dtype=float),
        noise=False,
        dist_mode=sim.duration_dist is not None,
        interference=0.0,
        tail_pressure=0.0,
    )
    wall0, cpu0 = time.perf_counter(), time.process_time()
    limit = sim.max_events
    finished_before = 0
    while not core.done:
        stop = core.events + _CHUNK
        if limit is not None:
            stop = min(stop, max(limit, 1))
        core.run(stop)
        if progress_bar is not None:
            finished_before = advance_bar(
                progress_bar, core.jobs_finished, finished_before, core.now
            )
        if limit is not None and core.events >= limit:
            break
    if limit is not None and core.events and core.events >= limit:
        # as the Python loop: the event that reaches the limit stops the run, the last too
        raise RuntimeError(f"simulation stopped after max_events={limit} events")
    sim.wall_seconds = time.perf_counter() - wall0
    sim.cpu_seconds = time.process_time() - cpu0
    sim.events = int(core.events)
    sim.now = float(core.now)
    return CompiledRun(core, task_start, task_job, n_map, n_red, task_work)


def compiled_tables(
    sim: Simulator, run: CompiledRun, record_counters: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``jobs`` and ``tasks`` tables of a compiled run (:func:`sim_bridge.trace.tasks_table`
    and :func:`~sim_bridge.trace.jobs_table`, as the Python loop's)."""
    specs = sim._specs
    core = run.core
    n = len(core.att_task)
    task = core.att_task
    node = core.att_node
    launch = core.att_launch
    job_uid = run.task_job[task]
    index = task - run.task_start[job_uid]
    stage1 = index >= run.n_map[job_uid]
    jobs = list(map(itemgetter(0), specs))
    n_jobs = len(jobs)
    job_ids = np.array(list(map(attrgetter("job_id"), jobs)), dtype=object)
    workloads = np.array(list(map(attrgetter("workload"), jobs)), dtype=object)
    submit = np.fromiter(map(attrgetter("submit_time"), jobs), float, n_jobs)
    phases = list(map(attrgetter("phases"), jobs))
    ph0 = np.array(list(map(itemgetter(0), phases)), dtype=object)
    ph1 = np.array(list(map(itemgetter(1), phases)), dtype=object)
    phase = np.where(stage1, ph1[job_uid], ph0[job_uid]).astype(object)
    row_job_ids = job_ids[job_uid]
    counters = None
    if record_counters:
        rs = core.att_rstate
        c = sim.cluster.counters(node, launch, rs[:, 0], rs[:, 1], rs[:, 2], rs[:, 3])
        counters = {name: c[name] for name in COUNTER_NAMES}
    tasks = tasks_table(
        job_id=row_job_ids,
        task_id=task_ids(row_job_ids.tolist(), phase.tolist(), index.tolist()),
        attempt=np.zeros(n, np.int64),
        workload=workloads[job_uid],
        node=node,
        node_names=node_names(sim.cluster.n_nodes),
        phase=phase,
        submit_time=submit[job_uid] if n else np.empty(0),
        launch_time=launch,
        end_time=core.att_end,
        outcome=np.full(n, "finished", dtype=object),
        input_work=run.task_work[task] if n else np.empty(0),
        counters=counters,
    )
    deadline = submit + sim.deadline_factor * np.fromiter(
        map(attrgetter("_critical_path"), jobs), float, n_jobs
    )
    given = [(i, float(s.deadline)) for i, s in enumerate(jobs) if s.deadline is not None]
    if given:
        at, value = zip(*given, strict=True)
        deadline[list(at)] = value
    jobs_df = jobs_table(
        job_id=job_ids,
        workload=workloads,
        submit_time=submit,
        finish_time=np.asarray(core.job_finish, float),
        deadline=deadline,
        n_tasks=run.n_map + run.n_red,
        n_attempts=np.bincount(job_uid, minlength=len(specs)),
    )
    return jobs_df, tasks
