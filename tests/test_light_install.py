"""The base install: ``mtl`` and ``sim_bridge`` work without the heavy extras.

A scheduler that loads a predictor, or a user who fits a model or runs the simulator, installs
``pip install straggler-mtl`` (numpy, scipy, pandas, pyarrow, scikit-learn, joblib, tqdm).
MLflow, Optuna, Matplotlib and Jinja2 are the ``pipelines`` extra and Dask the ``dask`` extra.

Each check runs a fresh interpreter whose ``sys.meta_path`` starts with a finder that refuses
the extras (``ModuleNotFoundError``, exactly what an absent package raises), then walks the
loop: simulate -> trace -> labels -> fit -> Predictor saved and loaded -> simulate with the
loaded predictor placing tasks. A top-level ``import mlflow`` (or optuna, matplotlib, dask)
anywhere reachable from that loop makes the interpreter fail. The control case blocks a module
the loop does need (numpy) and must fail the same way, which shows the finder really blocks.

A scheduler that only loads and queries a saved predictor does not import scikit-learn at all
(``import mtl`` loads the estimators on first use): that case blocks ``sklearn`` too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXTRAS = ("mlflow", "optuna", "matplotlib", "dask", "distributed", "jinja2")

#: the finder: refuses every module whose top-level package is in argv[1] (comma separated)
BLOCKER = textwrap.dedent(
    """
    import sys

    BLOCKED = frozenset(sys.argv[1].split(","))


    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
            return None


    already = sorted(BLOCKED & {m.partition(".")[0] for m in sys.modules})
    assert not already, f"imported before the finder was installed: {already}"
    sys.meta_path.insert(0, Blocker())
    """
)

#: the loop a light install must run
LOOP = textwrap.dedent(
    """
    import tempfile

    import numpy as np

    import mtl
    import sim_bridge

    run = sim_bridge.simulate("SYN", "late", nodes=10, hours=0.15, seed=1)
    tasks = run.tasks
    labels = sim_bridge.label_stragglers(tasks)
    keep = labels.notna().to_numpy()
    counters = [c for c in tasks.columns if c.startswith("c_")]
    X = tasks.loc[keep, ["node", "workload", *counters]].reset_index(drop=True)
    y = labels[keep].to_numpy().astype(int)
    assert len(np.unique(y)) == 2, "the trace must hold both classes"

    model = mtl.GroupedMTLSVC().fit(X, y)
    pred = mtl.Predictor.from_estimator(model)
    where = pred.save(tempfile.mkdtemp())
    again = mtl.load_predictor(where)
    assert np.array_equal(again.predict_proba(X), pred.predict_proba(X))
    assert np.allclose(again.predict_proba(X), model.predict_proba(X)[:, 1])

    placed = sim_bridge.simulate(
        "SYN", "late", sim_bridge.PredictorPlacement(again), nodes=10, hours=0.15, seed=1
    )
    assert placed.summary["jobs"] > 0 and len(placed.tasks) > 0

    try:
        mtl.load_predictor("models:/straggler-predictor/1")
    except ImportError as exc:  # the MLflow branch names the extra, not a bare module
        assert "straggler-mtl[pipelines]" in str(exc), exc
    else:
        raise AssertionError("an MLflow URI loaded without MLflow")

    leaked = sorted(BLOCKED & {m.partition(".")[0] for m in sys.modules})
    assert not leaked, leaked
    print("light install OK")
    """
)


def _run(code: str, blocked: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-c", code, ",".join(blocked)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_mtl_and_sim_bridge_run_the_loop_without_the_extras(tmp_path):
    done = _run(BLOCKER + LOOP, EXTRAS, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "light install OK" in done.stdout


def test_the_finder_blocks_what_it_names(tmp_path):
    # control: the same loop with numpy blocked must fail at the import of a blocked module,
    # so a pass above means the extras were truly unavailable, not that the finder did nothing
    done = _run(BLOCKER + LOOP, (*EXTRAS, "numpy"), tmp_path)
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named 'numpy' (blocked)" in done.stderr


@pytest.mark.parametrize("extra", EXTRAS[:3])
def test_a_top_level_import_of_an_extra_is_caught(tmp_path, extra):
    # what a top-level ``import mlflow`` in a module of the loop would do: the loop fails
    done = _run(BLOCKER + f"import {extra}\n" + LOOP, EXTRAS, tmp_path)
    assert done.returncode != 0
    assert f"No module named '{extra}' (blocked)" in done.stderr


def test_a_scheduler_loads_and_queries_a_predictor_without_scikit_learn(tmp_path):
    # the scheduler's side: no estimator, so no scikit-learn (nor scipy.stats, nor the extras)
    import numpy as np

    import mtl

    X, y = mtl.make_grouped_classification(300, 3, 2, 3, seed=4)
    pred = mtl.Predictor.from_estimator(mtl.GroupedMTLSVC(variant="f0t").fit(X, y))
    pred.save(tmp_path / "model")
    X.to_parquet(tmp_path / "rows.parquet")
    np.save(tmp_path / "expected.npy", pred.predict_proba(X))
    row = X.iloc[0]
    one = pred.straggler_probability(row["node"], row["workload"], row.to_dict())
    code = BLOCKER + textwrap.dedent(
        f"""
        import numpy as np
        import pandas as pd

        from mtl import load_predictor

        pred = load_predictor({str(tmp_path / "model")!r})
        X = pd.read_parquet({str(tmp_path / "rows.parquet")!r})
        assert np.array_equal(pred.predict_proba(X), np.load({str(tmp_path / "expected.npy")!r}))
        row = X.iloc[0]
        p = pred.straggler_probability(row["node"], row["workload"], row.to_dict())
        assert p == {one!r}, p
        heavy = sorted(BLOCKED & {{m.partition(".")[0] for m in sys.modules}})
        assert not heavy and "scipy.stats" not in sys.modules, heavy
        print("scheduler OK")
        """
    )
    done = _run(code, (*EXTRAS, "sklearn"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert "scheduler OK" in done.stdout


def test_cli_without_the_pipelines_extra_says_what_to_install(tmp_path):
    code = BLOCKER + "from pipelines.cli import main\nraise SystemExit(main(['--help']))\n"
    done = _run(code, EXTRAS, tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'straggler-mtl[pipelines]'" in lines[0]
    assert "mlflow" in lines[0] and "Traceback" not in done.stderr


def test_the_cli_checks_every_module_of_the_pipelines_extra():
    # the CLI's missing-extra check names what pyproject's `pipelines` extra installs
    import re
    import tomllib

    from pipelines.cli import PIPELINES_EXTRA

    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ;]", req, maxsplit=1)[0].lower() for req in extra["pipelines"]}
    assert set(PIPELINES_EXTRA) == names


def test_cli_without_jinja2_says_what_to_install(tmp_path):
    # the report renders with jinja2, imported at module level: without it, the one-line hint
    code = BLOCKER + "from pipelines.cli import main\nraise SystemExit(main(['--help']))\n"
    done = _run(code, ("jinja2",), tmp_path)
    assert done.returncode == 2, done.stderr
    assert "missing: jinja2" in done.stderr and "Traceback" not in done.stderr


def test_the_typed_packages_ship_their_marker():
    for package in ("mtl", "sim_bridge"):
        assert (REPO / package / "py.typed").is_file()
