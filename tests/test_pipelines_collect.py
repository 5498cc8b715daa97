"""``straggler collect`` on a tiny cluster: files, summary consistency, determinism, errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipelines._collect import DEFAULT_SCALES, parse_scales
from pipelines._dataset import label_stragglers, load_trace
from pipelines.cli import main

ARGS = [
    "collect",
    "--nodes",
    "6",
    "--hours",
    "0.5",
    "--workloads",
    "FB2009,SYN",
    "--scale",
    "FB2009=8,SYN=0.05",
]


@pytest.fixture(scope="module")
def collected(tmp_path_factory, shared_data_dir):
    out = tmp_path_factory.mktemp("collect")
    assert main([*ARGS, "--seed", "3", "--data-dir", str(shared_data_dir), "--out", str(out)]) == 0
    return out


def test_collect_writes_trace_and_consistent_summary(collected):
    s = json.loads((collected / "summary.json").read_text())
    trace = load_trace(collected)  # validates the schema
    lt = label_stragglers(trace)
    assert s["attempt_rows"] == len(trace)
    assert (
        s["rows"] == len(lt.frame) and s["pairs"] == lt.frame.groupby(["node", "workload"]).ngroups
    )
    assert set(s["rows_by_workload"]) == {"FB2009", "SYN"}
    for w, share in s["straggler_share_by_workload"].items():
        assert share == pytest.approx(lt.frame.loc[lt.frame.workload == w, "straggler"].mean())
    assert s["excluded_jobs"] == lt.excluded_jobs
    assert s["sources"]["FB2009"].endswith("FB-2009_samples_24_times_1hr_0.tsv")
    assert s["scales"] == {"FB2009": 8.0, "SYN": 0.05}
    assert (collected / "jobs.parquet").is_file()


def test_collect_deterministic(collected, tmp_path, shared_data_dir):
    assert (
        main([*ARGS, "--seed", "3", "--data-dir", str(shared_data_dir), "--out", str(tmp_path)])
        == 0
    )
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "tasks.parquet"), pd.read_parquet(collected / "tasks.parquet")
    )


def test_collect_bad_input(tmp_path, capsys):
    assert main(["collect", "--workloads", "FB2009,NOPE", "--out", str(tmp_path)]) == 2
    assert "unknown ['NOPE']" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--scale SYN must be a positive number, got '-1'"):
        parse_scales("SYN=-1", ["SYN"])
    with pytest.raises(ValueError, match="names workload 'X'"):
        parse_scales("X=1", ["SYN"])


def test_default_scales():
    assert parse_scales(None, ["SYN", "FB2010"]) == {
        "SYN": DEFAULT_SCALES["SYN"],
        "FB2010": DEFAULT_SCALES["FB2010"],
    }


def test_collect_without_data_falls_back_and_says_so(tmp_path, capsys):
    empty = tmp_path / "nodata"
    empty.mkdir()
    args = ["collect", "--nodes", "3", "--hours", "0.1", "--workloads", "FB2009,SYN"]
    args += ["--scale", "0.05", "--data-dir", str(empty), "--out", str(tmp_path / "o")]
    assert main(args) == 0
    assert "FB2009 had no data file and ran as the synthetic workload" in capsys.readouterr().out
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["synthetic_fallback"] == ["FB2009"]
    assert s["sources"] == {"FB2009": "synthetic", "SYN": "synthetic"}
