"""``straggler collect``: one training trace of several workloads sharing one cluster.

As Wrangler replayed several production workloads on one 50-node cluster and snapshotted
node counters at every task launch, this runs the simulator (no predictor, speculation as
configured, ``none`` by default so that every original attempt runs to completion and its
duration is the label's ground truth) on all the workloads at once and writes the attempt
table (``tasks.parquet``, ``sim_bridge.trace``), the job table and a summary: rows, (node, workload)
pairs, straggler share per workload, jobs excluded for lack of a median.

Workloads differ by orders of magnitude in tasks per hour (an FB-2010 hour at full scale has
~50x more tasks than an FB-2009 hour), so each workload has its own data scale
(:data:`DEFAULT_SCALES`, chosen so the four contribute thousands of tasks each in an hour).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mtl._atomic import atomic_path
from pipelines._dataset import DEFAULT_BETA, DEFAULT_MIN_TASKS, label_stragglers, validate_trace
from pipelines._io import write_summary
from pipelines._sweep import SweepTask, run_sweep

if TYPE_CHECKING:
    import pandas as pd

#: Realised load (:func:`realised_load`) ``straggler collect`` targets unless ``--scale``.
DEFAULT_LOAD = 0.7

#: Per-workload data scale of ``collect()`` without scales (SWIM bytes, Alibaba instance
#: counts); these saturate a 50-node cluster, so the CLI defaults to :data:`DEFAULT_LOAD`.
DEFAULT_SCALES: dict[str, float] = {"FB2009": 10.0, "FB2010": 0.01, "ALI2017": 0.01, "SYN": 0.5}


def parse_scales(spec: str | None, workloads: list[str]) -> dict[str, float]:
    """``"2"`` (all workloads) or ``"FB2009=10,SYN=50"`` (others keep their default).

    Examples
    --------
    >>> parse_scales("FB2009=3", ["FB2009", "SYN"])
    {'FB2009': 3.0, 'SYN': 0.5}
    >>> parse_scales("2", ["SYN"])
    {'SYN': 2.0}
    """
    scales = {w: DEFAULT_SCALES.get(w, 1.0) for w in workloads}
    if not spec:
        return scales
    if "=" not in spec:
        value = _positive("--scale", spec)
        return dict.fromkeys(workloads, value)
    for item in spec.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in scales:
            raise ValueError(f"--scale names workload {name!r}, not one of {workloads}")
        scales[name] = _positive(f"--scale {name}", value)
    return scales


def offered_load(workload, nodes: int, slots: int, hours: float) -> float:
    """Nominal offered load: the workload's base work over the cluster's slot-seconds.

    Base work is in nominal seconds (a task's duration on an idle, average node); contention,
    node factors and noise make real run times longer, so a nominal load near 1 already
    saturates the cluster and queueing then dominates job completion times.

    Examples
    --------
    >>> from sim_bridge import JobSpec, Workload
    >>> w = Workload("X", [JobSpec("a", 0.0, [1800.0, 1800.0])])
    >>> offered_load(w, nodes=1, slots=2, hours=0.5)
    1.0
    """
    work = sum(float(sum(j.map_work)) + float(sum(j.reduce_work)) for j in workload.jobs)
    return work / (nodes * slots * hours * 3600.0)


def realised_load(tasks, nodes: int, slots: int, hours: float, groups=None) -> dict:
    """Realised load: the run time of every attempt over the cluster's slot-seconds.

    Where :func:`offered_load` counts base work (an idle, average node, no noise), this
    counts what the attempts really ran in a simulation: contention, slow nodes, noise and
    copies included. A realised load above 1 means the window's work needs more slot time
    than the window has, so the queue grows and queueing dominates job completion times.

    Parameters
    ----------
    tasks : DataFrame
        A simulation's attempt table (``duration`` and ``job_id`` or ``workload``).
    nodes, slots : int
    hours : float
        The arrival window the work was submitted in.
    groups : mapping job_id -> key, optional
        Sum per key (default: per ``workload`` column).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"workload": ["A", "A", "B"], "duration": [1800.0, 1800.0, 360.0]})
    >>> realised_load(t, nodes=1, slots=2, hours=0.5)
    {'A': 1.0, 'B': 0.1}
    """
    key = tasks["workload"] if groups is None else tasks["job_id"].map(groups)
    per = tasks["duration"].groupby(key.to_numpy(), sort=True).sum()
    capacity = nodes * slots * hours * 3600.0
    return {k: float(v) / capacity for k, v in per.items()}


def _realised_by_request(tasks, workloads, loaded, nodes, slots, hours) -> dict[str, float]:
    """:func:`realised_load` per requested workload name (a workload that fell back to the
    synthetic one keeps its requested name; one with no attempt gets 0)."""
    owner = {j.job_id: req for req, w in zip(workloads, loaded, strict=True) for j in w.jobs}
    got = realised_load(tasks, nodes, slots, hours, groups=owner)
    return {req: got.get(req, 0.0) for req in workloads}


def scales_for_load(
    workloads: list[str],
    target: float,
    *,
    nodes: int,
    slots: int,
    hours: float,
    seed: int = 0,
    data_dir: str | None = None,
    basis: str = "realised",
    counters: str = "synthetic",
    tolerance: float = 0.1,
    rounds: int = 6,
    cluster_seed: int | None = None,
) -> dict[str, float]:
    """Per-workload data scales giving each workload an equal share of a ``target`` load.

    ``basis="nominal"`` targets :func:`offered_load` (base work), found per workload by
    bisection on a log scale to within 2% of its share ``target / len(workloads)``.
    ``basis="realised"`` (the default) targets :func:`realised_load`: it starts from the
    nominal scales, runs the workloads together without speculation (the compiled event
    loop: well under a second for a 50-node hour) and corrects each workload's nominal
    target by its measured realised/nominal ratio, until the total is within ``tolerance``
    of ``target`` and every workload within twice that of its share; it returns the scales
    of the best of at most ``rounds`` simulations, and a warning gives the loads when even
    that one is off. Contention, node
    factors and the heavy-tailed noise make tasks run about twice their base work, so a
    nominal 0.7 is a saturated cluster. Each calibration run (:func:`calibration_run`) is a
    sweep task (:mod:`pipelines._sweep`): inside a :func:`pipelines._sweep.sweep_session` it
    runs on the session's engine, and so do the workloads' independent scale searches
    (:func:`nominal_scales`). ``cluster_seed`` (default ``seed``) seeds the cluster.

    Examples
    --------
    >>> s = scales_for_load(["SYN"], 0.5, nodes=10, slots=2, hours=0.5, basis="nominal")
    >>> import sim_bridge
    >>> w = sim_bridge.load_workload("SYN", hours=0.5, scale=s["SYN"], seed=0)
    >>> abs(offered_load(w, 10, 2, 0.5) / 0.5 - 1) < 0.05
    True
    """
    if not (isinstance(target, (int, float)) and target > 0 and math.isfinite(target)):
        raise ValueError(f"--load must be a positive number, got {target!r}")
    if basis not in ("realised", "nominal"):
        raise ValueError(f"parameter basis must be 'realised' or 'nominal', got {basis!r}")
    share = target / len(workloads)
    nominal = dict.fromkeys(workloads, share)
    where = (nodes, slots, hours, seed, data_dir)
    scales = nominal_scales(
        [(k, w, share) for k, w in enumerate(workloads)], *where, warn=basis == "nominal"
    )
    if basis == "nominal":
        return scales
    best: tuple[float, dict[str, float], dict[str, float]] | None = None
    for r in range(rounds):
        # each round needs the one before: a sweep of one task (on the session's engine)
        key = f"calibrate/seed={seed}/round={r}"
        task = SweepTask(
            key,
            calibration_run,
            (workloads, dict(scales)),
            dict(
                nodes=nodes,
                slots=slots,
                hours=hours,
                seed=seed,
                cluster_seed=cluster_seed,
                data_dir=data_dir,
                counters=counters,
            ),
        )
        real = run_sweep([task], desc="calibrate", progress=False)[key]
        # the total within tolerance, each workload within twice the tolerance of its share
        worst = max(
            abs(sum(real.values()) / target - 1),
            max(abs(v / share - 1) for v in real.values()) / 2,
        )
        if best is None or worst < best[0]:
            best = (worst, dict(scales), real)
        if worst <= tolerance:
            break
        # the workloads share the cluster (contention couples them) and task counts are a
        # step function of the scale: later corrections are damped against oscillation
        damp = 1.0 if r == 0 else 0.5
        moved = []
        for k, w in enumerate(workloads):
            if abs(real[w] / share - 1) > tolerance and real[w] > 0:
                nominal[w] *= (share / real[w]) ** damp
                moved.append((k, w, nominal[w]))
        scales.update(nominal_scales(moved, *where, warn=False))
    assert best is not None
    worst, scales, real = best
    if worst > tolerance:
        import warnings

        warnings.warn(
            f"collect --load: after {rounds} calibration runs the realised load is "
            f"{sum(real.values()):.3f} for a target of {target:.3f} ("
            + ", ".join(f"{w} {v:.3f}" for w, v in real.items())
            + f"; each should be within {2 * tolerance:.0%} of {share:.3f}): few, long tasks "
            "make the load a step function of the scale",
            stacklevel=2,
        )
    return scales


def calibration_run(
    workloads: list[str],
    scales: dict[str, float],
    *,
    nodes: int,
    slots: int,
    hours: float,
    seed: int,
    cluster_seed: int | None = None,
    data_dir: str | None = None,
    counters: str = "synthetic",
) -> dict[str, float]:
    """One calibration run of :func:`scales_for_load`: the realised load per workload.

    The workloads at ``scales`` run together without speculation and without counter
    snapshots (a sweep task: module level, picklable arguments, the same result anywhere).

    Examples
    --------
    >>> real = calibration_run(["SYN"], {"SYN": 0.05}, nodes=3, slots=2, hours=0.1, seed=0)
    >>> list(real), real["SYN"] > 0
    (['SYN'], True)
    """
    import sim_bridge

    loaded = [
        sim_bridge.load_workload(w, data_dir, hours=hours, scale=scales[w], seed=seed + k)
        for k, w in enumerate(workloads)
    ]
    result = sim_bridge.simulate(
        loaded,
        "none",
        sim_bridge.DEFAULT_PLACEMENT,
        nodes=nodes,
        slots=slots,
        seed=seed,
        cluster_seed=cluster_seed,
        data_dir=data_dir,
        counters=counters,
        record_counters=False,
        progress=False,
    )
    return _realised_by_request(result.tasks, workloads, loaded, nodes, slots, hours)


def nominal_scales(
    requests: list[tuple[int, str, float]],
    nodes: int,
    slots: int,
    hours: float,
    seed: int,
    data_dir: str | None,
    *,
    warn: bool,
) -> dict[str, float]:
    """The data scale of each ``(k, workload, nominal load)`` request, one sweep task each.

    The searches are independent (workload ``k`` draws with ``seed + k``), so on a Dask
    engine they run side by side; their warnings come back and are raised here.

    Examples
    --------
    >>> got = nominal_scales([(0, "SYN", 0.5)], 10, 2, 0.5, 0, None, warn=False)
    >>> got == {"SYN": _scale_for_nominal("SYN", 0, 0.5, 10, 2, 0.5, 0, None)}
    True
    """
    import warnings

    tasks = [
        SweepTask(
            f"nominal/seed={seed}/{name}/load={share!r}",
            nominal_scale_task,
            (name, k, share, nodes, slots, hours, seed, data_dir),
            {"warn": warn},
        )
        for k, name, share in requests
    ]
    got = run_sweep(tasks, desc="calibrate", progress=False)
    out = {}
    for (_, name, _), task in zip(requests, tasks, strict=True):
        out[name], messages = got[task.key]
        for message in messages:
            warnings.warn(message, stacklevel=3)
    return out


def nominal_scale_task(*args, warn: bool = True) -> tuple[float, list[str]]:
    """``_scale_for_nominal(*args, warn=warn)`` and the messages of its warnings (a sweep
    task: a Dask worker's warnings would not reach the client)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scale = _scale_for_nominal(*args, warn=warn)
    return scale, [str(w.message) for w in caught]


def _scale_for_nominal(
    name: str,
    k: int,
    share: float,
    nodes: int,
    slots: int,
    hours: float,
    seed: int,
    data_dir,
    *,
    warn: bool = True,
) -> float:
    """The data scale at which workload ``name`` has nominal load ``share`` (bisection)."""
    import sim_bridge

    def load_at(scale: float) -> float:
        try:
            w = sim_bridge.load_workload(name, data_dir, hours=hours, scale=scale, seed=seed + k)
        except ValueError as exc:  # so small a scale keeps no job (Alibaba): no load
            if "no job is submitted" not in str(exc):
                raise
            return 0.0
        return offered_load(w, nodes, slots, hours)

    lo, hi = 1e-6, 1e6
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        value = load_at(mid)
        if abs(value / share - 1) <= 0.02:
            break
        lo, hi = (mid, hi) if value < share else (lo, mid)
    if warn and abs(value / share - 1) > 0.02:
        import warnings

        warnings.warn(
            f"collect --load: {name} reaches nominal load {value:.2f}, not its share "
            f"{share:.2f}, at any data scale (at scale {mid:.3g}: e.g. Alibaba tasks keep "
            "at least one instance of their real duration); use more --nodes or fewer --hours",
            stacklevel=3,
        )
    return float(f"{mid:.4g}")


def _positive(what: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not v > 0 or v == float("inf"):
        raise ValueError(f"{what} must be a positive number, got {text!r}")
    return v


def check_workloads(workloads: list[str]) -> None:
    """Raise ``ValueError`` naming ``--workloads`` if the list is empty, unknown or repeated."""
    import sim_bridge

    if not workloads:
        raise ValueError("--workloads is empty")
    unknown = [w for w in workloads if w not in sim_bridge.WORKLOAD_NAMES]
    if unknown:
        raise ValueError(
            f"--workloads: unknown {unknown}; choose from {list(sim_bridge.WORKLOAD_NAMES)}"
        )
    if len(set(workloads)) != len(workloads):
        raise ValueError(f"--workloads lists a workload twice: {workloads}")


@dataclass
class CellRun:
    """One collect simulation (a *cell*: a seed and a target load or given scales).

    Attributes
    ----------
    tasks, jobs : pandas.DataFrame
        The attempt and job tables (:mod:`sim_bridge.trace`).
    simulation : dict
        The simulation summary's scalar entries.
    sources : dict
        Requested workload -> the file (or ``"synthetic"``) it was loaded from.
    synthetic_fallback : list of str
        Requested workloads that had no data file and ran as the synthetic one.
    scales, offered_load, realised_load : dict
        Per requested workload: the data scale, :func:`offered_load`, :func:`realised_load`.
    warnings : list of str
        Warnings raised while calibrating or simulating (a Dask worker's would be lost).
    """

    tasks: pd.DataFrame
    jobs: pd.DataFrame
    simulation: dict[str, Any]
    sources: dict[str, str]
    synthetic_fallback: list[str]
    scales: dict[str, float]
    offered_load: dict[str, float]
    realised_load: dict[str, float]
    warnings: list[str] = field(default_factory=list)


def simulate_cell(
    workloads: list[str],
    scales: dict[str, float],
    *,
    nodes: int = 50,
    slots: int = 2,
    hours: float = 1.0,
    seed: int = 0,
    cluster_seed: int | None = None,
    policy: str = "none",
    data_dir: str | None = None,
    counters: str = "synthetic",
    beta: float = DEFAULT_BETA,
    progress: bool | None = None,
) -> CellRun:
    """Simulate ``workloads`` at ``scales`` on one cluster (a sweep task of ``collect``).

    Workload ``k`` draws with ``seed + k``; the run with ``seed``; the cluster with
    ``cluster_seed`` (default ``seed``).

    Examples
    --------
    >>> run = simulate_cell(["SYN"], {"SYN": 0.05}, nodes=3, hours=0.1, seed=1)
    >>> run.sources, len(run.tasks) > 0, run.realised_load["SYN"] > 0
    ({'SYN': 'synthetic'}, True, True)
    """
    import sim_bridge

    loaded = [
        sim_bridge.load_workload(w, data_dir, hours=hours, scale=scales[w], seed=seed + k)
        for k, w in enumerate(workloads)
    ]
    result = sim_bridge.simulate(
        loaded,
        policy,
        nodes=nodes,
        slots=slots,
        seed=seed,
        cluster_seed=cluster_seed,
        data_dir=data_dir,
        counters=counters,
        beta=beta,
        progress=progress,
    )
    pairs = list(zip(workloads, loaded, strict=True))
    return CellRun(
        tasks=result.tasks,
        jobs=result.jobs,
        simulation={k: v for k, v in result.summary.items() if not isinstance(v, (dict, list))},
        sources={req: w.source for req, w in pairs},
        synthetic_fallback=[req for req, w in pairs if req != w.name],
        scales=dict(scales),
        offered_load={req: offered_load(w, nodes, slots, hours) for req, w in pairs},
        realised_load=_realised_by_request(result.tasks, workloads, loaded, nodes, slots, hours),
    )


def warn_if_saturated(realised: dict[str, float], nodes: int, slots: int, what: str = "") -> None:
    """Warn when a realised load (summed over workloads) is above 1."""
    if sum(realised.values()) > 1.0:
        import warnings

        warnings.warn(
            f"collect{what}: realised load {sum(realised.values()):.2f} > 1 ({nodes} nodes x "
            f"{slots} slots): the cluster saturates and queueing dominates job completion "
            "times; use --load (e.g. 0.7) or smaller --scale values",
            stacklevel=3,
        )


def write_tables(out: Path, tasks: pd.DataFrame, jobs: pd.DataFrame) -> None:
    """Write ``tasks.parquet`` and ``jobs.parquet`` into ``out`` (each atomically)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, table in (("tasks", tasks), ("jobs", jobs)):
        with atomic_path(out / f"{name}.parquet") as tmp:
            table.to_parquet(tmp, index=False)


def collect(
    out: str | Path,
    workloads: list[str],
    nodes: int = 50,
    slots: int = 2,
    hours: float = 1.0,
    seed: int = 0,
    scales: dict[str, float] | None = None,
    policy: str = "none",
    data_dir: str | None = None,
    counters: str = "synthetic",
    beta: float = DEFAULT_BETA,
    min_tasks: int = DEFAULT_MIN_TASKS,
    cluster_seed: int | None = None,
) -> dict:
    """Simulate ``workloads`` on one cluster and write the trace and its summary to ``out``.

    The simulation (:func:`simulate_cell`) is a sweep task: inside a
    :func:`pipelines._sweep.sweep_session` it runs on the session's engine, else here.
    ``cluster_seed`` (default ``seed``) seeds the cluster.

    Returns
    -------
    dict
        The summary written to ``out/summary.json``.
    """
    check_workloads(workloads)
    scales = scales or {w: DEFAULT_SCALES.get(w, 1.0) for w in workloads}
    t0 = time.perf_counter()
    key = f"seed={seed}"
    task = SweepTask(
        key,
        simulate_cell,
        (workloads, scales),
        dict(
            nodes=nodes,
            slots=slots,
            hours=hours,
            seed=seed,
            cluster_seed=cluster_seed,
            policy=policy,
            data_dir=data_dir,
            counters=counters,
            beta=beta,
        ),
    )
    run: CellRun = run_sweep([task], desc="collect", progress=False)[key]
    warn_if_saturated(run.realised_load, nodes, slots)
    out = Path(out)
    write_tables(out, run.tasks, run.jobs)
    labelled = label_stragglers(validate_trace(run.tasks), beta, min_tasks)
    data = labelled.summary()
    summary = {
        "command": "collect",
        "workloads": workloads,
        "sources": run.sources,
        "synthetic_fallback": run.synthetic_fallback,
        "scales": scales,
        "offered_load": run.offered_load,
        "realised_load": run.realised_load,
        "nodes": nodes,
        "slots": slots,
        "hours": hours,
        "seed": seed,
        "policy": policy,
        "counters_source": counters,
        "attempt_rows": len(run.tasks),
        **data,
        "simulation": run.simulation,
        "wall_seconds": time.perf_counter() - t0,
    }
    write_summary(out, summary)
    return summary


# ------------------------------------------------------------------ several cells, one trace
def cell_key(seed: int, load: float | None, workload: str | None = None) -> str:
    """The identity of a cell: ``"seed=S/load=L"`` (``"seed=S"`` for given scales), then
    ``"/W"`` for a cell of one workload (``layout="separate"``).

    It names the cell's sweep task and prefixes its job and task ids in a multi-cell trace.

    Examples
    --------
    >>> cell_key(1, 0.7), cell_key(0, None), cell_key(0, 0.7, "FB2010")
    ('seed=1/load=0.7', 'seed=0', 'seed=0/load=0.7/FB2010')
    """
    key = f"seed={int(seed)}" if load is None else f"seed={int(seed)}/load={float(load):g}"
    return key if workload is None else f"{key}/{workload}"


def workload_groups(config) -> list[tuple[str, ...]]:
    """The workloads of each cell: all of them together (``layout="shared"``), or one each
    (``"separate"``).

    Examples
    --------
    >>> from pipelines._collect_config import CollectConfig
    >>> workload_groups(CollectConfig(out="o", workloads=["FB2009", "SYN"]))
    [('FB2009', 'SYN')]
    >>> workload_groups(CollectConfig(out="o", workloads=["FB2009", "SYN"], layout="separate"))
    [('FB2009',), ('SYN',)]
    """
    if config.layout == "shared":
        return [tuple(config.workloads)]
    if config.layout == "separate":
        return [(w,) for w in config.workloads]
    raise ValueError(f"--layout must be 'shared' or 'separate', got {config.layout!r}")


def plan_cells(config) -> list[tuple[int, float | None]]:
    """The (seed, load) cells of a :class:`pipelines.CollectConfig`, seeds outer.

    ``seeds`` default to ``[seed]``; ``loads`` to ``[load]`` (0.7 when neither ``load`` nor
    ``scales`` is given); with ``scales`` a cell's load is None.

    Raises
    ------
    ValueError
        ``loads`` with ``load`` or ``scales``, ``load`` with ``scales``, a bad seed or load.

    Examples
    --------
    >>> from pipelines._collect_config import CollectConfig
    >>> plan_cells(CollectConfig(out="o", seeds=[0, 1], loads=[0.5, 0.7]))
    [(0, 0.5), (0, 0.7), (1, 0.5), (1, 0.7)]
    >>> plan_cells(CollectConfig(out="o", seed=4, scales={"SYN": 1.0}))
    [(4, None)]
    """
    if config.loads is not None and config.load is not None:
        raise ValueError(f"give --load or --loads, not both (--load {config.load})")
    if config.loads is not None and config.scales is not None:
        raise ValueError("give --loads or --scale, not both")
    if config.load is not None and config.scales is not None:
        raise ValueError("give --load or --scale, not both")
    seeds = [config.seed] if config.seeds is None else list(config.seeds)
    if not seeds or any(not (isinstance(s, int) and s >= 0) for s in seeds):
        raise ValueError(f"--seeds must be integers >= 0, got {config.seeds!r}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds lists a seed twice: {seeds}")
    if config.scales is not None:
        loads: list[float | None] = [None]
    elif config.loads is not None:
        loads = list(config.loads)
        bad = [v for v in loads if not (isinstance(v, (int, float)) and 0 < v < math.inf)]
        if not loads or bad:
            raise ValueError(f"--loads must be finite numbers > 0, got {config.loads!r}")
        if len(set(loads)) != len(loads):
            raise ValueError(f"--loads lists a load twice: {loads}")
    else:
        loads = [DEFAULT_LOAD if config.load is None else config.load]
    return [(s, v) for s in seeds for v in loads]


def collect_cell(
    workloads: list[str],
    seed: int,
    load: float | None,
    *,
    scales: dict[str, float] | None,
    cluster_seed: int,
    nodes: int,
    slots: int,
    hours: float,
    load_basis: str = "realised",
    policy: str = "none",
    data_dir: str | None = None,
    counters: str = "synthetic",
    beta: float = DEFAULT_BETA,
) -> CellRun:
    """One cell of a multi-cell collect (a sweep task): calibrate the scales for ``load``
    (unless ``scales``), then simulate; the warnings are kept in :attr:`CellRun.warnings`.

    With ``cluster_seed == seed`` it is exactly ``collect --seed S --load L``'s run.
    """
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if scales is None:
            scales = scales_for_load(
                workloads,
                load,
                nodes=nodes,
                slots=slots,
                hours=hours,
                seed=seed,
                data_dir=data_dir,
                basis=load_basis,
                counters=counters,
                cluster_seed=cluster_seed,
            )
        run = simulate_cell(
            workloads,
            scales,
            nodes=nodes,
            slots=slots,
            hours=hours,
            seed=seed,
            cluster_seed=cluster_seed,
            policy=policy,
            data_dir=data_dir,
            counters=counters,
            beta=beta,
            progress=False,
        )
    run.warnings = [str(w.message) for w in caught]
    return run


def _prefixed(column: pd.Series, prefix: str) -> pd.Series:
    return (prefix + column.astype(str)).astype(column.dtype)


def combine_cells(runs: dict[tuple, CellRun]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tasks and jobs tables of several cells as one trace.

    ``runs`` is keyed by cell: ``(seed, load)``, or ``(seed, load, workload)`` for the
    cells of one workload (``layout="separate"``).

    Each cell's rows keep their own clock (the cells are independent runs of the same window
    on the same cluster), gain ``seed`` (int) and ``load`` (float, NaN for given scales)
    columns, and their ``job_id`` and ``task_id`` are prefixed with :func:`cell_key` and a
    ``/``: ids stay unique across cells, so the per-job straggler median never mixes cells,
    and a task id still starts with its job id. Cells in the order given.

    Examples
    --------
    >>> a = simulate_cell(["SYN"], {"SYN": 0.05}, nodes=3, hours=0.1, seed=1)
    >>> tasks, jobs = combine_cells({(1, 0.5): a, (2, 0.5): a})
    >>> len(tasks) == 2 * len(a.tasks), tasks["job_id"].iloc[0].startswith("seed=1/load=0.5/")
    (True, True)
    >>> sorted(tasks["seed"].unique().tolist())
    [1, 2]
    >>> bool(tasks.duplicated(["job_id", "task_id", "attempt"]).any())
    False
    """
    import numpy as np
    import pandas as pd

    frames: dict[str, list[pd.DataFrame]] = {"tasks": [], "jobs": []}
    for cell, run in runs.items():
        seed, load = cell[0], cell[1]
        prefix = cell_key(*cell) + "/"
        for name, table in (("tasks", run.tasks), ("jobs", run.jobs)):
            t = table.copy()
            for col in ("job_id", "task_id"):
                if col in t.columns:
                    t[col] = _prefixed(t[col], prefix)
            t["seed"] = np.int64(seed)
            t["load"] = np.float64(np.nan if load is None else load)
            frames[name].append(t)
    tasks = pd.concat(frames["tasks"], ignore_index=True)
    jobs = pd.concat(frames["jobs"], ignore_index=True)
    return tasks, jobs


def _mean_by_workload(dicts: list[dict[str, float]]) -> dict[str, float]:
    """Mean of each key over the dicts that have it (cells of one workload have only it)."""
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    return {k: float(sum(d[k] for d in dicts if k in d) / sum(k in d for d in dicts)) for k in keys}


def collect_cells(config, *, engine=None, overwrite: bool = False) -> dict:
    """``straggler collect`` over every (seed, load) cell, on ``engine``.

    Without ``config.seeds`` and ``config.loads`` this is one cell: exactly
    :func:`pipelines.collect_trace` (same files, bit for bit), its calibration and
    simulation run as sweep tasks on ``engine``. Otherwise every cell of
    :func:`plan_cells` is one sweep task (:func:`collect_cell`: calibration, then the
    simulation), run in this process, on a local Dask cluster (``Engine(workers=N)``) or on
    an existing one; the cells run with their own seed on the cluster of ``config.seed``
    (the same machines in every cell, so node names mean the same node), the client
    combines them (:func:`combine_cells`) and writes ``tasks.parquet``, ``jobs.parquet``
    and ``summary.json`` (its ``cells`` list each cell's scales and loads; ``scales``,
    ``sources`` are the first cell's, ``offered_load``/``realised_load`` the means over
    cells). The result is the same whatever the engine. Nothing is written before every
    cell finished, inside :func:`pipelines._api.claimed_output` (an interrupted run leaves
    no output set that looks complete).

    Parameters
    ----------
    config : pipelines.CollectConfig
    engine : pipelines._sweep.Engine, optional
        Default: ``$STRAGGLER_DASK_SCHEDULER`` when set, else this process.
    overwrite : bool
        Replace an earlier run's results in ``config.out``.

    Returns
    -------
    dict
        The summary written to ``config.out/summary.json``.
    """
    import warnings

    from pipelines._api import claimed_output, collect_one
    from pipelines._sweep import Engine, require_dask, sweep_session

    if engine is None:
        engine = Engine.resolve()
    if engine.uses_dask:
        require_dask()
    groups = workload_groups(config) if config.source != "flowbench" else []
    if config.source == "flowbench" or (
        config.seeds is None and config.loads is None and len(groups) == 1
    ):
        with sweep_session(engine):
            return collect_one(config, overwrite=overwrite)
    check_workloads(config.workloads)
    separate = len(groups) > 1  # one workload: the same run either way
    cells = [
        (seed, load, *((group[0],) if separate else ()))
        for seed, load in plan_cells(config)
        for group in groups
    ]
    with claimed_output(config.out, overwrite=overwrite, command="collect"):
        t0 = time.perf_counter()
        tasks = [
            SweepTask(
                cell_key(*cell),
                collect_cell,
                (list(cell[2:]) if separate else list(config.workloads), cell[0], cell[1]),
                dict(
                    scales=(
                        {w: config.scales[w] for w in cell[2:]}
                        if separate and config.scales is not None
                        else config.scales
                    ),
                    cluster_seed=config.seed,
                    nodes=config.nodes,
                    slots=config.slots,
                    hours=config.hours,
                    load_basis=config.load_basis,
                    policy=config.policy,
                    data_dir=config.data_dir,
                    counters=config.counters,
                    beta=config.beta,
                ),
            )
            for cell in cells
        ]
        got = run_sweep(tasks, engine, desc="collect", unit="cell")
        runs = {cell: got[cell_key(*cell)] for cell in cells}
        for cell, run in runs.items():
            for message in run.warnings:
                warnings.warn(f"cell {cell_key(*cell)}: {message}", stacklevel=2)
            warn_if_saturated(run.realised_load, config.nodes, config.slots, f" {cell_key(*cell)}")
        table, jobs = combine_cells(runs)
        labelled = label_stragglers(validate_trace(table), config.beta, DEFAULT_MIN_TASKS)
        # a workload's scale and source: its first cell's (every workload is in the first
        # (seed, load)'s cells, together or one each)
        scales: dict[str, float] = {}
        sources: dict[str, str] = {}
        for run in runs.values():
            for w, v in run.scales.items():
                scales.setdefault(w, v)
            for w, v in run.sources.items():
                sources.setdefault(w, v)
        fallback = {w for run in runs.values() for w in run.synthetic_fallback}
        summary = {
            "command": "collect",
            "workloads": list(config.workloads),
            "layout": config.layout,
            "cells": [
                {
                    "cell": cell_key(*cell),
                    "seed": cell[0],
                    "load": cell[1],
                    "workloads": list(cell[2:]) if separate else list(config.workloads),
                    "scales": run.scales,
                    "sources": run.sources,
                    "synthetic_fallback": run.synthetic_fallback,
                    "offered_load": run.offered_load,
                    "realised_load": run.realised_load,
                    "attempt_rows": len(run.tasks),
                    "simulation": run.simulation,
                }
                for cell, run in runs.items()
            ],
            "seeds": list(dict.fromkeys(c[0] for c in cells)),
            "loads": [v for v in dict.fromkeys(c[1] for c in cells) if v is not None],
            "sources": sources,
            "synthetic_fallback": [w for w in config.workloads if w in fallback],
            "scales": scales,
            "offered_load": _mean_by_workload([r.offered_load for r in runs.values()]),
            "realised_load": _mean_by_workload([r.realised_load for r in runs.values()]),
            "nodes": config.nodes,
            "slots": config.slots,
            "hours": config.hours,
            "seed": config.seed,
            "policy": config.policy,
            "counters_source": config.counters,
            "attempt_rows": len(table),
            **labelled.summary(),
            "engine": engine.describe(),
            "wall_seconds": time.perf_counter() - t0,
        }
        out = Path(config.out)
        write_tables(out, table, jobs)
        write_summary(out, summary)
    return summary
