"""What a replay holds after its first N events: RSS, peak RSS, pymalloc's allocated blocks and
a count of every kind of tracked object, as JSON, for comparing two trees side by side.

Memory figures differ across sessions by several per cent for the same code (2026-11-30 (q):
9ee19be's FB-2010 LATE day peaked at 910 MB to its 8th hour on (p) and at 966 MB on (q)), so
a change's memory is compared only against the tree before it, run at the same time. Run this
from a copy of each tree (``git archive REV sim_bridge mtl pipelines bench | tar -x -C DIR``,
its extensions built there) with ``PYTHONPATH=DIR``, side by side, and compare the two files.

Measured 2026-11-30 (q): 089d724 against 9ee19be, the FB-2010 day with LATE on 33,000 x 10 to
5,590,000 events (8.0 simulated h), run at the same time: RSS 951.9 and 952.9 MB, peaks 964.2
and 966.0 MB, 5,111,944 and 5,111,773 allocated blocks, the same count of every object type
to a few dozen (389,407 and 389,403 lists, 258,443 attempts each).

Run: ``.venv/bin/python bench/memory_snapshot.py --events 5590000 --out snap.json
[--workload FB2010] [--policy late] [--nodes 33000] [--slots 10] [--data-dir DIR]``
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import resource
import sys
import tempfile
from pathlib import Path

from _fb2010_loop import run_replay
from _proc_memory import rss_mb


def snapshot(args: argparse.Namespace) -> dict:
    """Replay ``args.workload`` streamed for its first ``args.events`` events and describe
    what the process holds then (the simulator still alive)."""
    import sim_bridge

    sim_bridge.lean_allocators()  # as straggler simulate --stream does
    with tempfile.TemporaryDirectory() as tmp:
        sim, cpu = run_replay(
            args.workload,
            args.nodes,
            args.slots,
            args.policy,
            24,
            args.events,
            args.data_dir,
            Path(tmp) / "tasks.parquet",
        )
        types = collections.Counter(type(o).__name__ for o in gc.get_objects())
        return {
            "workload": args.workload,
            "policy": args.policy,
            "events": sim.events,
            "sim_h": sim.now / 3600.0,
            "loop_cpu_s": cpu,
            "rss_mb": rss_mb(),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "allocated_blocks": sys.getallocatedblocks(),
            "types": types.most_common(args.top),
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, required=True, help="events to run")
    ap.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    ap.add_argument("--workload", default="FB2010")
    ap.add_argument("--policy", default="late")
    ap.add_argument("--nodes", type=int, default=33000)
    ap.add_argument("--slots", type=int, default=10)
    ap.add_argument("--top", type=int, default=40, help="object types listed (40)")
    ap.add_argument("--data-dir", default=None, help="data directory holding the traces")
    args = ap.parse_args()
    if args.events <= 0:
        ap.error(f"--events must be positive, got {args.events}")
    res = snapshot(args)
    tmp = args.out.with_name(args.out.name + ".part")
    tmp.write_text(json.dumps(res, indent=1))
    tmp.replace(args.out)  # a stopped run leaves no file that looks complete
    print(
        f"{res['workload']} {res['policy']} at {res['events']:,} events ({res['sim_h']:.2f} h): "
        f"RSS {res['rss_mb']:.1f} MB, peak {res['peak_rss_mb']:.1f} MB, "
        f"{res['allocated_blocks']:,} blocks; wrote {args.out}"
    )


if __name__ == "__main__":
    main()
