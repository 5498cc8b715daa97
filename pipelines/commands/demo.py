"""``straggler demo``: collect, train, evaluate, compare, a replication example, a report."""

from __future__ import annotations

import argparse


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
    p.add_argument("--out", required=True, help="output directory (e.g. runs/demo)")
    p.add_argument(
        "--quick", action="store_true", help="tiny configuration (the test suite runs it)"
    )
    p.add_argument("--data-dir", default=None, help="data directory (see straggler data)")
    p.add_argument("--seed", type=int, default=0, help="seed of every stage")
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the demo; 0 when no stage failed."""
    from pipelines._demo import run_demo

    summary = run_demo(args.out, quick=args.quick, data_dir=args.data_dir, seed=args.seed)
    return 1 if summary["status"] == "failed" else 0
