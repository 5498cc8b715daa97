"""The speculation policies that keep finished run times per (job, stage) let a job's first
stage's go once its second stage finishes a task (they are read for the job's current stage
only): the traces equal those of policies that keep them, bit for bit, and less is held."""

from __future__ import annotations

import numpy as np
import pytest

import sim_bridge
from sim_bridge import JobSpec, Workload
from sim_bridge.policies import LATE, HadoopSpeculator, Mantri, SparkSpeculation


def _keep_all(cls):
    """``cls`` with the old bookkeeping: a job's first stage's run times kept until the job is
    done."""

    class Keeping(cls):
        def on_attempt_finished(self, view, attempt):
            job = attempt.task.job
            kept = self._durs.get((job.uid, 0))
            out = super().on_attempt_finished(view, attempt)
            if kept is not None and not job.done:
                self._durs[(job.uid, 0)] = kept  # put back: kept until the job is done
            return out

    return Keeping


def _watched(cls, held: list[int], released: bool):
    """``cls`` that logs how many run times are held after each finish and, if
    ``released``, checks that no job whose second stage finished a task still has its first
    stage's."""

    class Watched(cls):
        def on_attempt_finished(self, view, attempt):
            out = super().on_attempt_finished(view, attempt)
            for uid, stage in self._durs:
                if released and stage == 1:
                    assert (uid, 0) not in self._durs
            held.append(sum(len(d) for d in self._durs.values()))
            return out

    return Watched


def _jobs(seed: int) -> Workload:
    """30 jobs of 20-80 maps and 2-8 reduces, heavy-tailed noise, on a small cluster."""
    rng = np.random.default_rng(seed)
    jobs, t = [], 0.0
    for i in range(30):
        t += float(rng.exponential(20.0))
        maps = rng.uniform(5.0, 40.0, int(rng.integers(20, 80)))
        reds = rng.uniform(20.0, 60.0, int(rng.integers(2, 8)))
        jobs.append(JobSpec(f"s{i}", t, maps, reds, workload="MIX"))
    return Workload("MIX", jobs, tail_alpha=1.8)


@pytest.mark.parametrize("cls", [LATE, Mantri, SparkSpeculation, HadoopSpeculator])
def test_first_stage_run_times_go_and_the_traces_stay(cls):
    w = _jobs(2)
    kw = dict(nodes=10, slots=4, seed=5, progress=False)
    new_held: list[int] = []
    old_held: list[int] = []
    new = sim_bridge.simulate(w, _watched(cls, new_held, True)(), **kw)
    old = sim_bridge.simulate(w, _watched(_keep_all(cls), old_held, False)(), **kw)
    assert new.summary["copies"] > 0  # the policy acted
    for table in ("tasks", "jobs"):
        pd_new, pd_old = getattr(new, table), getattr(old, table)
        assert list(pd_new.columns) == list(pd_old.columns)
        for col in pd_new.columns:
            x, y = pd_new[col].to_numpy(), pd_old[col].to_numpy()
            if x.dtype.kind == "f":
                assert np.array_equal(x.view(np.int64), y.view(np.int64)), (table, col)
            else:
                assert x.tolist() == y.tolist(), (table, col)
    assert len(new_held) == len(old_held) > 100
    assert max(new_held) < max(old_held)
    assert all(a <= b for a, b in zip(new_held, old_held, strict=True))
