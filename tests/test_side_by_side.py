"""``bench/side_by_side.py``: a change's CPU over its base's at each simulated hour, from two
``bench/bench_day.py`` logs.

Oracles: logs whose CPU is a known line in the simulated hour give that line's ratio at every
row (a closed form); the interpolation at each row equals a slow walk to the two samples
around it; replays of different set-ups and logs with too few samples are refused, naming
the file and the field; the script writes its table and a PNG.
"""

from __future__ import annotations

import importlib
import json
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BENCH = Path(__file__).resolve().parents[1] / "bench"
RUN = {"kind": "run", "workload": "FB2010", "policy": "late", "placement": "fair"}
RUN |= {"nodes": 33000, "slots": 10, "hours": 24.0, "seed": 0}


@pytest.fixture()
def sbs(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    yield importlib.import_module("side_by_side")
    for name in ("side_by_side", "bench_day"):
        sys.modules.pop(name, None)


def _write(path: Path, hours: list[float], cpu, commit: str, **run) -> Path:
    rows = [dict(RUN, commit=commit, **run)]
    rows += [
        {"kind": "sample", "sim_h": h, "cpu_s": cpu(h), "peak_rss_mb": 400.0 + h} for h in hours
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _slow_interp(hours: list[float], cpu: list[float], x: float) -> float:
    """The CPU at ``x`` by walking to the samples around it."""
    for (h0, c0), (h1, c1) in pairwise(zip(hours, cpu, strict=True)):
        if h0 <= x <= h1:
            return c0 if h1 == h0 else c0 + (c1 - c0) * (x - h0) / (h1 - h0)
    return float("nan")


def test_lines_in_the_hour_give_their_ratio_at_every_row(sbs, tmp_path):
    new = _write(tmp_path / "n.jsonl", [0.0, 0.7, 1.3, 2.2, 3.05], lambda h: 90.0 * h, "new")
    base = _write(tmp_path / "b.jsonl", [0.0, 0.4, 1.9, 2.6, 3.1, 3.4], lambda h: 120.0 * h, "old")
    t = sbs.pair_table(sbs._read(new), sbs._read(base), 0.5)
    assert t["hours"].tolist() == [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]  # up to the hour both reached
    np.testing.assert_allclose(t["ratio"], 0.75)
    # the peaks where both had been (3.05 h): the base's at its first sample past it, not
    # at its end
    assert t["peaks"] == (403.05, 403.1) and t["commits"] == ("new", "old")


# (the fixture only imports the module: nothing in it to reset between examples)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    gaps=st.lists(st.floats(0.01, 1.0), min_size=2, max_size=12),
    rates=st.lists(st.floats(1.0, 200.0), min_size=12, max_size=12),
    step=st.sampled_from([0.1, 0.25, 0.5, 1.0]),
)
def test_each_row_is_the_slow_interpolation(sbs, gaps, rates, step):
    hours = np.concatenate([[0.0], np.cumsum(gaps)]).tolist()
    cpu = np.concatenate([[0.0], np.cumsum(np.array(gaps) * rates[: len(gaps)])]).tolist()
    samples = [{"sim_h": h, "cpu_s": c} for h, c in zip(hours, cpu, strict=True)]
    xs = np.arange(1, 40) * step
    got = sbs.cpu_at(samples, xs)
    want = [_slow_interp(hours, cpu, x) for x in xs]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_different_replays_and_short_logs_are_refused(sbs, tmp_path):
    base = _write(tmp_path / "b.jsonl", [0.0, 1.0, 2.0], lambda h: h, "old")
    other = _write(tmp_path / "o.jsonl", [0.0, 1.0, 2.0], lambda h: h, "new", policy="none")
    with pytest.raises(SystemExit, match=r"o\.jsonl and .*b\.jsonl .*policy 'none' against 'late'"):
        sbs.pair_table(sbs._read(other), sbs._read(base), 0.5)
    short = _write(tmp_path / "s.jsonl", [0.0], lambda h: h, "new")
    with pytest.raises(SystemExit, match=r"s\.jsonl: fewer than two samples"):
        sbs.pair_table(sbs._read(short), sbs._read(base), 0.5)
    with pytest.raises(SystemExit, match="--step must be a positive .* not -1"):
        sbs.pair_table(sbs._read(base), sbs._read(base), -1)


def test_the_script_prints_each_pair_and_writes_the_png(sbs, tmp_path, capsys):
    logs = [
        _write(tmp_path / f"{i}.jsonl", [0.0, 1.0, 2.0], lambda h, k=k: k * h, f"c{i}")
        for i, k in enumerate([8.0, 10.0, 9.0, 10.0])
    ]
    png = tmp_path / "pairs.png"
    argv = ["--pair", str(logs[0]), str(logs[1]), "--pair", str(logs[2]), str(logs[3])]
    assert sbs.main([*argv, "--step", "1", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.count("peak RSS") == 2 and "0.800" in out and "0.900" in out
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
