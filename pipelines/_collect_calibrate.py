"""The data scales of ``straggler collect --load``: per-workload bisection on the nominal
load, corrected by calibration runs to the realised load (part of :mod:`pipelines._collect`)."""

from __future__ import annotations

import math

from pipelines._collect_load import offered_load, realised_by_request
from pipelines._sweep import SweepTask, run_sweep


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

        why = "few, long tasks make the load a step function of the scale"
        # a workload above its share at the least scale it has (FB-2010 on a small cluster:
        # every job keeps a task): no scale fixes it, the cluster must grow or it must go
        floors = [
            w
            for k, w in enumerate(workloads)
            if real[w] > share * (1 + 2 * tolerance)
            and _scale_at_floor(w, k, scales[w], hours, seed, data_dir)
        ]
        if floors:
            why = "; ".join(
                f"{w} runs {real[w]:.3f} even at its least data scale ({scales[w]:g}): its "
                f"jobs in the first {hours:g} hours keep a task each, so no scale lowers it; "
                f"use about --nodes {math.ceil(nodes * real[w] / share)} or more, or leave "
                f"{w} out of --workloads"
                for w in floors
            )
        warnings.warn(
            f"collect --load: after {rounds} calibration runs the realised load is "
            f"{sum(real.values()):.3f} for a target of {target:.3f} ("
            + ", ".join(f"{w} {v:.3f}" for w, v in real.items())
            + f"; each should be within {2 * tolerance:.0%} of {share:.3f}): {why}",
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
    return realised_by_request(result.tasks, workloads, loaded, nodes, slots, hours)


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

    def load_at(scale: float) -> float:
        w = _workload_or_none(name, data_dir, hours, scale, seed + k)
        return 0.0 if w is None else offered_load(w, nodes, slots, hours)

    lo, hi = 1e-6, 1e6
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        value = load_at(mid)
        if abs(value / share - 1) <= 0.02:
            break
        lo, hi = (mid, hi) if value < share else (lo, mid)
    scale = float(f"{mid:.4g}")
    if abs(value / share - 1) > 0.02 and (value == 0.0 or load_at(scale) == 0.0):
        # the search ended where the workload keeps no job, or at the edge of it (rounded to
        # 4 digits, below): its share is below the load of its least job (Alibaba's few jobs
        # in a short window, thinned to nothing at small scales). The least scale seen that
        # keeps one (``hi``, rounded up) is the nearest usable one; without it the run would
        # fail on "no job is submitted".
        scale = float(f"{hi:.4g}")
        if scale < hi:
            scale = float(f"{hi * 1.001:.4g}")
        value = load_at(scale)
        if value == 0.0:
            raise ValueError(
                f"collect --load: {name} submits no job in the first {hours:g} hours at any "
                f"data scale; use more --hours or leave {name} out of --workloads"
            )
    if warn and abs(value / share - 1) > 0.02:
        import warnings

        change = (
            f"its jobs in the first {hours:g} hours keep a task each); use about --nodes "
            f"{math.ceil(nodes * value / share)} or more, or leave {name} out of --workloads"
            if value > share
            else "); use fewer --nodes or more --hours"
        )
        warnings.warn(
            f"collect --load: {name} reaches nominal load {value:.3g}, not its share "
            f"{share:.3g}, at any data scale (at scale {scale:.3g}: {change}",
            stacklevel=3,
        )
    return scale


def _workload_or_none(name: str, data_dir, hours: float, scale: float, seed: int):
    """``sim_bridge.load_workload(...)``, or None when so small a scale keeps no job
    (Alibaba 2017: tasks below one instance are thinned away)."""
    import sim_bridge

    try:
        return sim_bridge.load_workload(name, data_dir, hours=hours, scale=scale, seed=seed)
    except ValueError as exc:
        if "no job is submitted" not in str(exc):
            raise
        return None


def _scale_at_floor(name: str, k: int, scale: float, hours: float, seed: int, data_dir) -> bool:
    """Is ``scale`` about the least base work workload ``name`` (drawn with ``seed + k``) can
    have: at half the scale it keeps no job, or over three quarters of the work (each job
    keeps a task, whose fixed overhead no scale shrinks)?"""

    def work(s: float) -> float:
        w = _workload_or_none(name, data_dir, hours, s, seed + k)
        return 0.0 if w is None else offered_load(w, 1, 1, hours)  # base work, scaled

    half = work(scale / 2)
    return half == 0.0 or half > 0.75 * work(scale)
