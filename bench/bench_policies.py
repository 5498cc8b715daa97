"""What each speculation policy costs the engine: CPU of one streamed replay per policy,
against the same replay without speculation.

Peer measured in the same run: policy ``none`` (no speculation), on the same workload,
cluster, placement (fair) and seed. Printed per policy: CPU seconds (``process_time`` of the
whole ``simulate`` call, set-up included; the best of ``--repeat`` rounds, each round running
every policy once in turn, after an untimed warm-up replay that pays the imports), events,
attempts and copies, and the ratio to the peer's CPU; with ``--plot``, the ratios as a bar
chart (PNG). On a shared machine one round's figures swing by a third: use ``--repeat``.
A policy's extra events (its ticks, copies and kills) are part of what it costs, so the
ratio is per replay, not per event. The default replay is FB-2010's first quarter hour of
jobs on 1,000 x 10 (about 116,000 events without speculation), where every policy runs to
its end in a minute or two.

Measured 2026-11-30 (m) on the 2-core machine, a LATE day replay on the other core, each
change against a copy of the tree before it (e226704), run the same way one after the other,
the traces equal (``tasks.parquet``, ``DataFrame.equals``):

- the slot schedulers of seeds 000/001 copied a job's whole waiting queue at every pass and
  made every task of a big job at its arrival for their mean work; they read the queue only
  as far as they launch and the works without making tasks (``task_works``), and ESE reads
  a job's candidates' progress in one call (SDA: when its pass cannot run out of slots
  within the job): ESE 119.8 -> 32.1 s, SDA 109.3 -> 33.8 s, SCA 95.7 -> 26.2 s;
- Hopper sorts only the jobs with waiting tasks at a finish or an arrival (it launches only
  waiting tasks there), not every job alive: 34.0 -> 22.3 s;
- Shed+ keeps each live job's t_min instead of summing its tasks at every run of its
  Algorithm 1 (45.7 -> 33.7 s), and reads a job's tasks' live attempts in one call instead
  of one call a task (both: 57.8 -> 40.6 s);
- Mantri's tick in C: see ``bench/bench_mantri_scan.py``;
- Dolly and Shed (their copies of the queue dropped too): 22.0 / 22.7 s and 41.7 / 39.8 s
  (two runs), the same.

Run: ``.venv/bin/python bench/bench_policies.py --data-dir ../shared/data [--workload FB2010]
[--nodes 1000] [--slots 10] [--hours 0.25] [--policies late,mantri,...] [--repeat 3]
[--plot out.png]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


def run_one(
    policy: str, workload: str, nodes: int, slots: int, hours: float, data_dir: str, out: Path
) -> dict:
    """One streamed replay of ``workload`` with ``policy``: its CPU seconds and counts."""
    import sim_bridge

    t0 = time.process_time()
    res = sim_bridge.simulate(
        workload,
        policy,
        "fair",
        nodes=nodes,
        slots=slots,
        hours=hours,
        seed=0,
        data_dir=data_dir,
        progress=False,
        trace_sink=out / f"{policy}.parquet",
    )
    cpu = time.process_time() - t0
    s = res.summary
    return {
        "policy": policy,
        "cpu_s": cpu,
        "events": int(s["events"]),
        "attempts": int(s["attempts"]),
        "copies": int(s.get("copies", 0)),
    }


def plot(rows: list[dict], peer_cpu: float, title: str, path: Path) -> None:
    """The ratios to the peer as horizontal bars, slowest first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(rows, key=lambda r: r["cpu_s"])
    fig, ax = plt.subplots(figsize=(7, 0.32 * len(rows) + 1.4))
    ratios = [r["cpu_s"] / peer_cpu for r in rows]
    ax.barh([r["policy"] for r in rows], ratios, color="#4c72b0")
    ax.axvline(1.0, color="black", lw=0.8)
    for y, x in enumerate(ratios):
        ax.text(x, y, f" {x:.2f}x", va="center", fontsize=8)
    ax.set_xlabel("CPU of the replay / CPU without speculation")
    ax.set_title(title, fontsize=9)
    ax.set_xlim(0, max(ratios) * 1.15)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True, help="data directory holding swim/")
    ap.add_argument("--workload", default="FB2010", help="workload (FB2010)")
    ap.add_argument("--nodes", type=int, default=1000, help="nodes (1,000)")
    ap.add_argument("--slots", type=int, default=10, help="slots per node (10)")
    ap.add_argument("--hours", type=float, default=0.25, help="hours of arrivals (0.25)")
    ap.add_argument("--policies", default=None, help="comma separated (every registered one)")
    ap.add_argument("--plot", type=Path, default=None, help="write the ratios as a PNG here")
    ap.add_argument("--repeat", type=int, default=1, help="rounds; the best CPU is kept (1)")
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit(f"bench_policies: --repeat must be at least 1, got {args.repeat}")

    from sim_bridge.policies import list_policies

    known = list(list_policies("speculation"))
    names = known if args.policies is None else [p for p in args.policies.split(",") if p]
    bad = [p for p in names if p not in known]
    if bad:
        sys.exit(f"bench_policies: unknown policy {bad[0]!r} in --policies (known: {known})")
    names = [p for p in names if p != "none"]
    what = (
        f"{args.workload}, {args.hours:g} h of jobs on {args.nodes:,} x {args.slots}, fair, seed 0"
    )
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:

        def run(name: str, hours: float) -> dict:
            return run_one(
                name, args.workload, args.nodes, args.slots, hours, args.data_dir, Path(tmp)
            )

        run("none", min(args.hours, 0.01))  # warm-up: the imports and caches, untimed
        for k in range(args.repeat):
            for name in ["none", *names]:
                r = run(name, args.hours)
                if name not in best or r["cpu_s"] < best[name]["cpu_s"]:
                    best[name] = r
                print(f"  round {k + 1}: {name:8s} {r['cpu_s']:7.1f} s", flush=True)
    peer = best["none"]
    rows = [best[name] for name in names]
    print(f"{what}; best of {args.repeat}")
    print(f"  peer: none {peer['cpu_s']:7.1f} s, {peer['events']:,} events")
    for r in rows:
        print(
            f"  {r['policy']:8s} {r['cpu_s']:7.1f} s  {r['cpu_s'] / peer['cpu_s']:5.2f}x  "
            f"events {r['events']:>9,}  attempts {r['attempts']:>9,}  copies {r['copies']:>8,}"
        )
    if args.plot is not None:
        plot(rows, peer["cpu_s"], f"What each policy costs: {what}", args.plot)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
