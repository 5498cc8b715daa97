"""Side-by-side replays: a change's CPU over its base's at each simulated hour, from two
``bench/bench_day.py`` logs; a table and a PNG.

A pair is the same replay (workload, policy, placement, cluster, seed) run at the same time
in two processes, one on the change and one on the code before it, so that the machine's
load falls on both alike. Each log's CPU is interpolated linearly between its samples at
every ``--step`` simulated hours up to the hour both reached, and the ratio is the change's
CPU over the base's there (below 1: the change is faster). The peak RSS of each is its peak
when its clock first passed the last hour both reached. Two replays of different set-ups
are refused, naming the files and the field that differs.

Usage::

    python bench/side_by_side.py --pair runs/new/FB2010_late.jsonl runs/base/FB2010_late.jsonl \\
        --pair runs/new2/FB2010_late.jsonl runs/base2/FB2010_late.jsonl --png pairs.png

Measured pairs are in ``bench/results/HISTORY.md`` (the lifecycle core, 2026-12-02 (x)).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

if str(Path(__file__).resolve().parent) not in sys.path:  # (imported from elsewhere)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_day import _peak_at, _read, save_figure  # noqa: E402  (this directory's module, as the script runs it)

#: the fields of a log's first line that two sides of a pair must share
SAME_SETUP = ("workload", "policy", "placement", "nodes", "slots", "hours", "seed")


def cpu_at(samples: list[dict], hours: np.ndarray) -> np.ndarray:
    """A log's process CPU (s) at each of ``hours``, linear between its samples (NaN
    outside the hours it sampled).

    Examples
    --------
    >>> s = [{"sim_h": 0.0, "cpu_s": 0.0}, {"sim_h": 2.0, "cpu_s": 10.0}]
    >>> cpu_at(s, np.array([1.0, 3.0])).tolist()
    [5.0, nan]
    """
    h = np.array([s["sim_h"] for s in samples], dtype=float)
    c = np.array([s["cpu_s"] for s in samples], dtype=float)
    return np.interp(hours, h, c, left=np.nan, right=np.nan)


def _peak(log: dict, hour: float) -> float:
    """The peak RSS when the clock first passed ``hour`` (its last sample's if it never
    did): two replays stopped at different hours are compared where both were."""
    at = _peak_at(log["samples"], hour)
    return float(log["samples"][-1]["peak_rss_mb"] if at is None else at)


def pair_table(new: dict, base: dict, step: float) -> dict:
    """The CPU of ``new`` and ``base`` (two read logs) at every ``step`` simulated hours both
    reached, their ratio there, and their peaks.

    Examples
    --------
    >>> head = {"workload": "FB2010", "policy": "late", "commit": "b"}
    >>> def log(k, commit):
    ...     run = dict(head, commit=commit)
    ...     s = [{"sim_h": h, "cpu_s": k * h, "peak_rss_mb": 500.0} for h in (0.0, 1.0, 2.0)]
    ...     return {"path": Path(commit), "run": run, "samples": s, "end": None}
    >>> t = pair_table(log(9.0, "new"), log(10.0, "old"), 1.0)
    >>> t["hours"].tolist(), t["ratio"].tolist(), t["commits"]
    ([1.0, 2.0], [0.9, 0.9], ('new', 'old'))
    """
    if not step > 0:
        raise SystemExit(f"--step must be a positive number of simulated hours, not {step!r}")
    for key in SAME_SETUP:
        if new["run"].get(key) != base["run"].get(key):
            raise SystemExit(
                f"{new['path']} and {base['path']} are not the same replay: {key} "
                f"{new['run'].get(key)!r} against {base['run'].get(key)!r}"
            )
    for log in (new, base):
        if len(log["samples"]) < 2:
            raise SystemExit(f"{log['path']}: fewer than two samples, no CPU to compare")
    reach = min(new["samples"][-1]["sim_h"], base["samples"][-1]["sim_h"])
    start = max(new["samples"][0]["sim_h"], base["samples"][0]["sim_h"])
    hours = np.arange(1, int(np.floor(reach / step + 1e-9)) + 1) * step
    hours = hours[hours >= start]
    c_new, c_base = cpu_at(new["samples"], hours), cpu_at(base["samples"], hours)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(c_base > 0, c_new / c_base, np.nan)
    return {
        "hours": hours,
        "cpu_new": c_new,
        "cpu_base": c_base,
        "ratio": ratio,
        "peaks": (_peak(new, reach), _peak(base, reach)),
        "commits": (new["run"].get("commit", "?"), base["run"].get("commit", "?")),
        "paths": (new["path"], base["path"]),
        "reach": reach,
        "run": {k: new["run"].get(k) for k in SAME_SETUP},
    }


def print_table(table: dict) -> None:
    """Print one pair's CPU and ratio at each hour, then its peaks."""
    new, base = table["commits"]
    print(f"{table['paths'][0]} ({new}) against {table['paths'][1]} ({base})")
    print(f"{'sim h':>7} {new + ' s':>12} {base + ' s':>12} {'ratio':>7}")
    for h, a, b, r in zip(
        table["hours"], table["cpu_new"], table["cpu_base"], table["ratio"], strict=True
    ):
        print(f"{h:7.2f} {a:12.1f} {b:12.1f} {r:7.3f}")
    p_new, p_base = table["peaks"]
    print(
        f"peak RSS at {table['reach']:.2f} h {p_new:,.0f} against {p_base:,.0f} MB "
        f"({p_new / p_base:.3f})"
    )


def plot(tables: list[dict], png: Path) -> None:
    """The ratio against the simulated hour, a line a pair."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, t in enumerate(tables):
        new, base = t["commits"]
        ax.plot(t["hours"], t["ratio"], marker="o", ms=3, label=f"pair {i + 1}: {new} / {base}")
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_xlabel("simulated hours")
    ax.set_ylabel("CPU, change / base")
    ax.set_xlim(left=0.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    run = tables[0]["run"]
    ax.set_title(
        f"{run['workload']} with {run['policy']} on {run['nodes']:,} x {run['slots']}: "
        "the change's CPU over its base's, side by side",
        fontsize=10,
    )
    save_figure(fig, png)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pair",
        nargs=2,
        action="append",
        type=Path,
        required=True,
        metavar=("NEW", "BASE"),
        help="the change's log, then its base's (repeat for more pairs)",
    )
    ap.add_argument("--step", type=float, default=0.5, help="simulated hours between rows (0.5)")
    ap.add_argument("--png", type=Path, default=None, help="the ratio plot (none without it)")
    args = ap.parse_args(argv)
    tables = [pair_table(_read(a), _read(b), args.step) for a, b in args.pair]
    for t in tables:
        print_table(t)
    if args.png is not None:
        plot(tables, args.png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
