"""Issue 14: ``pipelines._evaluate`` and ``pipelines._dataset`` split into modules by job.

Every name the two modules offered before the split is still importable from them and is the
very object its new module defines; no function, class or constant is defined twice across
a module and its parts.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from _split_checks import top_level_names

PIPELINES = Path(__file__).resolve().parents[1] / "pipelines"

#: The public names each module had before the split (its ``__all__`` or, for
#: ``_evaluate``, which had none, its public definitions), and the names other code reads
#: from it (``tests/test_trace_contract.py`` reads ``_dataset.straggler_thresholds``).
BEFORE = {
    "pipelines._dataset": (
        "ATTEMPT_KEY",
        "COUNTER_PREFIX",
        "DEFAULT_BETA",
        "DEFAULT_MIN_TASKS",
        "DURATION_RTOL",
        "MAX_ABS_COUNTER",
        "REQUIRED_COLUMNS",
        "LabelledTrace",
        "TraceError",
        "check_classes",
        "counter_columns",
        "label_stragglers",
        "load_trace",
        "trace_hash",
        "validate_trace",
        "straggler_thresholds",
    ),
    "pipelines._evaluate": (
        "TABLE1_MODELS",
        "TABLE2_MODELS",
        "MULTI_TASK",
        "SINGLE_BLOCK",
        "fit_and_score",
        "anomaly_flags",
        "table1",
        "table2",
        "pivot_markdown",
        "table1_markdown",
        "table1_pivot",
        "table2_markdown",
        "table2_pivot",
        "table1_claims",
        "table2_claims",
        "verdict_lines",
        "check_config",
        "run_evaluate",
    ),
}


def _parts(stem: str) -> list[Path]:
    """The module and its new parts (``_evaluate_config.py`` is a separate, older module)."""
    return sorted(
        p for p in PIPELINES.glob(f"{stem}*.py") if p.stem == stem or p.stem.startswith(stem + "_")
    )


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_every_old_name_is_still_importable_and_is_the_new_object(module):
    old = importlib.import_module(module)
    parts = [
        importlib.import_module(f"pipelines.{p.stem}")
        for p in _parts(module.rsplit(".", 1)[1])
        if f"pipelines.{p.stem}" != module and not p.stem.endswith("_config")
    ]
    assert len(parts) >= 3, parts
    for name in BEFORE[module]:
        obj = getattr(old, name)
        home = getattr(obj, "__module__", None)
        if home is not None and home.startswith(module + "_"):
            # moved: the old module hands out the new module's very object
            assert getattr(importlib.import_module(home), name) is obj, name
    # what the old module lists as its own is what it offers
    for name in old.__all__:
        assert hasattr(old, name), (module, name)


@pytest.mark.parametrize("stem", ["_dataset", "_evaluate"])
def test_no_definition_is_duplicated_across_the_parts(stem):
    seen: dict[str, str] = {}
    for path in _parts(stem):
        if path.stem.endswith("_config"):
            continue
        for name in top_level_names(path):
            assert name not in seen, f"{name} defined in {seen.get(name)} and {path.name}"
            seen[name] = path.name
    # each public entry point lives in exactly one part
    for name in BEFORE[f"pipelines.{stem}"]:
        obj = getattr(importlib.import_module(f"pipelines.{stem}"), name)
        if callable(obj) and getattr(obj, "__module__", "").startswith("pipelines."):
            assert seen[name] == obj.__module__.rsplit(".", 1)[1] + ".py", name


def test_the_pipelines_package_exports_the_same_objects():
    import pipelines
    from pipelines import _dataset, _evaluate

    assert pipelines.run_evaluate is _evaluate.run_evaluate
    for name in ("LabelledTrace", "TraceError", "check_classes", "label_stragglers"):
        assert getattr(pipelines, name) is getattr(_dataset, name), name
