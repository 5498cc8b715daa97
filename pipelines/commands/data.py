"""``straggler data fetch|check``: download and verify the public datasets (DESIGN.md §7)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``data`` with its ``fetch`` and ``check`` actions."""
    p = subparsers.add_parser(
        "data",
        help="fetch and check the public datasets",
        description="Download the public datasets (SWIM FB-2009/FB-2010, Alibaba 2017/2018 "
        "tables) listed in data/sources.json and verify their SHA-256 sums. The data directory "
        "is --data-dir, else $STRAGGLER_DATA_DIR, else data/ in the checkout.",
    )
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])
    sub = p.add_subparsers(dest="data_action", metavar="ACTION")
    for name, text in (
        ("fetch", "download missing files, verify SHA-256, skip files already present"),
        ("check", "report which files are present, missing or corrupt"),
    ):
        q = sub.add_parser(name, help=text, description=text)
        q.add_argument("--data-dir", default=None, help="data directory (see above)")
        q.add_argument(
            "--only",
            action="append",
            default=None,
            metavar="NAME",
            help="a dataset folder (e.g. swim) or file name from data/sources.json; repeatable",
        )
        if name == "fetch":
            q.add_argument(
                "--base-url",
                default=None,
                help="a mirror holding the data directory layout (instead of the upstream URLs)",
            )
            q.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
        q.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run ``data fetch`` or ``data check``; exit 1 when a file failed or is corrupt."""
    from pipelines._datadir import resolve_data_dir
    from pipelines._fetch import ChecksumMismatchError, DownloadError, check, fetch

    data_dir = resolve_data_dir(args.data_dir)
    if args.data_action == "check":
        status = check(data_dir, args.only)
        for path, s in status.items():
            print(f"{s:9s} {path}")
        counts = {k: sum(v == k for v in status.values()) for k in ("ok", "missing", "mismatch")}
        print(
            f"{data_dir}: {counts['ok']} ok, {counts['missing']} missing, "
            f"{counts['mismatch']} corrupt (run `straggler data fetch` to repair)"
            if counts["mismatch"] or counts["missing"]
            else f"{data_dir}: all {counts['ok']} files present and verified"
        )
        return 1 if counts["mismatch"] else 0
    try:
        results = fetch(data_dir, args.only, base_url=args.base_url, timeout=args.timeout)
    except (ChecksumMismatchError, DownloadError) as exc:
        print(f"straggler data fetch: error: {exc}", file=sys.stderr)
        return 1
    for path, s in results.items():
        print(f"{s:10s} {path}")
    print(f"{data_dir}: {len(results)} files verified")
    return 0
