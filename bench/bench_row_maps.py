"""Big live jobs' done-task rows in file mappings given back to the kernel, against arrays.

A streaming run keeps each done task of a live job as a row of its job: 4 ints and 3 floats
(``sim_bridge._jobs.task_to_row``), in arrays the job allocates for all its tasks. Since
2026-11-29 (d) a job of 4,096 tasks or more gets them as views of a file mapping instead
(``sim_bridge._row_maps.RowMaps``), whose pages the engine gives back every 64 checks
(65,536 events). Peer measured in the same run: the arrays (``array("q")``/``array("d")``,
what every job had before and what a job keeps on ``tmpfs``).

Each side runs in a process of its own (``--side``), so that its resident memory is its own:
``--jobs`` jobs of ``--tasks`` tasks each, their tasks done round-robin across the jobs and
in index order within one (as FIFO within a job finishes them), each writing its row; the
pages given back every ``--every`` tasks done (an FB-2010 day finishes about one task an
event). Printed: each side's CPU to write every row, its resident memory at the end and its
peak, the CPU to read every row back (a job's rows are read when it ends), and the ratios
maps / arrays.

Measured 2026-11-29 (d) on the 2-core machine (three replays beside it), this script with
its defaults (400 jobs of 20,000 tasks: 8M rows, 427 MiB): see ``bench/bench_sim.py``,
2026-11-29 (d).

Run: ``.venv/bin/python bench/bench_row_maps.py [--jobs 400] [--tasks 20000] [--every 65536]``
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from array import array


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def _side(side: str, n_jobs: int, n_tasks: int, every: int) -> dict:
    import numpy  # noqa: F401  (imported before the memory is measured, on both sides)

    from sim_bridge._jobs import DONE_F, ONE_ROW, Job
    from sim_bridge._row_maps import RowMaps, pages_to_disk

    with tempfile.TemporaryDirectory(prefix="bench-rows-", dir=".") as where:
        if side == "maps" and not pages_to_disk(where):
            raise SystemExit(f"{where} is not on a disk: the maps would not leave memory")
        return _write_read(side, RowMaps(where), n_jobs, n_tasks, every, Job, ONE_ROW, DONE_F)


def _write_read(side, maps, n_jobs, n_tasks, every, job_type, one_row, done_row) -> dict:
    import numpy as np

    jobs = []
    base = _rss_mb()
    for _ in range(n_jobs):
        job = job_type()
        job.n_tasks = n_tasks
        if side == "arrays" or not maps.assign(job):
            job._one = array("q", bytes(8 * one_row * n_tasks))
            job._done_f = array("d", bytes(8 * done_row * n_tasks))
        jobs.append(job)
    c0 = time.process_time()
    done = 0
    for i in range(n_tasks):
        for j, job in enumerate(jobs):
            one, done_f = job._one, job._done_f
            k, f = one_row * i, done_row * i
            one[k] = j * n_tasks + i
            one[k + 1] = i % 33_000
            one[k + 2] = 13 * i
            one[k + 3] = j
            done_f[f] = 1.5 * i
            done_f[f + 1] = 0.25 * i
            done_f[f + 2] = math.nan if i % 97 == 0 else 2.0 * i
            done += 1
            if side == "maps" and done % every == 0:
                maps.give_back()
    if side == "maps":
        maps.give_back()
    write_s = time.process_time() - c0
    end_mb = _rss_mb() - base
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    # each job's rows read once, as when it ends, and let go (Job.release)
    c0 = time.process_time()
    total = 0.0
    for job in jobs:
        total += float(np.frombuffer(job._one, np.int64)[1::one_row].sum())
        total += float(np.nansum(np.frombuffer(job._done_f, np.float64)))
        job._one = job._done_f = job._many_i = job._many_f = None
    read_s = time.process_time() - c0
    maps.close()
    return {"write_s": write_s, "read_s": read_s, "end_mb": end_mb, "peak_mb": peak, "sum": total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=400, help="live jobs (400)")
    ap.add_argument("--tasks", type=int, default=20_000, help="tasks a job (20000)")
    ap.add_argument("--every", type=int, default=65_536, help="tasks done between returns")
    ap.add_argument("--side", choices=("arrays", "maps"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        print(json.dumps(_side(args.side, args.jobs, args.tasks, args.every)))
        return
    mib = args.jobs * args.tasks * 56 / 2**20
    print(f"{args.jobs} jobs x {args.tasks:,} tasks: {args.jobs * args.tasks:,} rows, "
          f"{mib:,.0f} MiB; pages given back every {args.every:,} tasks done")  # fmt: skip
    got = {}
    for side in ("arrays", "maps"):
        cmd = [sys.executable, __file__, "--side", side, "--jobs", str(args.jobs),
               "--tasks", str(args.tasks), "--every", str(args.every)]  # fmt: skip
        got[side] = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
        r = got[side]
        print(f"  {side:6s}: write {r['write_s']:6.2f} s CPU, read back {r['read_s']:5.2f} s, "
              f"resident at the end +{r['end_mb']:6.0f} MB, "
              f"peak (writing) {r['peak_mb']:6.0f} MB")  # fmt: skip
    a, m = got["arrays"], got["maps"]
    print(f"maps / arrays: write {m['write_s'] / a['write_s']:.2f}x, read "
          f"{m['read_s'] / a['read_s']:.2f}x, resident at the end "
          f"{m['end_mb'] / a['end_mb']:.3f}x, peak {m['peak_mb'] / a['peak_mb']:.2f}x; "
          f"the same rows: {m['sum'] == a['sum']}")  # fmt: skip


if __name__ == "__main__":
    main()
