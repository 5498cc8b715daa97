"""The settings of ``straggler collect`` (:class:`CollectConfig`), each flag declared once.

Light at import (the CLI builds its parser from it). :func:`pipelines.collect_trace` runs
a config; the lower-level :func:`pipelines.collect` takes the resolved scales.

Examples
--------
>>> cfg = CollectConfig(out="runs/trace", workloads=["SYN"], nodes=8, load=0.7)
>>> cfg.source, cfg.slots, cfg.scales
('simulator', 2, None)
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines._compare_config import split_names
from pipelines._label_defaults import BETA as _BETA
from pipelines.commands._params import option
from pipelines.commands._types import beta_value, finite_positive_float, positive_int


def _names_or_none(text: str | None) -> list[str] | None:
    return None if text is None else split_names(text)


@dataclass(kw_only=True)
class CollectConfig:
    """Settings of one ``straggler collect`` run (see ``straggler collect --help``)."""

    source: str = option(
        "simulator",
        choices=("simulator", "flowbench"),
        help="where the trace comes from: the simulator (default) or FlowBench's real runs",
    )
    workflows: list[str] | None = option(
        None,
        parse=_names_or_none,
        format=",".join,
        help="flowbench: comma separated workflows (default: every one present, e.g. "
        "1000-genome,casa-wind-full,predict-future-sales)",
    )
    anomalies: list[str] | None = option(
        None,
        parse=_names_or_none,
        format=",".join,
        help="flowbench: comma separated anomaly folders (default: every one present: "
        "normal,cpu_2,cpu_3,cpu_4,hdd_5,hdd_10)",
    )
    workloads: list[str] = option(
        default_factory=lambda: ["FB2009", "FB2010", "ALI2017", "SYN"],
        cli_default="FB2009,FB2010,ALI2017,SYN",
        parse=split_names,
        format=",".join,
        help="comma separated",
    )
    nodes: int = option(50, type=positive_int, help="cluster nodes (50)")
    slots: int = option(2, type=positive_int, help="slots per node (2)")
    hours: float = option(
        1.0, type=finite_positive_float, help="first H hours of each workload (1)"
    )
    seed: int = option(0, type=int, help="seed of every random draw")
    #: workload -> data scale; None: chosen for ``load`` (``--scale``: one number or NAME=X,...
    #: parsed against ``workloads`` by :func:`pipelines._collect.parse_scales`)
    scales: dict[str, float] | None = option(
        None,
        flag="--scale",
        format=lambda s: ",".join(f"{k}={v:g}" for k, v in s.items()),
        help="data scale instead of --load: one number for all, or NAME=X,... (unnamed "
        "workloads keep FB2009=10, FB2010=0.01, ALI2017=0.01, SYN=0.5)",
    )
    load: float | None = option(
        None,
        type=float,
        help="target load: choose every workload's scale so the workloads share it equally "
        "(default 0.7 unless --scale is given). It is the share of slot time the attempts "
        "really run (contention and noise included; measured by calibration runs without "
        "speculation), or the base work alone with --load-basis nominal; above 1 the cluster "
        "saturates and queueing dominates job completion times",
    )
    load_basis: str = option(
        "realised",
        choices=("realised", "nominal"),
        help="what --load measures: run time of the attempts (realised, default) or base "
        "work (nominal; tasks run about twice their base work)",
    )
    policy: str = option("none", help="speculation policy while collecting (none)")
    counters: str = option(
        "synthetic", choices=("synthetic", "alibaba2018"), help="node contention source"
    )
    data_dir: str | None = option(None, help="data directory (see straggler data)")
    beta: float = option(_BETA, type=beta_value, help="straggler threshold for the summary")
    out: str = option(help="output directory")
