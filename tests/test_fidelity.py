"""``straggler fidelity``: each measurement against a slow obvious version or a known answer,
and one quick end-to-end run of the command."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from pipelines import _fidelity as fid
from pipelines._fidelity_acf import _acf
from pipelines.cli import main


# --------------------------------------------------------------------------- trace facts
def _trace() -> pd.DataFrame:
    """Two jobs, two stages each, with stragglers placed by hand (beta 1.3).

    Stage a/map: 10, 10, 10, 30 -> median 10, one straggler (30). Stage a/reduce: 5, 5, 20
    -> median 5, one straggler (20). Stage b/map: 8, 8, 9 -> no straggler.
    """
    rows = [("a", "map", d) for d in (10.0, 10.0, 10.0, 30.0)]
    rows += [("a", "reduce", d) for d in (5.0, 5.0, 20.0)]
    rows += [("b", "map", d) for d in (8.0, 8.0, 9.0)]
    t = pd.DataFrame(rows, columns=["job_id", "phase", "duration"])
    t["attempt"] = 0
    t["outcome"] = "finished"
    return t


def test_stage_medians_group_by_job_and_phase():
    assert fid.stage_medians(_trace()).tolist() == [10.0] * 4 + [5.0] * 3 + [8.0] * 3


def test_straggler_share_and_ratios_on_a_known_trace():
    t = _trace()
    med = fid.stage_medians(t)
    label = (t["duration"].to_numpy() > 1.3 * med).astype(float)  # the stage rule by hand
    assert fid.straggler_share(label) == pytest.approx(2 / 10)
    assert sorted(fid.straggler_ratios(t["duration"], med, label)) == [3.0, 4.0]
    # NaN labels (copies, censored attempts) are left out of the share
    assert fid.straggler_share(np.array([1.0, np.nan, 0.0, np.nan])) == 0.5
    assert math.isnan(fid.straggler_share(np.array([np.nan])))


def test_median_node_share_against_a_loop():
    rng = np.random.default_rng(3)
    n = 200
    t = pd.DataFrame(
        {
            "truth_work": rng.uniform(5, 20, n),
            "truth_slowdown_median": rng.uniform(0.8, 1.5, n),
        }
    )
    med = rng.uniform(8, 16, n)
    label = rng.choice([0.0, 1.0, np.nan], n)
    hits = total = 0
    for i in range(n):
        if label[i] == 1.0:
            total += 1
            w = t["truth_work"][i] * t["truth_slowdown_median"][i]
            hits += w <= 1.3 * med[i]
    assert fid.median_node_share(t, label, med, 1.3) == pytest.approx(hits / total)
    assert math.isnan(fid.median_node_share(t.drop(columns="truth_work"), label, med))


def test_roc_auc_against_pairwise_count():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    s = np.round(rng.normal(size=60) + y, 1)  # ties included
    pos, neg = s[y == 1], s[y == 0]
    slow = np.mean([(p > q) + 0.5 * (p == q) for p in pos for q in neg])
    assert fid.roc_auc(y, s) == pytest.approx(slow)
    assert math.isnan(fid.roc_auc([1, 1], [0.2, 0.3]))


def test_time_split_is_by_launch_time():
    t = np.array([9.0, 0.0, 5.0, 1.0, 7.0, 3.0, 2.0, 8.0, 4.0, 6.0])
    train, test = fid.time_split(t, 0.6)
    assert train.sum() == 6 and t[train].max() < t[test].min()


def test_counters_auc_trains_on_the_past_and_reads_truth():
    rng = np.random.default_rng(1)
    n = 1000
    state = rng.normal(size=n)
    y = (state + 0.5 * rng.normal(size=n) > 1.0).astype(float)
    t = pd.DataFrame(
        {
            "launch_time": np.arange(n, dtype=float),
            "c_noisy": state + rng.normal(size=n),
            "c_junk": rng.normal(size=n),
            "truth_slowdown_launch": state,
        }
    )
    y[::10] = np.nan  # unlabelled rows are dropped
    r = fid.counters_auc(t, y)
    assert r["n_train"] + r["n_test"] == int((~np.isnan(y)).sum())
    assert 0.6 < r["counters_auc"] < r["truth_auc"]
    # the truth AUC is the plain ROC-AUC of the truth column on the later 40%
    keep = ~np.isnan(y)
    _tr, te = fid.time_split(t["launch_time"][keep], 0.6)
    expect = fid.roc_auc(y[keep][te], state[keep][te])
    assert r["truth_auc"] == pytest.approx(expect)
    assert math.isnan(fid.counters_auc(t.drop(columns="truth_slowdown_launch"), y)["truth_auc"])


# --------------------------------------------------------------------------- autocorrelation
def test_acf_of_ar1_is_phi_to_the_lag():
    rng = np.random.default_rng(0)
    phi, n_series, n = 0.9, 20, 5000
    x = np.zeros((n_series, n))
    e = rng.normal(size=(n_series, n))
    for k in range(1, n):
        x[:, k] = phi * x[:, k - 1] + e[:, k]
    lags = [0, 1, 5, 20]
    got, _method = _acf(x, lags)
    assert got == pytest.approx([phi**k for k in lags], abs=0.03)


def test_synthetic_cpu_is_a_node_by_step_grid():
    cpu = fid.synthetic_cpu(4, 0.05, seed=1)
    assert cpu.shape == (4, 72) and np.all((cpu >= 0) & (cpu <= 1))


# --------------------------------------------------------------------------- intervals
def test_paired_gain_and_t_interval_on_known_data():
    base = np.array([100.0, 100.0, 100.0, 100.0])
    gains = fid.paired_relative_gain(base, [80.0, 70.0, 90.0, 80.0])
    assert gains.tolist() == pytest.approx([0.2, 0.3, 0.1, 0.2])
    mean, lo, hi, p = fid.t_interval(gains, 0.95)
    # mean 0.2, sd sqrt(0.02/3), t_{0.975,3} = 3.182446
    half = 3.182446 * math.sqrt(0.02 / 3) / 2
    assert mean == pytest.approx(0.2)
    assert (lo, hi) == pytest.approx((0.2 - half, 0.2 + half), abs=1e-5)
    assert p < 0.05
    wider = fid.t_interval(gains, fid.bonferroni_level(6))
    assert wider[1] < lo and wider[2] > hi


def test_holm_against_a_hand_worked_example():
    # sorted 0.01, 0.02, 0.03, 0.04 times 4, 3, 2, 1 = 0.04, 0.06, 0.06, 0.04 -> running max
    p = [0.03, 0.01, 0.04, 0.02]
    assert fid.holm(p)[0].tolist() == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert fid.holm([0.5, 0.9])[0].tolist() == [1.0, 1.0]
    assert fid.bonferroni_level(3) == pytest.approx(1 - 0.05 / 3)


def test_comparison_facts_pass_only_inside_the_band():
    runs = {
        "W": {
            "late_mean": np.full(5, 100.0),
            "oracle_mean": np.array([70.0, 72.0, 68.0, 71.0, 69.0]),  # ~30% gain, tight
            "none_p99": np.full(5, 100.0),
            "late_p99": np.array([99.0, 101.0, 100.0, 98.0, 102.0]),  # no effect
            "mantri_p99": np.array([90.0, 91.0, 89.0, 90.0, 90.0]),  # ~10% gain, tight
            "oracle_mode": "rank",
        }
    }
    res = {r.key: r for r in fid.comparison_facts(runs)}
    assert res["oracle_gain"].passed and res["mantri_p99"].passed
    assert res["late_p99"].passed is False and not res["late_p99"].extra["significant"]
    assert res["oracle_gain"].extra["level"] == pytest.approx(1 - 0.05 / 3)


# --------------------------------------------------------------------------- end to end
def test_fidelity_quick_cli_writes_a_complete_summary(tmp_path, capsys):
    out = tmp_path / "fid"
    code = main(["fidelity", "--quick", "--workload", "SYN", "--seeds", "2", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "profile quick" in text and "passed" in text
    for name in ("fidelity.csv", "fidelity.md", "acf_cpu.png", "straggler_ratio.png"):
        assert (out / name).stat().st_size > 0
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] is True and s["profile"] == "quick"
    assert s["settings"]["workloads"] == ["SYN"]
    keys = {f["key"] for f in s["facts"]}
    assert {f.key for f in fid.FACTS} == keys
    for f in s["facts"]:
        assert f["band_text"] and f["source"] and f["verdict"] in ("PASS", "FAIL", "n/a")
    table = pd.read_csv(out / "fidelity.csv")
    assert list(table.columns) == ["fact", "workload", "value", "band", "source", "pass"]
    assert len(table) == len(s["facts"])
