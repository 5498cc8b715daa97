"""The engine's loop CPU over the first events of the FB-2010 day (or another replay), and an
A/B of two implementations of one part of the engine on it (shared by ``bench_heap.py``,
``bench_late_scan.py``, ``bench_mantri_scan.py``, ``bench_retenant.py``,
``bench_chunk_walks.py``, ``bench_pop_live.py``, ``bench_prefetch.py`` and
``bench_late_cut.py``; :func:`run_replay` also by
``memory_snapshot.py``)."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_replay(
    workload: str,
    nodes: int,
    slots: int,
    policy: str,
    hours: float,
    n_events: int | None,
    data_dir: str | None,
    out: Path,
) -> tuple[Any, float]:
    """Replay ``hours`` of ``workload``'s jobs on ``nodes`` x ``slots`` (fair placement) with
    ``policy``, streamed to ``out``, for its first ``n_events`` events (None: to its end);
    return the simulator, stopped there and still holding its state, and the CPU seconds of
    its loop (from the simulator's start, set-up excluded)."""
    import sim_bridge
    from sim_bridge import _engine

    box: dict = {}
    run = _engine.Simulator.run

    def timed(self, *a, **k):
        box["sim"], box["t0"] = self, time.process_time()
        return run(self, *a, **k)

    _engine.Simulator.run = timed  # type: ignore[method-assign]  # restored below
    try:
        sim_bridge.simulate(
            workload,
            policy,
            "fair",
            nodes=nodes,
            slots=slots,
            hours=hours,
            seed=0,
            data_dir=data_dir,
            progress=False,
            max_events=n_events,
            trace_sink=out,
        )
    except sim_bridge.SimulationStopped:
        pass
    finally:
        _engine.Simulator.run = run  # type: ignore[method-assign]
    return box["sim"], time.process_time() - box["t0"]


def fb2010_loop_cpu(
    policy: str, n_events: int, data_dir: str | None, out: Path
) -> tuple[float, int]:
    """The loop CPU seconds (:func:`run_replay`) of the FB-2010 day on 33,000 x 10 for its
    first ``n_events``, and the events run."""
    return _cpu_and_events(run_replay("FB2010", 33000, 10, policy, 24, n_events, data_dir, out))


def _cpu_and_events(replay: tuple[Any, float]) -> tuple[float, int]:
    """``(loop CPU, events)`` of :func:`run_replay`'s ``(simulator, loop CPU)``."""
    sim, cpu = replay
    return cpu, sim.events


def compare_fb2010(
    run_side: Callable[[bool, Path], tuple[float, int]],
    labels: dict[bool, str],
    what: str,
    repeat: int,
) -> tuple[float, float, bool]:
    """Run both sides of an A/B on the FB-2010 day (or another replay: ``what`` names it),
    ``repeat`` times each, interleaved, the side that goes first alternating (AB BA AB ...):
    ``run_side(in_c, out)`` runs the compiled side (True) or its peer (False), streamed to
    ``out``, and returns its loop CPU and events. Prints each run (``what``: the replay,
    e.g. ``"FB-2010 with LATE"``; ``labels``: each side's name). Returns the mean loop CPU
    of the compiled side and of the peer, and whether their first traces are equal.

    The order alternates and the means are returned because the runs of one process slow
    down as it goes: the same code run four times in one process, the first 600,000 events
    of the FB-2010 day with LATE, took 67.7, 70.4, 69.8 and 76.3 s of loop CPU (2026-12-01
    (u)), so a fixed order, or the best of alternating runs, favours the side that runs
    first (an apparent 0.92x that was 0.985x side by side in separate processes). An even
    ``repeat`` cancels a steady drift."""
    import pyarrow.parquet as pq

    cpu: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeat):
            for in_c in (True, False) if r % 2 == 0 else (False, True):
                out = Path(tmp) / f"{'c' if in_c else 'peer'}{r}.parquet"
                s, events = run_side(in_c, out)
                cpu[in_c].append(s)
                print(
                    f"  {what}, {events:,} events, {labels[in_c]}: loop CPU {s:.1f} s", flush=True
                )
        same = pq.read_table(Path(tmp) / "c0.parquet").equals(
            pq.read_table(Path(tmp) / "peer0.parquet")
        )
    return sum(cpu[True]) / len(cpu[True]), sum(cpu[False]) / len(cpu[False]), same


def scan_switch_main(doc: str, policy: str, what: str, switch: str, built: str) -> None:
    """The command line of a bench of a speculation policy's compiled scan against its Python
    reference on the FB-2010 day (``bench_late_scan.py``, ``bench_mantri_scan.py``):
    ``--events``, ``--data-dir`` and ``--repeat``; the two sides are the module flag
    ``sim_bridge.policies._speculation.<switch>`` on and off, for ``policy``; ``built`` names
    the compiled function there, None when the extension is not built. ``what`` names the
    scan in the output (e.g. ``"scan"``, ``"tick"``)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--events", type=int, default=300_000, help="FB-2010 events (300,000)")
    ap.add_argument("--data-dir", default=None, help="data directory holding swim/")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each side (2: AB BA)")
    args = ap.parse_args()

    from sim_bridge.policies import _speculation

    if getattr(_speculation, built) is None:
        sys.exit(f"{Path(sys.argv[0]).stem}: the extension sim_bridge._progress_core is not built")

    def run_side(in_c: bool, out: Path) -> tuple[float, int]:
        setattr(_speculation, switch, in_c)
        return fb2010_loop_cpu(policy, args.events, args.data_dir, out)

    name = {"late": "LATE", "mantri": "Mantri"}.get(policy, policy)
    c, p, same = compare_fb2010(
        run_side,
        {True: f"{what} compiled", False: f"{what} in Python"},
        f"FB-2010 with {name}",
        args.repeat,
    )
    print(
        f"FB-2010 with {name}, first {args.events:,} events, loop CPU (mean of "
        f"{args.repeat}): Python {what} (peer) {p:.1f} s, compiled {c:.1f} s ({c / p:.2f}x); "
        f"traces equal: {same}"
    )


def engine_switch_main(
    doc: str, set_switch: Callable[[bool], None], built: bool, extension: str, peer: str
) -> None:
    """The command line of a bench of a compiled part of the engine against its reference
    (``bench_retenant.py``, ``bench_chunk_walks.py``): ``--ali2017-hours`` (Alibaba 2017's
    first hours on 1,300 x 176 without speculation, to their end; 0 skips it),
    ``--fb2010-events`` (the FB-2010 day's first events with LATE; 0 skips it), ``--data-dir``
    and ``--repeat``. ``set_switch(in_c)`` selects a side; ``built`` says whether the
    ``extension`` is there; ``peer`` names the reference side in the output."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--ali2017-hours", type=float, default=0.25, help="0 skips it (0.25)")
    ap.add_argument("--fb2010-events", type=int, default=0, help="FB-2010 events (0: skip)")
    ap.add_argument("--data-dir", default=None, help="data directory holding the traces")
    ap.add_argument("--repeat", type=int, default=2, help="engine runs of each side (2)")
    args = ap.parse_args()

    if not built:
        sys.exit(f"{Path(sys.argv[0]).stem}: the extension {extension} is not built")
    labels = {True: "compiled", False: f"{peer} (peer)"}
    cases: list[tuple[str, Callable[[Path], tuple[float, int]]]] = []
    if args.ali2017_hours:
        cases.append(
            (
                f"Alibaba 2017 first {args.ali2017_hours:g} h, none, 1,300 x 176",
                lambda out: _cpu_and_events(
                    run_replay(
                        "ALI2017", 1300, 176, "none", args.ali2017_hours, None, args.data_dir, out
                    )
                ),
            )
        )
    if args.fb2010_events:
        cases.append(
            (
                f"FB-2010 first {args.fb2010_events:,} events, LATE, 33,000 x 10",
                lambda out: fb2010_loop_cpu("late", args.fb2010_events, args.data_dir, out),
            )
        )

    for what, run in cases:

        def run_side(in_c: bool, out: Path, run=run) -> tuple[float, int]:
            set_switch(in_c)
            return run(out)

        c, p, same = compare_fb2010(run_side, labels, what, args.repeat)
        print(
            f"{what}, loop CPU (mean of {args.repeat}): {peer} (peer) {p:.1f} s, compiled "
            f"{c:.1f} s ({c / p:.2f}x); traces equal: {same}"
        )


def compare_switched_late(
    set_switch: Callable[[bool], bool],
    labels: dict[bool, str],
    n_events: int,
    data_dir: str | None,
    repeat: int,
) -> None:
    """:func:`compare_fb2010` of the FB-2010 day's first ``n_events`` with LATE on 33,000 x
    10, one side with ``set_switch(True)`` and the other with ``set_switch(False)`` (it
    returns the previous setting, put back after each run), printed with ``labels`` (the
    peer's, False, says "(peer)"): ``bench_prefetch.py``'s hints, ``bench_late_cut.py``'s
    selection."""
    what = f"FB-2010 first {n_events:,} events, LATE, 33,000 x 10"

    def run_side(on: bool, out: Path) -> tuple[float, int]:
        was = set_switch(on)
        try:
            return fb2010_loop_cpu("late", n_events, data_dir, out)
        finally:
            set_switch(was)

    c, p, same = compare_fb2010(run_side, labels, what, repeat)
    print(
        f"{what}, loop CPU (mean of {repeat}): {labels[False]} {p:.1f} s, {labels[True]} "
        f"{c:.1f} s ({c / p:.2f}x); traces equal: {same}"
    )
