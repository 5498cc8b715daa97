"""The hostile-input corpus of issue 16: every case gets a named error (exit code 2 on the
CLI, a message naming the parameter, file, row or column and the bad value) or its documented
handling, and no traceback reaches a CLI user.

The signing cases (unsigned, mis-signed, re-sealed, swapped artifacts; oversized JSON) live in
``tests/test_signing.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from test_pipelines_helpers import make_trace

from mtl import DegenerateModelWarning, GroupedMTLSVC, make_grouped_classification
from pipelines._dataset import TraceError, load_trace, validate_trace
from pipelines._grid import load_grid, variant_grid
from pipelines._io import (
    INCOMPLETE_MARKER,
    OutputError,
    begin_output,
    end_output,
    require_complete,
)
from pipelines.cli import main


def run(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and stderr of the CLI (argparse's own errors exit through SystemExit)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


# ---------------------------------------------------------------------- CLI values
CLI_CASES = [
    (["simulate", "--beta", "0.5"], ["--beta", "0.5", "> 1"]),
    (["simulate", "--beta", "nan"], ["--beta", "nan"]),
    (["simulate", "--hours", "inf"], ["--hours", "inf"]),
    (["simulate", "--hours", "-1"], ["--hours", "-1"]),
    (["simulate", "--policy", "late", "--param", "bogus=1"], ["bogus=1", "late accepts"]),
    (["simulate", "--policy", "late", "--param", "quantile=5"], ["quantile=5", "late"]),
    (["simulate", "--policy", "spark", "--param", "quantile=5"], ["quantile", "5"]),
    (["collect", "--nodes", "0"], ["--nodes", "'0'"]),
    (["collect", "--hours", "inf"], ["--hours", "inf"]),
    (["evaluate", "--traces", "x", "--pairs", "0"], ["--pairs", "'0'"]),
    (["train", "--traces", "x", "--tracking-uri", "bogus://x"], ["--tracking-uri", "bogus"]),
    (["train", "--traces", "x", "--beta", "1"], ["--beta", "'1'"]),
]


@pytest.mark.parametrize(("argv", "named"), CLI_CASES, ids=lambda v: " ".join(v))
def test_bad_cli_value_exits_2_naming_it(argv, named, tmp_path, capsys):
    out = tmp_path / "out"
    short = ["--hours", "0.02"] if argv[0] == "simulate" else []  # argv's own --hours wins
    code, err = run([argv[0], *short, *argv[1:], "--out", str(out)], capsys)
    assert code == 2
    for piece in named:
        assert piece in err, (piece, err)
    assert not (out / "summary.json").exists()


def test_out_is_an_existing_file(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("keep me")
    code, err = run(["simulate", "--hours", "0.02", "--out", str(f)], capsys)
    assert code == 2 and f"--out {f}: is an existing file" in err
    assert f.read_text() == "keep me"


def test_out_cannot_be_created(tmp_path, capsys):
    """A directory below a file cannot be made (what a read-only parent also gives; a
    read-only directory itself cannot be tested as root, who may write anywhere)."""
    (tmp_path / "file").write_text("x")
    bad = tmp_path / "file" / "run"
    code, err = run(["simulate", "--hours", "0.02", "--out", str(bad)], capsys)
    assert code == 2 and f"--out {bad}: cannot write there" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_out_read_only_directory(tmp_path, capsys):  # pragma: no cover - not run as root
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        code, err = run(["simulate", "--hours", "0.02", "--out", str(ro)], capsys)
    finally:
        ro.chmod(0o700)
    assert code == 2 and f"--out {ro}: cannot write there" in err


def test_earlier_results_need_overwrite(tmp_path, capsys):
    out = tmp_path / "sim"
    args = ["simulate", "--hours", "0.02", "--out", str(out)]
    assert run(args, capsys)[0] == 0
    first = (out / "summary.json").read_bytes()
    assert not (out / INCOMPLETE_MARKER).exists()
    code, err = run([*args, "--seed", "1"], capsys)
    assert code == 2 and f"--out {out} holds the results of an earlier run" in err
    assert "--overwrite" in err and (out / "summary.json").read_bytes() == first
    assert run([*args, "--seed", "1", "--overwrite"], capsys)[0] == 0
    assert json.loads((out / "summary.json").read_text()) != json.loads(first)


def test_failed_run_leaves_no_trace_in_a_fresh_directory(tmp_path, capsys):
    out = tmp_path / "never"
    code, _ = run(["simulate", "--policy", "nope", "--hours", "0.02", "--out", str(out)], capsys)
    assert code == 2 and not out.exists()


# ---------------------------------------------------------------------- crash consistency
def test_interrupted_output_set_is_refused_by_readers(tmp_path):
    """A run killed after writing part of its set leaves the marker; readers refuse it."""
    out = tmp_path / "trace"
    claim = begin_output(out, command="collect")
    make_trace(seed=1).to_parquet(out / "tasks.parquet")  # the new trace, then the kill
    with pytest.raises(OutputError, match=f"{out}: incomplete output set .*collect"):
        load_trace(out)
    end_output(claim, ok=True)
    assert len(load_trace(out)) == len(make_trace(seed=1))


def test_killed_simulate_is_refused_or_complete(tmp_path):
    """SIGKILL ``straggler simulate`` at some moment after it claimed --out: whatever it left
    is either refused by the trace reader or a complete, loadable trace."""
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "pipelines.cli", "simulate", "--hours", "6", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out / INCOMPLETE_MARKER).exists() and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    if (out / INCOMPLETE_MARKER).exists():
        with pytest.raises((OutputError, FileNotFoundError)):
            load_trace(out)
    else:  # it finished before the kill
        assert len(load_trace(out)) > 0


def test_killed_rerun_over_old_results_is_refused(tmp_path):
    """The case that matters: a finished run's files, then a rerun (``--overwrite``,
    streaming) killed once its new ``tasks.parquet`` is on disk beside the old
    ``summary.json``. The reader must refuse the mix (OutputError), not read it."""
    out = tmp_path / "mixed"
    base = [sys.executable, "-m", "pipelines.cli", "simulate", "--no-progress", "--out", str(out)]
    subprocess.run([*base, "--hours", "0.05"], check=True, capture_output=True)
    old = (out / "summary.json").read_bytes()
    assert len(load_trace(out)) > 0
    proc = subprocess.Popen(
        [*base, "--hours", "6", "--stream", "--overwrite"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:  # until the new run has claimed --out and streamed its first rows
            marker = (out / INCOMPLETE_MARKER).exists()
            if marker and (out / "tasks.parquet").exists():
                break
            assert proc.poll() is None, "the rerun ended before it was killed"
            assert time.monotonic() < deadline, "the rerun wrote no tasks.parquet in 120 s"
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert (out / INCOMPLETE_MARKER).exists()
    if (out / "summary.json").exists():
        assert (out / "summary.json").read_bytes() == old  # the stale summary is still there
    with pytest.raises(OutputError, match="incomplete"):
        load_trace(out)


def test_second_writer_is_refused_naming_the_holder(tmp_path, capsys):
    """Two runs into one --out: the second is refused with the first's pid; once the first
    is killed (its lock dies with it) the directory may be written again."""
    out = tmp_path / "busy"
    code = (
        "import sys, time\n"
        "from pipelines._io import begin_output\n"
        f"begin_output({str(out)!r}, command='train')\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        code2, err = run(["simulate", "--hours", "0.02", "--out", str(out)], capsys)
        assert code2 == 2 and f"--out {out} is in use by pid {proc.pid} (straggler train)" in err
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
    with pytest.raises(OutputError, match="incomplete output set .*train"):
        require_complete(out)  # what load_trace checks first
    assert run(["simulate", "--hours", "0.02", "--out", str(out)], capsys)[0] == 0
    assert len(load_trace(out)) > 0


# ---------------------------------------------------------------------- traces
def _write(frame: pd.DataFrame, tmp_path):
    d = tmp_path / "t"
    d.mkdir()
    frame.to_parquet(d / "tasks.parquet")
    return d


def _edit(col: str, row: int, value) -> pd.DataFrame:
    t = make_trace(n_nodes=2, n_jobs=6, seed=2)
    if isinstance(value, str):
        t[col] = t[col].astype(str)  # a text column (Parquet stores one type per column)
    t.loc[row, col] = value
    return t


TRACE_CASES = {
    "duplicate rows": (
        lambda: pd.concat([make_trace(n_nodes=2, n_jobs=6, seed=2)] * 2, ignore_index=True),
        ["duplicate row key (job_id='j0', task_id='j0_t0', attempt=0)", "48 duplicate row"],
    ),
    "end before launch": (
        lambda: _edit("end_time", 3, 0.0),
        ["'end_time'", "row 3", "0.0", "before launch_time"],
    ),
    "zero duration": (
        lambda: _edit("duration", 4, 0.0).assign(
            end_time=lambda f: f["launch_time"] + f["duration"]
        ),
        ["'duration'", "0.0", "row 4", "finished"],
    ),
    "duration disagrees": (
        lambda: _edit("duration", 5, 1234.5),
        ["'duration'", "1234.5", "row 5", "end_time - launch_time"],
    ),
    "counter 1e308": (
        lambda: _edit("c_2", 6, 1e308),
        ["'c_2'", "1e+308", "row 6"],
    ),
    "counter inf": (lambda: _edit("c_1", 2, np.inf), ["'c_1'", "inf", "row 2"]),
    "text time": (
        lambda: _edit("launch_time", 1, "soon"),
        ["'launch_time'", "'soon'", "row 1"],
    ),
}


@pytest.mark.parametrize("case", list(TRACE_CASES))
def test_impossible_trace_named(case, tmp_path):
    build, named = TRACE_CASES[case]
    d = _write(build(), tmp_path)
    with pytest.raises(TraceError) as info:
        load_trace(d)
    msg = str(info.value)
    assert str(d / "tasks.parquet") in msg
    for piece in named:
        assert piece in msg, (piece, msg)


def test_duplicate_trace_exits_2_on_the_cli(tmp_path, capsys):
    d = _write(pd.concat([make_trace(seed=3)] * 2, ignore_index=True), tmp_path)
    code, err = run(["train", "--traces", str(d), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and "duplicate row key" in err and str(d) in err


def test_killed_copy_may_last_zero_seconds():
    """Documented handling: only a *finished* attempt must take time."""
    t = make_trace(n_nodes=2, n_jobs=4, seed=2)
    t.loc[0, ["duration", "outcome"]] = [0.0, "killed"]
    t.loc[0, "end_time"] = t.loc[0, "launch_time"]
    assert len(validate_trace(t)) == len(t)


# ---------------------------------------------------------------------- model parameters
@pytest.mark.parametrize(
    ("param", "value"),
    [("nu", 1e-300), ("lambda0", 1e9), ("omega", -1.0), ("tau", float("nan")), ("nu", "1")],
)
def test_regulariser_out_of_range_named(param, value):
    X, y = make_grouped_classification(60, 2, 2, 3, seed=0)
    with pytest.raises(ValueError, match=rf"^{param} must be"):
        GroupedMTLSVC(variant="f0nlt", **{param: value}).fit(X, y)


def test_huge_regularisers_warn_that_probabilities_collapsed():
    X, y = make_grouped_classification(400, 3, 2, 3, seed=0)
    with pytest.warns(DegenerateModelWarning, match=r"collapsed.*base rate 0\.\d+"):
        m = GroupedMTLSVC(lambda0=1e6, nu=1e6, omega=1e6).fit(X, y)
    assert m.predict_proba(X)[:, 1].mean() * 10 < y.mean()  # the warning's premise
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        GroupedMTLSVC().fit(X, y)  # a sane fit does not warn


@pytest.mark.parametrize(
    ("doc", "named"),
    [
        ({"nu": [1.0, 1e-300]}, ["'nu'", "1e-300"]),
        ({"lambda0": [1e12]}, ["'lambda0'", "1000000000000.0"]),
        ({"tau": ["inf", -2]}, ["'tau'", "-2"]),
        ({"threshold": [1.5]}, ["'threshold'", "1.5"]),
        ({"bogus": [1]}, ["'bogus'"]),
    ],
)
def test_grid_file_value_named(doc, named, tmp_path):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError) as info:
        load_grid(path)
    msg = str(info.value)
    assert str(path) in msg
    for piece in named:
        assert piece in msg


def test_all_infinite_grid_is_one_named_error(tmp_path, capsys):
    grid = {k: ["inf"] for k in ("lambda0", "nu", "omega", "tau")}
    with pytest.raises(ValueError, match="lambda0=inf, nu=inf.*only inf"):
        variant_grid({k: [float(v) for v in vs] for k, vs in grid.items()}, ("w0", "node"))
    path = tmp_path / "inf.json"
    path.write_text(json.dumps(grid))
    d = _write(make_trace(seed=4), tmp_path)
    code, err = run(
        ["train", "--traces", str(d), "--grid", str(path), "--out", str(tmp_path / "o")], capsys
    )
    assert code == 2 and err.count("error:") == 1 and "only inf" in err


def test_more_pairs_than_available_says_how_many():
    """Documented handling of ``evaluate --pairs 100000``: a warning naming both numbers."""
    from pipelines._splits import leave_pair_out_splits

    f = pd.DataFrame(
        {
            "node": ["a", "b"] * 50,
            "workload": "W",
            "launch_time": range(100),
            "job_id": "j",
            "task_id": [str(i) for i in range(100)],
        }
    )
    with pytest.warns(UserWarning, match="n_pairs=100000: only 2 .* using those 2"):
        assert len(leave_pair_out_splits(f, n_pairs=100000)) == 2


# ---------------------------------------------------------------------- serving
@pytest.fixture(scope="module")
def pyfunc_model(tmp_path_factory):
    import types

    from mtl import Predictor
    from pipelines._pyfunc import StragglerPyfunc

    X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
    art = Predictor.from_estimator(GroupedMTLSVC().fit(X, y)).save(tmp_path_factory.mktemp("p"))
    model = StragglerPyfunc()
    model.load_context(types.SimpleNamespace(artifacts={"predictor": str(art)}))
    return model, X


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda X: X.assign(c_1=np.nan), ["'c_1'", "nan", "row 0"]),
        (lambda X: X.assign(c_0=np.inf), ["'c_0'", "inf"]),
        (lambda X: X.drop(columns="c_2"), ["c_2"]),
        (lambda X: X.assign(c_0="fast"), ["fast"]),
    ],
)
def test_pyfunc_bad_input_is_a_clean_400(pyfunc_model, edit, named):
    from mlflow.exceptions import MlflowException

    model, X = pyfunc_model
    with pytest.raises(MlflowException) as info:
        model.predict(None, edit(X.head(3)))
    exc = info.value
    assert exc.get_http_status_code() == 400
    body = exc.serialize_as_json()
    assert "Traceback" not in body and "/" not in exc.message and "stack_trace" not in body
    for piece in named:
        assert piece in exc.message
    assert model.predict(None, X.head(3))["straggler_probability"].between(0, 1).all()


# ---------------------------------------------------------------------- model URIs
def test_models_uri_without_tracking_is_named_and_creates_no_database(tmp_path):
    code = (
        "from mtl import ArtifactError, load_predictor\n"
        "try:\n"
        "    load_predictor('models:/straggler-predictor/1')\n"
        "except ArtifactError as exc:\n"
        "    print(exc)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "models:/straggler-predictor/1: no MLflow tracking URI" in done.stdout
    assert not (tmp_path / "mlflow.db").exists()


def test_missing_registered_model_is_named(tmp_path):
    from mtl import ArtifactError, load_predictor

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with pytest.raises(ArtifactError, match="models:/nope/3: cannot download the model .*nope"):
        load_predictor("models:/nope/3", tracking_uri=uri)


def test_frame_without_ids_is_refused_by_a_grouped_model():
    """Documented handling: a model fitted on named nodes/workloads needs both id columns;
    one fitted on a plain array (or the w0-only variant) does not."""
    from mtl import Predictor, PredictorInputError

    X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
    bare = X.drop(columns=["node", "workload"])
    model = GroupedMTLSVC().fit(X, y)
    with pytest.raises(ValueError, match="no 'node' and 'workload' columns.*2 node"):
        model.predict_proba(bare)
    with pytest.raises(PredictorInputError, match="no 'node' and 'workload' columns"):
        Predictor.from_estimator(model).predict_proba(bare)
    shared = GroupedMTLSVC(variant="f0").fit(X, y)
    assert np.array_equal(shared.predict_proba(bare), shared.predict_proba(X))
    plain = GroupedMTLSVC().fit(bare.to_numpy(), y)
    unnamed = bare.set_axis(["x0", "x1", "x2"], axis=1)
    assert Predictor.from_estimator(plain).predict_proba(unnamed).shape == (len(X),)


def test_unseen_workload_is_scored_with_a_warning():
    """Documented handling: rows of a workload never seen in training are scored from the
    shared blocks, and a warning names the workload and the row count."""
    from mtl import Predictor, UnseenWorkloadWarning

    X, y = make_grouped_classification(200, 2, 2, 3, seed=0)
    model = GroupedMTLSVC().fit(X, y)
    new = X.head(4).assign(workload="FB2010")
    with pytest.warns(UnseenWorkloadWarning, match=r"4 row\(s\) of workload\(s\) \['FB2010'\]"):
        model.predict_proba(new)
    pred = Predictor.from_estimator(model)
    with pytest.warns(UnseenWorkloadWarning, match="FB2010"):
        pred.predict_proba(new)
    with warnings.catch_warnings():  # once per predictor and workload: a scheduler scores
        warnings.simplefilter("error", UnseenWorkloadWarning)  # thousands of batches
        pred.predict_proba(new)
    with pytest.warns(UnseenWorkloadWarning, match="SPARK"):  # a new unseen one is told
        pred.predict_proba(new.assign(workload="SPARK"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenWorkloadWarning)
        model.predict_proba(X)  # every workload known: silent
        GroupedMTLSVC(variant="fn").fit(X, y).predict_proba(new)  # no workload weights at all


def test_truncated_tracking_database_is_named(tmp_path, capsys):
    import sqlite3

    db = tmp_path / "mlflow.db"
    con = sqlite3.connect(db)
    con.executescript("create table t (x); " + "insert into t values (randomblob(900));" * 20)
    con.close()
    db.write_bytes(db.read_bytes()[:3000])  # a copy cut short
    d = _write(make_trace(seed=6), tmp_path)
    uri = f"sqlite:///{db}"
    code, err = run(
        ["train", "--traces", str(d), "--tracking-uri", uri, "--out", str(tmp_path / "o")],
        capsys,
    )
    assert code == 2 and f"--tracking-uri {uri}: cannot open the MLflow tracking store" in err
