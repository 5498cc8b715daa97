"""Issue 14: no module in ``pipelines/`` is over about 400 lines; the long ones were split by job.

``_collect``, ``_reproduce_002``, ``_reproduce_xu_lau``, ``_train``, ``_headline``, ``_demo``
and ``flowbench._read`` each kept their entry points and handed the other jobs to modules
named after them (``_collect_calibrate``, ``_headline_html``, ...). Every name a module
offered before its split is still importable from it and is the very object its new module
defines; no function, class or constant is defined twice across a module and its parts; no
part reads a private name of another part (a helper two parts need has a package-public
name); and no module of the package is over 400 lines.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from _split_checks import top_level_names

PIPELINES = Path(__file__).resolve().parents[1] / "pipelines"

#: Longest a module of ``pipelines/`` may be (issue 14: "about 400 lines").
MAX_LINES = 400

#: The names each module offered before its split (its ``__all__``, or its public top-level
#: definitions where it had none) and the private names other code reads from it
#: (``tests/test_pipelines_collect.py`` reads ``_collect._scale_for_nominal``,
#: ``tests/test_flowbench.py`` the reader's ``_SCHEMA``, ``_load_fast``, ``_load_careful``).
BEFORE: dict[str, tuple[str, ...]] = {
    "pipelines._collect": (
        "DEFAULT_LOAD",
        "DEFAULT_SCALES",
        "CellRun",
        "calibration_run",
        "cell_key",
        "check_workloads",
        "collect",
        "collect_cell",
        "collect_cells",
        "combine_cells",
        "nominal_scale_task",
        "nominal_scales",
        "offered_load",
        "parse_scales",
        "plan_cells",
        "realised_load",
        "scales_for_load",
        "simulate_cell",
        "warn_if_saturated",
        "workload_groups",
        "write_tables",
        "_scale_for_nominal",
    ),
    "pipelines._reproduce_002": (
        "CONFIGS",
        "DISTRIBUTIONS",
        "empirical_sample",
        "empirical_study",
        "latency_vs_n",
        "metrics_vs_p",
        "run",
        "sizes",
    ),
    "pipelines._reproduce_xu_lau": (
        "SLOT",
        "MANTRI",
        "cluster_study",
        "run",
        "sigma_study",
        "sizes",
    ),
    "pipelines._train": (
        "CURVE_FRACTIONS",
        "NOISE_WARNINGS",
        "TrainConfig",
        "build_predictor",
        "quiet_known_noise",
        "run_training",
        "write_serving_example",
    ),
    "pipelines._headline": (
        "ALL",
        "CONTROLS",
        "CORRECTIONS",
        "GAIN_FIGURES",
        "compare_gains",
        "fidelity_verdict",
        "flat_figures",
        "headline",
        "model_quality",
        "prediction_verdict",
        "render_headline",
        "t_interval",
    ),
    "pipelines._demo": (
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
    ),
    "pipelines.flowbench._read": (
        "ANOMALY_FOLDERS",
        "NUMERIC_COLUMNS",
        "OPTIONAL_COLUMNS",
        "RAW_COLUMNS",
        "STRING_COLUMNS",
        "FlowBenchFormatError",
        "list_run_files",
        "read_flowbench",
        "read_run",
        "resolve_parsed_dir",
        "_SCHEMA",
        "_load_careful",
        "_load_fast",
    ),
}

#: Private names a module re-exports from one of its parts because code outside reads
#: them at the old path (see :data:`BEFORE`).
PRIVATE_REEXPORTS = {("pipelines._collect", "_scale_for_nominal")}


def _path(module: str) -> Path:
    return PIPELINES.joinpath(*module.split(".")[1:]).with_suffix(".py")


def _parts(module: str) -> list[str]:
    """The module and the modules named after it (``_collect`` -> ``_collect_*``)."""
    path = _path(module)
    package = module.rsplit(".", 1)[0]
    return sorted(
        f"{package}.{p.stem}"
        for p in path.parent.glob(f"{path.stem}*.py")
        if p.stem == path.stem or p.stem.startswith(path.stem + "_")
    )


def _definitions(module: str) -> set[str]:
    """Top-level functions, classes and assigned names of a module (``__all__`` aside)."""
    return top_level_names(_path(module))


def _private_imports(module: str) -> list[tuple[str, str]]:
    """``(source module, name)`` of every ``from pipelines... import _name`` in a module."""
    found = []
    for node in ast.walk(ast.parse(_path(module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pipelines"):
            found += [(node.module, a.name) for a in node.names if a.name.startswith("_")]
    return found


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_every_old_name_is_still_importable_and_is_the_new_object(module):
    old = importlib.import_module(module)
    parts = [p for p in _parts(module) if p != module]
    assert parts, f"{module} has no parts"
    homes = {p: _definitions(p) for p in parts}
    for name in BEFORE[module]:
        obj = getattr(old, name)  # AttributeError names what went missing
        defined_in = [p for p, names in homes.items() if name in names]
        if defined_in:  # moved: the old module hands out the part's very object
            (home,) = defined_in
            assert getattr(importlib.import_module(home), name) is obj, (module, name, home)
    for name in getattr(old, "__all__", ()):
        assert hasattr(old, name), (module, name)


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_no_definition_is_duplicated_across_the_parts(module):
    seen: dict[str, str] = {}
    for part in _parts(module):
        for name in _definitions(part):
            assert name not in seen, f"{name} defined in {seen[name]} and {part}"
            seen[name] = part
    # each public callable lives in exactly the part its __module__ says
    old = importlib.import_module(module)
    for name in BEFORE[module]:
        obj = getattr(old, name)
        home = getattr(obj, "__module__", None)
        if callable(obj) and home in seen.values():
            assert seen[name] == home, name


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_no_part_reads_another_parts_private_names(module):
    parts = set(_parts(module))
    for part in parts:
        crossing = [
            (src, name)
            for src, name in _private_imports(part)
            if src in parts and src != part and (part, name) not in PRIVATE_REEXPORTS
        ]
        assert not crossing, f"{part} imports private names of its siblings: {crossing}"


def test_no_module_of_the_package_is_over_the_limit():
    long = {
        str(p.relative_to(PIPELINES)): n
        for p in PIPELINES.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_packages_export_the_same_objects():
    import pipelines
    import pipelines.flowbench as flowbench
    from pipelines import _collect, _demo, _headline, _train
    from pipelines.flowbench import _read

    for name in ("collect", "collect_cells", "offered_load", "scales_for_load"):
        assert getattr(pipelines, name) is getattr(_collect, name), name
    assert pipelines.run_training is _train.run_training
    assert pipelines.run_demo is _demo.run_demo
    assert pipelines.headline is _headline.headline
    for name in ("ANOMALY_FOLDERS", "RAW_COLUMNS", "FlowBenchFormatError", "read_run"):
        assert getattr(flowbench, name) is getattr(_read, name), name
