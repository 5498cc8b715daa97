"""The settings of ``straggler compare`` and how they are resolved against the trace.

:class:`CompareConfig` declares every flag once (:mod:`pipelines.commands._params`);
:func:`check_config` checks a config before any work, and :func:`resolve_setup` fixes the
cluster and the period of the test runs from the flags, then the training trace's
``summary.json``. Light at import (the CLI builds its parser from this module).

Examples
--------
>>> cfg = CompareConfig(traces="runs/trace", out="runs/compare", seeds=2)
>>> cfg.workloads, cfg.mode, cfg.oracle
(None, 'rank', True)
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.commands._params import option
from pipelines.commands._types import (
    beta_value,
    finite_positive_float,
    positive_int,
)

if TYPE_CHECKING:
    import pandas as pd

from pipelines._label_defaults import BETA as _BETA
from pipelines._label_defaults import MIN_TASKS as _MIN_TASKS

#: The predictors compared, in table order (names of ``--model NAME=...``).
PREDICTORS: tuple[str, ...] = ("wrangler", "mtl")


LABELS = {
    "spec": "speculation only",
    "wrangler": "Wrangler",
    "mtl": "MTL f0,n,l",
    "random": "random refusal (control, MTL's rate)",
    "oracle": "oracle (true node state)",
}


class CompareError(ValueError):
    """Bad input to ``straggler compare`` (the message names the flag or file and value)."""


def split_names(text: str) -> list[str]:
    """A comma-separated list of names (blanks dropped).

    Examples
    --------
    >>> split_names("FB2009, SYN,")
    ['FB2009', 'SYN']
    """
    return [w.strip() for w in text.split(",") if w.strip()]


@dataclass
class CompareConfig:
    """Settings of one ``straggler compare`` run (see ``straggler compare --help``)."""

    traces: str = option(help="training trace directory (straggler collect)")
    out: str = option(help="output directory")
    #: None: the training trace's workloads (the only ones its models have seen)
    workloads: list[str] | None = option(
        None,
        parse=lambda text: None if text is None else split_names(text),
        format=",".join,
        help="comma separated (default: the training trace's workloads)",
    )
    models: dict[str, str] = option(
        default_factory=dict,
        flag="--model",
        repeat=True,
        cli_default=None,
        metavar="[NAME=]PATH_OR_URI",
        parse=lambda specs: parse_models(specs),
        format=lambda m: [f"{k}={v}" for k, v in m.items()],
        help="use a saved predictor instead of training: wrangler=DIR, mtl=models:/name@alias, "
        "... (a bare value is the MTL model); repeat for both",
    )
    seeds: int = option(3, type=int, help="fresh periods (seeds) per policy (3)")
    nodes: int | None = option(None, type=positive_int, help="cluster nodes (the trace's)")
    slots: int | None = option(None, type=positive_int, help="slots per node (the trace's)")
    hours: float | None = option(
        None, type=finite_positive_float, help="hours per period (the trace's)"
    )
    #: workload -> data scale (``--scale``: one number, or NAME=X,...; parsed against
    #: ``workloads`` by :func:`pipelines._collect.parse_scales`)
    scales: dict[str, float] | None = option(
        None,
        flag="--scale",
        format=lambda s: ",".join(f"{k}={v:g}" for k, v in s.items()),
        help="data scale: one number, or NAME=X,... (the trace's)",
    )
    speculation: str = option("late", help="speculation policy (late)")
    max_wait: float = option(
        20.0,
        type=float,
        help="seconds a task may be held back from predicted-straggler nodes (20)",
    )
    refresh: float = 10.0
    data_dir: str | None = option(None, help="data directory (see straggler data)")
    counters: str | None = None
    beta: float = option(_BETA, type=beta_value, help="straggler threshold for training")
    min_tasks: int = _MIN_TASKS
    seed_offset: int = 1000
    match_load: bool = True
    oracle: bool = option(
        True,
        switch="both",
        help="also run the slowdown oracle (true node state) + speculation: the ceiling of "
        "what avoiding slow nodes can gain in this setting, and each predictor's share of it "
        "(default on)",
    )
    #: predictor placement mode: "rank" (best free node) or "threshold" (Wrangler's rule)
    mode: str = option(
        "rank",
        choices=("rank", "threshold"),
        help="predictor placement: rank the free nodes and take the best (default), or "
        "Wrangler's rule (refuse nodes above the threshold)",
    )
    #: run the random-refusal control at the MTL run's refusal rate (same seed)
    control: bool = option(
        True,
        switch="both",
        help="run the random-refusal control at the MTL run's refusal rate (default on): "
        "tells the value of prediction from the value of spreading load",
    )


def parse_models(specs: list[str] | None) -> dict[str, str]:
    """``["wrangler=DIR", "mtl=models:/x@champion"]`` -> dict; a bare value is the MTL model.

    Examples
    --------
    >>> parse_models(["wrangler=/m/w", "runs:/abc/model"])
    {'wrangler': '/m/w', 'mtl': 'runs:/abc/model'}
    """
    out: dict[str, str] = {}
    for spec in specs or []:
        name, sep, value = spec.partition("=")
        if not sep or "/" in name or ":" in name:
            name, value = "mtl", spec
        name = name.strip().lower()
        if name not in PREDICTORS:
            raise CompareError(f"--model {spec!r}: name must be one of {list(PREDICTORS)}")
        if name in out:
            raise CompareError(f"--model gives {name!r} twice")
        if not value:
            raise CompareError(f"--model {spec!r}: empty path or URI")
        out[name] = value
    return out


def read_trace_summary(traces: Path) -> dict:
    path = traces / "summary.json" if traces.is_dir() else traces.parent / "summary.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise CompareError(f"{path}: not valid JSON ({exc})") from exc


def check_config(cfg: CompareConfig) -> None:
    import sim_bridge

    if cfg.workloads is not None:  # None: resolved from the training trace later
        _check_workloads(cfg.workloads)
    if not (isinstance(cfg.seeds, int) and cfg.seeds >= 1):
        raise CompareError(f"--seeds must be an integer >= 1, got {cfg.seeds!r}")
    for flag, v in (("--nodes", cfg.nodes), ("--slots", cfg.slots)):
        if v is not None and not (isinstance(v, int) and v >= 1):
            raise CompareError(f"{flag} must be an integer >= 1, got {v!r}")
    if cfg.hours is not None and not (cfg.hours > 0 and math.isfinite(cfg.hours)):
        raise CompareError(f"--hours must be > 0, got {cfg.hours!r}")
    if not (cfg.max_wait >= 0 and math.isfinite(cfg.max_wait)):
        raise CompareError(f"--max-wait must be >= 0, got {cfg.max_wait!r}")
    kind = sim_bridge.list_policies("speculation")
    if cfg.speculation not in kind:
        raise CompareError(
            f"--speculation {cfg.speculation!r} is not a speculation policy; choose from "
            f"{sorted(kind)}"
        )
    unknown = set(cfg.models) - set(PREDICTORS)
    if unknown:
        raise CompareError(f"--model names {sorted(unknown)}; use {list(PREDICTORS)}")


def _check_workloads(workloads: list[str]) -> None:
    """Refuse an empty ``--workloads``, an unknown name or one listed twice (collect's check,
    raised as :class:`CompareError`)."""
    from pipelines._collect_options import check_workloads

    try:
        check_workloads(workloads)
    except ValueError as exc:
        raise CompareError(str(exc)) from None


def resolve_workloads(cfg: CompareConfig, trace_workloads: list[str]) -> CompareConfig:
    """``cfg`` with ``workloads`` set: as given, or the training trace's when None.

    Examples
    --------
    >>> cfg = CompareConfig(traces="t", out="o")
    >>> resolve_workloads(cfg, ["FB2010", "SYN"]).workloads
    ['FB2010', 'SYN']
    >>> given = CompareConfig(traces="t", out="o", workloads=["SYN"])
    >>> resolve_workloads(given, ["FB2010"]).workloads
    ['SYN']
    """
    import sim_bridge

    if cfg.workloads is not None:
        return cfg
    known = [w for w in trace_workloads if w in sim_bridge.WORKLOAD_NAMES]
    if not known:
        raise CompareError(
            f"--traces {cfg.traces}: none of its workloads {trace_workloads} is one the "
            f"simulator can replay ({list(sim_bridge.WORKLOAD_NAMES)}); name them with --workloads"
        )
    return dataclasses.replace(cfg, workloads=known)


def resolve_setup(cfg: CompareConfig, tsum: dict, trace: pd.DataFrame) -> dict:
    """Cluster and period of the test runs, from the flags then the trace's summary.json."""
    from pipelines._collect import DEFAULT_SCALES

    nodes = cfg.nodes or tsum.get("nodes")
    if nodes is None:  # a trace without its summary: its node names tell the size
        nodes = int(trace["node"].str.extract(r"(\d+)$")[0].astype(int).max()) + 1
    slots = cfg.slots or tsum.get("slots") or 2
    hours = cfg.hours if cfg.hours is not None else tsum.get("hours") or 1.0
    scales = dict(DEFAULT_SCALES)
    scales.update(tsum.get("scales") or {})
    scales.update(cfg.scales or {})
    train_seed = int(tsum.get("seed", 0))
    # the fresh periods start after the whole training trace (hours, rounded up)
    end = float(trace["end_time"].max()) if len(trace) else 0.0
    offset = 3600.0 * max(math.ceil(end / 3600.0), math.ceil(float(hours)), 1)
    return {
        "nodes": int(nodes),
        "slots": int(slots),
        "hours": float(hours),
        "scales": {w: float(scales.get(w, 1.0)) for w in cfg.workloads},
        "cluster_seed": train_seed,
        "train_seed": train_seed,
        "test_seed": train_seed + cfg.seed_offset,
        "offset": offset,
        "counters": cfg.counters or tsum.get("counters_source") or "synthetic",
        "trace_summary": bool(tsum),
        "train_order": list(tsum.get("workloads") or cfg.workloads),
        # the workloads share the cluster in every test run, or each runs alone on it, as the
        # trace was collected (collect --layout)
        "layout": tsum.get("layout") or "shared",
    }
