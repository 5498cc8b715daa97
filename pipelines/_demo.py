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
7. ``report``: ``OUT/report.html`` (:func:`pipelines.report.build_report`, what
   ``straggler report --from OUT`` runs).

A stage whose command module is not installed is skipped, and the demo says so; a stage that
fails is recorded with its error and the stages that need it are skipped; the demo goes on
and returns a non-zero code at the end.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from pipelines._demo_config import PROFILES, DemoConfig, DemoProfile
from pipelines._demo_data import REAL_WORKLOADS, flowbench_present, probe_data
from pipelines._demo_stages import Stage, api_stage, command_available, run_logged
from pipelines._io import atomic_write_text, write_summary
from pipelines._replication import engine_agreement, replication_example

#: Names other modules import from here (the parts live in ``_demo_config``,
#: ``_demo_data``, ``_demo_stages`` and ``_replication``).
__all__ = [
    "PROFILES",
    "REAL_WORKLOADS",
    "Demo",
    "DemoConfig",
    "DemoProfile",
    "Stage",
    "api_stage",
    "command_available",
    "engine_agreement",
    "flowbench_present",
    "probe_data",
    "replication_example",
    "run_demo",
    "run_logged",
]


class Demo:
    """The demo run: stage list, progress lines, the summary and the report."""

    def __init__(self, config: DemoConfig, *, stream: TextIO | None = None):
        self.config = config
        self.out = Path(config.out).resolve()
        self.profile = config.profile
        self.data_dir = config.data_dir
        self.seed = config.seed
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
        from pipelines.commands._params import to_argv

        p = self.profile
        argv = ["demo", *to_argv(self.config)]
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
        from pipelines.report import read_summary

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
        # collect picks every workload's data scale for the target load: alone on the cluster
        # (layout "separate", the default profile) or an equal share of it ("shared")
        collect = CollectConfig(
            out=str(d / "collect"),
            workloads=list(self.workloads),
            nodes=p.nodes,
            slots=p.slots,
            hours=p.hours,
            seed=self.seed,
            load=p.load,
            load_basis=p.load_basis,
            layout=p.layout,
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
        from pipelines.report import build_report

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


def run_demo(config: DemoConfig, *, stream: TextIO | None = None) -> dict[str, Any]:
    """Run the demo into ``config.out``; return its summary (also in ``out/summary.json``).

    See the module docstring for the stages. ``config.quick`` picks the tiny configuration
    the test suite runs. Progress lines go to ``stream`` (default standard output).
    """
    return Demo(config, stream=stream).run()
