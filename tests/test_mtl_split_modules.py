"""No module in ``mtl/`` is over about 400 lines; the two long ones were split by job.

``_predictor`` keeps :class:`~mtl.Predictor` (construction, per-pair entries, persistence)
and ``load_predictor``; the artifact format and its checks moved to ``_predictor_format``,
the scheduler's protocol to ``_predictor_protocol``, the scoring paths to the
``PredictorScoring`` mixin of ``_predictor_scoring`` and the MLflow URI resolution to
``_predictor_mlflow``. ``_grouped`` keeps the estimator's parameters, checks and ``fit``; its
warnings moved to ``_grouped_warnings``, one solved model to ``_grouped_core`` and the
prediction methods to the ``GroupedPrediction`` mixin of ``_grouped_predict``.

Every name a module offered before its split is still importable from it and is the very
object its new module defines; nothing is defined twice across a module and its parts (nor a
method in both a class and its mixin); no part reads a private name of another part; the
mixins hold no state of their own; and no module of the package is over 400 lines.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest
from _split_checks import top_level_names

MTL = Path(__file__).resolve().parents[1] / "mtl"

#: Longest a module of ``mtl/`` may be.
MAX_LINES = 400

#: The public top-level names each module offered before its split, and the private names
#: other code reads from it (``tests/test_mtl_predictor.py`` and ``tests/test_signing.py``
#: read ``_canonical`` and ``_sha256``, ``tests/test_utilities.py`` ``_warn_if_collapsed``).
BEFORE: dict[str, tuple[str, ...]] = {
    "mtl._predictor": (
        "ARRAYS_FILE",
        "FORMAT",
        "FORMAT_VERSION",
        "MAX_META_BYTES",
        "META_FILE",
        "ArtifactError",
        "Predictor",
        "PredictorInputError",
        "PredictorProtocol",
        "load_predictor",
        "_canonical",
        "_sha256",
    ),
    "mtl._grouped": (
        "AUTO_EXPLICIT_MAX_NNZ",
        "COLLAPSE_FACTOR",
        "DegenerateModelWarning",
        "GroupedMTLSVC",
        "UnseenWorkloadWarning",
        "warn_unseen_workloads",
        "_warn_if_collapsed",
    ),
}

#: Private names whose definition moved to a part under a public name: (module, old name)
#: -> (part, new name). The old module imports the new name under the old one.
RENAMED = {
    ("mtl._predictor", "_canonical"): ("mtl._predictor_format", "canonical"),
    ("mtl._predictor", "_sha256"): ("mtl._predictor_format", "sha256"),
    ("mtl._grouped", "_warn_if_collapsed"): ("mtl._grouped_warnings", "warn_if_collapsed"),
}

#: Each class that kept its name and the mixin that took some of its methods.
MIXINS = {
    ("mtl._predictor", "Predictor"): ("mtl._predictor_scoring", "PredictorScoring"),
    ("mtl._grouped", "GroupedMTLSVC"): ("mtl._grouped_predict", "GroupedPrediction"),
}


def _path(module: str) -> Path:
    return MTL / (module.split(".", 1)[1] + ".py")


def _parts(module: str) -> list[str]:
    """The module and the modules named after it (``_grouped`` -> ``_grouped_*``)."""
    stem = _path(module).stem
    return sorted(
        f"mtl.{p.stem}"
        for p in MTL.glob(f"{stem}*.py")
        if p.stem == stem or p.stem.startswith(stem + "_")
    )


def _definitions(module: str) -> set[str]:
    """Top-level functions, classes and assigned names of a module (``__all__`` aside)."""
    return top_level_names(_path(module))


def _private_imports(module: str) -> list[tuple[str, str]]:
    """``(source module, name)`` of every relative or ``mtl`` import of a ``_name``."""
    found = []
    for node in ast.walk(ast.parse(_path(module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            source = f"mtl.{node.module}" if node.level == 1 else (node.module or "")
            if source.startswith("mtl"):
                found += [(source, a.name) for a in node.names if a.name.startswith("_")]
    return found


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_every_old_name_is_still_importable_and_is_the_new_object(module):
    old = importlib.import_module(module)
    parts = [p for p in _parts(module) if p != module]
    assert len(parts) >= 2, f"{module} has parts {parts}"
    homes = {p: _definitions(p) for p in parts}
    for name in BEFORE[module]:
        obj = getattr(old, name)  # AttributeError names what went missing
        home, new_name = RENAMED.get((module, name), (None, name))
        if home is None:
            defined_in = [p for p, names in homes.items() if name in names]
            assert len(defined_in) <= 1, (name, defined_in)
            home = defined_in[0] if defined_in else module
        assert getattr(importlib.import_module(home), new_name) is obj, (module, name, home)


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_no_definition_is_duplicated_across_the_parts(module):
    seen: dict[str, str] = {}
    for part in _parts(module):
        for name in _definitions(part):
            assert name not in seen, f"{name} defined in {seen[name]} and {part}"
            seen[name] = part
    old = importlib.import_module(module)
    for name in BEFORE[module]:  # each public callable lives in the part its __module__ says
        obj = getattr(old, name)
        home = getattr(obj, "__module__", None)
        if callable(obj) and home in seen.values() and not name.startswith("_"):
            assert seen[name] == home, name


@pytest.mark.parametrize("module", sorted(BEFORE))
def test_no_part_reads_another_parts_private_names(module):
    parts = set(_parts(module))
    for part in parts:
        crossing = [(src, n) for src, n in _private_imports(part) if src in parts and src != part]
        assert not crossing, f"{part} imports private names of its siblings: {crossing}"


@pytest.mark.parametrize(("owner", "mixin"), sorted(MIXINS.items()))
def test_a_mixin_adds_methods_without_state_or_overlap(owner, mixin):
    cls = getattr(importlib.import_module(owner[0]), owner[1])
    mix = getattr(importlib.import_module(mixin[0]), mixin[1])
    assert issubclass(cls, mix)
    own = {k for k, v in vars(cls).items() if inspect.isfunction(v)}
    mixed = {k for k, v in vars(mix).items() if inspect.isfunction(v)}
    assert mixed, mix
    assert not own & mixed, f"defined in both {cls.__name__} and {mix.__name__}: {own & mixed}"
    assert "__init__" not in vars(mix)  # no state of its own: the class sets everything
    for name in mixed:  # the class's instances run the mixin's very code
        assert getattr(cls, name) is getattr(mix, name), name


def test_the_package_exports_the_parts_objects():
    import mtl
    from mtl import (
        _grouped,
        _grouped_warnings,
        _predictor,
        _predictor_format,
        _predictor_protocol,
        _predictor_scoring,
    )

    assert mtl.Predictor is _predictor.Predictor
    assert mtl.load_predictor is _predictor.load_predictor
    assert mtl.ArtifactError is _predictor_format.ArtifactError
    assert mtl.PredictorInputError is _predictor_scoring.PredictorInputError
    assert mtl.PredictorProtocol is _predictor_protocol.PredictorProtocol
    assert mtl.GroupedMTLSVC is _grouped.GroupedMTLSVC
    for name in ("DegenerateModelWarning", "UnseenWorkloadWarning"):
        assert getattr(mtl, name) is getattr(_grouped_warnings, name), name
    assert set(mtl.__all__) <= set(dir(mtl))


def test_the_fit_reads_the_solver_switch_where_it_always_was(monkeypatch):
    # ``AUTO_EXPLICIT_MAX_NNZ`` stays in ``_grouped``, next to the fit that reads it
    from mtl import _grouped, make_grouped_classification

    X, y = make_grouped_classification(120, 2, 2, 3, seed=0)
    assert _grouped.GroupedMTLSVC(calibration_cv=None).fit(X, y).solver_ == "explicit"
    monkeypatch.setattr(_grouped, "AUTO_EXPLICIT_MAX_NNZ", 0)
    assert _grouped.GroupedMTLSVC(calibration_cv=None).fit(X, y).solver_ == "implicit"


def test_no_module_of_the_package_is_over_the_limit():
    long = {
        p.name: n
        for p in MTL.glob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"
