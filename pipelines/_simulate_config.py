"""The settings of ``straggler simulate`` (:class:`SimulateConfig`), each flag declared once.

Light at import (the CLI builds its parser from it); :func:`pipelines.simulate` runs one.

Examples
--------
>>> cfg = SimulateConfig(out="runs/sim", workloads=["SYN", "FB2009"], policy="late")
>>> cfg.simulator_kwargs()["nodes"], cfg.placement, cfg.world_kwargs()
(50, 'fair', {})
>>> SimulateConfig(out="o", no_skew=True, interference=0.0).world_kwargs()
{'interference': 0.0, 'skew': (0.0, 0.0)}
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, fields
from typing import Any

from pipelines._label_defaults import BETA as _BETA
from pipelines.commands._params import option

#: Workloads the simulator knows by name.
WORKLOADS: tuple[str, ...] = ("FB2009", "FB2010", "ALI2017", "SYN")


_WORLD = ("world model", "the causes of stragglers (sim_bridge.world); 0 turns a cause off")


def param_value(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` -> ``(key, value)``, the value read as JSON when it is JSON.

    Examples
    --------
    >>> param_value("quantile=0.9"), param_value("name=x")
    (('quantile', 0.9), ('name', 'x'))
    """
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip().replace("-", "_"), value


def workload_list(text: str) -> list[str]:
    """``"FB2009,FB2010"`` -> ``["FB2009", "FB2010"]``, each checked against the names.

    Examples
    --------
    >>> workload_list("FB2009,SYN")
    ['FB2009', 'SYN']
    """
    names = [w.strip() for w in text.split(",") if w.strip()]
    bad = [w for w in names if w not in WORKLOADS]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"unknown workload {', '.join(bad) or repr(text)}; choose from {', '.join(WORKLOADS)}"
        )
    return names


#: The fields of :class:`SimulateConfig` that are not :func:`sim_bridge.simulate` keywords of
#: the same name (:meth:`SimulateConfig.simulator_kwargs`): the output, how it is written, the
#: workload list (``workload`` there) and the world flags :meth:`~SimulateConfig.world_kwargs`
#: translates.
_NOT_SIMULATOR = frozenset(
    {
        "out",
        "stream",
        "workloads",
        "nodes",
        "load",
        "interference",
        "bad_node_share",
        "no_skew",
        "record_truth",
    }
)

#: Nodes of a run that gives neither ``--nodes`` nor ``--load``.
DEFAULT_NODES = 50


def _flatten(groups: list[list[str]]) -> list[str]:
    return [w for group in groups for w in group]


def _params_text(params: dict[str, Any]) -> list[str]:
    return [f"{k}={json.dumps(v)}" for k, v in params.items()]


def _params_option(flag: str, help: str) -> Any:
    """A policy's parameters: a dict field given as a repeatable ``flag KEY=VALUE``."""
    return option(
        default_factory=dict,
        flag=flag,
        type=param_value,
        repeat=True,
        cli_default=[],
        metavar="KEY=VALUE",
        parse=dict,
        format=_params_text,
        help=help,
    )


@dataclass(kw_only=True)
class SimulateConfig:
    """Settings of one ``straggler simulate`` run (see ``straggler simulate --help``)."""

    workloads: list[str] = option(
        default_factory=lambda: ["SYN"],
        flag="--workload",
        aliases=("--workloads",),
        nargs="+",
        type=workload_list,
        cli_default=[["SYN"]],
        metavar="{" + ",".join(WORKLOADS) + "}",
        parse=_flatten,
        format=list,
        help="workload(s), comma separated as in collect and compare (spaces also work); "
        "several share one cluster, interleaved by arrival (default SYN)",
    )
    policy: str = option("none", help="speculation policy (straggler policies)")
    placement: str = option(
        "fair",
        help="placement policy (default fair: the Fair Scheduler the replayed Facebook "
        "clusters ran)",
    )
    policy_params: dict[str, Any] = _params_option(
        "--param", "a speculation-policy parameter, e.g. --param quantile=0.9 (repeatable)"
    )
    placement_params: dict[str, Any] = _params_option(
        "--placement-param", "a placement-policy parameter (repeatable)"
    )
    nodes: int | None = option(
        None, type=int, help="cluster nodes (50; not with --load, which chooses them)"
    )
    slots: int = option(2, type=int, help="slots per node (2)")
    load: float | None = option(
        None,
        type=float,
        help="choose the nodes (of --slots slots) for this realised load at the busiest hour "
        "of arrivals, e.g. 0.8: calibration replays of a sample of the jobs without "
        "speculation measure how much longer than their base work attempts run (about a "
        "minute for the FB-2010 day); the choice is printed and kept in summary.json",
    )
    hours: float = option(1.0, type=float, help="first H hours of the workload (1; 24 = a day)")
    scale: float = option(1.0, type=float, help="data scale factor (1.0)")
    seed: int = option(0, type=int, help="seed of every random draw (0)")
    data_dir: str | None = option(None, help="data directory (flag, $STRAGGLER_DATA_DIR, data/)")
    counters: str = option(
        "synthetic",
        choices=("synthetic", "alibaba2018"),
        help="background contention: synthetic or replay of the Alibaba 2018 machines",
    )
    beta: float = option(_BETA, type=float, help="straggler threshold x job median")
    progress: bool | None = option(
        None,
        switch="both",
        help="progress bar (default: on for runs of more than 2,000 jobs)",
    )
    engine: str = option(
        "auto",
        choices=("auto", "compiled", "python"),
        help="event loop: auto (compiled where no policy hook can act), compiled, python",
    )
    interference: float | None = option(
        None,
        type=float,
        group=_WORLD,
        help="load a node full of one workload's tasks puts on its dominant resource "
        "(default 0.5; 0: co-located tasks do not slow each other)",
    )
    bad_node_share: float | None = option(
        None,
        type=float,
        group=_WORLD,
        help="share of persistently degraded nodes (default 0.1)",
    )
    no_skew: bool = option(
        False,
        switch="on",
        group=_WORLD,
        help="no data skew within a stage (every task of a stage gets the same input)",
    )
    record_truth: bool = option(
        False,
        switch="on",
        group=_WORLD,
        help="add the hidden truth of each attempt (truth_* columns training never reads)",
    )
    stream: bool = option(
        False,
        switch="both",
        help="stream the trace to Parquet as jobs finish, for big replays: memory follows the "
        "jobs alive, rows come in the order jobs finish (default: built in memory, rows in "
        "launch order)",
    )
    max_wall_seconds: float | None = option(
        None,
        type=float,
        help="stop the event loop after this many seconds (with --stream: an incomplete "
        "output set of the jobs finished so far)",
    )
    max_events: int | None = option(
        None,
        type=int,
        help="stop after this many events (a guard for policy experiments; with --stream: an "
        "incomplete output set)",
    )
    out: str = option(help="output directory")

    def simulator_kwargs(self) -> dict[str, Any]:
        """The keywords of :func:`sim_bridge.simulate` this config gives: every field named
        as one of its parameters (``workloads`` as ``workload``: the name alone when there
        is one), ``nodes`` (:data:`DEFAULT_NODES` when not given; :func:`pipelines.simulate`
        puts the size ``load`` chose in its place), and :meth:`world_kwargs`. The fields
        about the output (``out``, ``stream``), ``load`` and the world flags
        :meth:`world_kwargs` translates are not among them.

        Examples
        --------
        >>> cfg = SimulateConfig(out="o", workloads=["SYN"], nodes=4, no_skew=True)
        >>> kw = cfg.simulator_kwargs()
        >>> kw["workload"], kw["nodes"], kw["skew"], "out" in kw
        ('SYN', 4, (0.0, 0.0), False)
        """
        kw = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_SIMULATOR}
        kw["nodes"] = DEFAULT_NODES if self.nodes is None else self.nodes
        names = list(self.workloads)
        kw["workload"] = names[0] if len(names) == 1 else names
        kw["policy_params"] = dict(self.policy_params)
        kw["placement_params"] = dict(self.placement_params)
        return {**kw, **self.world_kwargs()}

    def world_kwargs(self) -> dict[str, Any]:
        """The world-model settings given (absent ones keep ``sim_bridge.world``'s)."""
        kw: dict[str, Any] = {}
        if self.interference is not None:
            kw["interference"] = self.interference
        if self.bad_node_share is not None:
            kw["bad_node_share"] = self.bad_node_share
        if self.no_skew:
            kw["skew"] = (0.0, 0.0)
        if self.record_truth:
            kw["record_truth"] = True
        return kw
