"""The run's progress bar: jobs finished, and the simulated clock and jobs alive in its
postfix (``sim_bridge._progress_bar.advance_bar``), on both event loops."""

from __future__ import annotations

import re

import pytest
import tqdm.auto

import sim_bridge
from sim_bridge._compiled import compiled_available


class _Bar:
    """A stand-in for tqdm that records what the loop tells it."""

    made: list[_Bar] = []

    def __init__(self, total: int, **_: object):
        self.total = total
        self.n = 0
        self.postfixes: list[str] = []
        _Bar.made.append(self)

    def update(self, n: int) -> None:
        assert n >= 0
        self.n += n

    def set_postfix_str(self, s: str, refresh: bool = True) -> None:
        self.postfixes.append(s)

    def close(self) -> None:
        pass


_POSTFIX = re.compile(r"clock (\d+\.\d\d) h(?:, ([\d,]+) jobs alive)?$")


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_the_bar_counts_every_job_and_shows_the_clock(monkeypatch, engine):
    if engine == "compiled" and not compiled_available():
        pytest.skip("the compiled loop is not built")
    monkeypatch.setattr(tqdm.auto, "tqdm", _Bar)
    _Bar.made.clear()
    kw = {"interference": 0.0} if engine == "compiled" else {}
    policy, placement = ("none", "fifo") if engine == "compiled" else ("late", "fair")
    r = sim_bridge.simulate(
        "SYN", policy, placement, nodes=20, hours=0.05, seed=4, progress=True, engine=engine, **kw
    )
    assert r.summary["engine"] == engine
    (bar,) = _Bar.made
    assert bar.n == bar.total == len(r.jobs)
    assert bar.postfixes, "no postfix set: the run was shorter than one check"
    parsed = [_POSTFIX.match(s) for s in bar.postfixes]
    assert all(parsed), bar.postfixes[:3]
    hours = [float(m.group(1)) for m in parsed]
    assert hours == sorted(hours)  # the clock never goes back
    assert 0.0 <= hours[-1] <= r.jobs["finish_time"].max() / 3600.0 + 0.005  # the last event
    alive = [m.group(2) for m in parsed]
    if engine == "python":
        assert all(a is not None and int(a.replace(",", "")) <= len(r.jobs) for a in alive)
    else:
        assert all(a is None for a in alive)  # the compiled loop does not count them
