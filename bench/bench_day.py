"""One big streamed replay sampled through its day: CPU, events, jobs alive and RSS as the
simulated clock goes, against the production-scale goals; a JSONL log and a PNG.

The replay is ``sim_bridge.simulate(..., trace_sink=...)`` in this process, after
:func:`sim_bridge.lean_allocators` (what ``straggler simulate --stream`` runs). A thread reads
the running simulator every ``--every`` seconds of wall time (its clock, events, jobs alive,
their tasks, the attempts running; the loop itself is not touched) and this process's RSS
and peak RSS, so the figures are the whole process's, set-up included. Each sample is one
line of ``OUT/<workload>_<policy>.jsonl`` as it is taken; the file is ``.jsonl.part`` until
the replay returns, and only then gets its last line, ``"kind": "end"``, and its final name.
The end line's ``stopped`` is None for a replay that ran to its end, else why it stopped
(``--until``, or Ctrl-C or SIGTERM, which a streamed replay turns into a clean stop); a
process killed outright leaves the ``.part``.

The peers are the goals of the production-scale issue, printed as ratios: the FB-2010 day with
LATE in under 10 minutes of CPU and under 4 GB of peak RSS, the FB-2009 day under 300 MB, and
peak RSS flat within 20% from 6 to 24 simulated hours (``peak(24 h) / peak(6 h) <= 1.2``).

Cluster sizes: FB-2010 on 33,000 x 10 (sized for its busiest hour, realised load ~0.34 on the
day; see ``bench/bench_sim.py``), FB-2009 on 600 x 2 with FIFO, Alibaba 2017 on 1,300 x 176
(the trace's machines and cores).

Usage::

    python bench/bench_day.py --workload FB2010 --policy late     # the LATE day (~1 h CPU)
    python bench/bench_day.py --workload FB2010 --policy none --until 24
    python bench/bench_day.py --plot runs/bench_day/FB2010_late.jsonl \\
        runs/bench_day/FB2010_none.jsonl                          # the PNG again, no replay
    python bench/bench_day.py --policy none --census 240000       # what a running attempt holds
    python bench/bench_day.py --policy late --job-census 8        # what the live jobs hold
    python bench/bench_day.py --policy late --steady              # the stationary control

``--steady`` replays the day's jobs as a stationary load: drawn with replacement and sent at
one rate, the day's mean (:func:`sim_bridge.stationary_workload`), on the same cluster. The
work alive then does not follow the day's busy hours, so the flatness of peak RSS from 6 to
24 h is the engine's alone: the control for that goal. Its log is
``OUT/<workload>_<policy>_steady.jsonl``. ``--steady-share F`` sends that share of the mean rate
to that share of the nodes: a smaller control of the same load.

Measured figures are in ``bench/bench_sim.py``'s docstring, the README ("Big replays") and
``bench/results/HISTORY.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

#: per workload: nodes, slots per node and placement of the day's replay (module doc)
CLUSTERS: dict[str, tuple[int, int, str]] = {
    "FB2010": (33_000, 10, "fair"),
    "FB2009": (600, 2, "fifo"),
    "ALI2017": (1_300, 176, "fair"),
}
#: the goals the figures are printed against
GOAL_CPU_MIN = 10.0  # the FB-2010 day with LATE, one core
GOAL_PEAK_MB = {"FB2010": 4096.0, "FB2009": 300.0}
GOAL_FLAT = 1.2  # peak RSS at 24 h over peak RSS at 6 h
MARKS = (1.0, 2.0, 4.0, 6.0, 8.0, 12.0, 16.0, 20.0, 24.0, 30.0, 36.0, 48.0)


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) / 1024 for x in f if x.startswith("VmRSS"))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=7"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
            check=False,
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


class _Log:
    """The JSONL log: written line by line to ``path.part``, renamed to ``path`` by
    :meth:`finish` only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.part = path.with_name(path.name + ".part")
        path.unlink(missing_ok=True)  # a complete log of an older run must not stand
        self._f = open(self.part, "w")  # noqa: SIM115 - closed by finish/close
        self._lock = threading.Lock()

    def write(self, row: dict) -> None:
        with self._lock:
            self._f.write(json.dumps(row) + "\n")
            self._f.flush()

    def finish(self, row: dict) -> None:
        self.write(row)
        self._f.close()
        os.replace(self.part, self.path)

    def close(self) -> None:
        self._f.close()


def replay(args: argparse.Namespace) -> Path:
    """Run the sampled replay; returns the log's path (``.part`` unless it ended)."""
    c0, t0 = time.process_time(), time.perf_counter()
    import sim_bridge
    from sim_bridge import _engine
    from sim_bridge._stationary import mean_rate

    lean = sim_bridge.lean_allocators()
    nodes, slots, placement = CLUSTERS.get(args.workload, (None, None, "fair"))
    share = args.steady_share
    if not (0.0 < share <= 1.0):  # NaN too
        raise SystemExit(f"--steady-share must be in (0, 1], got {share!r}")
    if share < 1.0 and not args.steady:
        raise SystemExit("--steady-share needs --steady")
    nodes = args.nodes or (None if nodes is None else max(1, round(nodes * share)))
    slots = args.slots or slots
    placement = args.placement or placement
    if nodes is None or slots is None:
        raise SystemExit(f"--nodes and --slots are needed for workload {args.workload!r}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{args.workload}_{args.policy}" + ("_steady" if args.steady else "")
    log = _Log(out / f"{stem}.jsonl")
    workload: object = args.workload
    steady = None
    if args.steady:  # the day's jobs at the day's mean rate (module doc)
        day = sim_bridge.load_workload(args.workload, args.data_dir, hours=args.hours)
        rate = share * mean_rate(day.jobs)
        workload = sim_bridge.stationary_workload(day, args.hours, rate=rate, seed=args.seed)
        steady = {
            "source": workload.source,
            "jobs": len(workload.jobs),
            "day_jobs": len(day.jobs),
            "share": share,
        }
        del day
    head = {
        "kind": "run",
        "workload": args.workload,
        "policy": args.policy,
        "placement": placement,
        "nodes": nodes,
        "slots": slots,
        "hours": args.hours,
        "until": args.until,
        "seed": args.seed,
        "steady": steady,
        "commit": _commit(),
        "lean_allocators": lean,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cpus": os.cpu_count(),
    }
    log.write(head)
    box: dict = {}
    run = _engine.Simulator.run

    def capture(self, *a, **k):
        box["sim"] = self
        box["setup_cpu_s"] = time.process_time() - c0
        return run(self, *a, **k)

    _engine.Simulator.run = capture
    upkeep = _engine.Simulator._upkeep  # inherited (AttemptLifecycle): patched on the class
    if args.census or args.job_census is not None:
        # at the first upkeep (between events) with that many running, or past that hour:
        # the census, then a stop

        def census_upkeep(self) -> None:
            upkeep(self)
            if "census" in box:
                return
            if args.census and self._n_running >= args.census:
                from _attempt_census import attempt_census, format_census

                box["census"] = c = attempt_census(self)
                print(f"census at {self.now / 3600:.2f} h: {format_census(c)}", flush=True)
                log.write({"kind": "census", "sim_h": self.now / 3600.0, **c})
                self.request_stop(f"bench_day: --census at {c['running']:,} running attempts")
            elif args.job_census is not None and self.now >= args.job_census * 3600.0:
                from _job_census import format_job_census, job_census

                box["census"] = c = job_census(self)
                h = self.now / 3600.0
                print(f"job census at {h:.2f} h: {format_job_census(c)}", flush=True)
                log.write({"kind": "job_census", "sim_h": h, **c})
                self.request_stop(f"bench_day: --job-census at {h:.2f} h")

        _engine.Simulator._upkeep = census_upkeep
    marks = [h for h in MARKS if args.until is None or h <= args.until]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(args.every):
            s = box.get("sim")
            if s is None:
                continue
            row = {
                "kind": "sample",
                "sim_h": s.now / 3600.0,
                "cpu_s": time.process_time() - c0,
                "wall_s": time.perf_counter() - t0,
                "events": s.events,
                "jobs_arrived": s.n_arrived,
                "jobs_live": len(s._active),
                # what a live job holds: all its tasks (list() of the values is one C call,
                # atomic under the GIL against the engine's thread)
                "tasks_live": sum(j.n_tasks for j in list(s._active.values())),
                "attempts_running": s.cluster.n_nodes * s.cluster.slots - s._n_free,
                "rss_mb": _rss_mb(),
                # Python's allocated blocks (a counter): its objects apart from the RSS
                "py_blocks": sys.getallocatedblocks(),
                "peak_rss_mb": _peak_mb(),
            }
            while marks and s.now >= marks[0] * 3600.0:
                row["mark"] = marks.pop(0)
                print(
                    f"  {row['mark']:>4g} h: CPU {row['cpu_s']:8.0f} s, wall "
                    f"{row['wall_s']:8.0f} s, {row['events']:>11,} events, "
                    f"{row['jobs_live']:>6,} jobs live, RSS {row['rss_mb']:7.0f} MB "
                    f"(peak {row['peak_rss_mb']:7.0f})",
                    flush=True,
                )
            log.write(row)
            if args.until is not None and s.now >= args.until * 3600.0:
                s.request_stop(f"bench_day: the clock passed --until {args.until:g} h")
                return

    print(
        f"[{args.workload}, {args.policy}] {nodes:,} x {slots} slots, {placement}, "
        f"{args.hours:g} h of arrivals, streamed; log {log.part}",
        flush=True,
    )
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    reason = None
    with tempfile.TemporaryDirectory(dir=out, prefix=".trace-") as scratch:
        try:
            r = sim_bridge.simulate(
                workload,
                args.policy,
                placement,
                nodes=nodes,
                slots=slots,
                hours=args.hours,
                seed=args.seed,
                data_dir=args.data_dir,
                progress=False,
                trace_sink=str(Path(scratch) / "tasks.parquet"),
            )
            got = r.summary  # a streamed run stopped early returns, marked incomplete
            if not got["complete"]:
                reason = got["stop_reason"]
            keys = ("jobs", "tasks", "attempts", "copies", "events")
            summary = {k: got[k] for k in keys if k in got}
            if reason is None:
                summary["load"] = got["task_seconds"] / (nodes * slots * got["makespan"])
        except BaseException:
            done.set()
            log.close()  # stays .part: not a complete log
            raise
        finally:
            _engine.Simulator.run = run
            if args.census or args.job_census is not None:  # inherited again, as before
                del _engine.Simulator._upkeep
    done.set()
    thread.join()
    end = {
        "kind": "end",
        "stopped": reason,
        "sim_h": box["sim"].now / 3600.0 if "sim" in box else 0.0,
        "cpu_s": time.process_time() - c0,
        "setup_cpu_s": box.get("setup_cpu_s"),
        "wall_s": time.perf_counter() - t0,
        "peak_rss_mb": _peak_mb(),
        **summary,
    }
    log.finish(end)
    _report(_read(log.path))
    return log.path


def _read(path: Path) -> dict:
    """A log as ``{"run": head, "samples": [...], "end": row or None}``."""
    lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
    rows = []
    for i, line in enumerate(lines, 1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            if i < len(lines):  # only a killed run's last line may be cut short
                raise SystemExit(f"{path}, line {i}: not JSON ({e})") from None
            print(f"{path}: its last line (line {i}) was cut short; read without it")
    if not rows or rows[0].get("kind") != "run":
        raise SystemExit(f"{path}: not a bench_day log (its first line is not the run's)")
    return {
        "path": Path(path),
        "run": rows[0],
        "samples": [r for r in rows if r.get("kind") == "sample"],
        "end": next((r for r in rows if r.get("kind") == "end"), None),
    }


def _peak_at(samples: list[dict], hour: float) -> float | None:
    """The peak RSS when the clock first passed ``hour`` (None: it never did)."""
    return next((s["peak_rss_mb"] for s in samples if s["sim_h"] >= hour), None)


def _report(log: dict) -> None:
    """Print a log's figures against the goals."""
    run, samples, end = log["run"], log["samples"], log["end"]
    name = f"[{run['workload']}, {run['policy']}" + (", steady]" if run.get("steady") else "]")
    if end is None:
        last = samples[-1] if samples else {"sim_h": 0.0, "cpu_s": 0.0, "peak_rss_mb": 0.0}
        print(
            f"{name} INCOMPLETE log (no end line): last sample at {last['sim_h']:.2f} h, "
            f"CPU {last['cpu_s']:.0f} s, peak {last['peak_rss_mb']:.0f} MB"
        )
        return
    how = f"stopped ({end['stopped']})" if end["stopped"] else "ran to its end"
    print(
        f"{name} {how} at {end['sim_h']:.2f} simulated h: CPU {end['cpu_s']:,.0f} s "
        f"(set-up {end['setup_cpu_s'] or 0:.0f} s), wall {end['wall_s']:,.0f} s, "
        f"{end['events']:,} events, peak RSS {end['peak_rss_mb']:,.0f} MB"
    )
    day = next((s for s in samples if s["sim_h"] >= 24.0), None)
    if day is not None and (run["workload"], run["policy"], run.get("steady")) == (
        "FB2010",
        "late",
        None,
    ):
        print(
            f"{name} CPU to 24 h / goal {GOAL_CPU_MIN:g} min: "
            f"{day['cpu_s'] / 60 / GOAL_CPU_MIN:.2f}x ({day['cpu_s'] / 60:.1f} min)"
        )
    goal = GOAL_PEAK_MB.get(run["workload"])
    if goal is not None:
        print(
            f"{name} peak RSS / goal {goal:,.0f} MB: {end['peak_rss_mb'] / goal:.2f}x"
            + ("" if end["stopped"] is None else " (to where it stopped)")
        )
    six, d24, at = _peak_at(samples, 6.0), _peak_at(samples, 24.0), "at 24 h"
    if d24 is None and end["sim_h"] >= 24.0:  # no sample after 24 h: the whole run's peak
        d24, at = end["peak_rss_mb"], "of the run (no sample after 24 h)"
    if six and d24:
        print(
            f"{name} peak RSS {at} / at 6 h: {d24 / six:.2f} (goal <= {GOAL_FLAT:g}; "
            f"{six:,.0f} -> {d24:,.0f} MB)"
        )
    thirds = [(6.0, 12.0), (12.0, 18.0), (18.0, 24.0)]
    means = [[r["rss_mb"] for r in samples if lo <= r["sim_h"] < hi] for lo, hi in thirds]
    if all(means):  # descriptive: is the resident set still growing after 6 h?
        print(
            f"{name} mean RSS in 6-12, 12-18 and 18-24 h: "
            + ", ".join(f"{sum(m) / len(m):,.0f}" for m in means)
            + " MB"
        )
    # the fits take the arrival window's samples (from 1 h): a drain of days would weigh
    # more than the day and say little of it
    with_tasks = [
        r
        for r in samples
        if r.get("tasks_live") is not None and 1.0 <= r["sim_h"] <= run.get("hours", 24.0)
    ]
    if len(with_tasks) >= 10:  # logs from 2026-11-29 (b) on: does memory follow the work alive?
        import numpy as np

        x = np.array([r["tasks_live"] for r in with_tasks], dtype=float)
        y = np.array([r["rss_mb"] for r in with_tasks])
        slope, fixed = np.polyfit(x, y, 1)
        r2 = 1.0 - float(np.sum((y - (fixed + slope * x)) ** 2) / np.sum((y - y.mean()) ** 2))
        print(
            f"{name} RSS against the tasks of the live jobs (least squares over {len(x)} "
            f"samples from 1 h to {min(run.get('hours', 24.0), with_tasks[-1]['sim_h']):.3g} h): "
            f"{fixed:,.0f} MB + "
            f"{slope * 1024:.2f} KB a task, "
            f"R^2 {r2:.2f}; tasks live {x.min():,.0f} to {x.max():,.0f}"
        )
        # with the most attempts run at once so far: the allocator keeps what a peak of
        # running attempts took (pymalloc returns no arena that still holds a block)
        most = np.maximum.accumulate([float(r["attempts_running"]) for r in with_tasks])
        design = np.column_stack([np.ones_like(x), x, most])
        (c0, c_task, c_att), *_ = np.linalg.lstsq(design, y, rcond=None)
        r2b = 1.0 - float(
            np.sum((y - design @ (c0, c_task, c_att)) ** 2) / np.sum((y - y.mean()) ** 2)
        )
        print(
            f"{name} RSS against those tasks and the most attempts running so far: "
            f"{c0:,.0f} MB + {c_task * 2**20:,.0f} B a task + {c_att * 2**20:,.0f} B an "
            f"attempt, R^2 {r2b:.2f}; at most {most[-1]:,.0f} running"
        )
        # and the jobs finished so far: memory kept a job ever run would show here
        done = np.array([float(r["jobs_arrived"] - r["jobs_live"]) for r in with_tasks])
        if done[-1] > done[0]:
            design = np.column_stack([design, done])
            coef, half = hac_fit(y, design)
            print(
                f"{name} ... and the jobs finished so far ({done[0]:,.0f} to {done[-1]:,.0f}): "
                f"{coef[3] * 2**20:+,.0f} B a job (95% interval +-{half[3] * 2**20:,.0f}, "
                "Newey-West: the samples are autocorrelated)"
            )
            if all("py_blocks" in r for r in with_tasks):  # logs from 2026-12-02 (y) on
                blocks = np.array([float(r["py_blocks"]) for r in with_tasks])
                coef, half = hac_fit(blocks, design)
                print(
                    f"{name} Python's allocated blocks against the same: {coef[0]:,.0f} + "
                    f"{coef[1]:.2f} a task + {coef[2]:.2f} an attempt + {coef[3]:+.2f} a job "
                    f"finished (95% interval +-{half[3]:.2f})"
                )


def hac_fit(y, design) -> tuple:
    """Least squares ``y ~ design`` and the half-widths of 95% intervals of its
    coefficients from Newey-West (HAC) standard errors: Bartlett weights to lag
    ``floor(4 (n / 100) ** (2 / 9))`` (Newey and West 1994's rule), since samples taken
    10 s apart are autocorrelated and plain OLS intervals would be too narrow.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(200.0)
    >>> coef, half = hac_fit(3.0 + 2.0 * x, np.column_stack([np.ones_like(x), x]))
    >>> np.allclose(coef, [3.0, 2.0]) and bool(np.all(half < 1e-6))
    True
    """
    import numpy as np

    y, design = np.asarray(y, float), np.asarray(design, float)
    n = len(y)
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    u = y - design @ coef
    xu = design * u[:, None]
    meat = xu.T @ xu
    lags = int(4 * (n / 100) ** (2 / 9))
    for lag in range(1, lags + 1):
        w = 1.0 - lag / (lags + 1)
        g = xu[lag:].T @ xu[:-lag]
        meat += w * (g + g.T)
    bread = np.linalg.pinv(design.T @ design)
    cov = bread @ meat @ bread
    return coef, 1.96 * np.sqrt(np.maximum(np.diag(cov), 0.0))


def plot(paths: list[Path], png: Path) -> None:
    """RSS (and peak) and CPU against the simulated clock: a row of two panels a workload,
    one colour a log, the goals as dotted lines; the clock's axis is logarithmic past a day
    when a run drains for days."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    logs = [_read(p) for p in paths]
    workloads = sorted({log["run"]["workload"] for log in logs})
    fig, axes = plt.subplots(len(workloads), 2, figsize=(11, 3.6 * len(workloads)), squeeze=False)
    for row, w in enumerate(workloads):
        ax_m, ax_c = axes[row]
        last_h = 0.0
        for i, log in enumerate(logs):
            run, s = log["run"], log["samples"]
            if run["workload"] != w:
                continue
            cluster = f"{run['nodes']:,} x {run['slots']}"
            if not s:  # stopped before its first sample (a census, Ctrl-C): no line
                continue
            colour = f"C{i}"
            label = (
                f"{run['policy']}, {run['hours']:g} h of jobs, {run['commit']}"
                + (", stationary" if run.get("steady") else "")
                + ("" if log["end"] else " (incomplete)")
            )
            h = [r["sim_h"] for r in s]
            last_h = max(last_h, h[-1])
            ax_m.plot(h, [r["rss_mb"] / 1024 for r in s], color=colour, label=f"{label}: RSS")
            ax_m.plot(
                h,
                [r["peak_rss_mb"] / 1024 for r in s],
                color=colour,
                ls="--",
                lw=1,
                label=f"{label}: peak so far",
            )
            ax_c.plot(h, [r["cpu_s"] / 60 for r in s], color=colour, label=label)
        if w in GOAL_PEAK_MB:
            ax_m.axhline(GOAL_PEAK_MB[w] / 1024, color="k", ls=":", lw=1)
            ax_m.text(
                0.01,
                GOAL_PEAK_MB[w] / 1024,
                f"goal: {GOAL_PEAK_MB[w]:,.0f} MB",
                transform=ax_m.get_yaxis_transform(),
                fontsize=8,
                va="bottom",
            )
        if w == "FB2010":
            ax_c.axhline(GOAL_CPU_MIN, color="k", ls=":", lw=1)
            ax_c.text(
                0.01,
                GOAL_CPU_MIN,
                "goal: the day with LATE in 10 min",
                transform=ax_c.get_yaxis_transform(),
                fontsize=8,
                va="bottom",
            )
        for ax in (ax_m, ax_c):
            for x in (6.0, 24.0):
                ax.axvline(x, color="0.7", lw=0.8)
            if last_h > 72.0:  # a long drain: the day linear, then logarithmic
                ax.set_xscale("symlog", linthresh=24.0)
            ax.set_xlim(left=0.0)
            ax.set_xlabel("simulated hours")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        ax_m.set_ylabel("GB")
        ax_m.set_title(f"{w} on {cluster}: memory (RSS)", fontsize=10)
        ax_c.set_ylabel("CPU minutes (process)")
        ax_c.set_title(f"{w} on {cluster}: CPU", fontsize=10)
    commits = ", ".join(sorted({log["run"]["commit"] for log in logs}))
    title = textwrap.fill(f"Streamed replays (commits {commits})", 120)  # the figure's width
    fig.suptitle(title, fontsize=10)
    save_figure(fig, png)


def save_figure(fig, png: Path) -> None:
    """Lay ``fig`` out, write it to ``png`` (its directory made), close it and say so."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)
    plt.close(fig)
    print(f"wrote {png}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="FB2010", help="FB2010, FB2009, ALI2017, ...")
    ap.add_argument("--policy", default="late", help="speculation policy (late)")
    ap.add_argument("--hours", type=float, default=24.0, help="hours of arrivals (24)")
    ap.add_argument(
        "--until", type=float, default=None, help="stop when the clock passes this hour"
    )
    ap.add_argument("--nodes", type=int, default=None, help="(per workload, module doc)")
    ap.add_argument("--slots", type=int, default=None, help="(per workload, module doc)")
    ap.add_argument("--placement", default=None, help="(per workload, module doc)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--steady",
        action="store_true",
        help="the day's jobs at its mean rate, a stationary load (module doc)",
    )
    ap.add_argument(
        "--steady-share",
        type=float,
        default=1.0,
        metavar="F",
        help="with --steady: that share of the mean rate on that share of the nodes (1)",
    )
    ap.add_argument(
        "--census",
        type=int,
        default=None,
        help="stop at the first upkeep with this many attempts running and print what they "
        "hold (bench/_attempt_census.py)",
    )
    ap.add_argument(
        "--job-census",
        type=float,
        default=None,
        metavar="H",
        help="stop at the first upkeep past simulated hour H and print what the live jobs "
        "hold (bench/_job_census.py)",
    )
    ap.add_argument("--every", type=float, default=10.0, help="seconds between samples (10)")
    ap.add_argument("--data-dir", default=None, help="data directory holding swim/")
    ap.add_argument("--out", default="runs/bench_day")
    ap.add_argument("--plot", nargs="+", type=Path, default=None, help="logs to plot (no replay)")
    ap.add_argument("--png", type=Path, default=None, help="(OUT/bench_day.png)")
    args = ap.parse_args(argv)
    if args.job_census is not None and not args.job_census >= 0.0:  # NaN too
        ap.error(f"--job-census must be an hour >= 0, got {args.job_census!r}")
    if args.plot:
        for p in args.plot:
            _report(_read(p))
        plot(args.plot, args.png or Path(args.out) / "bench_day.png")
        return 0
    path = replay(args)
    plot([path], args.png or path.with_suffix(".png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
