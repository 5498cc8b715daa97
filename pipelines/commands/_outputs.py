"""``--out`` and ``--overwrite`` for every command that writes an output set, and the guard
that makes the set one unit (see :func:`pipelines._io.begin_output`).

A new command calls :func:`add_out_arguments` instead of adding ``--out`` itself; the
commands of :data:`GUARDED_COMMANDS`, which add ``--out`` themselves, get ``--overwrite`` from
:func:`guard_outputs` when the CLI builds its parser. The CLI runs every command through
:func:`run_with_outputs`, which claims the directory (refusing a file, a read-only
directory, or earlier finished results without ``--overwrite``: exit 2 naming ``--out``),
writes the incomplete-marker first and removes it only after the command succeeded (the
same claim the Python API takes, :func:`pipelines._api.claimed_output`).
"""

from __future__ import annotations

import argparse

#: Commands whose ``--out`` directory is one output set (``report`` writes one file into a
#: directory that may hold its inputs, so it is not guarded).
GUARDED_COMMANDS: tuple[str, ...] = (
    "simulate",
    "collect",
    "train",
    "evaluate",
    "compare",
    "fidelity",
    "reproduce",
    "demo",
)


def add_out_arguments(parser: argparse.ArgumentParser, help: str = "output directory") -> None:
    """Add ``--out`` (required) and ``--overwrite`` to ``parser``, and mark it guarded.

    Examples
    --------
    >>> p = argparse.ArgumentParser()
    >>> add_out_arguments(p)
    >>> a = p.parse_args(["--out", "runs/x"])
    >>> a.out, a.overwrite, a.guard_out
    ('runs/x', False, True)
    """
    parser.add_argument("--out", required=True, help=help)
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the results of an earlier run in --out (default: refuse)",
    )
    parser.set_defaults(guard_out=True)


def guard_outputs(subparsers: argparse._SubParsersAction) -> None:
    """Give every parser of :data:`GUARDED_COMMANDS` that has ``--out`` an ``--overwrite``
    flag and mark it guarded (called once by :func:`pipelines.cli.build_parser`)."""
    for name, parser in subparsers.choices.items():
        options = {s for action in parser._actions for s in action.option_strings}
        if name in GUARDED_COMMANDS and "--out" in options and "--overwrite" not in options:
            parser.add_argument(
                "--overwrite",
                action="store_true",
                help="replace the results of an earlier run in --out (default: refuse)",
            )
            parser.set_defaults(guard_out=True)


def run_with_outputs(args: argparse.Namespace) -> int:
    """Run ``args.func(args)``; when the command's parser was built with
    :func:`add_out_arguments` (or :func:`guard_outputs` marked it), inside
    :func:`pipelines._api.claimed_output` on ``args.out`` (the API functions the command
    calls then write into the directory this claim holds)."""
    if not getattr(args, "guard_out", False) or getattr(args, "out", None) is None:
        return int(args.func(args) or 0)
    from pipelines._api import claimed_output

    with claimed_output(args.out, overwrite=args.overwrite, command=args.command) as held:
        code = int(args.func(args) or 0)
        held.ok = code == 0
    return code
