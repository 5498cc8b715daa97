"""What ``straggler fidelity`` writes: the table (``fidelity.csv``, ``fidelity.md``), the two
plots (``acf_cpu.png``, ``straggler_ratio.png``), ``summary.json`` and the lines it prints.

Examples
--------
>>> from pipelines._fidelity_bands import _point
>>> rows = table_rows([_point("straggler_share", "SYN", 0.2)])
>>> list(rows[0]), rows[0]["value"], rows[0]["pass"]
(['fact', 'workload', 'value', 'band', 'source', 'pass'], '0.200', 'PASS')
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipelines._fidelity_bands import ACF_LAGS_MIN, FactResult
from pipelines._fidelity_intervals import interval_method
from pipelines._fidelity_plan import FidelityPlan

__all__ = [
    "build_summary",
    "plot_acf",
    "plot_ratios",
    "result_lines",
    "table_rows",
    "to_csv",
    "to_markdown",
    "verdict_counts",
    "write_table_and_plots",
]


def table_rows(results: Sequence[FactResult]) -> list[dict[str, str]]:
    """The table's rows: fact, workload, value (with interval), band, source, pass."""
    return [
        {
            "fact": r.fact.name,
            "workload": r.workload,
            "value": r.value_text(),
            "band": r.band_text(),
            "source": r.fact.source,
            "pass": r.verdict(),
        }
        for r in results
    ]


def to_csv(rows: list[dict[str, str]]) -> str:
    """CSV text of the table rows."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]) if rows else ["fact"])
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def to_markdown(rows: list[dict[str, str]]) -> str:
    """A markdown table of the rows.

    Examples
    --------
    >>> print(to_markdown([{"fact": "a", "pass": "PASS"}]))
    | fact | pass |
    | --- | --- |
    | a | PASS |
    """
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    lines += ["| " + " | ".join(r[c].replace("|", "/") for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def plot_acf(plot: dict, path: Path) -> Path:
    """PNG: CPU autocorrelation by lag, synthetic vs Alibaba 2018 (when present)."""
    from pipelines._plots import _figure, save_figure

    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(plot["lags"], plot["synthetic"], label="synthetic (Cluster)")
    if plot["real"] is not None:
        ax.plot(plot["lags"], plot["real"], label="Alibaba 2018")
    for lag in ACF_LAGS_MIN:
        ax.axvline(lag, color="grey", lw=0.5, ls=":")
    ax.set_xlabel("lag (min)")
    ax.set_ylabel("autocorrelation of CPU load")
    ax.set_title("CPU load persistence")
    ax.legend()
    return save_figure(fig, path)


def plot_ratios(ratios: dict[str, np.ndarray], path: Path) -> Path:
    """PNG: the distribution (CCDF) of straggler duration / stage median per workload."""
    from pipelines._plots import _figure, save_figure

    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 4))
    for w, r in ratios.items():
        if r.size:
            x = np.sort(r)
            ax.step(x, 1.0 - np.arange(x.size) / x.size, where="post", label=f"{w} (n={x.size})")
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.axvline(3.0, color="grey", ls=":", label="3x (Dolly, Mantri)")
    ax.axhline(0.1, color="grey", lw=0.5, label="10% of stragglers (p90)")
    ax.set_xscale("log")
    ticks = [1.3, 2, 3, 5, 10, 20, 50, 100]
    hi = max((float(r.max()) for r in ratios.values() if r.size), default=10.0)
    ax.set_xticks([t for t in ticks if t <= max(hi, 3.0) * 1.5])
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("straggler duration / stage median")
    ax.set_ylabel("share of stragglers above")
    ax.set_title("How slow stragglers are")
    ax.legend()
    return save_figure(fig, path)


def write_table_and_plots(
    out: Path, results: Sequence[FactResult], acf_plot: dict, ratios: dict[str, np.ndarray]
) -> str:
    """Write ``fidelity.csv``, ``fidelity.md`` and the two plots into ``out`` (created);
    return the markdown table."""
    from pipelines._io import atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    rows = table_rows(results)
    md = to_markdown(rows)
    atomic_write_text(out / "fidelity.csv", to_csv(rows))
    atomic_write_text(out / "fidelity.md", md + "\n")
    plot_acf(acf_plot, out / "acf_cpu.png")
    plot_ratios(ratios, out / "straggler_ratio.png")
    return md


def verdict_counts(results: Sequence[FactResult]) -> dict[str, int]:
    """How many facts passed, failed and were not measured.

    Examples
    --------
    >>> from pipelines._fidelity_bands import _point
    >>> verdict_counts([_point("p90_ratio", "SYN", 4.0), _point("p90_ratio", "W", 1.0)])
    {'pass': 1, 'fail': 1, 'not_measured': 0}
    """
    return {
        "pass": sum(r.passed is True for r in results),
        "fail": sum(r.passed is False for r in results),
        "not_measured": sum(r.passed is None for r in results),
    }


def result_lines(
    md: str, method: str, modes: Sequence[str], results: Sequence[FactResult]
) -> list[str]:
    """The lines a run prints after its table: the interval method, the oracle's mode, one
    verdict line per fact and the counts.

    Examples
    --------
    >>> from pipelines._fidelity_bands import _point
    >>> result_lines("", "t", ["rank"], [_point("p90_ratio", "SYN", 4.0)])[-1]
    '1 passed, 0 failed, 0 not measured, of 1 facts'
    """
    counts = verdict_counts(results)
    lines = ["", md, "", f"intervals: {method}"]
    lines.append(f"oracle placement: PredictorPlacement(SlowdownOracle, mode {', '.join(modes)})")
    for r in results:
        lines.append(
            f"{r.verdict():4s}  {r.fact.name} [{r.workload}]: {r.value_text()} "
            f"(band {r.band_text()})"
        )
    lines.append(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['not_measured']} not "
        f"measured, of {len(results)} facts"
    )
    return lines


def build_summary(
    plan: FidelityPlan,
    results: Sequence[FactResult],
    modes: list[str],
    out: Path,
    wall_seconds: float,
) -> dict[str, Any]:
    """The record ``summary.json`` holds: settings, interval method, every fact, counts, files.

    ``complete`` is left for the caller to set as the last thing before writing it.
    """
    m = 3 * len(plan.workloads)
    return {
        "command": "fidelity",
        "profile": plan.profile.name,
        "settings": {
            **{k: v for k, v in plan.sim.items() if k != "data_dir"},
            "data_dir": str(plan.data_dir),
            "seeds": plan.seeds,
            "workloads": plan.workloads,
            "workload_note": plan.workload_note,
            "record_truth": True,
            "acf_nodes": plan.profile.acf_nodes,
            "acf_days": plan.profile.acf_days,
        },
        "interval_method": interval_method(m),
        "oracle_placement_mode": modes,
        "facts": [r.record() for r in results],
        "counts": verdict_counts(results),
        "files": {
            "csv": str(out / "fidelity.csv"),
            "markdown": str(out / "fidelity.md"),
            "acf_plot": str(out / "acf_cpu.png"),
            "ratio_plot": str(out / "straggler_ratio.png"),
        },
        "wall_seconds": wall_seconds,
    }
