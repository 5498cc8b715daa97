"""Several collect cells, one trace: cell identities, the (seed, load) plan, one cell's
calibration and run, and the combined tables (part of :mod:`pipelines._collect`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pipelines._collect_calibrate import scales_for_load
from pipelines._collect_cell import CellRun, simulate_cell, simulate_options
from pipelines._collect_options import DEFAULT_LOAD
from pipelines._dataset import DEFAULT_BETA

if TYPE_CHECKING:
    import pandas as pd


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
        run = simulate_cell(workloads, scales, **simulate_options(locals()), progress=False)
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
