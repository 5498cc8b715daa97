"""``straggler demo``: the whole story, end to end, on the embedded default.

Stages (each one the ``straggler`` command of its own, run through the Python API the
command wraps, :mod:`pipelines._api`, with its settings dataclass; ``summary.json`` records
the equivalent command line, :func:`pipelines.commands._params.to_argv`; each stage's output
goes to ``OUT/logs/<stage>.log`` as well as the console):

0. ``fidelity``: the simulated world's stylized facts against their published bands
   (``straggler fidelity``; the quick profile with ``--quick``);
1. ``collect``: a training trace from the simulator (the real workload files when the data
   directory has them, else the synthetic workload; one line says which);
2. ``train``: a small Optuna grid of the MTL ``f0nl`` model with MLflow tracking and the
   registry, as the training pipeline does it;
3. ``table1``, ``table2``: ``straggler evaluate --table 1`` at a few training fractions and
   ``--table 2`` on a few held-out (node, workload) pairs;
4. ``compare``: Tables 3-4, speculation alone against Wrangler and MTL predictor-informed
   placement (the MTL model trained in stage 2, rank mode), the random-refusal control and
   the slowdown oracle as the ceiling, with each predictor's share of the oracle's gain;
5. ``replication``: one example from seed 002, single-fork ``pi_keep``/``pi_kill``
   replication on one job: the finite-``n`` analysis (``sim_bridge.theory``) against the
   event engine (``sim_bridge.experiments.single_job``), run in-process
   (:func:`replication_example`); ``straggler reproduce 002`` has the full figure set;
6. ``flowbench``, ``flowbench_table1``: when the data directory holds FlowBench
   (``straggler data fetch --only flowbench``), its real workflow runs become a trace
   (``collect --source flowbench``) and Table 1 is measured on it, with the anomaly check
   (how well the predicted probability finds the throttled executors);
7. ``report``: ``OUT/report.html`` (:func:`pipelines._report.build_report`, what
   ``straggler report --from OUT`` runs).

A stage whose command module is not installed is skipped, and the demo says so; a stage that
fails is recorded with its error and the stages that need it are skipped; the demo goes on
and returns a non-zero code at the end.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pipelines._io import atomic_write_text, write_summary

#: The real workloads the demo uses when their files are in the data directory.
REAL_WORKLOADS: tuple[str, ...] = ("FB2009", "FB2010", "ALI2017")


@dataclass(frozen=True)
class DemoProfile:
    """Sizes of one demo configuration (``default`` for ``make demo``, ``quick`` for tests)."""

    name: str
    nodes: int
    slots: int
    hours: float
    load: float
    grid: dict[str, list[float]]
    fractions: tuple[float, ...]
    table1_models: tuple[str, ...]
    pairs: int
    compare_seeds: int
    rep_tasks: int
    rep_runs: int
    rep_ps: tuple[float, ...]
    rep_r: int = 1
    #: Table 2: labelled rows a held-out pair needs (``evaluate --min-rows``)
    min_rows: int = 40
    #: what ``load`` measures (``collect --load-basis``)
    load_basis: str = "realised"
    #: FlowBench stage (when the data directory has it): workflows and anomaly folders read
    #: (``None``: all), Table 1's training fractions and models on the real trace
    fb_workflows: tuple[str, ...] | None = None
    fb_anomalies: tuple[str, ...] | None = None
    fb_fractions: tuple[float, ...] = (0.05, 0.2)
    fb_models: tuple[str, ...] = ("wrangler", "f0", "f0nl", "f0tl")


PROFILES: dict[str, DemoProfile] = {
    "default": DemoProfile(
        name="default",
        nodes=30,
        slots=2,
        hours=6.0,
        load=0.7,  # realised load: busy, not saturated (queueing would hide placement)
        grid={"lambda0": [0.1, 1.0], "nu": [1.0], "omega": [1.0], "threshold": [0.3, 0.5]},
        fractions=(0.05, 0.2, 0.66),
        table1_models=("wrangler", "f0", "fn", "fl", "f0nl", "f0t", "f0tl"),
        pairs=3,
        compare_seeds=8,
        rep_tasks=100,
        rep_runs=60,
        rep_ps=(0.0, 0.05, 0.1, 0.2, 0.3),
    ),
    "quick": DemoProfile(
        name="quick",
        nodes=8,
        slots=2,
        hours=0.6,
        # a smoke test that needs labelled rows, not a realistic cluster: at a realised 0.7
        # the heavy-tailed synthetic jobs of 8 nodes x 0.6 h leave too few multi-task jobs,
        # so the quick profile keeps a nominal 0.7 (a saturated cluster, realised ~1.4)
        load=0.7,
        load_basis="nominal",
        # two points: one fit (cached per regulariser set), two thresholds
        grid={"lambda0": [1.0], "nu": [1.0], "omega": [1.0], "threshold": [0.4, 0.5]},
        fractions=(0.2, 0.66),
        table1_models=("wrangler", "f0nl"),
        pairs=2,
        compare_seeds=1,
        # the stage label needs 3+ tasks in a stage: on 8 nodes x 0.6 h few pairs reach 40
        min_rows=10,
        rep_tasks=20,
        rep_runs=20,
        rep_ps=(0.0, 0.1, 0.2),
        # one workflow, its normal and one throttled folder: about 15k real rows
        fb_workflows=("predict-future-sales",),
        fb_anomalies=("normal", "cpu_4"),
        fb_fractions=(0.2,),
        fb_models=("wrangler", "f0nl"),
    ),
}


@dataclass
class Stage:
    """One step of the demo and, after it ran, its outcome."""

    name: str
    section: str
    command: str | None
    needs: tuple[str, ...] = ()
    argv: list[str] | None = None
    out: str | None = None
    status: str = "pending"
    reason: str | None = None
    wall_seconds: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: runs the stage through the Python API: ``call(overwrite)`` -> the stage's summary
    call: Callable[[bool], Any] | None = field(default=None, repr=False, compare=False)

    def record(self) -> dict[str, Any]:
        """The JSON record of the stage in the demo's ``summary.json``."""
        rec = asdict(self)
        rec.pop("call")
        rec.update(rec.pop("extra"))
        return rec


def api_stage(
    name: str,
    section: str,
    command: str,
    config: Any,
    run: Callable[..., Any],
    needs: tuple[str, ...] = (),
    **kw: Any,
) -> Stage:
    """A stage that runs ``run(config, overwrite=..., **kw)`` (a :mod:`pipelines._api`
    function), recorded as the command line ``straggler COMMAND <flags of config>``.

    Examples
    --------
    >>> from pipelines._api import fidelity
    >>> from pipelines._fidelity_config import FidelityConfig
    >>> s = api_stage("fidelity", "fidelity", "fidelity", FidelityConfig(out="o"), fidelity)
    >>> s.argv, s.out
    (['fidelity', '--out', 'o'], 'o')
    """
    from pipelines.commands._params import to_argv

    def call(overwrite: bool) -> Any:
        return run(config, overwrite=overwrite, **kw)

    argv = [command, *to_argv(config)]
    return Stage(name, section, command, needs, argv=argv, out=str(config.out), call=call)


def command_available(name: str) -> bool:
    """Whether ``pipelines.commands.<name>`` (a ``straggler`` subcommand) is installed.

    Examples
    --------
    >>> command_available("collect"), command_available("no-such-command")
    (True, False)
    """
    try:
        return importlib.util.find_spec(f"pipelines.commands.{name}") is not None
    except (ImportError, ValueError):
        return False


def flowbench_present(data_dir: str | None) -> bool:
    """Does the data directory hold FlowBench run files (``flowbench/parsed/*/*.csv[.gz]``)?

    Examples
    --------
    >>> flowbench_present("/nonexistent")
    False
    """
    from pipelines._datadir import resolve_data_dir

    parsed = resolve_data_dir(data_dir) / "flowbench" / "parsed"
    if not parsed.is_dir():
        return False
    return any(parsed.glob("*/*.csv.gz")) or any(parsed.glob("*/*.csv"))


def probe_data(data_dir: str | None, hours: float) -> tuple[list[str], str]:
    """The workloads the demo runs and the one line saying where they come from.

    The real workloads (:data:`REAL_WORKLOADS`) whose files the data directory holds; the
    synthetic ``SYN`` when none is there.
    """
    import sim_bridge

    root = sim_bridge.resolve_data_dir(data_dir)
    logger = logging.getLogger("sim_bridge")
    level = logger.level
    logger.setLevel(logging.ERROR)  # the missing-file warnings are summed up in one line here
    try:
        found = [
            w
            for w in REAL_WORKLOADS
            if sim_bridge.load_workload(w, root, hours=hours).source != "synthetic"
        ]
    finally:
        logger.setLevel(level)
    if not found:
        note = (
            f"data: no data directory with the real workload files ({root}); using the "
            "synthetic workload SYN (run `straggler data fetch` for FB-2009/FB-2010/Alibaba)"
        )
        return ["SYN"], note
    missing = [w for w in REAL_WORKLOADS if w not in found]
    note = f"data: real workload files from {root} for {', '.join(found)}" + (
        f"; {', '.join(missing)} missing there, left out" if missing else ""
    )
    return found, note


def replication_example(
    out: str | Path,
    *,
    n_tasks: int = 100,
    runs: int = 60,
    ps: Sequence[float] = (0.0, 0.05, 0.1, 0.2, 0.3),
    r: int = 1,
    delta: float = 1.0,
    mu: float = 1.0,
    seed: int = 0,
) -> dict[str, Any]:
    """Seed 002 on one job: single-fork ``pi_keep``/``pi_kill(p, r)`` analysis against engine.

    Task times are ShiftedExp(``delta``, ``mu``) (``scipy.stats.expon(loc=delta,
    scale=1/mu)``), the paper's running example. For each policy and straggler fraction ``p``
    the expected latency and cost (eq. 4) come from
    ``sim_bridge.theory.single_fork_analytic(..., method="exact")`` (the finite-``n``
    expectation, what a simulation of ``n`` tasks estimates) and from ``runs`` engine runs of
    ``sim_bridge.experiments.single_job``; ``z`` is their difference in standard errors of
    the engine mean. Writes ``replication.csv``/``.md``, ``replication_tradeoff.png`` and
    ``summary.json`` into ``out``.

    Returns
    -------
    dict
        The summary, with ``max_abs_z`` over every point and both measures.
    """
    import pandas as pd
    from scipy import stats

    from sim_bridge.experiments import single_job
    from sim_bridge.theory import single_fork_analytic

    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    dist = stats.expon(loc=delta, scale=1.0 / mu)
    rows = []
    for keep in (True, False):
        for k, p in enumerate(ps):
            lat, cost = single_fork_analytic(dist, p, r, keep, n_tasks, method="exact")
            e = single_job(dist, n_tasks, p, r, keep, runs=runs, seed=seed + k)
            rows.append(
                {
                    "policy": "pi_keep" if keep else "pi_kill",
                    "p": p,
                    "r": r,
                    "latency_analysis": lat,
                    "latency_engine": e["latency"],
                    "latency_se": e["latency_se"],
                    "latency_z": (e["latency"] - lat) / e["latency_se"],
                    "cost_analysis": cost,
                    "cost_engine": e["cost"],
                    "cost_se": e["cost_se"],
                    "cost_z": (e["cost"] - cost) / e["cost_se"],
                }
            )
    table = pd.DataFrame(rows)
    agreement = engine_agreement(table)
    atomic_write_text(out / "replication.csv", table.to_csv(index=False))
    atomic_write_text(out / "replication.md", _markdown(table) + "\n" + agreement["text"] + "\n")
    _plot_tradeoff(
        table, out / "replication_tradeoff.png", n_tasks, runs, delta, mu, agreement["short"]
    )
    zs = table[["latency_z", "cost_z"]].abs().to_numpy()
    summary = {
        "command": "replication",
        "command_line": "sim_bridge.theory.single_fork_analytic(method='exact') against "
        "sim_bridge.experiments.single_job (run by straggler demo)",
        "seed_paper": "002 (single-fork replication, Theorem 1, eq. 4 cost)",
        "distribution": f"ShiftedExp(delta={delta:g}, mu={mu:g})",
        "n_tasks": n_tasks,
        "runs": runs,
        "r": r,
        "ps": list(ps),
        "seed": seed,
        "max_abs_z": float(zs.max()),
        "agreement": agreement["text"],
        "beyond_2se": agreement["beyond_2se"],
        "mean_z": agreement["mean_z"],
        "best_latency": table.loc[table["latency_analysis"].idxmin(), ["policy", "p"]].to_dict(),
        "wall_seconds": time.perf_counter() - t0,
    }
    write_summary(out, summary)
    return summary


def engine_agreement(table, limit: float = 2.0) -> dict[str, Any]:
    """How well the engine's means match the analysis: rows beyond ``limit`` standard errors
    per measure, the mean signed ``z``, and a sentence that says so (a systematic offset, e.g.
    the cost above the analysis in most rows, is named, not left to the reader).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"latency_z": [0.5, -1.0, 0.2], "cost_z": [2.5, 3.1, 0.4]})
    >>> engine_agreement(t)["beyond_2se"]
    {'latency': 0, 'cost': 2, 'rows': 3}
    """
    n = len(table)
    out: dict[str, Any] = {"beyond_2se": {"rows": n}, "mean_z": {}}
    parts, short = [], []
    for measure in ("latency", "cost"):
        z = table[f"{measure}_z"].astype(float)
        k = int((z.abs() > limit).sum())
        out["beyond_2se"][measure] = k
        out["mean_z"][measure] = float(z.mean())
        parts.append(f"{measure}: {k} of {n} points beyond {limit:g} standard errors")
        short.append(f"{measure} {k}/{n}")
        # about 5% of points fall beyond 2 SE by chance; a one-sided excess is an offset
        if k > max(1, round(0.05 * n)) and abs(float(z.mean())) > 1:
            side = "above" if z.mean() > 0 else "below"
            parts[-1] += (
                f" (mean z {z.mean():+.1f}: the engine's {measure} sits systematically {side} "
                "the finite-n analysis)"
            )
    out["beyond_2se"] = {k: out["beyond_2se"][k] for k in ("latency", "cost", "rows")}
    out["text"] = "Engine against analysis: " + "; ".join(parts) + "."
    out["short"] = f"|z| > {limit:g}: " + ", ".join(short)
    return out


def _markdown(table) -> str:
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in table.itertuples(index=False):
        lines.append(
            "| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |"
        )
    return "\n".join(lines) + "\n"


def _plot_tradeoff(
    table, path: Path, n: int, runs: int, delta: float, mu: float, note: str = ""
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pipelines._plots import save_figure

    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    labelled: set[tuple[float, float]] = set()  # p=0 is one point for both policies
    offsets = {"pi_keep": (-4, 4), "pi_kill": (4, -10)}
    for (policy, part), color in zip(table.groupby("policy"), ("C0", "C1"), strict=False):
        ax.plot(part["cost_analysis"], part["latency_analysis"], "-", color=color)
        ax.errorbar(
            part["cost_engine"],
            part["latency_engine"],
            xerr=1.96 * part["cost_se"],
            yerr=1.96 * part["latency_se"],
            fmt="o",
            color=color,
            ms=4,
            capsize=2,
            label=f"{policy}: analysis (line), engine (95% CI)",
        )
        for _, row in part.iterrows():
            where = (round(row["cost_analysis"], 6), round(row["latency_analysis"], 6))
            if where in labelled:
                continue
            labelled.add(where)
            dx, dy = offsets.get(str(policy), (3, 3))
            ax.annotate(
                f"p={row['p']:g}",
                (row["cost_analysis"], row["latency_analysis"]),
                fontsize=7,
                color=color,
                xytext=(dx, dy),
                textcoords="offset points",
                ha="right" if dx < 0 else "left",
                bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.75},
            )
    ax.set_xlabel("expected cost E[C] (machine time / n)")
    ax.set_ylabel("expected latency E[T]")
    ax.set_title(
        f"Single-fork replication, ShiftedExp({delta:g}, {mu:g}), n={n}, {runs} runs"
        + (f"\nengine vs analysis, {note}" if note else ""),
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    save_figure(fig, path)


class _Tee(io.TextIOBase):
    """Write to several streams (the console and a stage log file)."""

    def __init__(self, *streams: TextIO):
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()


def run_logged(run: Callable[[], Any], log_path: Path, command: str = "") -> Any:
    """Run ``run()`` with its standard output, standard error and log records going to the
    console and to ``log_path``; return what it returns.

    An exception is written to the log (its traceback) and to standard error (one line,
    ``straggler COMMAND: error: ...``, as the command line prints it) and raised again;
    ``KeyboardInterrupt`` passes through.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> log = pathlib.Path(tempfile.mkdtemp()) / "logs" / "x.log"
    >>> run_logged(lambda: print("hello") or 3, log)
    hello
    3
    >>> log.read_text()
    'hello\n'
    """
    import traceback

    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w", encoding="utf-8") as log:
        handler = logging.StreamHandler(log)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        out, err = _Tee(sys.stdout, log), _Tee(sys.stderr, log)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    return run()
                except Exception as exc:
                    log.write(traceback.format_exc())
                    print(f"straggler {command}: error: {exc}", file=err)
                    raise
        finally:
            root.removeHandler(handler)


class Demo:
    """The demo run: stage list, progress lines, the summary and the report."""

    def __init__(
        self,
        out: str | Path,
        *,
        quick: bool = False,
        data_dir: str | None = None,
        seed: int = 0,
        stream: TextIO | None = None,
    ):
        self.out = Path(out).resolve()
        self.profile = PROFILES["quick" if quick else "default"]
        self.data_dir = data_dir
        self.seed = seed
        self.stream = stream
        self.t0 = time.perf_counter()
        self.stages: list[Stage] = []
        self.workloads: list[str] = []
        self.data_note = ""

    # -- output ---------------------------------------------------------------------------
    def say(self, text: str) -> None:
        """One progress line with the elapsed time."""
        stream = self.stream or sys.stdout
        print(f"[demo {time.perf_counter() - self.t0:6.1f}s] {text}", file=stream, flush=True)

    def summary(self) -> dict[str, Any]:
        """The demo's ``summary.json`` content."""
        p = self.profile
        argv = ["demo", "--out", str(self.out)]
        argv += ["--quick"] if p.name == "quick" else []
        argv += ["--data-dir", str(self.data_dir)] if self.data_dir else []
        argv += ["--seed", str(self.seed)] if self.seed else []
        return {
            "command": "demo",
            "argv": argv,
            "profile": asdict(p),
            "seed": self.seed,
            "data_dir": self.data_dir,
            "data_note": self.data_note,
            "workloads": self.workloads,
            **self.headline_figures(),
            "stages": [s.record() for s in self.stages],
            "status": self._status(),
            "wall_seconds": time.perf_counter() - self.t0,
        }

    def headline_figures(self) -> dict[str, Any]:
        """The headline (:func:`pipelines._headline.headline`) of the stages that completed,
        under ``headline`` and as top-level keys (ROC-AUC, PR-AUC, accuracy beside the
        majority class, mean/p99 JCT and task-seconds gains with intervals, the verdict)."""
        from pipelines._headline import flat_figures, headline
        from pipelines._report import read_summary

        found: dict[str, Any] = {}
        for s in self.stages:
            if s.status == "ok" and s.name in ("train", "compare", "fidelity", "collect"):
                try:
                    found[s.name] = read_summary(str(s.out))
                except (FileNotFoundError, ValueError):
                    continue
        if not found:
            return {}
        h = headline(**found)
        return {**flat_figures(h), "headline": h}

    def _status(self) -> str:
        states = {s.status for s in self.stages}
        if "failed" in states:
            return "failed"
        if "skipped" in states:
            return "partial"
        return "complete"

    # -- stages ---------------------------------------------------------------------------
    def plan(self) -> list[Stage]:
        """The stages, with their settings and command lines, in order."""
        from pipelines import _api
        from pipelines._collect_config import CollectConfig
        from pipelines._compare_config import CompareConfig
        from pipelines._fidelity_config import FidelityConfig
        from pipelines._train_config import TrainConfig

        p, d = self.profile, self.out
        # collect picks every workload's data scale for an equal share of the target load
        collect = CollectConfig(
            out=str(d / "collect"),
            workloads=list(self.workloads),
            nodes=p.nodes,
            slots=p.slots,
            hours=p.hours,
            seed=self.seed,
            load=p.load,
            load_basis=p.load_basis,
            data_dir=self.data_dir,
        )
        train = TrainConfig(
            traces=str(d / "collect"),
            out=str(d / "train"),
            variant="f0nl",
            grid=str(d / "grid.json"),
            seed=self.seed,
        )
        # cluster size and data scale are the trace's (compare reads them from collect's
        # summary); the oracle (placement that knows the true node state) is the ceiling
        compare = CompareConfig(
            traces=str(d / "collect"),
            out=str(d / "compare"),
            workloads=list(self.workloads),
            models={"mtl": str(d / "train" / "predictor")},
            seeds=p.compare_seeds,
            data_dir=self.data_dir,
            oracle=True,
        )
        fidelity = FidelityConfig(
            out=str(d / "fidelity"), quick=p.name == "quick", data_dir=self.data_dir
        )
        return [
            api_stage("fidelity", "fidelity", "fidelity", fidelity, _api.fidelity),
            api_stage("collect", "collect", "collect", collect, _api.collect_trace),
            api_stage("train", "train", "train", train, _api.train, ("collect",)),
            api_stage(
                "table1", "table1", "evaluate", self._evaluate(1), _api.evaluate, ("collect",)
            ),
            api_stage(
                "table2", "table2", "evaluate", self._evaluate(2), _api.evaluate, ("collect",)
            ),
            api_stage("compare", "compare", "compare", compare, _api.compare, ("collect", "train")),
            Stage("replication", "replication", None, out=str(d / "replication")),
            *self._flowbench_stages(),
        ]

    def _flowbench_stages(self) -> list[Stage]:
        """FlowBench's real runs into a trace and Table 1 on it, when the data is present
        (``straggler data fetch --only flowbench``); nothing otherwise."""
        from pipelines import _api
        from pipelines._collect_config import CollectConfig
        from pipelines._evaluate_config import EvaluateConfig

        if not flowbench_present(self.data_dir):
            return []
        p, d = self.profile, self.out / "flowbench"
        collect = CollectConfig(
            source="flowbench",
            out=str(d / "trace"),
            data_dir=self.data_dir,
            workflows=list(p.fb_workflows) if p.fb_workflows else None,
            anomalies=list(p.fb_anomalies) if p.fb_anomalies else None,
        )
        table1 = EvaluateConfig(
            traces=str(d / "trace"),
            table=1,
            out=str(d / "table1"),
            fractions=list(p.fb_fractions),
            models=tuple(p.fb_models),
            on_single_class="drop",
            seed=self.seed,
        )
        return [
            api_stage("flowbench", "flowbench", "collect", collect, _api.collect_trace),
            api_stage(
                "flowbench_table1",
                "flowbench",
                "evaluate",
                table1,
                _api.evaluate,
                ("flowbench",),
            ),
        ]

    def _evaluate(self, table: int):
        from pipelines._evaluate_config import EvaluateConfig

        p, d = self.profile, self.out
        cfg = EvaluateConfig(
            traces=str(d / "collect"), table=table, out=str(d / f"table{table}"), seed=self.seed
        )
        if table == 1:
            cfg.fractions, cfg.models = list(p.fractions), tuple(p.table1_models)
        else:
            cfg.pairs, cfg.min_rows = p.pairs, p.min_rows
        return cfg

    def _run_stage(self, i: int, stage: Stage, runner: Callable[[Stage], None]) -> None:
        n = len(self.stages) + 1  # + the report
        done = {s.name: s.status for s in self.stages}
        blocked = [x for x in stage.needs if done.get(x) != "ok"]
        head = f"stage {i}/{n} {stage.name}"
        if stage.command is not None and not command_available(stage.command):
            stage.status = "skipped"
            stage.reason = f"command `straggler {stage.command}` is not built yet"
        elif blocked:
            stage.status = "skipped"
            stage.reason = f"needs {', '.join(blocked)}, which did not complete"
        if stage.status == "skipped":
            stage.out = None
            self.say(f"{head}: SKIPPED: {stage.reason}")
            return
        shown = f": straggler {' '.join(stage.argv)}" if stage.argv else ""
        self.say(f"{head}{shown}")
        t = time.perf_counter()
        try:
            runner(stage)
        except Exception as exc:  # a broken stage must not stop the others
            stage.status = "failed"
            stage.reason = f"{type(exc).__name__}: {exc}"
        stage.wall_seconds = time.perf_counter() - t
        if stage.status == "ok":
            self.say(f"{head} done in {stage.wall_seconds:.1f} s -> {stage.out}")
        else:
            self.say(f"{head} FAILED after {stage.wall_seconds:.1f} s: {stage.reason}")
        write_summary(self.out, self.summary())  # progress survives an interruption

    def _api_runner(self, stage: Stage) -> None:
        """Run a stage's API call, its output logged to ``OUT/logs/<stage>.log``."""
        assert stage.call is not None and stage.argv is not None
        out = Path(str(stage.out))
        overwrite = out.is_dir() and any(out.iterdir())
        if overwrite:
            # the demo owns its directory (it was claimed with --overwrite to get here): a
            # stage's results from an earlier demo are replaced, as the whole demo is
            stage.argv = [*stage.argv, "--overwrite"]
        log = f"logs/{stage.name}.log"
        try:
            run_logged(lambda: stage.call(overwrite), self.out / log, " ".join(stage.argv[:1]))
        except Exception as exc:  # KeyboardInterrupt (Ctrl-C) stops the demo, not the stage
            stage.status = "failed"
            stage.reason = f"{type(exc).__name__}: {exc} (log: {log})"
            return
        if not (out / "summary.json").is_file():
            stage.status = "failed"
            stage.reason = f"the command wrote no summary.json into {stage.out}"
        else:
            stage.status = "ok"

    def _replication_runner(self, stage: Stage) -> None:
        p = self.profile
        s = replication_example(
            stage.out,
            n_tasks=p.rep_tasks,
            runs=p.rep_runs,
            ps=p.rep_ps,
            r=p.rep_r,
            seed=self.seed,
        )
        stage.extra["max_abs_z"] = s["max_abs_z"]
        stage.status = "ok"

    def run(self) -> dict[str, Any]:
        """Run every stage, write ``summary.json`` and ``report.html``; return the summary."""
        from pipelines._report import build_report

        self.out.mkdir(parents=True, exist_ok=True)
        self.say(f"straggler demo ({self.profile.name} profile) -> {self.out}")
        self.workloads, self.data_note = probe_data(self.data_dir, self.profile.hours)
        self.say(self.data_note)
        atomic_write_text(self.out / "grid.json", json.dumps(self.profile.grid, indent=2) + "\n")
        self.stages = self.plan()
        for i, stage in enumerate(list(self.stages), start=1):
            runner = self._replication_runner if stage.call is None else self._api_runner
            self._run_stage(i, stage, runner)
        write_summary(self.out, self.summary())
        n = len(self.stages) + 1
        rep = Stage(
            "report",
            "report",
            "report",
            argv=["report", "--from", str(self.out), "--out", str(self.out)],
            out=str(self.out),
        )
        self.say(f"stage {n}/{n} report: straggler {' '.join(rep.argv or [])}")
        t = time.perf_counter()
        report = build_report([], self.out, from_demo=self.out, title="Straggler demo")
        rep.status, rep.wall_seconds = "ok", time.perf_counter() - t
        rep.extra["file"] = str(report)
        self.stages.append(rep)
        summary = self.summary()
        summary["report"] = str(report)
        write_summary(self.out, summary)
        self.say(f"stage {n}/{n} report done in {rep.wall_seconds:.1f} s -> {report}")
        for s in self.stages:
            if s.status != "ok":
                self.say(f"{s.name}: {s.status.upper()}: {s.reason}")
        self.say(f"demo {summary['status']} in {summary['wall_seconds']:.1f} s; open {report}")
        return summary


def run_demo(
    out: str | Path,
    *,
    quick: bool = False,
    data_dir: str | None = None,
    seed: int = 0,
    stream: TextIO | None = None,
) -> dict[str, Any]:
    """Run the demo into ``out``; return its summary (also in ``out/summary.json``).

    See the module docstring for the stages. ``quick`` picks the tiny configuration the test
    suite runs.
    """
    return Demo(out, quick=quick, data_dir=data_dir, seed=seed, stream=stream).run()
