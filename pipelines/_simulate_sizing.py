"""The load a ``straggler simulate`` run puts on its cluster, and the cluster a load needs.

A replayed trace says what work arrives, not the cluster that ran it. The FB-2010 day is
6,110 slot-days of base work; on the default 50 nodes x 2 slots its jobs queue for weeks and
the engine holds every one of them. Two measures of load, over a window of arrivals:

- **offered** (nominal) load: the base work that arrives in the window over the window's
  slot-seconds, the work an idle, average node would do
  (:func:`pipelines._cluster_load.offered_load_profile`; the busiest hour of arrivals is the
  one that decides whether jobs queue);
- **realised** load: the attempts' run time over the same slot-seconds. The world stretches
  base work (contention, slow nodes, noise): FB-2010 attempts ran 18.3x their base work in
  a 0.5 h replay on 2026-11-24 (``bench/bench_sim.py``, "Sizing, revised"), so a nominal
  load of 0.1 can already be a saturated cluster.

:func:`size_cluster` chooses the nodes for a target realised load at the busiest hour. The
stretch is measured, not assumed: a calibration replay of every k-th job of the window
(about :data:`SAMPLE_JOBS` jobs) without speculation gives task-seconds over base work. It
runs on the sample's share of the candidate's nodes, its share of the window's base work
(not 1/k: job sizes are heavy-tailed), so its nodes carry the base work the candidate's
would. The size that stretch needs is the next candidate, until two agree within
:data:`TOLERANCE` or :data:`ROUNDS` replays have run (a warning then says the size did not
settle). The sample keeps its jobs' arrival times, but not the window's busiest hour: a
few big jobs decide where that falls.

Examples
--------
>>> nodes_needed(offered_one_node=12.0, stretch=18.0, load=0.8)  # FB-2010-like: 18x
270
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pipelines._cluster_load import (
    ArrivalLoad,
    hourly_occupancy,
    job_base_work,
    offered_load_profile,
)

#: Jobs a calibration replay keeps at least (every k-th job of the window, k = jobs // this).
SAMPLE_JOBS = 500
#: Calibration rounds at most; the size stops moving before that on the workloads measured.
ROUNDS = 3
#: Two successive sizes within this share of each other end the calibration.
TOLERANCE = 0.05


def nodes_needed(offered_one_node: float, stretch: float, load: float) -> int:
    """Nodes that bring a busiest-hour load of ``offered_one_node`` (the offered load on one
    node) times ``stretch`` down to ``load``: at least 1.

    Examples
    --------
    >>> nodes_needed(12.0, 2.0, 0.8)
    30
    """
    return max(1, math.ceil(offered_one_node * stretch / load - 1e-9))


def sample_jobs(workloads: Sequence[Any], step: int) -> list[Any]:
    """Every ``step``-th job of each workload, in arrival order, as workloads of their own
    (the same names, profiles and tail).

    Examples
    --------
    >>> from sim_bridge import JobSpec, Workload
    >>> w = Workload("X", [JobSpec(f"j{i}", float(i), [1.0]) for i in range(7)])
    >>> [j.job_id for j in sample_jobs([w], 3)[0].jobs]
    ['j0', 'j3', 'j6']
    """
    from sim_bridge import Workload

    if not (isinstance(step, int) and step >= 1):
        raise ValueError(f"parameter step must be an integer >= 1, got {step!r}")
    return [
        Workload(w.name, w.jobs[::step], dict(w.profiles), w.tail_alpha, w.source)
        for w in workloads
    ]


@dataclass(frozen=True)
class Calibration:
    """One calibration replay of :func:`size_cluster`."""

    #: the candidate size it checked (the replay ran on about nodes / step of them)
    candidate_nodes: int
    #: nodes of the replay: ``candidate_nodes`` x ``share``
    nodes: int
    #: every step-th job of the window
    step: int
    jobs: int
    base_work: float
    #: the sample's share of the window's base work
    share: float
    task_seconds: float
    #: task-seconds over base work
    stretch: float
    #: the share of the replay's slots busy in its busiest hour (near 1: tasks waited)
    busiest_occupancy: float
    #: CPU the replay took (not compared: the same calibration on a busier machine is equal)
    cpu_seconds: float = field(compare=False)


@dataclass(frozen=True)
class ClusterSize:
    """The cluster :func:`size_cluster` chose, and how."""

    nodes: int
    slots: int
    #: the target: realised load at the busiest hour of arrivals
    load: float
    #: the offered (base-work) load on the chosen cluster
    offered: ArrivalLoad
    #: the stretch the size rests on (the last calibration's)
    stretch: float
    rounds: tuple[Calibration, ...]
    #: whether the last two sizes agreed within :data:`TOLERANCE` (else the rounds ran out)
    settled: bool = True

    @property
    def expected_busiest_load(self) -> float:
        """The realised load the busiest hour should have: stretch x offered load."""
        return self.stretch * self.offered.busiest

    def as_dict(self) -> dict[str, Any]:
        """For ``summary.json``: the choice, the loads and every calibration round."""
        d = asdict(self)
        d["offered"]["busiest_bin"] = list(self.offered.busiest_bin)
        d["rounds"] = [asdict(r) for r in self.rounds]
        d["expected_busiest_load"] = self.expected_busiest_load
        d["basis"] = (
            "nodes for a realised load at the busiest hour of arrivals: the stretch "
            "(task-seconds / base work) measured by replaying every step-th job without "
            "speculation on the sample's share (of the base work) of the nodes; copies add to "
            "the realised load"
        )
        return d

    def describe(self) -> str:
        """One line: the size chosen and why."""
        a, b = self.offered.busiest_bin
        return (
            f"sized the cluster at {self.nodes:,} nodes x {self.slots} slots for a realised load "
            f"of {self.load:g} at the busiest hour of arrivals ({a / 3600:g}-{b / 3600:g} h): "
            f"offered (base-work) load there {self.offered.busiest:.3f}, over the window "
            f"{self.offered.window:.3f}; attempts ran {self.stretch:.2f}x their base work in "
            f"{len(self.rounds)} calibration replay(s) of {_one_in(self.rounds[-1].step)} "
            "without speculation (copies add to the realised load); the last one's busiest "
            f"hour kept {self.rounds[-1].busiest_occupancy:.0%} of its slots busy"
            + (
                ""
                if self.settled
                else f"; NOT settled: the last replay ran at {self.rounds[-1].candidate_nodes:,} "
                "nodes' share, and its stretch moved the size by more than 5%"
            )
        )


def size_cluster(
    workloads: Sequence[Any],
    *,
    load: float,
    slots: int,
    hours: float,
    simulate_kwargs: dict[str, Any] | None = None,
    sample: int = SAMPLE_JOBS,
    rounds: int = ROUNDS,
    report: Callable[[str], None] | None = None,
) -> ClusterSize:
    """The nodes (of ``slots`` slots) for a realised load of ``load`` at the busiest hour.

    Parameters
    ----------
    workloads : sequence of sim_bridge.Workload
        The window's jobs (``sim_bridge.load_workload``), as the run will replay them.
    load : float
        Target realised load at the busiest hour of arrivals, in (0, 1].
    slots : int
        Slots per node.
    hours : float
        The window of arrivals.
    simulate_kwargs : dict, optional
        Further keywords of the calibration replays' :func:`sim_bridge.simulate` (the
        run's placement, seed, world and counters); the policy is always ``"none"``.
    sample : int
        Jobs a calibration replay keeps at least: every ``len(jobs) // sample``-th.
    rounds : int
        Calibration replays at most.
    report : callable, optional
        Called with one line per calibration replay.

    Examples
    --------
    >>> from sim_bridge import JobSpec, Workload
    >>> w = Workload("X", [JobSpec(f"j{i}", 60.0 * i, [600.0] * 6) for i in range(30)])
    >>> ideal = dict(ideal=True, noise=False, skew=(0.0, 0.0))
    >>> size = size_cluster([w], load=0.5, slots=2, hours=1.0, simulate_kwargs=ideal)
    >>> size.stretch, size.nodes  # 30 jobs x 3,600 s of base work in an hour, at half load
    (1.0, 30)
    """
    check_load(load)
    if not (isinstance(rounds, int) and rounds >= 1):
        raise ValueError(f"parameter rounds must be an integer >= 1, got {rounds!r}")
    if not (isinstance(sample, int) and sample >= 1):
        raise ValueError(f"parameter sample must be an integer >= 1, got {sample!r}")
    n_jobs = sum(len(w.jobs) for w in workloads)
    if not n_jobs:
        raise ValueError("parameter workloads holds no job to size the cluster for")
    per_node = offered_load_profile(workloads, 1, slots, hours).busiest
    step = max(1, n_jobs // sample)
    picked = sample_jobs(workloads, step)
    total_work = sum(job_base_work(j) for w in workloads for j in w.jobs)
    picked_work = sum(job_base_work(j) for w in picked for j in w.jobs)
    share = picked_work / total_work
    nodes = nodes_needed(per_node, 1.0, load)  # the base work alone: the most packed start
    done: list[Calibration] = []
    settled = False
    for r in range(rounds):
        cal = _calibrate(
            picked, picked_work, share, nodes, step, slots, hours, simulate_kwargs or {}
        )
        done.append(cal)
        new = nodes_needed(per_node, cal.stretch, load)
        if report is not None:
            report(
                f"calibration {r + 1}: {_one_in(step)} ({cal.jobs:,}, {cal.share:.1%} of the "
                f"base work) on {cal.nodes:,} nodes ran {cal.stretch:.2f}x its base work, "
                f"{cal.busiest_occupancy:.0%} of slots busy in its busiest hour "
                f"({cal.cpu_seconds:.1f} s): {new:,} nodes"
            )
        settled = abs(new - nodes) <= TOLERANCE * nodes
        nodes = new
        if settled:
            break
    if not settled:
        import logging

        logging.getLogger("pipelines.simulate").warning(
            "simulate --load: the size did not settle in %d calibration replays (the last "
            "two: %d and %d nodes); using %d",
            rounds,
            done[-1].candidate_nodes,
            nodes,
            nodes,
        )
    return ClusterSize(
        nodes=nodes,
        slots=slots,
        load=float(load),
        offered=offered_load_profile(workloads, nodes, slots, hours),
        stretch=done[-1].stretch,
        rounds=tuple(done),
        settled=settled,
    )


def check_load(load: Any) -> None:
    """A target load in (0, 1], else a ValueError naming ``--load`` and the value.

    Examples
    --------
    >>> check_load(0.8)
    >>> check_load(True)
    Traceback (most recent call last):
    ...
    ValueError: parameter load (--load) must be in (0, 1], got True
    """
    if isinstance(load, bool) or not (
        isinstance(load, (int, float)) and 0 < load <= 1 and math.isfinite(load)
    ):
        raise ValueError(f"parameter load (--load) must be in (0, 1], got {load!r}")


def _one_in(step: int) -> str:
    return "every job" if step == 1 else f"1 job in {step}"


def _calibrate(
    picked: list[Any],
    base_work: float,
    share: float,
    candidate: int,
    step: int,
    slots: int,
    hours: float,
    kw: dict[str, Any],
) -> Calibration:
    """Replay the sample (``base_work``, ``share`` of the window's) without speculation on
    the same share of ``candidate`` nodes: the same base work per node as the whole run."""
    import sim_bridge

    nodes = max(1, round(candidate * share))
    cpu0 = time.process_time()
    result = sim_bridge.simulate(
        picked,
        "none",
        **{"progress": False, **kw},
        nodes=nodes,
        slots=slots,
        hours=hours,
        record_counters=False,
    )
    spent = result.summary["task_seconds"]
    occupancy = hourly_occupancy(
        [(result.tasks["launch_time"].to_numpy(), result.tasks["end_time"].to_numpy())],
        nodes,
        slots,
    )
    return Calibration(
        candidate_nodes=candidate,
        nodes=nodes,
        step=step,
        jobs=sum(len(w.jobs) for w in picked),
        base_work=base_work,
        share=share,
        task_seconds=float(spent),
        stretch=float(spent) / base_work,
        busiest_occupancy=occupancy.busiest,
        cpu_seconds=time.process_time() - cpu0,
    )
