"""``straggler reproduce SEED``: regenerate a seed paper's figures on the engine."""

from __future__ import annotations

import argparse

from pipelines._reproduce_config import ReproduceConfig
from pipelines.commands._engine_options import add_engine_options, engine_from_args
from pipelines.commands._params import add_options, config_from_args


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``reproduce`` subcommand."""
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a seed paper's figures on the engine",
        description="Regenerate seed 000, 001, 002 or 003's experiments on our event engine: "
        "PNG plots, CSV/Markdown tables, comparison.md (our number beside the paper's, "
        "'figure only' where the paper gives no number) and summary.json in OUT.",
    )
    add_options(p, ReproduceConfig)
    add_engine_options(p)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the reproduction and print the comparison table."""
    from pathlib import Path

    from pipelines._api import reproduce

    s = reproduce(config_from_args(ReproduceConfig, args), engine=engine_from_args(args))
    print((Path(args.out) / "comparison.md").read_text(encoding="utf-8"), end="")
    print(f"seed {s['seed_paper']}: wrote {args.out} in {s['wall_seconds']:.1f} s")
    return 0
