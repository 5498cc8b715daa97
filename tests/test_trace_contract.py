"""The trace contract (sim_bridge.trace): one rule, one protocol, one table builder, one bind."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mtl
import sim_bridge
from sim_bridge import trace
from sim_bridge._cluster import COUNTER_NAMES

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------- the module
def test_trace_is_a_leaf_module():
    """sim_bridge.trace and its parts import nothing of the project (numpy, pandas, the stdlib
    only) but each other."""
    parts = ("trace", "_trace_schema", "_trace_columns", "_straggler_rule", "_trace_protocol")
    roots = set()
    for part in parts:
        tree = ast.parse((ROOT / "sim_bridge" / f"{part}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.removeprefix("sim_bridge.") not in parts:
                    roots.add(node.module.split(".")[0])
    assert roots <= {
        "__future__",
        "collections",
        "math",
        "operator",
        "re",
        "typing",
        "numpy",
        "pandas",
    }, roots


def test_mtl_does_not_import_sim_bridge():
    for path in (ROOT / "mtl").glob("*.py"):
        assert "sim_bridge" not in {
            (n.module or "").split(".")[0]
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.ImportFrom)
        } | {
            a.name.split(".")[0]
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.Import)
            for a in n.names
        }, path


# ---------------------------------------------------------------------------- the protocol
def _fitted_predictor() -> mtl.Predictor:
    X, y = mtl.make_grouped_classification(300, 3, 2, 4, seed=0)
    return mtl.Predictor.from_estimator(mtl.GroupedMTLSVC(variant="f0nl").fit(X, y))


def test_mtl_predictor_meets_the_protocol_structurally():
    pred = _fitted_predictor()
    assert isinstance(pred, trace.PredictorProtocol)
    assert isinstance(pred, mtl.PredictorProtocol)
    assert isinstance(sim_bridge.ConstantPredictor(0.2), trace.PredictorProtocol)
    assert not isinstance(object(), trace.PredictorProtocol)


def test_the_two_protocol_definitions_agree():
    """mtl keeps its own copy (it must not import sim_bridge); both ask for the same members
    with the same signatures."""

    def members(proto):
        names = {n for n in dir(proto) if not n.startswith("_")} | set(proto.__annotations__)
        return {
            n: str(inspect.signature(getattr(proto, n)))
            if callable(getattr(proto, n, None))
            else "attribute"
            for n in names
        }

    assert members(trace.PredictorProtocol) == members(mtl.PredictorProtocol)


# ---------------------------------------------------------------------------- the rule
def _slow_labels(job_id, attempt, outcome, duration, stage, beta, min_tasks):
    """The straggler rule as a plain loop over (job, stage) groups."""
    n = len(job_id)
    median = np.full(n, np.nan)
    label = np.full(n, np.nan)
    groups: dict = {}
    for i in range(n):
        groups.setdefault((job_id[i], stage[i]), []).append(i)
    for rows in groups.values():
        done = [duration[i] for i in rows if attempt[i] == 0 and outcome[i] == "finished"]
        if len(done) < min_tasks:
            continue
        m = float(np.median(done))
        for i in rows:
            median[i] = m
            if attempt[i] != 0:
                continue
            above = duration[i] > beta * m
            if outcome[i] == "finished" or above:
                label[i] = 1.0 if above else 0.0
    return median, label


@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["map", "reduce"]),
            st.integers(0, 2),
            st.sampled_from(["finished", "finished", "killed"]),
            st.floats(0.0, 100.0, allow_nan=False),
        ),
        max_size=40,
    ),
    beta=st.floats(1.01, 4.0),
    min_tasks=st.integers(1, 4),
)
def test_the_rule_matches_a_slow_loop(rows, beta, min_tasks):
    job, stage, attempt, outcome, duration = (
        (list(c) for c in zip(*rows, strict=True)) if rows else ([], [], [], [], [])
    )
    med, lab = trace.straggler_thresholds(
        job, attempt, outcome, duration, beta, min_tasks, stage=stage
    )
    want_med, want_lab = _slow_labels(job, attempt, outcome, duration, stage, beta, min_tasks)
    np.testing.assert_array_equal(med, want_med)
    np.testing.assert_array_equal(lab, want_lab)


def test_one_rule_one_default():
    """Every public labelling entry point is the rule of sim_bridge.trace, with its default."""
    import pipelines
    from pipelines import _dataset

    assert sim_bridge.straggler_thresholds is trace.straggler_thresholds
    assert _dataset.straggler_thresholds is trace.straggler_thresholds
    assert pipelines.DEFAULT_BETA == sim_bridge.DEFAULT_BETA == trace.DEFAULT_BETA
    for fn in (
        sim_bridge.label_stragglers,
        sim_bridge.straggler_share,
        sim_bridge.summarize,
        sim_bridge.simulate,
        _dataset.label_stragglers,
        trace.straggler_thresholds,
    ):
        assert inspect.signature(fn).parameters["beta"].default == trace.DEFAULT_BETA, fn


def test_beta_checks():
    assert trace.check_beta(0.5) == 0.5
    for bad in (0, -1.0, float("nan"), "1.3", True):
        with pytest.raises(ValueError, match="parameter beta must be > 0"):
            trace.check_beta(bad)
    for bad in (1.0, 0.9, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="beta must be a finite number > 1"):
            trace.check_beta(bad, for_training=True)


# ---------------------------------------------------------------------------- names
def test_node_names_round_trip():
    names = trace.node_names(12)
    assert names.tolist() == [trace.node_name(i) for i in range(12)]
    assert [trace.node_index(n) for n in names] == list(range(12))
    assert trace.counter_column("load1").startswith(trace.COUNTER_PREFIX)


# ---------------------------------------------------------------------------- the builder
def _kind(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series.dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(series.dtype):
        return str(series.dtype)
    if pd.api.types.is_float_dtype(series.dtype):
        return str(series.dtype)
    assert pd.api.types.is_string_dtype(series.dtype) or series.dtype == object
    assert all(isinstance(v, str) for v in series), series.name
    return "str"


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_both_engines_build_the_contract_tables(engine):
    r = sim_bridge.simulate(
        "SYN",
        "none",
        "fifo",
        nodes=4,
        hours=0.1,
        seed=2,
        interference=0.0,
        engine=engine,
        progress=False,
    )
    t, j = r.tasks, r.jobs
    assert list(t.columns) == [*trace.TASK_COLUMNS, *map(trace.counter_column, COUNTER_NAMES)]
    assert {c: _kind(t[c]) for c in trace.TASK_COLUMNS} == trace.TASK_COLUMNS
    assert all(_kind(t[c]) == "float64" for c in trace.counter_columns(t))
    assert list(j.columns) == list(trace.JOB_COLUMNS)
    assert {c: _kind(j[c]) for c in trace.JOB_COLUMNS} == trace.JOB_COLUMNS
    assert set(t["node"]) <= set(trace.node_names(4))
    np.testing.assert_array_equal(t["duration"], t["end_time"] - t["launch_time"])


def test_builder_on_no_rows_keeps_the_columns():
    empty = np.empty(0)
    t = trace.tasks_table(
        job_id=[],
        task_id=[],
        attempt=[],
        workload=[],
        node=np.empty(0, np.int64),
        phase=[],
        submit_time=empty,
        launch_time=empty,
        end_time=empty,
        outcome=[],
        input_work=empty,
        counters={"load1": empty},
    )
    assert len(t) == 0 and list(t.columns) == [*trace.TASK_COLUMNS, "c_load1"]


# ---------------------------------------------------------------------------- bind
@pytest.fixture(scope="module")
def fitted():
    pred = _fitted_predictor()
    # the model's counters c_0.. as a simulator's counters 0.., in another order, plus extras
    order = ["extra", *reversed([f[2:] for f in pred.feature_names]), "running_tasks"]
    return pred, order


@given(seed=st.integers(0, 2**32 - 1))
def test_bound_scorer_equals_predict_proba(fitted, seed):
    pred, order = fitted
    rng = np.random.default_rng(seed)
    n = 7
    readings = rng.normal(size=(n, len(order))) * 3
    nodes = rng.integers(0, 4, n)
    workload = [f"w{k}" for k in rng.integers(0, 2, n)]
    scorer = trace.bind(pred, order, node_format="n{}")
    got = [
        scorer(int(k), w, row.tolist()) for k, w, row in zip(nodes, workload, readings, strict=True)
    ]
    frame = pd.DataFrame(readings, columns=[trace.counter_column(c) for c in order])
    frame.insert(0, "workload", workload)
    # make_grouped_classification names nodes n0, n1, ... (n3 is unseen: the shared blocks)
    frame.insert(0, "node", [f"n{k}" for k in nodes])
    want = pred.predict_proba(frame)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # the batch path of the scorer is predict_proba itself
    rows = [scorer.values(r.tolist()) for r in readings]
    np.testing.assert_array_equal(
        scorer.batch(nodes.tolist(), "w0", rows), pred.predict_proba(frame.assign(workload="w0"))
    )


def test_bound_scorer_sets_exact_counters_and_caches():
    class Echo:
        threshold = 0.5
        feature_names = ["c_running_tasks", "c_free_slots", "c_load1"]

        def __init__(self):
            self.asked = []

        def straggler_probability(self, node, workload, counters):
            self.asked.append((node, workload, dict(counters)))
            return 0.1 * counters["c_running_tasks"]

    pred = Echo()
    scorer = trace.bind(pred, ["load1", "running_tasks", "free_slots"], slots=3)
    reads = []
    scorer.attach(lambda n: reads.append(n) or [9.0, -1.0, -1.0], by_running=False)
    scorer.roll(0)
    assert scorer.score(2, 1, "SYN") == pytest.approx(0.1)
    assert scorer.score(2, 1, "SYN") == pytest.approx(0.1)  # cached: asked once
    assert pred.asked == [
        ("n0002", "SYN", {"c_running_tasks": 1.0, "c_free_slots": 2.0, "c_load1": 9.0})
    ]
    assert scorer.score(2, 2, "SYN") == pytest.approx(0.2)  # same reading, exact running
    assert reads == [2] and scorer.stats["reads"] == 1 and scorer.stats["scored"] == 2
    scorer.roll(1)  # a new sample: read again
    scorer.score(2, 2, "SYN")
    assert reads == [2, 2]


def test_bind_names_a_feature_the_simulator_lacks():
    with pytest.raises(ValueError, match="'c_gpu' is not a node counter"):
        trace.bind(
            type("P", (), {"feature_names": ["c_gpu"], "straggler_probability": lambda *a: 0.0})(),
            ["load1"],
        )


# ---------------------------------------------------------------------------- validation
def _small_trace() -> pd.DataFrame:
    r = sim_bridge.simulate(
        "SYN", "none", "fifo", nodes=3, hours=0.05, seed=4, interference=0.0, progress=False
    )
    return r.tasks


def test_validated_trace_has_the_contract_kinds():
    from pipelines._dataset import validate_trace

    t = validate_trace(_small_trace())
    want = {"str": "str", "int64": "int64", "float64": "float64"}
    assert {c: _kind(t[c]) for c in trace.TASK_COLUMNS} == {
        c: want[k] for c, k in trace.TASK_COLUMNS.items()
    }


@pytest.mark.parametrize(
    ("column", "value", "words"),
    [
        ("attempt", "first", ["'attempt'", "'first'", "row 1"]),
        ("input_work", "lots", ["'input_work'", "'lots'", "row 1"]),
        ("c_load1", "high", ["'c_load1'", "'high'", "row 1"]),
        ("outcome", "lost", ["'outcome'", "'lost'", "row 1"]),
    ],
)
def test_a_bad_value_is_named_with_its_file_column_and_row(tmp_path, column, value, words):
    from pipelines._dataset import TraceError, load_trace

    t = _small_trace()
    t[column] = [value if i == 1 else str(v) for i, v in enumerate(t[column])]  # strings
    file = tmp_path / "tasks.parquet"
    t.to_parquet(file)
    with pytest.raises(TraceError) as err:
        load_trace(tmp_path)
    for w in [str(file), *words]:
        assert w in str(err.value), (w, str(err.value))


def test_error_types_are_a_leaf():
    """sim_bridge._errors imports nothing of sim_bridge (the policies import it, not back)."""
    tree = ast.parse((ROOT / "sim_bridge" / "_errors.py").read_text())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any((m or "").startswith("sim_bridge") for m in mods), mods
    assert sim_bridge.policies.PolicyError is sim_bridge.PolicyError
