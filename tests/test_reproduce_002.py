"""``straggler reproduce 002 --quick`` end to end, and the reproduce command's input checks."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipelines._reproduce import reproduce
from pipelines.cli import main


@pytest.mark.slow
def test_reproduce_002_quick_end_to_end(tmp_path, capsys):
    out = tmp_path / "r002"
    assert main(["reproduce", "002", "--out", str(out), "--quick"]) == 0
    printed = capsys.readouterr().out
    assert "| figure | quantity | ours | paper |" in printed
    for name in ("fig3_5_latency_vs_n", "fig4_6_metrics_vs_p", "empirical_tradeoff"):
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    s = json.loads((out / "summary.json").read_text())
    assert s["seed_paper"] == "002" and s["quick"] is True
    cmp = pd.read_csv(out / "comparison.csv")
    assert list(cmp.columns) == ["figure", "quantity", "ours", "paper", "rel_diff", "note"]
    assert {"Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6", "Table 1"} <= set(cmp.figure)
    vs_n = pd.read_csv(out / "fig3_5_latency_vs_n.csv")
    # every (dist, p, r, keep, n) point of Figs. 3/5 simulated and analysed
    assert len(vs_n) == 2 * 2 * 4 * len(s["sizes"]["n_grid"])
    assert (vs_n.sim_latency > 0).all() and (vs_n.analysis_latency > 0).all()
    # the engine estimates the finite-n theory without bias: the typical point lies within
    # 2 standard errors (median over the sweep; with a handful of runs one point's SE can be
    # a poor estimate, so no per-point bound)
    assert s["fig4_6_latency_z_vs_exact_median_abs"] < 2
    assert s["fig4_6_cost_z_vs_exact_median_abs"] < 2
    chosen = pd.read_csv(out / "table1_chosen_policies.csv")
    assert chosen.policy.iloc[0] == "baseline" and len(chosen) == 3
    # eq. 19: the latency-sensitive choice costs no more than the baseline (bootstrap)
    assert chosen.bootstrap_cost.iloc[1] <= chosen.bootstrap_cost.iloc[0] + 1e-12
    assert (out / "comparison.md").read_text().startswith("| figure |")


def test_reproduce_rejects_bad_input(tmp_path):
    with pytest.raises(
        ValueError, match="parameter SEED must be one of 000, 001, 002, 003, got '005'"
    ):
        reproduce("005", tmp_path)
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="exists and is not a directory"):
        reproduce("002", f, quick=True)
    with pytest.raises(ValueError, match="parameter seed must be an integer >= 0, got -1"):
        reproduce("002", tmp_path, seed=-1)
    with pytest.raises(SystemExit):
        main(["reproduce", "007", "--out", str(tmp_path)])
