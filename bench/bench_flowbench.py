"""Benchmark: reading and featurising the whole FlowBench copy against plain ``pandas.read_csv``.

Each measurement runs in its own subprocess (so peak RSS is its own):

* **peer** -- ``pandas.read_csv`` of every run file (all columns, no checks) and one
  ``pandas.concat``: the least any reader must do;
* **ours** -- :func:`pipelines.flowbench.read_flowbench` (needed columns, checks naming
  file/row/column) then :func:`pipelines.flowbench.build_trace` (the causal counters),
  timed per phase.

Prints rows, wall and CPU seconds, peak RSS (``resource.getrusage``) and the ratio of ours to
the peer. The issue's budget: under a minute and under 2 GB for the shared copy.

Usage::

    python bench/bench_flowbench.py [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _peer(data_dir: str) -> dict:
    import pandas as pd

    from pipelines.flowbench import list_run_files

    files = list_run_files(data_dir)
    w0, c0 = _clock()
    frame = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    w1, c1 = _clock()
    return {"rows": len(frame), "files": len(files), "wall": w1 - w0, "cpu": c1 - c0}


def _ours(data_dir: str) -> dict:
    from pipelines.flowbench import build_trace, list_run_files, read_flowbench

    files = list_run_files(data_dir)
    w0, c0 = _clock()
    raw = read_flowbench(data_dir)
    w1, c1 = _clock()
    trace = build_trace(raw)
    w2, c2 = _clock()
    return {
        "rows": len(raw),
        "files": len(files),
        "trace_rows": len(trace),
        "read_wall": w1 - w0,
        "featurise_wall": w2 - w1,
        "wall": w2 - w0,
        "cpu": c2 - c0,
    }


def _child(which: str, data_dir: str) -> None:
    out = (_peer if which == "peer" else _ours)(data_dir)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps(out))


def _run(which: str, data_dir: str) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", which, "--data-dir", data_dir],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--child", choices=["peer", "ours"], help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child, args.data_dir)
        return {}
    peer = _run("peer", args.data_dir)
    ours = _run("ours", args.data_dir)
    print(f"files {ours['files']}, job rows {ours['rows']}, trace rows {ours['trace_rows']}")
    print(
        f"peer  pandas.read_csv + concat : {peer['wall']:6.1f} s wall {peer['cpu']:6.1f} s cpu "
        f"peak RSS {peer['peak_rss_mb']:7.0f} MB"
    )
    print(
        f"ours  read_flowbench           : {ours['read_wall']:6.1f} s wall\n"
        f"      build_trace (counters)   : {ours['featurise_wall']:6.1f} s wall\n"
        f"      total                    : {ours['wall']:6.1f} s wall {ours['cpu']:6.1f} s cpu "
        f"peak RSS {ours['peak_rss_mb']:7.0f} MB"
    )
    ratio = {
        "wall": ours["wall"] / peer["wall"],
        "cpu": ours["cpu"] / peer["cpu"],
        "peak_rss": ours["peak_rss_mb"] / peer["peak_rss_mb"],
    }
    print(
        f"ratio ours / peer: wall {ratio['wall']:.2f}x, cpu {ratio['cpu']:.2f}x, "
        f"peak RSS {ratio['peak_rss']:.2f}x"
    )
    print(
        f"budget (< 60 s, < 2048 MB): {'met' if ours['wall'] < 60 else 'MISSED'} / "
        f"{'met' if ours['peak_rss_mb'] < 2048 else 'MISSED'}"
    )
    return {"peer": peer, "ours": ours, "ratio": ratio}


if __name__ == "__main__":
    main()
