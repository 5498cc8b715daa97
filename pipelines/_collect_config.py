"""The settings of ``straggler collect`` (:class:`CollectConfig`), each flag declared once.

Light at import (the CLI builds its parser from it). :func:`pipelines.collect_trace` runs
a config; the lower-level :func:`pipelines.collect` takes the resolved scales.

``seeds`` and ``loads`` (``--seeds 0,1,2 --loads 0.5,0.7``) make one run collect every
(seed, load) cell into one trace (:func:`pipelines.collect_cells`); left at None, a run is
one cell (``seed``, ``load``), as before. ``layout="separate"`` makes every workload its
own cell, alone on the cluster at the whole load.

Examples
--------
>>> cfg = CollectConfig(out="runs/trace", workloads=["SYN"], nodes=8, load=0.7)
>>> cfg.source, cfg.slots, cfg.scales, cfg.seeds, cfg.loads, cfg.layout
('simulator', 2, None, None, None, 'shared')
>>> seed_list("0, 1,2"), load_list("0.5,0.7")
([0, 1, 2], [0.5, 0.7])
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from pipelines._compare_config import split_names
from pipelines._label_defaults import BETA as _BETA
from pipelines.commands._params import option
from pipelines.commands._types import beta_value, finite_positive_float, positive_int


def _names_or_none(text: str | None) -> list[str] | None:
    return None if text is None else split_names(text)


def _items(text: str) -> list[str]:
    items = [t.strip() for t in str(text).split(",")]
    if not text or any(not t for t in items):
        raise argparse.ArgumentTypeError(f"empty item in {text!r}")
    return items


def seed_list(text: str) -> list[int]:
    """``"0,1,2"`` -> ``[0, 1, 2]``: distinct integers >= 0 (``--seeds``; argparse names
    the flag in its error).

    Examples
    --------
    >>> seed_list("3,1")
    [3, 1]
    >>> seed_list("1,x")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'x' is not an integer >= 0 (in '1,x')
    """
    out = []
    for item in _items(text):
        try:
            value = int(item)
        except ValueError:
            value = -1
        if value < 0:
            raise argparse.ArgumentTypeError(f"{item!r} is not an integer >= 0 (in {text!r})")
        out.append(value)
    if len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"lists a seed twice: {text!r}")
    return out


def load_list(text: str) -> list[float]:
    """``"0.5,0.7"`` -> ``[0.5, 0.7]``: distinct finite numbers > 0 (``--loads``; argparse
    names the flag in its error).

    Examples
    --------
    >>> load_list("0.5, 0.9")
    [0.5, 0.9]
    >>> load_list("0.5,-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '-1' is not a finite number > 0 (in '0.5,-1')
    """
    out = []
    for item in _items(text):
        try:
            value = float(item)
        except ValueError:
            value = float("nan")
        if not (value > 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"{item!r} is not a finite number > 0 (in {text!r})")
        out.append(value)
    if len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"lists a load twice: {text!r}")
    return out


def _join(values: list) -> str:
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


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
    seed: int = option(
        0,
        type=int,
        help="seed of every random draw; with --seeds, the seed of the cluster (node factors, "
        "background contention) every cell shares",
    )
    seeds: list[int] | None = option(
        None,
        type=seed_list,
        format=_join,
        help="collect one cell per seed (comma separated, e.g. 0,1,2) into one trace: each "
        "cell's workload draws and run use its seed, on the cluster of --seed; rows carry "
        "'seed' and 'load' columns and job ids start with the cell (seed=S/load=L/)",
    )
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
    loads: list[float] | None = option(
        None,
        type=load_list,
        format=_join,
        help="collect one cell per target load (comma separated, e.g. 0.5,0.7), each "
        "calibrated as --load; with --seeds, every (seed, load) pair; not with --scale or --load",
    )
    layout: str = option(
        "shared",
        choices=("shared", "separate"),
        help="shared (default): the workloads share one cluster, interleaved by arrival, as "
        "Wrangler replayed them, each scaled to an equal share of --load; separate: each "
        "workload runs alone on the cluster (the same machines: --seed's) at the whole --load, "
        "one cell per workload, so no workload is scaled down to make room for the others",
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
