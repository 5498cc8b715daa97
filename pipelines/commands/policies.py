"""``straggler policies``: list the registered scheduling and speculation policies."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``policies`` subcommand."""
    p = subparsers.add_parser(
        "policies",
        help="list the registered scheduling and speculation policies",
        description="List every registered policy (speculation/replication and placement) "
        "with a one-line description. Use the names with straggler simulate --policy/--placement.",
    )
    p.add_argument(
        "--kind",
        choices=("speculation", "placement"),
        default=None,
        help="list only one kind",
    )
    p.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Print one line per policy: name, kind, description."""
    from sim_bridge.policies import list_policies, registry

    listed = list_policies(args.kind)
    width = max((len(n) for n in listed), default=4)
    for name, desc in listed.items():
        print(f"{name:<{width}}  {registry[name].kind:<11}  {desc}")
    return 0
