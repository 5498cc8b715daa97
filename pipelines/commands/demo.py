"""``straggler demo``: collect, train, evaluate, compare, a replication example, a report."""

from __future__ import annotations

import argparse

from pipelines._demo_config import DemoConfig
from pipelines.commands._params import add_options, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand."""
    p = subparsers.add_parser(
        "demo",
        help="the whole story end to end",
        description="Run the whole story on the embedded default (the real workload files "
        "when the data directory has them, else the synthetic workload): collect a trace -> "
        "train the MTL f0nl model with a small Optuna grid and MLflow tracking -> evaluate "
        "(Table 1 at a few fractions, Table 2 on a few pairs) -> compare predictor-informed "
        "scheduling with speculation (Tables 3-4) -> one replication example from seed 002 "
        "(analysis against the engine) -> OUT/report.html. Each stage writes into its own "
        "directory under OUT; OUT/summary.json lists every stage, its command line, wall time "
        "and output directory. Exit code 1 if a stage failed.",
    )
    add_options(p, DemoConfig)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the demo; 0 when no stage failed."""
    from pipelines._api import demo

    summary = demo(config_from_args(DemoConfig, args))
    return 1 if summary["status"] == "failed" else 0
