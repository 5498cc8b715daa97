"""Sweeps on Dask: ``straggler compare --seeds 8`` locally, on 1 and on 2 Dask workers.

Peer measured in the same run: the local path (the runs one after the other in this process,
no Dask). Printed:

- wall time of ``run_compare`` (the library function behind ``straggler compare``) with the
  same saved predictors on each engine, and the speed-ups local / 1 worker and local /
  2 workers (on a 2-core machine, expect near 2x less the scheduling overhead);
- the scheduling overhead: the start of a 2-process ``LocalCluster`` (paid once per command),
  the 1-worker run's extra time per task over the local run, and the round trip of a no-op
  task on the 2-worker cluster;
- the per-task costs (a ``compare`` run; a distinct fit and a cached threshold of the default
  Optuna grid on the same trace) and, from them, how long the 108-trial default grid and a
  1,000-run sweep would take on 1, 16 and 128 workers.

The tables of the three ``compare`` runs are checked to be identical.

BLAS threads: Dask's nanny starts workers with ``OMP_NUM_THREADS=1`` (and the MKL/OpenBLAS
equivalents); this script sets the same for itself before NumPy loads, so that the local peer
runs the same single-threaded code (with the default multi-threaded BLAS the local path was
2.3x slower than one Dask worker on this loaded 2-core machine: oversubscription, not Dask).

The default grid's fit cost is measured on a separate, larger SYN trace (``--grid-scale``)
than the compare trace, whose labelled rows are too few to split for training.

Run: ``.venv/bin/python bench/bench_sweep.py [--nodes 20] [--hours 1] [--seeds 8]
[--workloads FB2009,FB2010,ALI2017] [--data-dir DIR]``
"""

from __future__ import annotations

import argparse
import math
import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # as Dask's nanny does for its workers
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402


def _compare(trace: Path, out: Path, args, models: dict, engine=None) -> tuple[float, dict]:
    from pipelines._compare import CompareConfig, run_compare

    cfg = CompareConfig(
        traces=str(trace),
        out=str(out),
        workloads=args.workloads.split(","),
        seeds=args.seeds,
        data_dir=args.data_dir,
        models=models,
    )
    t0 = time.perf_counter()
    s = run_compare(cfg, engine)
    return time.perf_counter() - t0, s


def _noop(x: int) -> int:
    return x


def _burn(seconds: float) -> float:
    """``seconds`` of CPU time in pure Python (the machine's parallel capacity probe)."""
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        pass
    return seconds


def _grid_costs(tmp: Path, args) -> dict:
    """Seconds of a distinct fit of the default grid (f0nl) on a SYN trace."""
    import pandas as pd

    from pipelines._collect import collect
    from pipelines._train import TrainConfig, run_training

    trace = tmp / "grid-trace"
    rows = collect(
        trace, ["SYN"], nodes=args.nodes, hours=args.hours, seed=0, scales={"SYN": args.grid_scale}
    )["rows"]
    trials = args.grid_trials
    out = tmp / "train"
    t0 = time.perf_counter()
    s = run_training(
        TrainConfig(
            traces=str(trace), out=str(out), grid="default", max_trials=trials, register=False
        )
    )
    wall = time.perf_counter() - t0
    t = pd.read_csv(out / "trials.csv")
    fits = t.drop_duplicates(["lambda0", "nu", "omega"])["fit_seconds"]
    return {
        "grid_points": s["study"]["grid_points"],
        "fits_in_grid": s["study"]["grid_points"] // 4,  # four thresholds share a fit
        "fit_seconds": float(fits.mean()),
        "trials": int(len(t)),
        "rows": int(rows),
        "wall_partial": wall,
    }


def _project(n_tasks: int, seconds: float, workers: int, overhead: float) -> float:
    """Waves of ``workers`` parallel tasks, plus the client's per-task overhead."""
    return math.ceil(n_tasks / workers) * seconds + n_tasks * overhead


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=20)
    ap.add_argument("--hours", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--workloads", default="FB2009,FB2010,ALI2017")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--grid-trials", type=int, default=4, help="default-grid trials to time")
    ap.add_argument("--grid-scale", type=float, default=0.05, help="SYN scale of the grid trace")
    args = ap.parse_args()
    warnings.simplefilter("ignore")

    import distributed

    from pipelines._collect import collect, scales_for_load
    from pipelines._sweep import Engine, SweepTask, run_sweep

    tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    trace = tmp / "trace"
    names = args.workloads.split(",")
    size = {"nodes": args.nodes, "slots": 2, "hours": args.hours, "data_dir": args.data_dir}
    scales = scales_for_load(names, 0.7, **size)
    collect(trace, names, seed=0, scales=scales, **size)
    # train the predictors once; every timed run loads the same saved models
    _compare(trace, tmp / "warm", argparse.Namespace(**{**vars(args), "seeds": 1}), {})
    models = {n: str(tmp / "warm" / "models" / n) for n in ("wrangler", "mtl")}

    t_local, s_local = _compare(trace, tmp / "local", args, models)
    n_tasks = len(s_local["runs"])
    t0 = time.perf_counter()
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster2:
        t_start = time.perf_counter() - t0
        e2 = Engine(scheduler=cluster2.scheduler_address)
        run_sweep([SweepTask(f"w{i}", _noop, (i,)) for i in range(4)], e2, progress=False)
        t_two, s_two = _compare(trace, tmp / "two", args, models, e2)
        noop = [SweepTask(f"n{i}", _noop, (i,)) for i in range(200)]
        t0 = time.perf_counter()
        run_sweep(noop, e2, progress=False)
        t_noop = (time.perf_counter() - t0) / len(noop)
        burn = [SweepTask(f"b{i}", _burn, (0.5,)) for i in range(8)]
        t0 = time.perf_counter()
        run_sweep(burn, e2, progress=False)
        t_burn2 = time.perf_counter() - t0
        t0 = time.perf_counter()
        run_sweep(burn, progress=False)
        t_burn0 = time.perf_counter() - t0
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
    ) as cluster1:
        e1 = Engine(scheduler=cluster1.scheduler_address)
        run_sweep([SweepTask("w", _noop, (0,))], e1, progress=False)
        t_one, s_one = _compare(trace, tmp / "one", args, models, e1)

    same = all(
        (tmp / d / f).read_text() == (tmp / "local" / f).read_text()
        for d in ("one", "two")
        for f in ("table3.csv", "table4.csv")
    )
    per_run = sum(r["wall_seconds"] for r in s_local["runs"]) / n_tasks
    print(
        f"compare --seeds {args.seeds}: {n_tasks} runs ({args.workloads}, {args.nodes} nodes, "
        f"{args.hours} h), trace {trace}"
    )
    print(f"  local (this process)  {t_local:8.1f} s")
    print(f"  Dask, 1 worker        {t_one:8.1f} s   speed-up {t_local / t_one:.2f}x")
    print(f"  Dask, 2 workers       {t_two:8.1f} s   speed-up {t_local / t_two:.2f}x")
    print(f"  tables identical on the three engines: {same}")
    load = os.getloadavg()
    print(
        f"  machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} (1/5/15 min; other processes share the cores when it exceeds them)"
    )
    print(
        f"  capacity probe, 8 x 0.5 s CPU tasks: local {t_burn0:.1f} s, 2 workers "
        f"{t_burn2:.1f} s = {t_burn0 / t_burn2:.2f}x (the most 2 workers could give right now)"
    )
    print("scheduling overhead:")
    print(f"  LocalCluster(2) start          {t_start:6.2f} s (once per command)")
    over = (t_one - t_local) / n_tasks
    print(f"  1 worker vs local, per run     {over * 1e3:6.0f} ms")
    print(f"  no-op task round trip (2 w.)   {t_noop * 1e3:6.1f} ms")
    print(
        f"per-task costs: a compare run {per_run:.2f} s simulated (mean of {n_tasks}); "
        f"whole command per run locally {t_local / n_tasks:.2f} s"
    )

    g = _grid_costs(tmp, args)
    print(
        f"  default grid (f0nl): {g['grid_points']} trials = {g['fits_in_grid']} fits x 4 "
        f"thresholds; a fit {g['fit_seconds']:.2f} s (mean of the first {g['trials']} trials, "
        f"{g['rows']} labelled rows)"
    )
    ov = max(t_noop, 0.0)
    print("projection (waves of W parallel tasks + per-task overhead; cluster start excluded):")
    print(f"  {'':28s} {'1 worker':>10s} {'16 workers':>11s} {'128 workers':>12s}")
    for label, n, sec in (
        (f"default grid ({g['fits_in_grid']} fits)", g["fits_in_grid"], g["fit_seconds"]),
        ("1,000 compare runs", 1000, t_local / n_tasks),
    ):
        cells = [_project(n, sec, w, ov) for w in (1, 16, 128)]
        print(f"  {label:28s} " + " ".join(f"{c:10.0f}s" for c in cells))


if __name__ == "__main__":
    main()
