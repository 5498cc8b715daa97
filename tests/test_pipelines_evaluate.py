"""``straggler evaluate`` Tables 1 and 2 on a tiny trace, checked against direct recomputation."""

from __future__ import annotations

import ast
import json

import numpy as np
import pandas as pd
import pytest
from test_pipelines_helpers import make_trace

from pipelines._dataset import label_stragglers, validate_trace
from pipelines._evaluate import table1_claims, table2_claims
from pipelines._metrics import binary_metrics
from pipelines._splits import fraction_split, leave_pair_out_splits, pair_order
from pipelines.cli import main


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace")
    make_trace(n_nodes=4, n_jobs=60, seed=7).to_parquet(d / "tasks.parquet")
    return d


@pytest.fixture(scope="module")
def labelled(trace_dir):
    return label_stragglers(validate_trace(pd.read_parquet(trace_dir / "tasks.parquet")))


@pytest.fixture(scope="module")
def table1_dir(trace_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("t1")
    args = ["evaluate", "--traces", str(trace_dir), "--table", "1", "--out", str(out)]
    # the estimators' defaults (no grid): the oracle below refits with the same parameters
    assert main([*args, "--fractions", "2,66", "--jobs", "1", "--grid", "none"]) == 0
    return out


def test_table1_outputs_and_oracles(table1_dir, labelled, capsys):
    from mtl import GroupedMTLSVC

    t = pd.read_csv(table1_dir / "table1.csv")
    assert set(t["fraction"]) == {0.02, 0.66}
    models = ["wrangler", "f0", "fn", "fl", "f0nl", "f0t", "f0tl", "majority"]
    assert sorted(t["model"]) == sorted(models * 2)
    f = labelled.frame
    X, y = labelled.X, labelled.y
    test = fraction_split(f, 0.66, 0.0).test
    # majority row: always 'not a straggler'
    maj = t[t.model == "majority"]["accuracy"].to_numpy()
    assert maj == pytest.approx(1 - y[test].mean())
    # f0 at 66%: an independent fit on the same split reproduces the table's numbers.
    tr = fraction_split(f, 0.66, 0.0).train
    p = GroupedMTLSVC(variant="f0").fit(X.iloc[tr], y[tr]).predict_proba(X.iloc[test])[:, 1]
    row = t[(t.model == "f0") & (t.fraction == 0.66)].iloc[0]
    assert row["accuracy"] == pytest.approx(binary_metrics(y[test], p)["accuracy"])
    assert row["test_rows"] == len(test)
    # Wrangler's insufficient pairs at 2%: pairs whose training part has < 10 rows or 1 class.
    split = fraction_split(f, 0.02, 0.0)
    lacking = 0
    for pos in pair_order(f).values():
        tr_pos = np.intersect1d(pos, split.train)
        if len(tr_pos) < 10 or len(np.unique(y[tr_pos])) < 2:
            lacking += 1
    w = t[(t.model == "wrangler") & (t.fraction == 0.02)].iloc[0]
    assert w["insufficient_pairs"] == lacking == len(pair_order(f))  # 2% of ~30 rows: none
    md = (table1_dir / "table1.md").read_text()
    assert f"| 2 | Insufficient data: {lacking}/{lacking} pairs" in md
    assert (table1_dir / "table1.png").read_bytes()[:4] == b"\x89PNG"
    s = json.loads((table1_dir / "summary.json").read_text())
    assert s["claims"] == json.loads(json.dumps(table1_claims(t.assign(status=t["status"]))))
    assert s["claims"]["wrangler_insufficient_for_all_pairs_at"] == [0.02]


def test_table1_claims_logic():
    rows = []
    for f, accs in ((0.01, [0.5, 0.6, 0.6, 0.6, 0.7, 0.7, 0.7]), (0.66, [0.8] * 7)):
        for m, a in zip(["wrangler", "f0", "fn", "fl", "f0nl", "f0t", "f0tl"], accs, strict=True):
            rows.append({"fraction": f, "model": m, "accuracy": a, "status": "ok"})
    c = table1_claims(pd.DataFrame(rows))
    assert c["claim_mtl_ahead_of_wrangler_at_small_fractions"] is True
    assert c["claim_multi_task_ahead_of_single_block"] is False
    assert c["fractions_where_multi_task_ahead"] == [0.01]


def test_table2(trace_dir, labelled, tmp_path):
    args = ["evaluate", "--traces", str(trace_dir), "--table", "2", "--out", str(tmp_path)]
    assert main([*args, "--pairs", "2", "--seed", "4"]) == 0
    t = pd.read_csv(tmp_path / "table2.csv")
    splits = leave_pair_out_splits(labelled.frame, 2, 0.05, 40, 0.0, 4)
    assert list(dict.fromkeys(t["pair"])) == ["/".join(s.info["pair"]) for s in splits]
    for s in splits:
        got = t[t["pair"] == "/".join(s.info["pair"])]
        assert sorted(got["model"]) == ["f0nl", "f0t"]
        assert (got["test_rows"] == len(s.test)).all()
    claims = json.loads((tmp_path / "summary.json").read_text())["claims"]
    assert claims == json.loads(json.dumps(table2_claims(t)))
    acc = t.pivot(index="pair", columns="model", values="accuracy")
    assert claims["f0nl_wins"] == int((acc["f0nl"] > acc["f0t"]).sum())
    assert (tmp_path / "table2.png").read_bytes()[:4] == b"\x89PNG"


def test_bad_input(trace_dir, tmp_path, capsys):
    base = ["evaluate", "--traces", str(trace_dir), "--out", str(tmp_path)]
    assert main([*base, "--table", "1", "--fractions", "0.9"]) == 2
    assert "--fractions: 0.9 is not in (0, 0.66]" in capsys.readouterr().err
    assert main([*base, "--table", "2", "--models", "f0nl,wrangler"]) == 2
    assert "['wrangler'] not in Table 2's" in capsys.readouterr().err


def test_grid_selection_on_validation(trace_dir, tmp_path):
    from pipelines._grid import grid_points, load_grid, variant_grid

    args = ["evaluate", "--traces", str(trace_dir), "--table", "1", "--out", str(tmp_path)]
    assert main([*args, "--fractions", "66", "--models", "f0,f0nl", "--grid", "small"]) == 0
    t = pd.read_csv(tmp_path / "table1.csv")
    grid = load_grid("small")
    for model, blocks in (("f0", ("w0",)), ("f0nl", ("w0", "node", "workload"))):
        chosen = ast.literal_eval(t.loc[t.model == model, "params"].iloc[0])
        assert chosen in grid_points(variant_grid(grid, blocks))


def test_fraction_parsing():
    import argparse

    from pipelines._evaluate_config import fractions_value as _floats

    assert _floats("1,5,66") == [0.01, 0.05, 0.66]
    assert _floats("0.01,0.5") == [0.01, 0.5]
    with pytest.raises(argparse.ArgumentTypeError, match="comma-separated numbers"):
        _floats("1,x")


def test_anomaly_auc_is_the_auc_of_the_test_probabilities(labelled):
    """``anomaly_roc_auc`` is the ROC-AUC of the model's test probabilities against the
    anomaly flag, recomputed here from a refit; the flag never reaches the model (the fit's
    probabilities are the same with and without it)."""
    from mtl import GroupedMTLSVC
    from pipelines._evaluate import anomaly_flags, fit_and_score

    frame = labelled.frame.copy()
    rng = np.random.default_rng(3)
    frame["anomaly_type"] = np.where(rng.random(len(frame)) < 0.3, "cpu_2", "None")
    flags = anomaly_flags(frame)
    assert flags.sum() == (frame["anomaly_type"] == "cpu_2").sum()
    X = frame[["node", "workload", *labelled.counters]]
    y = frame["straggler"].to_numpy(dtype=np.int64)
    split = fraction_split(frame, 0.5, 0.0, 0.66)
    row = fit_and_score("f0", X, y, split, None, 0, flags)
    plain = fit_and_score("f0", X, y, split, None, 0)
    assert "anomaly_roc_auc" not in plain
    assert row["roc_auc"] == plain["roc_auc"]
    est = GroupedMTLSVC(variant="f0", threshold=0.5, random_state=0)
    est.fit(X.iloc[split.train], y[split.train])
    proba = est.predict_proba(X.iloc[split.test])[:, 1]
    want = binary_metrics(flags[split.test], proba)["roc_auc"]
    assert row["anomaly_roc_auc"] == pytest.approx(want)
    assert row["anomaly_rows"] == int(flags[split.test].sum())
    assert np.isfinite(row["accuracy_se"]) and row["accuracy_se"] > 0


def test_report_renders_table1_from_the_recorded_pivot(table1_dir, tmp_path):
    """The report shows Table 1 as an HTML table whose cells are table1.md's, not the
    Markdown source."""
    import html
    import json
    import re

    from pipelines.report import build_report

    md_rows = [
        [c.strip() for c in line.strip().strip("|").split(" | ")]
        for line in (table1_dir / "table1.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("|---")
    ]
    pivot = json.loads((table1_dir / "summary.json").read_text(encoding="utf-8"))["pivot"]
    assert md_rows == [pivot["columns"], *pivot["rows"]]
    build_report([table1_dir], tmp_path / "report")
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    cells = [
        html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
        for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", page, flags=re.S)
    ]
    for row in pivot["rows"]:
        i = cells.index(row[0])
        assert cells[i : i + len(row)] == row
