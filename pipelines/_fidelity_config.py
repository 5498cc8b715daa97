"""The settings of ``straggler fidelity`` (:class:`FidelityConfig`), each flag declared once.

Light at import (the CLI builds its parser from it); :func:`pipelines.fidelity` runs one.

Examples
--------
>>> FidelityConfig(out="runs/fidelity", quick=True).workloads is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines._label_defaults import BETA as _BETA
from pipelines.commands._params import option

#: Workloads the fidelity measurements know.
WORKLOADS: tuple[str, ...] = ("FB2009", "FB2010", "ALI2017", "SYN")


@dataclass
class FidelityConfig:
    """Settings of one ``straggler fidelity`` run (see ``straggler fidelity --help``)."""

    out: str = option(help="output directory")
    workloads: list[str] | None = option(
        None,
        flag="--workload",
        nargs="+",
        choices=WORKLOADS,
        metavar="{" + ",".join(WORKLOADS) + "}",
        format=list,
        help="workload(s), each measured on its own (default: FB2009 and FB2010 when their "
        "files are in the data directory, else SYN)",
    )
    quick: bool = option(
        False,
        switch="on",
        help="the quick profile: 20 nodes, 1 hour, 3 seeds (tests, the demo)",
    )
    seeds: int | None = option(None, type=int, help="paired seeds (profile: 8; quick 3)")
    nodes: int | None = option(None, type=int, help="cluster nodes (50; quick 20)")
    slots: int | None = option(None, type=int, help="slots per node (2)")
    hours: float | None = option(None, type=float, help="hours per run (3; quick 1)")
    load: float | None = option(None, type=float, help="realised load the scales target (0.7)")
    beta: float = option(_BETA, type=float, help="straggler threshold x stage median")
    data_dir: str | None = option(None, help="data directory (flag, $STRAGGLER_DATA_DIR, data/)")
