"""The settings of ``straggler evaluate`` (:class:`EvaluateConfig`), each flag declared once.

Light at import (the CLI builds its parser from it); :func:`pipelines.evaluate` runs one
(through :func:`pipelines.run_evaluate`, which takes the same object).

Examples
--------
>>> cfg = EvaluateConfig(traces="runs/trace", table=1, out="runs/t1", fractions=[0.05, 0.2])
>>> cfg.grid, cfg.pairs, cfg.models
('small', 20, None)
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from pipelines._label_defaults import BETA as _BETA
from pipelines._label_defaults import MIN_TASKS as _MIN_TASKS
from pipelines.commands._params import option
from pipelines.commands._types import beta_value, positive_int


def fractions_value(text: str) -> list[float]:
    """Comma-separated training fractions; values above 1 are percentages.

    Examples
    --------
    >>> fractions_value("1,5,66")
    [0.01, 0.05, 0.66]
    >>> fractions_value("0.2,0.5")
    [0.2, 0.5]
    """
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None
    if any(v > 1 for v in vals):  # percentages (1,2,5,66) rather than fractions (0.01,...)
        vals = [v / 100 for v in vals]
    if not vals:
        raise argparse.ArgumentTypeError("empty list")
    return vals


def _models(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    return tuple(m.strip() for m in text.split(",") if m.strip())


@dataclass
class EvaluateConfig:
    """Settings of one ``straggler evaluate`` run (see ``straggler evaluate --help``)."""

    traces: str = option(help="trace directory (tasks.parquet) or file")
    table: int = option(
        type=int,
        choices=(1, 2),
        help="1: accuracy by training fraction; 2: held-out (node, workload) pairs",
    )
    out: str = option(help="output directory")
    fractions: list[float] | None = option(
        None,
        type=fractions_value,
        format=lambda v: ",".join(f"{f:g}" for f in v),
        help="Table 1 training fractions, e.g. 1,5,20,66 (percent) (default: the paper's nine)",
    )
    pairs: int = option(20, type=positive_int, help="Table 2 held-out pairs (20)")
    min_rows: int = option(
        40,
        type=int,
        help="Table 2: labelled rows a (node, workload) pair needs to be held out (40)",
    )
    #: 'small' by default: the seed sets the regularisers "using grid search on a validation
    #: set"; the estimators' defaults (all 1) leave node blocks that overfit at thousands of rows
    grid: str = option(
        "small",
        help="'small' (default), 'default', a grid file, or 'none' (the estimators' defaults): "
        "chosen per model and fraction on a validation part",
    )
    models: tuple[str, ...] | None = option(
        None,
        parse=_models,
        format=",".join,
        help="comma-separated subset of the table's models",
    )
    beta: float = option(_BETA, type=beta_value, help="straggler threshold x job median")
    #: finished original attempts a stage needs for its rows to be labelled (Python API only)
    min_tasks: int = _MIN_TASKS
    seed: int = option(0, type=int, help="seed of the splits and fits (0)")
    jobs: int = option(1, type=int, help="parallel fit processes")
    on_single_class: str = option(
        "raise",
        flag="--single-class-workloads",
        choices=("raise", "drop"),
        help="workloads whose rows are all one class: error (default) or drop them (the "
        "summary lists what was dropped, as train does)",
    )
