"""``straggler evaluate``: the seed's Table 1 (accuracy by training data) or Table 2."""

from __future__ import annotations

import argparse

from pipelines._evaluate_config import EvaluateConfig
from pipelines.commands._engine_options import add_engine_options, engine_from_args
from pipelines.commands._params import add_options, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``evaluate`` subcommand."""
    p = subparsers.add_parser(
        "evaluate",
        help="the paper's Tables 1-2 on a trace",
        description="Table 1: accuracy (precision/recall) of Wrangler and the MTL variants f0, "
        "fn, fl, f0nl, f0t, f0tl by training fraction (1..66% of every node-workload pair, "
        "time ordered), with 'insufficient data' where Wrangler has no per-pair model. "
        "Table 2: f0nl vs f0t on pairs whose later 95% of rows are held out. Writes "
        "tableN.csv, tableN.md, tableN.png and summary.json, prints the table and says which "
        "of the paper's claims hold.",
    )
    add_options(p, EvaluateConfig)
    add_engine_options(p)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Compute and print the table and the verdicts."""
    from pipelines._api import evaluate

    r = evaluate(config_from_args(EvaluateConfig, args), engine=engine_from_args(args))
    print(r["markdown"])
    for line in r["verdicts"]:
        print(line)
    print(f"wrote {args.out}/table{args.table}.csv, .md, .png, summary.json")
    return 0
