"""The pipelines' Python API and the one declaration of each command's flags.

Properties: a config's command line (``to_argv``) parses back to the same config; every flag
of a converted command is a field of its config and every declared field is a flag; the
variant choices are mtl's registry; the API claims ``config.out`` as the CLI does; building
the parser imports nothing heavy.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import fields

import pytest

import pipelines
from pipelines import _api
from pipelines._collect_config import CollectConfig
from pipelines._compare_config import CompareConfig
from pipelines._demo_config import DemoConfig
from pipelines._evaluate_config import EvaluateConfig
from pipelines._fidelity_config import FidelityConfig
from pipelines._io import INCOMPLETE_MARKER, OutputError
from pipelines._report_config import ReportConfig
from pipelines._reproduce_config import ReproduceConfig
from pipelines._simulate_config import SimulateConfig
from pipelines._train_config import TrainConfig
from pipelines.cli import build_parser
from pipelines.commands._params import config_from_args, flag_of, options, to_argv

#: command -> (its config class, the config overrides the command computes itself)
COMMANDS = {
    "train": TrainConfig,
    "compare": CompareConfig,
    "collect": CollectConfig,
    "evaluate": EvaluateConfig,
    "fidelity": FidelityConfig,
    "demo": DemoConfig,
    "simulate": SimulateConfig,
    "reproduce": ReproduceConfig,
    "report": ReportConfig,
}
#: flags a command has besides its config's: output guard, --config, where the runs go
NOT_CONFIG = {"--help", "--overwrite", "--config", "--workers", "--scheduler"}

EXAMPLES = [
    TrainConfig(
        traces="T",
        out="O",
        variant="f0",
        grid="small",
        jobs=2,
        beta=1.5,
        max_trials=3,
        register=False,
        metric="pr_auc",
        on_single_class="drop",
        tracking_uri="sqlite:///x.db",
    ),
    CompareConfig(
        traces="T",
        out="O",
        workloads=["SYN", "FB2009"],
        models={"mtl": "/m/p", "wrangler": "/m/w"},
        seeds=2,
        nodes=5,
        hours=0.5,
        scales={"SYN": 0.25, "FB2009": 2.0},
        oracle=False,
        control=False,
        mode="threshold",
        max_wait=3.5,
    ),
    CollectConfig(
        out="O", workloads=["SYN"], nodes=4, slots=3, hours=0.2, load=0.5, load_basis="nominal"
    ),
    CollectConfig(source="flowbench", out="O", workflows=["a", "b"], anomalies=["normal"]),
    CollectConfig(out="O", workloads=["SYN"], scales={"SYN": 0.5}),
    EvaluateConfig(
        traces="T", table=1, out="O", fractions=[0.05, 0.2], models=("wrangler", "f0nl")
    ),
    EvaluateConfig(traces="T", table=2, out="O", pairs=3, min_rows=10, grid="small"),
    FidelityConfig(out="O", workloads=["SYN", "FB2009"], quick=True, seeds=2, hours=0.5),
    DemoConfig(out="O", quick=True, data_dir="D", seed=3),
    SimulateConfig(
        out="O",
        workloads=["SYN", "FB2009"],
        policy="late",
        policy_params={"quantile": 0.9, "name": "x", "text": "0.5"},
        placement_params={"k": [1, 2]},
        progress=False,
        stream=True,
        no_skew=True,
        interference=0.0,
        max_events=100,
    ),
    SimulateConfig(out="O", progress=True, record_truth=True),
    ReproduceConfig(seed_paper="002", out="O", quick=True, seed=4),
    ReportConfig(run_dirs=["A", "B"], from_demo="D", out="O", title="T"),
    ReportConfig(out="O"),
]


def _command(config) -> str:
    return next(name for name, cls in COMMANDS.items() if isinstance(config, cls))


def _parse(command: str, argv: list[str]):
    """The config the command builds from ``argv`` (its own overrides included)."""
    from pipelines._collect import parse_scales
    from pipelines._compare_config import split_names

    args = build_parser().parse_args([command, *argv])
    cls = COMMANDS[command]
    extra = {}
    if command in ("collect", "compare"):
        scale = args.scale
        extra["scales"] = parse_scales(scale, split_names(args.workloads)) if scale else None
    return config_from_args(cls, args, **extra)


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda c: type(c).__name__)
def test_a_configs_command_line_parses_back_to_it(config):
    command = _command(config)
    assert _parse(command, to_argv(config)) == config


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_defaults_agree_and_every_flag_is_declared_once(command):
    cls = COMMANDS[command]
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    flags = {o for a in sub._actions for o in a.option_strings[:1] if o.startswith("--")}
    flags |= {a.dest for a in sub._actions if not a.option_strings}  # positionals
    declared = {f.name if opt.positional else flag_of(f, opt) for f, opt in options(cls)}
    assert flags - NOT_CONFIG == declared
    names = ("seed_paper", "traces", "out", "table")
    required = [f.name for f, _ in options(cls) if f.name in names]
    argv = {
        "seed_paper": ["002"],
        "traces": ["--traces", "T"],
        "out": ["--out", "O"],
        "table": ["--table", "1"],
    }
    given = [x for name in required for x in argv[name]]
    parsed = _parse(command, given)
    fresh = cls(**{name: getattr(parsed, name) for name in required})
    # the flag defaults are the dataclass defaults: a bare command line is the bare config
    assert parsed == fresh


def test_variant_choices_are_mtls_registry_and_beta_defaults_agree():
    import mtl

    sub = build_parser()._subparsers._group_actions[0].choices["train"]
    action = next(a for a in sub._actions if "--variant" in a.option_strings)
    assert list(action.type) == list(mtl.VARIANTS)  # checked lazily (RegistryChoices)
    for name in mtl.VARIANTS:
        assert action.type(name) == name
    configs = (TrainConfig, CompareConfig, CollectConfig, EvaluateConfig, FidelityConfig)
    for cls in (*configs, SimulateConfig):
        beta = next(f for f in fields(cls) if f.name == "beta")
        assert beta.default == pipelines.DEFAULT_BETA, cls
    assert TrainConfig("T", "O").min_tasks == pipelines.DEFAULT_MIN_TASKS
    assert CompareConfig("T", "O").min_tasks == pipelines.DEFAULT_MIN_TASKS
    assert EvaluateConfig("T", 1, "O").min_tasks == pipelines.DEFAULT_MIN_TASKS


def _loaded_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has loaded after running ``statement``."""
    code = f"import sys; {statement}; print(sorted(m for m in {modules!r} if m in sys.modules))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return ast.literal_eval(res.stdout)


def test_building_the_parser_imports_nothing_heavy():
    statement = "from pipelines.cli import build_parser; build_parser()"
    assert _loaded_after(statement, ("mtl", "numpy", "pandas", "sklearn")) == []


def test_the_api_claims_its_output_set(tmp_path):
    out = tmp_path / "run"
    with _api.claimed_output(out, command="x") as held:
        assert (out / INCOMPLETE_MARKER).is_file()
        with _api.claimed_output(out, command="x"):  # this process holds it: passes through
            (out / "summary.json").write_text('{"status": "complete"}')
        assert held.ok
    assert not (out / INCOMPLETE_MARKER).exists()
    with pytest.raises(OutputError, match="--overwrite"):
        with _api.claimed_output(out):
            pass
    with pytest.raises(RuntimeError), _api.claimed_output(out, overwrite=True):
        (out / "half.csv").write_text("x\n")
        raise RuntimeError("killed half-way")
    assert (out / INCOMPLETE_MARKER).is_file()  # the half-written set is marked


@pytest.mark.filterwarnings("ignore:collect. realised load")
def test_collect_trace_refuses_earlier_results_and_a_bad_workload_leaves_nothing(tmp_path):
    cfg = CollectConfig(
        out=str(tmp_path / "t"), workloads=["SYN"], nodes=3, hours=0.05, scales={"SYN": 0.05}
    )
    s = pipelines.collect_trace(cfg)
    assert s["rows"] >= 0 and (tmp_path / "t" / "summary.json").is_file()
    assert not (tmp_path / "t" / INCOMPLETE_MARKER).exists()
    with pytest.raises(OutputError, match="earlier run"):
        pipelines.collect_trace(cfg)
    again = pipelines.collect_trace(cfg, overwrite=True)
    assert again["rows"] == s["rows"]  # the same seed, the same trace
    bad = CollectConfig(out=str(tmp_path / "bad"), workloads=["NOPE"])
    with pytest.raises(ValueError, match="NOPE"):
        pipelines.collect_trace(bad)
    assert not (tmp_path / "bad").exists()  # the failed run changed nothing: no directory


def test_a_nested_claim_shares_the_outer_output_set(tmp_path):
    # the CLI claims --out, then the API function it calls claims it again: a failure the
    # inner claim records (an incomplete simulate) must reach the outer claim's marker
    out = tmp_path / "run"
    with _api.claimed_output(out, command="x") as outer:
        with _api.claimed_output(out, command="x") as inner:
            assert inner is outer
            (out / "half.csv").write_text("x\n")
            inner.ok = False
    assert not outer.ok
    assert (out / INCOMPLETE_MARKER).is_file()


def test_the_demo_api_keeps_the_marker_when_a_stage_failed(tmp_path, monkeypatch):
    # `straggler demo` exits 1 and keeps the marker on a failed stage; the API agrees
    import pipelines._demo as demo_mod

    def failing_demo(config, **kw):
        (tmp_path / "demo" / "stage.txt").write_text("half\n")
        return {"command": "demo", "status": "failed"}

    monkeypatch.setattr(demo_mod, "run_demo", failing_demo)
    s = pipelines.demo(DemoConfig(out=str(tmp_path / "demo")))
    assert s["status"] == "failed"
    assert (tmp_path / "demo" / INCOMPLETE_MARKER).is_file()
    monkeypatch.setattr(demo_mod, "run_demo", lambda config, **kw: {"status": "ok"})
    pipelines.demo(DemoConfig(out=str(tmp_path / "demo2")))
    assert not (tmp_path / "demo2" / INCOMPLETE_MARKER).exists()


def test_the_output_helpers_import_neither_mtl_nor_pandas():
    # every guarded command claims its --out through pipelines._io before it runs: that
    # import stays light (mtl, imported lazily there for atomic writes, loads pandas/scipy)
    assert _loaded_after("import pipelines._io", ("mtl", "pandas", "scipy", "sklearn")) == []


#: API function -> (module whose runner it calls, the runner's name, a config for it)
PASS_THROUGH = {
    "train": ("pipelines._train", "run_training", TrainConfig(traces="T", out="O")),
    "evaluate": ("pipelines._evaluate", "run_evaluate", EvaluateConfig("T", 2, "O", pairs=3)),
    "compare": ("pipelines._compare", "run_compare", CompareConfig(traces="T", out="O")),
    "fidelity": ("pipelines._fidelity", "run_fidelity", FidelityConfig(out="O", quick=True)),
    "reproduce": ("pipelines._reproduce", "run_reproduce", ReproduceConfig("002", "O")),
    "write_report": ("pipelines.report", "run_report", ReportConfig(run_dirs=["A"], out="O")),
}


@pytest.mark.parametrize("name", sorted(PASS_THROUGH))
def test_the_api_hands_its_config_to_the_runner_unchanged(name, tmp_path, monkeypatch):
    # issue 14: each command's parameters are declared once (the config), so the API passes
    # the very object down instead of restating its fields as keywords
    import importlib
    from dataclasses import replace

    module, runner, config = PASS_THROUGH[name]
    config = replace(config, out=str(tmp_path / "out"))
    seen = []
    monkeypatch.setattr(
        importlib.import_module(module), runner, lambda cfg, *a: seen.append(cfg) or {}
    )
    getattr(pipelines, name)(config)
    assert len(seen) == 1 and seen[0] is config


def test_the_simulator_gets_every_setting_of_the_config_under_its_own_name():
    import inspect

    import sim_bridge
    from pipelines._simulate_config import _NOT_SIMULATOR

    params = inspect.signature(sim_bridge.simulate).parameters
    for cfg in (c for c in EXAMPLES if isinstance(c, SimulateConfig)):
        kw = cfg.simulator_kwargs()
        assert set(kw) <= set(params)  # no keyword lands in simulate()'s **swim_kw
        for f in fields(cfg):
            if f.name not in _NOT_SIMULATOR:
                assert kw[f.name] == getattr(cfg, f.name), f.name
        assert kw["workload"] in (cfg.workloads[0], cfg.workloads)
        assert {k: kw[k] for k in cfg.world_kwargs()} == cfg.world_kwargs()
    # the stop guards are passed even when unset: unset is simulate()'s own default
    kw = SimulateConfig(out="O").simulator_kwargs()
    for name in ("max_events", "max_wall_seconds"):
        assert kw[name] is None is params[name].default


def test_the_keyword_forms_build_the_config(tmp_path, monkeypatch):
    # build_report and _reproduce.reproduce stay for their keyword callers (the demo, the
    # notebooks): thin wrappers that build the command's config and call its runner
    import pipelines._reproduce as rep_mod
    import pipelines.report._build as build_mod

    seen = []
    monkeypatch.setattr(build_mod, "run_report", lambda cfg: seen.append(cfg))
    build_mod.build_report(["A", "B"], tmp_path, from_demo="D", title="T")
    assert seen.pop() == ReportConfig(run_dirs=["A", "B"], out=tmp_path, from_demo="D", title="T")
    build_mod.build_report([], "o")
    assert seen.pop() == ReportConfig(out="o")
    monkeypatch.setattr(rep_mod, "run_reproduce", lambda cfg, engine: seen.append(cfg))
    rep_mod.reproduce("003", tmp_path, quick=True, seed=2)
    assert seen.pop() == ReproduceConfig("003", str(tmp_path), quick=True, seed=2)
