"""argparse ``type=`` functions for the shared numeric and URI options of the commands.

Each raises :class:`argparse.ArgumentTypeError` with a message naming the rule and the bad
value, so argparse exits with status 2 and ``argument --beta: must be a finite number > 1,
got '0.5'``. :func:`apply_option_types` installs them on every command by flag name (the
table :data:`OPTION_TYPES`), replacing a plain ``int``/``float``/string type, so that one
rule holds for ``--beta`` in every command that has it.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable

#: MLflow tracking URI schemes ``--tracking-uri`` accepts (a bare path is a file store).
TRACKING_SCHEMES: tuple[str, ...] = (
    "sqlite",
    "file",
    "http",
    "https",
    "postgresql",
    "mysql",
    "mssql",
    "databricks",
)

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def _number(text: str, kind: type) -> float | int:
    try:
        return kind(text)
    except (TypeError, ValueError):
        what = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def positive_int(text: str) -> int:
    """An integer >= 1 (node, slot and pair counts).

    Examples
    --------
    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer >= 1, got '0'
    """
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def finite_positive_float(text: str) -> float:
    """A finite number > 0 (hours, scales).

    Examples
    --------
    >>> finite_positive_float("1.5")
    1.5
    >>> finite_positive_float("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number > 0, got 'inf'
    """
    value = _number(text, float)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def beta_value(text: str) -> float:
    """The straggler threshold factor: a finite number > 1 (``beta x`` the stage median).

    Examples
    --------
    >>> beta_value("1.3")
    1.3
    >>> beta_value("0.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number > 1 (beta x the stage median), got '0.5'
    """
    value = _number(text, float)
    if not (math.isfinite(value) and value > 1):
        raise argparse.ArgumentTypeError(
            f"must be a finite number > 1 (beta x the stage median), got {text!r}"
        )
    return value


def tracking_uri(text: str) -> str:
    """An MLflow tracking URI with a scheme of :data:`TRACKING_SCHEMES`, or a bare path.

    Examples
    --------
    >>> tracking_uri("sqlite:///runs/mlflow.db")
    'sqlite:///runs/mlflow.db'
    >>> tracking_uri("bogus://x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unsupported scheme 'bogus' in 'bogus://x'; use one of ...
    """
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    match = _SCHEME.match(text)
    if match is not None:
        scheme = match.group(1).lower().split("+")[0]
        if scheme not in TRACKING_SCHEMES:
            raise argparse.ArgumentTypeError(
                f"unsupported scheme {match.group(1)!r} in {text!r}; use one of "
                f"{', '.join(TRACKING_SCHEMES)} (e.g. sqlite:///runs/mlflow.db) or a path"
            )
    return text


#: Flag -> type function, installed on every command that has the flag.
OPTION_TYPES: dict[str, Callable[[str], object]] = {
    "--beta": beta_value,
    "--hours": finite_positive_float,
    "--nodes": positive_int,
    "--slots": positive_int,
    "--pairs": positive_int,
    "--tracking-uri": tracking_uri,
}


#: (command, flag) pairs left alone: ``simulate`` checks its cluster size in
#: ``sim_bridge.simulate`` (the message names the parameter; exit 2 all the same).
KEEP_OWN_CHECK: frozenset[tuple[str, str]] = frozenset(
    {("simulate", "--nodes"), ("simulate", "--slots")}
)


def apply_option_types(subparsers: argparse._SubParsersAction) -> None:
    """Install :data:`OPTION_TYPES` on every subcommand's matching flag whose type is a
    plain ``int``, ``float`` or none (a command's own custom type is kept, and so are the
    flags of :data:`KEEP_OWN_CHECK`).

    Examples
    --------
    >>> root = argparse.ArgumentParser()
    >>> sub = root.add_subparsers()
    >>> _ = sub.add_parser("x").add_argument("--beta", type=float, default=1.3)
    >>> apply_option_types(sub)
    >>> sub.choices["x"].parse_args(["--beta", "2"]).beta
    2.0
    """
    for name, parser in subparsers.choices.items():
        for action in parser._actions:
            for flag in action.option_strings:
                kind = None if (name, flag) in KEEP_OWN_CHECK else OPTION_TYPES.get(flag)
                if kind is not None and action.type in (None, int, float, str):
                    action.type = kind
