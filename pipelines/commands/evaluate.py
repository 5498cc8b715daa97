"""``straggler evaluate``: the seed's Table 1 (accuracy by training data) or Table 2."""

from __future__ import annotations

import argparse

from pipelines.commands._engine_options import add_engine_options, engine_from_args


def _floats(text: str) -> list[float]:
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
    p.add_argument("--traces", required=True, help="trace directory (tasks.parquet) or file")
    p.add_argument(
        "--table",
        type=int,
        choices=(1, 2),
        required=True,
        help="1: accuracy by training fraction; 2: held-out (node, workload) pairs",
    )
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument(
        "--fractions",
        type=_floats,
        default=None,
        help="Table 1 training fractions, e.g. 1,5,20,66 (percent) (default: the paper's nine)",
    )
    p.add_argument("--pairs", type=int, default=20, help="Table 2 held-out pairs (20)")
    p.add_argument(
        "--min-rows",
        type=int,
        default=40,
        help="Table 2: labelled rows a (node, workload) pair needs to be held out (40)",
    )
    p.add_argument(
        "--grid",
        default="none",
        help="'none' (estimator defaults), 'small', 'default' or a grid file: chosen per model "
        "and fraction on a validation part",
    )
    p.add_argument("--models", default=None, help="comma-separated subset of the table's models")
    p.add_argument("--beta", type=float, default=1.3, help="straggler threshold x job median")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1, help="parallel fit processes")
    p.add_argument(
        "--single-class-workloads",
        choices=("raise", "drop"),
        default="raise",
        help="workloads whose rows are all one class: error (default) or drop them (the "
        "summary lists what was dropped, as train does)",
    )
    add_engine_options(p)
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Compute and print the table and the verdicts."""
    from pipelines._evaluate import TABLE1_MODELS, TABLE2_MODELS, run_evaluate

    models = None
    if args.models:
        models = tuple(m.strip() for m in args.models.split(",") if m.strip())
        allowed = TABLE1_MODELS if args.table == 1 else TABLE2_MODELS
        bad = [m for m in models if m not in allowed]
        if bad:
            raise ValueError(f"--models: {bad} not in Table {args.table}'s {list(allowed)}")
    r = run_evaluate(
        args.traces,
        args.table,
        args.out,
        fractions=args.fractions,
        n_pairs=args.pairs,
        grid=args.grid,
        beta=args.beta,
        seed=args.seed,
        jobs=args.jobs,
        models=models,
        min_rows=args.min_rows,
        on_single_class=args.single_class_workloads,
        engine=engine_from_args(args),
    )
    print(r["markdown"])
    for line in r["verdicts"]:
        print(line)
    print(f"wrote {args.out}/table{args.table}.csv, .md, .png, summary.json")
    return 0
