"""``PAPERS.md`` (the index from paper to code) names only things that exist.

Every backticked dotted name under ``mtl``, ``sim_bridge`` or ``pipelines`` imports (longest
module prefix, then attributes); every backticked path exists, and ``path::test_name`` names
a test defined in that file; every ``straggler CMD`` is a CLI command (and ``reproduce``'s
seed one it accepts); every policy name in parentheses is registered; every
``python -m MODULE`` imports. So a rename that forgets the index fails here.
"""

from __future__ import annotations

import ast
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
INDEX = REPO / "PAPERS.md"
SEEDS = REPO.parent / "shared" / "seeds"

_TICKED = re.compile(r"`([^`]+)`")
_DOTTED = re.compile(r"^(?:mtl|sim_bridge|pipelines)(?:\.\w+)+$")
_PATH = re.compile(r"^[\w.-]+(?:/[\w.*+-]*)+(?:::\w+)?$")
_POLICY = re.compile(r"\((?:policy |placement )?`([a-z0-9_+-]+)`\)")


def _ticked() -> list[str]:
    return _TICKED.findall(INDEX.read_text(encoding="utf-8"))


def _kind(token: str) -> str:
    if _DOTTED.match(token):
        return "name"
    if token.startswith("straggler "):
        return "cli"
    if token.startswith("python -m "):
        return "module"
    if _PATH.match(token) and "*" not in token:
        return "path"
    return "other"


def _tokens(kind: str) -> list[str]:
    return sorted({t for t in _ticked() if _kind(t) == kind})


def resolve(dotted: str) -> object:
    """Import the longest importable module prefix of ``dotted``, then get the attributes.

    Examples
    --------
    >>> resolve("sim_bridge.theory.pocd_new_job").__name__
    'pocd_new_job'
    """
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name is not None and not ".".join(parts[:cut]).startswith(exc.name):
                raise  # the module exists but one of its own imports is missing
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


@cache
def _defined_tests(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test")
    )


@cache
def _cli_choices() -> dict[str, object]:
    from pipelines.cli import build_parser

    parser = build_parser()
    (sub,) = (a for a in parser._actions if a.dest == "command")
    return dict(sub.choices)


def test_the_index_is_linked_from_the_readme():
    assert "PAPERS.md" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_index_has_every_seed_and_every_kind_of_reference():
    text = INDEX.read_text(encoding="utf-8")
    for seed in ("000", "001", "002", "003", "004"):
        assert f"## Seed {seed}" in text
    kinds = {_kind(t) for t in _ticked()}
    assert {"name", "path", "cli", "module"} <= kinds


@pytest.mark.parametrize("seed", ["000", "001", "002", "003", "004"])
def test_each_seed_paper_exists_beside_the_checkout(seed):
    if not SEEDS.is_dir():
        pytest.skip(f"no seed papers at {SEEDS}")
    assert list(SEEDS.glob(f"{seed}_*.txt")), f"no seed {seed} paper in {SEEDS}"


@pytest.mark.parametrize("dotted", _tokens("name"))
def test_every_python_name_resolves(dotted):
    resolve(dotted)


@pytest.mark.parametrize("token", _tokens("path"))
def test_every_path_exists_and_every_test_is_defined(token):
    path, _, test = token.partition("::")
    assert (REPO / path).exists(), f"PAPERS.md names {path}, which is not in the repository"
    if test:
        assert test in _defined_tests(REPO / path), f"{path} defines no {test}"


@pytest.mark.parametrize("token", _tokens("module"))
def test_every_python_m_module_imports(token):
    importlib.import_module(token.split()[2])


@pytest.mark.parametrize("token", _tokens("cli"))
def test_every_cli_command_exists(token):
    words = token.split()
    choices = _cli_choices()
    assert words[1] in choices, f"PAPERS.md names `{token}`; commands: {sorted(choices)}"
    if words[1] == "reproduce" and len(words) > 2:
        (seed,) = (a for a in choices["reproduce"]._actions if a.dest == "seed_paper")
        assert words[2] in seed.choices


def test_every_policy_name_is_registered():
    import sim_bridge

    named = set(_POLICY.findall(INDEX.read_text(encoding="utf-8")))
    assert named, "no (policy `name`) entries found: did the index's format change?"
    assert named <= set(sim_bridge.list_policies()), named - set(sim_bridge.list_policies())
