"""``straggler fidelity``: measure the simulated world's stylized facts against their bands."""

from __future__ import annotations

import argparse

WORKLOADS = ("FB2009", "FB2010", "ALI2017", "SYN")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``fidelity`` subcommand."""
    p = subparsers.add_parser(
        "fidelity",
        help="measure the simulated world's stylized facts against published bands",
        description="Measure stylized facts of the simulator's default world (straggler "
        "share, straggler slowness, the share of stragglers due to the node, the counters' "
        "held-out AUC, CPU load autocorrelation against Alibaba 2018, the oracle placement "
        "gain and LATE/Mantri against no speculation over paired seeds) and print each "
        "beside its band and source, PASS or FAIL. Writes OUT/fidelity.csv, OUT/fidelity.md, "
        "OUT/acf_cpu.png, OUT/straggler_ratio.png and OUT/summary.json. The exit code is 0 "
        "even when a band fails: this is a measurement.",
    )
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument(
        "--workload",
        nargs="+",
        default=None,
        choices=WORKLOADS,
        metavar="{" + ",".join(WORKLOADS) + "}",
        help="workload(s), each measured on its own (default: FB2009 and FB2010 when their "
        "files are in the data directory, else SYN)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="the quick profile: 20 nodes, 1 hour, 3 seeds (tests, the demo)",
    )
    p.add_argument("--seeds", type=int, default=None, help="paired seeds (profile: 8; quick 3)")
    p.add_argument("--nodes", type=int, default=None, help="cluster nodes (50; quick 20)")
    p.add_argument("--slots", type=int, default=None, help="slots per node (2)")
    p.add_argument("--hours", type=float, default=None, help="hours per run (3; quick 1)")
    p.add_argument("--load", type=float, default=None, help="realised load the scales target (0.7)")
    p.add_argument("--beta", type=float, default=1.3, help="straggler threshold x stage median")
    p.add_argument(
        "--data-dir", default=None, help="data directory (flag, $STRAGGLER_DATA_DIR, data/)"
    )
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run the measurements; always 0 when they ran (a failed band is a finding)."""
    from pipelines._fidelity import run_fidelity

    for name in ("seeds", "nodes", "slots"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise ValueError(f"--{name} must be >= 1, got {v}")
    for name in ("hours", "load", "beta"):
        v = getattr(args, name)
        if v is not None and not v > 0:
            raise ValueError(f"--{name} must be > 0, got {v}")
    run_fidelity(
        args.out,
        profile="quick" if args.quick else "default",
        workloads=args.workload,
        data_dir=args.data_dir,
        seeds=args.seeds,
        nodes=args.nodes,
        slots=args.slots,
        hours=args.hours,
        load=args.load,
        beta=args.beta,
    )
    print(
        f"wrote {args.out}/fidelity.csv, fidelity.md, acf_cpu.png, straggler_ratio.png, "
        "summary.json"
    )
    return 0
