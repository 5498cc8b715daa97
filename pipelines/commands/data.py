"""``straggler data fetch|check``: download and verify the public datasets
(where: ``sim_bridge.resolve_data_dir``)."""

from __future__ import annotations

import argparse
import sys

_DATASETS = (
    "SWIM FB-2009/FB-2010 and the Alibaba 2017/2018 tables (data/sources.json) and FlowBench "
    "(upstream's MANIFEST.tsv as pipelines/data/flowbench_sources.tsv: 2,122 files, "
    "stored under flowbench/ with the run CSVs gzip-compressed)"
)

_SELECT_HELP = (
    "a dataset folder (swim, flowbench, ...), a subset (flowbench/montage) or a file name; "
    "repeatable"
)

_FETCH_EPILOG = """\
Files already present and verified are skipped, so a fetch that was stopped resumes where it
stopped. Partial downloads (.download.*.part) left by a killed fetch are removed when the next
fetch starts. Beside FlowBench's files the fetch writes MANIFEST.tsv, PROVENANCE.md and
LICENSE.FlowBench (from the package) when they are absent.

exit status:
  0  every selected file is present and verified
  1  a file could not be downloaded or did not match its SHA-256 (named on stderr; nothing
     unverified is left in place), or another fetch holds the data directory
  2  usage error (unknown --only value, bad --jobs or --timeout, unreadable manifest)
"""

_CHECK_EPILOG = """\
Each selected file is verified by size and SHA-256 (a .gz by its bytes or by its decompressed
content; a FlowBench run may be .csv.gz or plain .csv). Corrupt or mismatching files are
listed with what is wrong; absent files are counted per folder and named by subset, e.g.
"flowbench: 1802 of 2122 present and verified; 320 absent (montage)". Every manifest file is
required unless --allow-missing names it: a copy that documents a partial state (the shared
FlowBench copy without montage) is checked with --allow-missing flowbench/montage.

exit status:
  0  every selected file is present and verified, except absences allowed by --allow-missing
  1  a file is absent and not allowed, or a present file is corrupt or mismatches
     (corrupt files fail even when --allow-missing names them)
  2  usage error (unknown --only / --allow-missing value, unreadable manifest)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``data`` with its ``fetch`` and ``check`` actions."""
    p = subparsers.add_parser(
        "data",
        help="fetch and check the public datasets",
        description=f"Download the public datasets, {_DATASETS}, and verify their SHA-256 sums. "
        "The data directory is --data-dir, else $STRAGGLER_DATA_DIR, else data/ in the checkout.",
    )
    p.set_defaults(func=lambda args: (p.print_help(), 0)[1])
    sub = p.add_subparsers(dest="data_action", metavar="ACTION")
    for name, text, epilog in (
        (
            "fetch",
            "download missing files, verify SHA-256, skip files already present",
            _FETCH_EPILOG,
        ),
        (
            "check",
            "verify the files present and say plainly which are absent or corrupt",
            _CHECK_EPILOG,
        ),
    ):
        q = sub.add_parser(
            name,
            help=text,
            description=text,
            epilog=epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        q.add_argument("--data-dir", default=None, help="data directory (see `straggler data`)")
        q.add_argument("--only", action="append", default=None, metavar="NAME", help=_SELECT_HELP)
        q.add_argument(
            "--manifest",
            action="append",
            default=None,
            metavar="PATH",
            help="read this manifest instead of the shipped ones (a .json like data/sources.json "
            "or a FlowBench-style .tsv: path, bytes, sha256, url); repeatable",
        )
        if name == "fetch":
            q.add_argument(
                "--base-url",
                default=None,
                help="a mirror holding the data directory layout (instead of the upstream URLs)",
            )
            q.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
            q.add_argument(
                "--jobs", type=int, default=4, help="files downloaded at the same time (default 4)"
            )
            q.add_argument("--quiet", action="store_true", help="no progress bar")
        else:
            q.add_argument(
                "--allow-missing",
                action="append",
                default=None,
                metavar="NAME",
                help="absent files of this folder, subset or file are a note, not an error; "
                "repeatable",
            )
            q.add_argument(
                "-v", "--verbose", action="store_true", help="list every file with its status"
            )
        q.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    """Run ``data fetch`` or ``data check`` (exit codes: see their ``--help``)."""
    from pipelines._datadir import resolve_data_dir

    data_dir = resolve_data_dir(args.data_dir)
    if args.data_action == "check":
        return _check(args, data_dir)
    return _fetch(args, data_dir)


def _check(args: argparse.Namespace, data_dir) -> int:
    from pipelines._fetch import load_manifest, select, summarize, verify_file

    known = load_manifest(args.manifest)
    files = select(known, args.only)
    checks = [verify_file(data_dir, f) for f in files]
    groups = summarize(checks, args.allow_missing, known=known)
    for c in checks:
        if c.status in ("mismatch", "corrupt"):
            print(f"{c.status:9s} {c.detail}")
        elif args.verbose:
            print(f"{c.status:9s} {c.found or c.file.path}")
    for g in groups:
        print(g.line(known))
    failed = [g for g in groups if g.failed]
    if not failed:
        print(f"{data_dir}: OK")
        return 0
    absent = sum(len(g.absent) - len(g.allowed) for g in failed)
    bad = sum(len(g.bad) for g in failed)
    print(
        f"{data_dir}: FAILED: {absent} required file(s) absent, {bad} corrupt or mismatching "
        "(run `straggler data fetch` to repair; see --allow-missing for a partial copy)"
    )
    return 1


def _fetch(args: argparse.Namespace, data_dir) -> int:
    from pipelines._fetch import ChecksumMismatchError, DataDirBusyError, DownloadError, fetch

    downloaded = {"bytes": 0}

    def count(_f, _status, n):
        downloaded["bytes"] += n

    try:
        results = fetch(
            data_dir,
            args.only,
            base_url=args.base_url,
            manifest=args.manifest,
            timeout=args.timeout,
            progress=not args.quiet,
            on_file=count,
            jobs=args.jobs,
        )
    except (ChecksumMismatchError, DownloadError, DataDirBusyError) as exc:
        print(f"straggler data fetch: error: {exc}", file=sys.stderr)
        return 1
    per: dict[str, dict[str, int]] = {}
    for path, s in results.items():
        d = per.setdefault(path.split("/", 1)[0], {})
        d[s] = d.get(s, 0) + 1
    for folder, d in per.items():
        parts = ", ".join(f"{n} {s}" for s, n in sorted(d.items()))
        print(f"{folder}: {sum(d.values())} files verified ({parts})")
    print(
        f"{data_dir}: {len(results)} files verified, {downloaded['bytes'] / 1e6:.1f} MB downloaded"
    )
    return 0
