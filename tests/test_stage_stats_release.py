"""The speculation policies that keep finished run times per (job, stage) let a job's first
stage's go once its second stage finishes a task (they are read for the job's current stage
only): the traces equal those of policies that keep them, bit for bit, and less is held."""

from __future__ import annotations

import pytest
from _crowded import assert_same_tables, mapreduce_workload

import sim_bridge
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


@pytest.mark.parametrize("cls", [LATE, Mantri, SparkSpeculation, HadoopSpeculator])
def test_first_stage_run_times_go_and_the_traces_stay(cls):
    w = mapreduce_workload(30, 2, gap=20.0, max_maps=80, map_mu=3.0)
    kw = dict(nodes=10, slots=4, seed=5, progress=False)
    new_held: list[int] = []
    old_held: list[int] = []
    new = sim_bridge.simulate(w, _watched(cls, new_held, True)(), **kw)
    old = sim_bridge.simulate(w, _watched(_keep_all(cls), old_held, False)(), **kw)
    assert new.summary["copies"] > 0  # the policy acted
    assert_same_tables(new.tasks, new.jobs, old.tasks, old.jobs)
    assert len(new_held) == len(old_held) > 100
    assert sum(new_held) < sum(old_held)  # held for less time
    assert all(a <= b for a, b in zip(new_held, old_held, strict=True))
