"""The ``straggler`` command line.

Every subcommand lives in its own module under :mod:`pipelines.commands` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (called with the parsed
namespace, returning an exit code). Heavy imports happen inside ``func`` so that
``straggler --help`` stays fast.

Every subcommand also takes ``--config FILE.toml`` (:mod:`pipelines._config`): the flags'
values from a TOML file, keys named as the long flags; flags on the command line win.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pipelines._config import ConfigError, add_config_flag, apply_config
from pipelines.commands._outputs import guard_outputs, run_with_outputs
from pipelines.commands._types import apply_option_types

#: (module under pipelines.commands, one-line purpose), in the order ``--help`` lists them.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("data", "fetch and check the public datasets"),
    ("simulate", "run the cluster simulator with one policy"),
    ("fidelity", "measure the simulated world's stylized facts against published bands"),
    ("policies", "list the registered scheduling and speculation policies"),
    ("collect", "collect a training trace from the simulator"),
    ("train", "train a straggler predictor (Optuna grid, MLflow tracking)"),
    ("evaluate", "the paper's Tables 1-2 on a trace"),
    ("compare", "predictor-informed scheduling vs speculation (Tables 3-4)"),
    ("reproduce", "reproduce a seed paper's figures on the engine"),
    ("report", "an HTML report from result directories"),
    ("demo", "the whole story end to end"),
)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every subcommand that is installed."""
    parser = argparse.ArgumentParser(
        prog="straggler",
        description="Straggler prediction: simulate clusters, train grouped multi-task SVMs, "
        "and measure predictor-informed scheduling against replication policies.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, _purpose in COMMANDS:
        modname = f"pipelines.commands.{name}"
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as exc:  # the command is not built (yet); list the rest
            if exc.name == modname:
                continue
            raise
        module.register(sub)
    guard_outputs(sub)
    apply_option_types(sub)
    add_config_flag(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"straggler-mtl {version('straggler-mtl')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "straggler-mtl (not installed)"


#: what the command line needs beyond the base install (the ``pipelines`` extra; jinja2 renders
#: the report, imported at module level)
PIPELINES_EXTRA: tuple[str, ...] = ("mlflow", "optuna", "matplotlib", "jinja2")


def missing_extra() -> list[str]:
    """The modules of the ``pipelines`` extra that cannot be imported here, without importing them.

    Examples
    --------
    >>> missing_extra()  # a full install (``make install``) has them all
    []
    """
    from importlib.util import find_spec

    missing = []
    for name in PIPELINES_EXTRA:
        try:
            found = find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``straggler`` console script."""
    missing = missing_extra()
    if missing:  # a light install (mtl + sim_bridge only): one line, no traceback
        print(
            f"straggler: the command line needs the pipelines extra (missing: "
            f"{', '.join(missing)}): pip install 'straggler-mtl[pipelines]'",
            file=sys.stderr,
        )
        return 2
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        apply_config(parser, argv)
    except (ConfigError, FileNotFoundError) as exc:
        print(f"straggler: error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return run_with_outputs(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, KeyError) as exc:
        # User errors (bad files, bad parameters) come out as one clear line, no traceback.
        print(f"straggler {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
