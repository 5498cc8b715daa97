"""The node / counter / duration model (sim_bridge.world, _cluster): straggler share, node and
workload effects, counters that partly predict stragglers with relations that differ by workload,
contention replay from the real Alibaba 2018 series."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import sim_bridge
from sim_bridge import COUNTER_NAMES, Cluster, DataFormatError, JobSpec
from sim_bridge._alibaba2018 import MACHINE_USAGE_FILE, load_machine_levels


@pytest.fixture(scope="module")
def mixed(shared_data_dir):
    """FB-2010 and Alibaba 2017 (scaled down) sharing one 40-node cluster, defaults otherwise."""
    r = sim_bridge.simulate(
        ["FB2010", "ALI2017"],
        "none",
        nodes=40,
        slots=2,
        seed=0,
        hours=0.5,
        scale=0.05,
        data_dir=shared_data_dir,
        progress=False,
    )
    t = r.tasks.copy()
    t["y"] = sim_bridge.label_stragglers(t)
    return r, t.dropna(subset=["y"]).reset_index(drop=True)


def test_straggler_share_in_published_range_fb2009(shared_data_dir):
    r = sim_bridge.simulate(
        "FB2009",
        "none",
        nodes=100,
        slots=2,
        seed=1,
        hours=6,
        scale=0.2,
        data_dir=shared_data_dir,
        progress=False,
    )
    # the published band (Wrangler SoCC'14, Mantri OSDI'10; FlowBench, real: 14%)
    assert 0.15 <= r.summary["straggler_share"] <= 0.30


def test_straggler_share_in_published_range_mixed(mixed):
    r, t = mixed
    # the published band (Wrangler SoCC'14, Mantri OSDI'10; FlowBench, real: 14%)
    assert 0.15 <= r.summary["straggler_share"] <= 0.30
    assert r.summary["straggler_share"] == pytest.approx(t["y"].mean())


def test_node_and_workload_effects_on_straggling(mixed):
    _, t = mixed
    by_node = pd.crosstab(t["node"], t["y"])
    assert stats.chi2_contingency(by_node).pvalue < 1e-6
    by_wl = pd.crosstab(t["workload"], t["y"])
    assert stats.chi2_contingency(by_wl).pvalue < 1e-6


def _model():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))


@pytest.mark.xfail(
    strict=True,
    reason="issue 11, measured: in the new world, on this loaded mixed cluster, the counters' "
    "relation to stragglers hardly differs by workload (FB2010 own 0.61 vs cross 0.61; "
    "ALI2017 own 0.54 vs cross 0.57): both profiles lean on cpu and mem, and the mem levels "
    "of the fitted Alibaba source sit near 0.9 where the convex response is steep",
)
def test_counters_partly_predict_stragglers_and_relation_differs_by_workload(mixed):
    _, t = mixed
    cols = [f"c_{c}" for c in COUNTER_NAMES]
    train = np.random.default_rng(0).random(len(t)) < 0.6
    models = {}
    for w in ("FB2010", "ALI2017"):
        s = (t["workload"] == w).to_numpy() & train
        models[w] = _model().fit(t.loc[s, cols], t.loc[s, "y"])
    for w, other in (("FB2010", "ALI2017"), ("ALI2017", "FB2010")):
        s = (t["workload"] == w).to_numpy() & ~train
        own = roc_auc_score(t.loc[s, "y"], models[w].predict_proba(t.loc[s, cols])[:, 1])
        cross = roc_auc_score(t.loc[s, "y"], models[other].predict_proba(t.loc[s, cols])[:, 1])
        assert 0.6 < own < 0.95  # informative but far from deciding
        assert own > cross + 0.01  # a workload's relation transfers imperfectly


def test_node_identity_adds_information_beyond_counters(mixed):
    _, t = mixed
    cols = [f"c_{c}" for c in COUNTER_NAMES]
    train = np.random.default_rng(1).random(len(t)) < 0.6
    base = _model().fit(t.loc[train, cols], t.loc[train, "y"])
    enc = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(t[["node"]])

    def with_node(frame):
        return np.hstack([frame[cols].to_numpy(), enc.transform(frame[["node"]])])

    full = _model().fit(with_node(t[train]), t.loc[train, "y"])
    test = t[~train]
    auc_base = roc_auc_score(test["y"], base.predict_proba(test[cols])[:, 1])
    auc_full = roc_auc_score(test["y"], full.predict_proba(with_node(test))[:, 1])
    assert auc_full > auc_base + 0.005


def test_counters_are_sane_and_task_driven(mixed):
    r, _ = mixed
    t = r.tasks
    assert 20 <= len(COUNTER_NAMES) <= 40
    for c in COUNTER_NAMES:
        v = t[f"c_{c}"].to_numpy()
        assert np.isfinite(v).all(), c
    for c in ("cpu_user", "cpu_idle", "mem_used_pct", "disk_util_pct"):
        v = t[f"c_{c}"]
        assert v.between(0, 100).all(), c
    assert (t["c_running_tasks"] + t["c_free_slots"] == 2).all()
    # partly redundant: user cpu and run queue move together
    assert stats.spearmanr(t["c_cpu_user"], t["c_run_queue"]).statistic > 0.3


def test_task_driven_counters_follow_the_running_tasks():
    rng = np.random.default_rng(1)
    jobs, t0 = [], 0.0
    for i in range(60):
        t0 += float(rng.exponential(20.0))
        jobs.append(JobSpec(f"h{i}", t0, np.full(int(rng.integers(5, 30)), 20.0)))
    r = sim_bridge.simulate(jobs, "none", nodes=20, slots=4, seed=1, progress=False)
    t = r.tasks
    assert t["c_running_tasks"].nunique() == 4  # 0..3 others running at a launch
    # load averages and run queue follow the node's running tasks
    assert stats.spearmanr(t["c_running_tasks"], t["c_load1"]).statistic > 0.3
    assert stats.spearmanr(t["c_running_tasks"], t["c_run_queue"]).statistic > 0.3
    # load1 reacts faster than load15 but both average the same history: the node's
    # background load adds the same term to both, so their difference is the recent change
    # in running tasks, which rises with the running count at the launch
    assert stats.spearmanr(t["c_load1"], t["c_load15"]).statistic > 0.3
    rho = stats.spearmanr(t["c_running_tasks"], t["c_load1"] - t["c_load15"])
    assert rho.statistic > 0 and rho.pvalue < 1e-6


def test_synthetic_contention_paths_are_deterministic_and_persistent():
    a, b = Cluster(30, 2, seed=4), Cluster(30, 2, seed=4)
    lv_a = a.levels_at(np.repeat(np.arange(30), 500), np.tile(np.arange(500) * 60.0, 30))
    lv_b = b.levels_at(np.repeat(np.arange(30), 500), np.tile(np.arange(500) * 60.0, 30))
    np.testing.assert_array_equal(lv_a, lv_b)
    x = a._levels[0]  # cpu, (nodes, steps)
    lag1 = np.corrcoef(x[:, :-1].ravel(), x[:, 1:].ravel())[0, 1]
    assert lag1 > 0.7  # a state lasts ~20 steps: counters at launch inform the run
    assert not np.array_equal(Cluster(30, 2, seed=5)._levels, a._levels)


def test_alibaba2018_replay_maps_nodes_onto_real_machines(shared_data_dir):
    ids, series = load_machine_levels(shared_data_dir / MACHINE_USAGE_FILE)
    assert len(ids) == 16 and ids[0] == "m_1932"
    assert np.isfinite(series).all() and series.min() >= 0 and series.max() <= 1
    # degraded nodes off: the levels are the real series exactly
    c = Cluster(20, 2, seed=2, source="alibaba2018", data_dir=shared_data_dir, bad_node_share=0.0)
    for node in (0, 5, 17):
        m, off = c.machine[node], c.offset[node]
        k = np.arange(100)
        want = series[:, m, (off + k) % series.shape[2]]
        got = c.levels_at(np.full(100, node), k * 60.0 + 1.0)
        np.testing.assert_array_equal(got, want)
    r = sim_bridge.simulate(
        "SYN",
        "late",
        nodes=20,
        hours=0.5,
        seed=2,
        counters="alibaba2018",
        data_dir=shared_data_dir,
        progress=False,
    )
    assert r.summary["counters"] == "alibaba2018" and r.summary["jobs"] > 0


def test_machine_usage_gaps_and_invalid_disk_and_errors(tmp_path):
    p = tmp_path / "mu.csv"
    p.write_text(
        "m_2,0,10,50,,,0,0,101\n"
        "m_2,600,30,50,,,0,0,20\n"  # a 10-minute gap: the last reading is held
        "m_1,0,40,60,,,20,40,-1\n"
    )
    ids, lv = load_machine_levels(p)
    assert ids == ["m_1", "m_2"]
    np.testing.assert_allclose(lv[0, 1, :11], [0.1] * 10 + [0.3])
    np.testing.assert_allclose(lv[2, 1, :11], [0.2] * 11)  # 101 is invalid: back-filled
    assert (lv[:, 0, :] == lv[:, 0, :1]).all()  # one-row machine tiled
    bad = tmp_path / "bad.csv"
    bad.write_text("m_1,0,40,60,,,20,40,5\nm_1,60,forty,60,,,20,40,5\n")
    with pytest.raises(DataFormatError, match=r"bad.csv: line 2, column 3: 'forty'"):
        load_machine_levels(bad)
    short = tmp_path / "short.csv"
    short.write_text("m_1,0,40\n")
    with pytest.raises(DataFormatError, match="line 1"):
        load_machine_levels(short)
