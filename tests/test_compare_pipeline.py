"""``straggler compare`` (Tables 3-4) end to end on a tiny configuration, its statistics
against closed forms / scipy, saved-model reuse, bad input, and the two simulator options it
relies on (``cluster_seed``, SWIM ``day``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import sim_bridge
from pipelines._collect import collect
from pipelines._compare import (
    ALL,
    PREDICTORS,
    STATISTICS,
    CompareConfig,
    CompareError,
    improvement,
    jct_statistics,
    parse_models,
    run_compare,
    significance,
)
from pipelines.cli import main

TINY = dict(nodes=6, hours=0.3, seed=0, scales={"SYN": 0.05})


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("trace")
    collect(out, ["SYN"], **TINY)
    return out


@pytest.fixture(scope="module")
def compared(trace_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    # no --workloads: the training trace's (SYN), checked in test_default_workloads_are_the_traces
    cfg = CompareConfig(traces=str(trace_dir), out=str(out), seeds=2, oracle=True)
    return out, run_compare(cfg)


def test_default_workloads_are_the_traces(compared):
    out, summary = compared
    assert summary["config"]["workloads"] == ["SYN"]
    assert summary["test_workloads"].keys() == {"SYN"}
    assert json.loads((out / "summary.json").read_text())["config"]["workloads"] == ["SYN"]


# ---------------------------------------------------------------- statistics
def test_statistics_match_numpy_and_closed_forms():
    rng = np.random.default_rng(0)
    x = rng.pareto(2.0, 501)
    s = jct_statistics(x)
    assert s["Average"] == pytest.approx(x.mean())
    for name, q in STATISTICS.items():
        if q is not None:
            assert s[name] == pytest.approx(np.percentile(x, q))
    assert improvement(80.0, 60.0) == 25.0 and np.isnan(improvement(0.0, 1.0))


def test_significance_is_scipy_ttest():
    from scipy.stats import ttest_1samp

    v = [3.0, 5.0, 4.5, 2.0]
    r = significance(v)
    assert r["p_value"] == pytest.approx(ttest_1samp(v, 0.0).pvalue)
    assert r["std"] == pytest.approx(np.std(v, ddof=1))
    assert (r["min"], r["max"], r["n"]) == (2.0, 5.0, 4)
    one = significance([7.0])
    assert not one["significant"] and np.isnan(one["p_value"])


def test_parse_models():
    assert parse_models(["wrangler=/a", "mtl=models:/m@champion"]) == {
        "wrangler": "/a",
        "mtl": "models:/m@champion",
    }
    with pytest.raises(CompareError, match="twice"):
        parse_models(["/a", "mtl=/b"])
    with pytest.raises(CompareError, match="name must be one of"):
        parse_models(["oracle=/x"])


# ---------------------------------------------------------------- end to end
def test_compare_writes_tables_plots_and_summary(compared):
    out, s = compared
    for name in ("table3.csv", "table4.csv", "tables.md", "summary.json"):
        assert (out / name).is_file()
    for name in ("jct_difference.png", "jct_cdf.png", "table3.png", "table4.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    t3 = pd.read_csv(out / "table3.csv")
    groups = {"SYN", ALL}
    names = [*PREDICTORS, "random", "oracle"]  # the random-refusal control and the ceiling
    assert s["predictors"] == names
    assert set(t3["workload"]) == groups and set(t3["predictor"]) == set(names)
    assert len(t3) == len(groups) * len(names) * len(STATISTICS)
    assert len(pd.read_csv(out / "table4.csv")) == len(groups) * len(names)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["command"] == "compare" and on_disk["significance"]["seeds"] == 2
    assert "significant" in on_disk["significance"]["verdict"]
    md = (out / "tables.md").read_text()
    assert "Table 3" in md and "Table 4" in md and "±" in md
    for name in PREDICTORS:
        assert (out / "models" / name / "predictor.json").is_file()
        assert s["models"][name]["trained"]


def test_trained_mtl_is_chosen_from_the_small_grid_on_validation(compared, trace_dir):
    """compare's own f0,n,l model: the regularisers are a point of the shipped ``small`` grid
    (the one ``select_point`` picks on the latest quarter of each pair's rows by ROC-AUC),
    the threshold maximises balanced accuracy there, and the saved predictor is that fit."""
    import mtl
    from pipelines._compare_models import TRAIN_GRID
    from pipelines._dataset import check_classes, label_stragglers, load_trace
    from pipelines._estimators import make_estimator
    from pipelines._grid import grid_points, load_grid, variant_grid
    from pipelines._metrics import choose_threshold
    from pipelines._selection import select_point
    from pipelines._splits import fraction_split

    out, s = compared
    info = s["models"]["mtl"]
    space = variant_grid(load_grid(TRAIN_GRID), mtl.VARIANTS["f0nl"])
    regs = {k: v for k, v in info["params"].items() if k != "threshold"}
    assert regs in [{k: v for k, v in p.items() if k != "threshold"} for p in grid_points(space)]
    lt = check_classes(label_stragglers(load_trace(trace_dir)), on_single_class="drop")
    split = fraction_split(lt.frame, 1.0, 0.25, test_start=1.0)
    sel = select_point("f0nl", lt.X, lt.y, split.fit, split.val, space, metric="roc_auc")
    assert {k: v for k, v in sel.point.items() if k != "threshold"} == regs
    want = choose_threshold(lt.y[split.val], sel.proba, "balanced_accuracy")
    assert info["params"]["threshold"] == pytest.approx(want)
    ref = mtl.Predictor.from_estimator(make_estimator("f0nl", info["params"], 0).fit(lt.X, lt.y))
    saved = mtl.load_predictor(out / "models" / "mtl")
    np.testing.assert_allclose(saved.predict_proba(lt.frame), ref.predict_proba(lt.frame))


def test_tables_are_recomputed_from_the_runs(compared):
    """Oracle: every Table 3/4 cell is the improvement of that seed's run over the
    speculation-only run of the same seed, recomputed here from the raw metrics."""
    _out, s = compared
    runs = {(r["seed_index"], r["policy"]): r["metrics"] for r in s["runs"]}
    assert sorted({k for k, _p in runs}) == [0, 1]
    for row in s["table3"]:
        w, p, stat = row["workload"], row["predictor"], row["statistic"]
        want = [improvement(runs[(k, "spec")][w][stat], runs[(k, p)][w][stat]) for k in (0, 1)]
        np.testing.assert_allclose(row["per_seed"], want)
        assert row["mean"] == pytest.approx(np.mean(want))
    for row in s["table4"]:
        w, p = row["workload"], row["predictor"]
        base = [runs[(k, "spec")][w]["task_seconds"] for k in (0, 1)]
        mine = [runs[(k, p)][w]["task_seconds"] for k in (0, 1)]
        want = [100 * (b - m) / b for b, m in zip(base, mine, strict=True)]
        np.testing.assert_allclose(row["per_seed"], want)
    # the three policies of one seed ran the same jobs
    for k in (0, 1):
        jobs = {runs[(k, p)][ALL]["jobs"] for p in ("spec", *PREDICTORS, "oracle")}
        assert len(jobs) == 1


def test_fresh_period_is_the_same_cluster_later(compared, trace_dir):
    _out, s = compared
    setup = s["setup"]
    assert setup["cluster_seed"] == TINY["seed"] and setup["test_seed"] != TINY["seed"]
    trace = pd.read_parquet(trace_dir / "tasks.parquet")
    assert setup["offset"] >= trace["end_time"].max()
    assert setup["nodes"] == TINY["nodes"]


def test_saved_models_give_the_same_results_via_the_cli(compared, tmp_path, trace_dir):
    """--model loads the artifacts written by the first run: seed 0 is bit-identical."""
    out0, s0 = compared
    out = tmp_path / "again"
    argv = ["compare", "--traces", str(trace_dir), "--workloads", "SYN", "--out", str(out)]
    argv += ["--seeds", "1"]
    for name in PREDICTORS:
        argv += ["--model", f"{name}={out0 / 'models' / name}"]
    assert main(argv) == 0
    s1 = json.loads((out / "summary.json").read_text())
    assert not any(m["trained"] for m in s1["models"].values())
    first = {
        (r["workload"], r["predictor"], r["statistic"]): r["per_seed"][0] for r in s0["table3"]
    }
    for r in s1["table3"]:
        assert r["per_seed"][0] == first[(r["workload"], r["predictor"], r["statistic"])]
    assert "one seed" in s1["significance"]["verdict"]


def test_bad_input_is_named(tmp_path, trace_dir):
    with pytest.raises(FileNotFoundError, match="--traces"):
        run_compare(CompareConfig(traces=str(tmp_path / "none"), out=str(tmp_path / "o")))
    for kw, needle in (
        (dict(workloads=["NOPE"]), "--workloads"),
        (dict(seeds=0), "--seeds"),
        (dict(speculation="fifo"), "--speculation"),
        (dict(nodes=0), "--nodes"),
    ):
        with pytest.raises(CompareError, match=needle):
            run_compare(CompareConfig(traces=str(trace_dir), out=str(tmp_path / "o"), **kw))
    rc = main(["compare", "--traces", str(trace_dir), "--out", str(tmp_path), "--seeds", "-1"])
    assert rc == 2


# ---------------------------------------------------------------- simulator options
def test_cluster_seed_keeps_the_cluster_and_changes_the_draws():
    kw = dict(nodes=4, hours=0.1, scale=0.05, progress=False)
    a = sim_bridge.simulate("SYN", "none", seed=3, **kw)
    b = sim_bridge.simulate("SYN", "none", seed=3, cluster_seed=3, **kw)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    c = sim_bridge.simulate("SYN", "none", seed=3, cluster_seed=4, **kw)
    assert not np.allclose(a.tasks["c_cpu_mhz"], c.tasks["c_cpu_mhz"])  # other hardware
    with pytest.raises(ValueError, match="cluster_seed"):
        sim_bridge.simulate("SYN", "none", seed=3, cluster_seed=-1, **kw)


def test_swim_day_sample(shared_data_dir):
    w0 = sim_bridge.load_workload("FB2009", shared_data_dir, hours=0.2)
    w1 = sim_bridge.load_workload("FB2009", shared_data_dir, hours=0.2, day=1)
    assert w1.source.endswith("FB-2009_samples_24_times_1hr_1.tsv")
    assert w0.source.endswith("_1hr_0.tsv")
    with pytest.raises(ValueError, match="day"):
        sim_bridge.load_workload("ALI2017", shared_data_dir, day=1)


def test_control_runs_at_the_mtl_refusal_rate_and_headroom_is_recomputed(compared):
    """The random control of each seed refuses at that seed's MTL rate; the headroom table is
    the pooled share of the oracle's mean-JCT gain, recomputed here from the raw runs."""
    _, s = compared
    runs = {(r["seed_index"], r["policy"]): r for r in s["runs"]}
    seeds = sorted({k for k, _ in runs})
    for k in seeds:
        st = runs[(k, "mtl")]["placement_stats"]
        rate = st["node_refusals"] / st["node_checks"] if st["node_checks"] else 0.0
        assert runs[(k, "random")]["placement_stats"]["launches"] > 0
        assert runs[(k, "random")]["refusal_rate"] == pytest.approx(rate)
    assert s["config"]["mode"] == "rank"
    by = {(r["workload"], r["predictor"]): r for r in s["headroom"]}
    for (w, pred), row in by.items():
        gain = sum(
            runs[(k, "spec")]["metrics"][w]["Average"] - runs[(k, pred)]["metrics"][w]["Average"]
            for k in seeds
        )
        room = sum(
            runs[(k, "spec")]["metrics"][w]["Average"]
            - runs[(k, "oracle")]["metrics"][w]["Average"]
            for k in seeds
        )
        want = gain / room if room > 0 else float("nan")
        assert row["pooled"] == pytest.approx(want, nan_ok=True)


def test_holm_matches_a_hand_computation():
    from pipelines._compare import holm

    adj, sig = holm([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone: 0.06
    assert adj.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert sig.tolist() == [True, False, False, True]


# ---------------------------------------------------------------- refusals before any run
def test_refuses_a_flowbench_trace(trace_dir, tmp_path):
    """A FlowBench trace's counters do not exist in the simulator: named error, no output."""
    import shutil

    fb = tmp_path / "fb"
    shutil.copytree(trace_dir, fb)
    summ = json.loads((fb / "summary.json").read_text())
    (fb / "summary.json").write_text(json.dumps({**summ, "source": "flowbench"}))
    cfg = CompareConfig(traces=str(fb), out=str(tmp_path / "o"), workloads=["SYN"], seeds=1)
    with pytest.raises(CompareError, match="FlowBench trace"):
        run_compare(cfg)
    assert not (tmp_path / "o" / "summary.json").exists()


def test_refuses_workloads_the_models_never_saw(trace_dir, tmp_path):
    cfg = CompareConfig(
        traces=str(trace_dir), out=str(tmp_path / "o"), workloads=["SYN", "FB2010"], seeds=1
    )
    with pytest.raises(CompareError, match=r"\['FB2010'\].*never saw"):
        run_compare(cfg)


def test_refuses_a_model_on_counters_the_simulator_lacks(trace_dir, tmp_path):
    """A predictor trained on other counters (here c_0.. of a hand-made trace) is refused,
    naming the model and the first missing counters."""
    from test_pipelines_helpers import make_trace

    import mtl
    from pipelines._dataset import label_stragglers

    lab = label_stragglers(make_trace(n_nodes=3, n_jobs=30, seed=1))
    pred = mtl.Predictor.from_estimator(mtl.GroupedMTLSVC(variant="f0").fit(lab.X, lab.y))
    path = pred.save(tmp_path / "foreign")
    cfg = CompareConfig(
        traces=str(trace_dir),
        out=str(tmp_path / "o"),
        workloads=["SYN"],
        seeds=1,
        models={"mtl": str(path)},
    )
    missing = [c for c in lab.counters][:1]
    with pytest.raises(CompareError, match=rf"--model mtl=.*{missing[0]}"):
        run_compare(cfg)


def test_tables_carry_fdr_and_t_intervals(compared):
    """BH q-values over all cells equal scipy's; the interval is the t-interval."""
    from scipy import stats

    _, summary = compared
    t3 = pd.DataFrame(summary["table3"])
    t4 = pd.DataFrame(summary["table4"])
    p = np.concatenate([t3["p_value"], t4["p_value"]])
    ok = np.isfinite(p)
    q = np.concatenate([t3["p_fdr"], t4["p_fdr"]])
    np.testing.assert_allclose(q[ok], stats.false_discovery_control(p[ok]))
    row = t3.dropna(subset=["p_value"]).iloc[0]
    lo, hi = stats.t.interval(
        0.95, row["n"] - 1, loc=row["mean"], scale=row["std"] / np.sqrt(row["n"])
    )
    assert row["ci_low"] == pytest.approx(lo) and row["ci_high"] == pytest.approx(hi)


# ---------------------------------------------------------------- layout "separate"
def test_a_separate_layout_runs_each_workload_alone(tmp_path, shared_data_dir):
    """Oracle: with a trace collected with each workload alone on the cluster (collect
    --layout separate), a compare run's per-workload metrics are those of that workload run
    alone (the same run with only it in --workloads); run together, they would differ."""
    from pipelines._collect import collect_cells
    from pipelines._collect_config import CollectConfig
    from pipelines._compare_config import read_trace_summary, resolve_setup
    from pipelines._compare_runs import run_policy
    from pipelines._dataset import load_trace

    both = ["FB2009", "SYN"]
    scales = {"FB2009": 0.2, "SYN": 0.002}
    trace = tmp_path / "trace"
    collect_cells(
        CollectConfig(
            out=str(trace),
            workloads=both,
            nodes=6,
            hours=0.3,
            scales=scales,
            layout="separate",
            data_dir=str(shared_data_dir),
        )
    )
    tsum, table = read_trace_summary(trace), load_trace(trace)
    cfg = CompareConfig(
        traces=str(trace), out=str(tmp_path / "o"), workloads=both, data_dir=str(shared_data_dir)
    )
    setup = resolve_setup(cfg, tsum, table)
    assert setup["layout"] == "separate"
    together = run_policy(cfg, setup, 0, "spec")["run"]["metrics"]
    shared = run_policy(cfg, {**setup, "layout": "shared"}, 0, "spec")["run"]["metrics"]
    for w in both:
        one = CompareConfig(
            traces=str(trace), out=str(tmp_path / "o"), workloads=[w], data_dir=str(shared_data_dir)
        )
        alone = run_policy(one, resolve_setup(one, tsum, table), 0, "spec")["run"]["metrics"]
        assert together[w] == alone[w]
    assert together[ALL]["jobs"] == sum(together[w]["jobs"] for w in both)
    assert any(shared[w] != together[w] for w in both)  # sharing the cluster changes them
