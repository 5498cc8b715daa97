"""``straggler reproduce SEED``: shared output helpers and the dispatcher over seeds.

Each seed module (``pipelines/_reproduce_002.py``, ``_reproduce_xu_lau.py``,
``_reproduce_003.py``) exposes ``run(out, quick, seed, progress) -> dict`` that writes PNG
plots, CSV tables and ``comparison.csv`` / ``comparison.md`` (our number beside the paper's)
into ``out`` and returns the summary, which :func:`run_reproduce` (given the command's
:class:`pipelines.ReproduceConfig`) writes as ``summary.json``.
"""

from __future__ import annotations

import importlib
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipelines._io import atomic_write_text, write_summary
from pipelines._reproduce_config import ReproduceConfig
from pipelines._sweep import Engine, sweep_session

__all__ = [
    "SEED_MODULES",
    "Comparison",
    "markdown_table",
    "progress_enabled",
    "reproduce",
    "run_reproduce",
    "save_figure",
    "write_table",
]

#: seed -> (module, title)
SEED_MODULES: dict[str, tuple[str, str]] = {
    "000": ("pipelines._reproduce_xu_lau", "Xu & Lau, optimization for speculative execution"),
    "001": ("pipelines._reproduce_xu_lau", "Xu & Lau, speculative execution at scale"),
    "002": ("pipelines._reproduce_002", "Wang, Joshi & Wornell, single-fork replication"),
    "003": ("pipelines._reproduce_003", "Shed / Shed+: deadline-aware speculation (PoCD)"),
}


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether to show tqdm bars: ``progress`` if given, else unless ``TQDM_DISABLE`` is set.

    Examples
    --------
    >>> progress_enabled(False)
    False
    """
    if progress is not None:
        return bool(progress)
    return os.environ.get("TQDM_DISABLE", "") in ("", "0")


def _fmt(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return ""
        return f"{v:.4g}"
    return str(v).replace("|", "/").replace("\n", " ")


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub Markdown table of ``df`` (floats with 4 significant digits).

    Examples
    --------
    >>> print(markdown_table(pd.DataFrame({"a": [1.23456, float("nan")], "b": ["x", "y|z"]})))
    | a | b |
    |---|---|
    | 1.235 | x |
    |  | y/z |
    """
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v) for v in row) + " |")
    return "\n".join(lines)


def write_table(df: pd.DataFrame, out: str | os.PathLike[str], name: str) -> Path:
    """Write ``df`` as ``out/name.csv`` and ``out/name.md`` (both atomically); returns the CSV."""
    out = Path(out)
    path = atomic_write_text(out / f"{name}.csv", df.to_csv(index=False))
    atomic_write_text(out / f"{name}.md", markdown_table(df) + "\n")
    return path


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save a matplotlib figure as PNG atomically and close it."""
    from pipelines._plots import save_figure

    return save_figure(fig, path)


class Comparison:
    """Rows of "our number beside the paper's", written as ``comparison.csv`` / ``.md``.

    Examples
    --------
    >>> c = Comparison()
    >>> c.add("Fig. 6", "E[T] baseline", 70.9, 70.0, "read off the text")
    >>> c.frame().columns.tolist()
    ['figure', 'quantity', 'ours', 'paper', 'rel_diff', 'note']
    >>> round(float(c.frame().rel_diff[0]), 3)
    0.013
    """

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, figure: str, quantity: str, ours: Any, paper: Any, note: str = "") -> None:
        rel = float("nan")
        if isinstance(ours, (int, float, np.number)) and isinstance(paper, (int, float, np.number)):
            if paper != 0 and math.isfinite(float(ours)):
                rel = (float(ours) - float(paper)) / abs(float(paper))
        self.rows.append(
            {
                "figure": figure,
                "quantity": quantity,
                "ours": ours,
                "paper": paper,
                "rel_diff": rel,
                "note": note,
            }
        )

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            self.rows, columns=["figure", "quantity", "ours", "paper", "rel_diff", "note"]
        )

    def write(self, out: str | os.PathLike[str]) -> Path:
        return write_table(self.frame(), out, "comparison")


def run_reproduce(cfg: ReproduceConfig, engine: Engine | None = None) -> dict[str, Any]:
    """Regenerate seed ``cfg.seed_paper``'s figures on the engine into ``cfg.out``.

    Parameters
    ----------
    cfg : ReproduceConfig
        ``seed_paper`` ({"000", "001", "002", "003"}); ``out``, the output directory
        (created): PNGs, CSV/Markdown tables, ``comparison.md``, ``summary.json``; ``quick``,
        scaled-down sizes (seconds instead of minutes); ``seed``, the root seed of every
        random draw; ``progress``, tqdm bars (default: unless ``TQDM_DISABLE``).
    engine : pipelines._sweep.Engine, optional
        Where the independent runs of the seed's sweeps go (``--workers``/``--scheduler``);
        default: this process. The tables are the same on any engine.

    Returns
    -------
    dict
        The summary also written to ``out/summary.json``.

    Raises
    ------
    ValueError
        An unknown seed paper, a negative or non-integer seed, or an ``out`` that is a file.
    """
    key = str(cfg.seed_paper).strip()
    seed = cfg.seed
    if key not in SEED_MODULES:
        raise ValueError(f"parameter SEED must be one of {', '.join(SEED_MODULES)}, got {key!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"parameter seed must be an integer >= 0, got {seed!r}")
    out = Path(cfg.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"parameter out: {out} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    modname, title = SEED_MODULES[key]
    module = importlib.import_module(modname)
    t0 = time.perf_counter()
    with sweep_session(engine):
        summary = module.run(
            out,
            quick=bool(cfg.quick),
            seed=int(seed),
            progress=progress_enabled(cfg.progress),
            paper=key,
        )
    summary = {
        "seed_paper": key,
        "title": title,
        "quick": bool(cfg.quick),
        "seed": int(seed),
        "wall_seconds": time.perf_counter() - t0,
        **summary,
    }
    write_summary(out, summary)
    return summary


def reproduce(
    seed_paper: str,
    out: str | os.PathLike[str],
    *,
    quick: bool = False,
    seed: int = 0,
    progress: bool | None = None,
    engine: Engine | None = None,
) -> dict[str, Any]:
    """:func:`run_reproduce` with :class:`pipelines.ReproduceConfig`'s fields as keywords
    (kept for callers of the keyword form; ``pipelines.reproduce(config)`` is the API).

    Examples
    --------
    >>> reproduce("005", "runs/x")
    Traceback (most recent call last):
    ...
    ValueError: parameter SEED must be one of 000, 001, 002, 003, got '005'
    """
    cfg = ReproduceConfig(seed_paper, os.fspath(out), quick=quick, seed=seed, progress=progress)
    return run_reproduce(cfg, engine)
