"""The pipelines as a Python API: one function per ``straggler`` command, taking its config.

Each function takes the command's settings dataclass (:class:`pipelines.CollectConfig`,
:class:`pipelines.TrainConfig`, :class:`pipelines.EvaluateConfig`,
:class:`pipelines.CompareConfig`, :class:`pipelines.FidelityConfig`,
:class:`pipelines.DemoConfig`, :class:`pipelines.SimulateConfig`,
:class:`pipelines.ReproduceConfig`, :class:`pipelines.ReportConfig`) and returns the
summary it wrote to ``config.out/summary.json`` (:func:`write_report`: the page it wrote).
The runners behind train, evaluate, compare, fidelity, reproduce and report take the same
object (simulate's keywords come from :meth:`SimulateConfig.simulator_kwargs`); collect's
and demo's still take keywords. The CLI commands parse their flags into the same dataclass
(:mod:`pipelines.commands._params`) and call these functions, so a script, a notebook and
the demo run exactly what the command line runs.

Every function but :func:`write_report` treats ``config.out`` as one output set, as the
CLI does (:func:`claimed_output`): it takes the directory's lock, writes the
incomplete-marker first and removes it only when the run succeeded, and refuses a
directory holding the results of an earlier run unless ``overwrite=True``
(:class:`pipelines._io.OutputError`, a ``ValueError`` naming ``--out``).

Examples
--------
>>> import pipelines
>>> cfg = pipelines.TrainConfig(traces="runs/trace", out="runs/train", grid="small")
>>> # pipelines.train(cfg)  # what `straggler train --traces runs/trace --out ... ` runs
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from pipelines._collect_config import CollectConfig
    from pipelines._compare_config import CompareConfig
    from pipelines._demo_config import DemoConfig
    from pipelines._evaluate_config import EvaluateConfig
    from pipelines._fidelity_config import FidelityConfig
    from pipelines._report_config import ReportConfig
    from pipelines._reproduce_config import ReproduceConfig
    from pipelines._simulate_config import SimulateConfig
    from pipelines._sweep import Engine
    from pipelines._train_config import TrainConfig

#: Output directories this process holds (real path -> its :class:`OutputSet`): a nested
#: claim of one of them (the CLI claimed it, then called the API) is the same output set, not
#: a second writer, and gets the outer claim's object (so an inner ``ok = False`` counts).
_HELD: dict[str, OutputSet] = {}


class OutputSet:
    """An output directory claimed by :func:`claimed_output`; ``ok`` says whether the run
    succeeded (set it to False for a failure that raised nothing, e.g. an exit code)."""

    def __init__(self, out: Path):
        self.out = out
        self.ok = True


@contextlib.contextmanager
def claimed_output(
    out: str | os.PathLike[str], *, overwrite: bool = False, command: str = ""
) -> Iterator[OutputSet]:
    """Hold ``out`` as one output set for the block (:func:`pipelines._io.begin_output` /
    :func:`pipelines._io.end_output`); nested claims of a directory this process already
    holds pass through and yield the outer claim's :class:`OutputSet`.

    The marker is removed when the block ends without an exception and with ``ok`` still
    true; otherwise it stays (the directory is half-written), unless the run changed
    nothing.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> with claimed_output(d, command="demo") as held:
    ...     (d / ".straggler-incomplete").is_file()
    True
    >>> (d / ".straggler-incomplete").exists()
    False
    """
    from pipelines._io import begin_output, end_output

    key = os.path.realpath(out)
    outer = _HELD.get(key)
    if outer is not None:
        try:
            yield outer
        except BaseException:
            outer.ok = False
            raise
        return
    held = OutputSet(Path(out))
    claim = begin_output(out, overwrite=overwrite, command=command)
    _HELD[key] = held
    try:
        yield held
    except BaseException:
        held.ok = False
        raise
    finally:
        _HELD.pop(key, None)
        end_output(claim, ok=held.ok)


def _engine(workers: int | None, scheduler: str | None) -> Engine:
    from pipelines._sweep import Engine, require_dask

    engine = Engine.resolve(workers, scheduler)
    if engine.uses_dask:
        require_dask()
    return engine


def collect_trace(
    config: CollectConfig, *, overwrite: bool = False, engine: Engine | None = None
) -> dict[str, Any]:
    """Collect a training trace (``straggler collect``): from the simulator, each workload's
    data scale given (``config.scales``) or chosen for ``config.load`` (default 0.7), or
    from FlowBench's real runs (``config.source == "flowbench"``). ``seeds``, ``loads`` and
    ``layout="separate"`` collect several cells into one trace
    (:func:`pipelines._collect.collect_cells`, on ``engine``: this process by default).

    Raises
    ------
    ValueError
        Both ``load`` and ``scales`` given, an unknown workload, or an ``out`` that holds
        earlier results without ``overwrite``.
    """
    from pipelines._collect import collect_cells

    return collect_cells(config, engine=engine, overwrite=overwrite)


def collect_one(config: CollectConfig, *, overwrite: bool = False) -> dict[str, Any]:
    """One cell of :func:`collect_trace` (its ``seed``, its ``load`` or ``scales``, every
    workload on one cluster), or FlowBench's real runs."""
    with claimed_output(config.out, overwrite=overwrite, command="collect"):
        if config.source == "flowbench":
            return _collect_flowbench(config)
        from pipelines._collect import DEFAULT_LOAD, check_workloads, collect, scales_for_load

        check_workloads(config.workloads)
        if config.load is not None and config.scales is not None:
            raise ValueError("give --load or --scale, not both")
        scales = config.scales
        if scales is None:
            scales = scales_for_load(
                config.workloads,
                DEFAULT_LOAD if config.load is None else config.load,
                nodes=config.nodes,
                slots=config.slots,
                hours=config.hours,
                seed=config.seed,
                data_dir=config.data_dir,
                basis=config.load_basis,
                counters=config.counters,
            )
        return collect(
            config.out,
            config.workloads,
            nodes=config.nodes,
            slots=config.slots,
            hours=config.hours,
            seed=config.seed,
            scales=scales,
            policy=config.policy,
            data_dir=config.data_dir,
            counters=config.counters,
            beta=config.beta,
        )


def _collect_flowbench(config: CollectConfig) -> dict[str, Any]:
    from tqdm.auto import tqdm

    from pipelines._datadir import resolve_data_dir
    from pipelines.flowbench import collect_flowbench

    with tqdm(desc="flowbench runs", unit="file") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        return collect_flowbench(
            resolve_data_dir(config.data_dir),
            config.out,
            workflows=config.workflows,
            anomalies=config.anomalies,
            beta=config.beta,
            progress=progress,
        )


def train(config: TrainConfig, *, overwrite: bool = False) -> dict[str, Any]:
    """Train a straggler predictor (``straggler train``, :func:`pipelines.run_training`).

    A run stopped by ``max_trials`` (summary status ``"incomplete"``) continues into its own
    directory without ``overwrite``.
    """
    from pipelines._train import run_training

    with claimed_output(config.out, overwrite=overwrite, command="train"):
        return run_training(config)


def evaluate(
    config: EvaluateConfig, *, engine: Engine | None = None, overwrite: bool = False
) -> dict[str, Any]:
    """Table 1 or 2 on a trace (``straggler evaluate``, :func:`pipelines.run_evaluate`);
    ``engine`` sends the fits to Dask (default: ``$STRAGGLER_DASK_SCHEDULER`` when set, as
    the command does, else ``config.jobs`` local processes).

    Raises
    ------
    ValueError
        A table, jobs or models :func:`pipelines._evaluate.check_config` refuses (the
        output directory is then left alone).
    """
    from pipelines._evaluate import check_config, run_evaluate

    check_config(config)  # before the claim: a refused config leaves no directory
    with claimed_output(config.out, overwrite=overwrite, command="evaluate"):
        return run_evaluate(config, engine if engine is not None else _engine(None, None))


def compare(
    config: CompareConfig, *, engine: Engine | None = None, overwrite: bool = False
) -> dict[str, Any]:
    """Predictor-informed scheduling against speculation alone (``straggler compare``,
    :func:`pipelines.run_compare`); ``engine`` sends the runs to Dask (default:
    ``$STRAGGLER_DASK_SCHEDULER`` when set, as the command does, else this process)."""
    from pipelines._compare import run_compare

    with claimed_output(config.out, overwrite=overwrite, command="compare"):
        return run_compare(config, engine if engine is not None else _engine(None, None))


def fidelity(config: FidelityConfig, *, overwrite: bool = False) -> dict[str, Any]:
    """The simulated world's stylized facts against their bands (``straggler fidelity``,
    :func:`pipelines.run_fidelity`).

    Raises
    ------
    ValueError
        A count below 1 or a non-positive hours, load or beta (the message names the flag).
    """
    from pipelines._fidelity import run_fidelity

    for name in ("seeds", "nodes", "slots"):
        v = getattr(config, name)
        if v is not None and v < 1:
            raise ValueError(f"--{name} must be >= 1, got {v}")
    for name in ("hours", "load", "beta"):
        v = getattr(config, name)
        if v is not None and not v > 0:
            raise ValueError(f"--{name} must be > 0, got {v}")
    with claimed_output(config.out, overwrite=overwrite, command="fidelity"):
        return run_fidelity(config)


def reproduce(
    config: ReproduceConfig, *, engine: Engine | None = None, overwrite: bool = False
) -> dict[str, Any]:
    """Regenerate a seed paper's figures on the engine (``straggler reproduce SEED``,
    :func:`pipelines._reproduce.run_reproduce`); ``engine`` sends the runs to Dask (default:
    ``$STRAGGLER_DASK_SCHEDULER`` when set, else this process)."""
    from pipelines._reproduce import run_reproduce

    with claimed_output(config.out, overwrite=overwrite, command="reproduce"):
        return run_reproduce(config, engine if engine is not None else _engine(None, None))


def demo(
    config: DemoConfig, *, overwrite: bool = False, stream: TextIO | None = None
) -> dict[str, Any]:
    """The whole story end to end (``straggler demo``, :func:`pipelines.run_demo`): every
    stage claims its own directory under ``config.out``; progress lines go to ``stream``
    (default standard output). Returns the demo's summary (``status`` ``"failed"`` when a
    stage failed; the directory then keeps its incomplete-marker, as ``straggler demo``'s
    exit code 1 does)."""
    from pipelines._demo import run_demo

    with claimed_output(config.out, overwrite=overwrite, command="demo") as held:
        summary = run_demo(config, stream=stream)
        held.ok = summary.get("status") != "failed"
        return summary


def write_report(config: ReportConfig) -> Path:
    """Write ``config.out/report.html`` and ``report.md`` from result directories
    (``straggler report``, :func:`pipelines.report.run_report`); returns the HTML page's
    path. Not an output set: the page may go into a directory that holds its inputs, and
    each file is written atomically. (Named ``write_report`` because ``pipelines.report`` is
    the package that renders it.)

    Raises
    ------
    FileNotFoundError
        A directory is missing or has no ``summary.json``.
    pipelines.report.ReportError
        No directory given, or a ``summary.json`` is malformed.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> import pipelines
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "summary.json").write_text(json.dumps({"command": "collect", "rows": 7}))
    >>> pipelines.write_report(pipelines.ReportConfig(run_dirs=[d], out=d / "rep")).name
    'report.html'
    """
    from pipelines.report import run_report

    return run_report(config)


def simulate(config: SimulateConfig, *, overwrite: bool = False) -> dict[str, Any]:
    """Run the cluster simulator once and write ``tasks.parquet``, ``jobs.parquet`` and
    ``summary.json`` (``straggler simulate``; :func:`sim_bridge.simulate` is the in-memory
    run). Returns the summary.

    ``config.load`` sizes the cluster first (:func:`pipelines.size_cluster`; its lines go to
    stderr unless ``config.progress`` is False); without it, a cluster too small for the
    busiest hour's base work gets a warning. The summary adds the offered load (base work by
    arrival hour), a complete run's realised load by arrival hour and hourly occupancy, and
    the sizing with its calibration replays (:func:`pipelines._simulate_run.run_simulate`).

    A run stopped early (``max_events``, ``max_wall_seconds``, a signal) writes what it has,
    says ``complete: false`` and ``status: "incomplete"`` in the summary and keeps the
    directory's incomplete-marker (readers refuse it).
    """
    import sim_bridge

    # one long replay in this process: freed memory goes back to the OS. Called before
    # anything here imports pyarrow (mtl imports pandas), as Arrow reads its pool's variable
    # once, at that import
    allocators = sim_bridge.lean_allocators() if config.stream else None
    from pipelines._simulate_run import run_simulate

    out = Path(config.out)
    with claimed_output(out, overwrite=overwrite, command="simulate") as held:
        summary = run_simulate(config, out, allocators)
        held.ok = bool(summary["complete"])
        return summary
