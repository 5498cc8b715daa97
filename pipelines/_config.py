"""``--config FILE.toml`` for every ``straggler`` command: flag values from a TOML file.

The file's keys are the command's long flags (``--min-rows`` is ``min_rows`` or
``min-rows``), its values the flags' values; a comma-separated flag may be written as a TOML
array. The file sets the defaults; flags given on the command line win. A key that is not a
flag of the command is an error naming the key. A ``[COMMAND]`` table (e.g. ``[train]``)
applies to that command only, so one file can serve several commands; top-level keys apply
to the command run.

Examples
--------
A file for ``straggler train --config train.toml --traces runs/trace --out runs/train``::

    variant = "f0nl"
    grid = "small"
    metric = "pr_auc"
    no-register = true
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: The option every subcommand gets.
CONFIG_FLAG = "--config"


class ConfigError(ValueError):
    """A ``--config`` file that is not TOML or names a key the command does not have."""


#: Flags that exclude each other: one given on the command line drops the other's file value.
EXCLUSIVE: tuple[tuple[str, str], ...] = (("workers", "scheduler"),)


def add_config_flag(subparsers: argparse._SubParsersAction) -> None:
    """Give every registered subcommand (and nested subcommand, e.g. ``data fetch``) a
    ``--config FILE.toml`` option."""
    for sp in subparsers.choices.values():
        if sp._subparsers is not None:
            add_config_flag(sp._subparsers._group_actions[0])
            continue
        if any(CONFIG_FLAG in a.option_strings for a in sp._actions):
            continue
        sp.add_argument(
            CONFIG_FLAG,
            metavar="FILE.toml",
            default=None,
            help="flag values from a TOML file (keys: the long flag names, e.g. min-rows = 10; "
            "flags given on the command line win)",
        )


def _flags(sp: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Config key -> action: every long option of the subparser, spelt with '-' and '_'."""
    out: dict[str, argparse.Action] = {}
    for action in sp._actions:
        for opt in action.option_strings:
            if opt.startswith("--") and opt not in ("--help", CONFIG_FLAG):
                out[opt[2:]] = action
                out[opt[2:].replace("-", "_")] = action
    return out


def _value(action: argparse.Action, key: str, value: Any, file: Path) -> Any:
    """The namespace value of ``key = value``, converted and checked as the flag would be."""
    switch = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse.BooleanOptionalAction)
    if isinstance(action, switch):
        if not isinstance(value, bool):
            raise ConfigError(f"{file}: key {key!r} is a switch: true or false, got {value!r}")
        if isinstance(action, argparse.BooleanOptionalAction):  # --x / --no-x
            return not value if key.startswith(("no-", "no_")) else value
        return value if isinstance(action, argparse._StoreTrueAction) else not value
    if isinstance(value, Mapping):
        raise ConfigError(f"{file}: key {key!r} has a table as its value, expected a flag value")
    many = action.nargs in ("*", "+") or isinstance(action.nargs, int)
    repeat = isinstance(action, argparse._AppendAction)  # --param K=V --param K2=V2
    if isinstance(value, list) and not (many or repeat):
        value = ",".join(str(v) for v in value)  # a comma-separated flag written as an array
    if (many or repeat) and not isinstance(value, list):
        value = [value]  # one value of a list flag is a list of one
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        text = str(item).lower() if isinstance(item, bool) else str(item)
        if action.type is not None:
            try:
                item = action.type(text)
            except (TypeError, ValueError, argparse.ArgumentTypeError) as exc:
                raise ConfigError(f"{file}: key {key!r}: bad value {item!r} ({exc})") from exc
        else:
            item = text
        if action.choices is not None and item not in action.choices:
            raise ConfigError(
                f"{file}: key {key!r} value {item!r} is not one of {list(action.choices)}"
            )
        out.append(item)
    return out if isinstance(value, list) else out[0]


def load_config(
    path: str | Path,
    command: str,
    sp: argparse.ArgumentParser,
    shared: set[str] | None = None,
) -> dict[str, Any]:
    """Namespace defaults of ``command`` (destination -> value) from a TOML file.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ConfigError
        Not TOML, a key that is not a long flag of ``command``, or a bad value (the message
        names the file, the key and the value).

    Top-level keys serve every command: one that ``command`` lacks is skipped when it is a
    flag of another command (``shared``: every command's keys), and an error otherwise (a
    typo). Keys of the ``[command]`` table (``[data.fetch]`` for a nested command) must all
    be ``command``'s.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from pipelines.cli import build_parser
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "c.toml"
    >>> _ = f.write_text('pairs = 5\\nmin-rows = 10\\n[train]\\nvariant = "f0"\\n')
    >>> sp = build_parser()._subparsers._group_actions[0].choices["evaluate"]
    >>> load_config(f, "evaluate", sp)
    {'pairs': 5, 'min_rows': 10}
    """
    import tomllib

    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"--config: no file at {file}")
    try:
        doc = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not a TOML file: {exc}") from exc
    flags = _flags(sp)
    items = {
        k: v
        for k, v in doc.items()
        if not isinstance(v, Mapping) and (k in flags or shared is None or k not in shared)
    }
    section: Any = doc
    for part in command.split():
        section = section.get(part) if isinstance(section, Mapping) else None
    if isinstance(section, Mapping):
        items.update({k: v for k, v in section.items() if not isinstance(v, Mapping)})
    defaults: dict[str, Any] = {}
    for key, value in items.items():
        action = flags.get(key)
        if action is None:
            names = sorted({k for k in flags if "_" not in k})
            raise ConfigError(
                f"{file}: unknown key {key!r}: `straggler {command}` has no flag --{key} "
                f"(its flags: {', '.join(names)})"
            )
        defaults[action.dest] = _value(action, key, value, file)
    return defaults


def apply_config(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Set the chosen subcommand's defaults from ``--config FILE`` before the real parse.

    A flag the file gives is no longer required on the command line.
    """
    argv = list(argv)
    if not any(a == CONFIG_FLAG or a.startswith(CONFIG_FLAG + "=") for a in argv):
        return
    if parser._subparsers is None:
        return
    choices = parser._subparsers._group_actions[0].choices
    command = next((a for a in argv if a in choices), None)
    if command is None:
        return
    rest = argv[argv.index(command) + 1 :]
    sp = choices[command]
    shared = {k for c in choices.values() for k in _flags(c)}
    if sp._subparsers is not None:  # e.g. `data fetch`
        nested = sp._subparsers._group_actions[0].choices
        sub = next((a for a in rest if a in nested), None)
        if sub is None:
            return
        sp, command, rest = nested[sub], f"{command} {sub}", rest[rest.index(sub) + 1 :]
        shared |= {k for c in nested.values() for k in _flags(c)}
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument(CONFIG_FLAG)
    known, _ = pre.parse_known_args(rest)
    if not known.config:
        return
    defaults = load_config(known.config, command, sp, shared)
    given = {a.split("=", 1)[0][2:].replace("-", "_") for a in rest if a.startswith("--")}
    for a, b in EXCLUSIVE:
        for mine, other in ((a, b), (b, a)):
            if mine in given:
                defaults.pop(other, None)
    for action in sp._actions:
        if action.dest in defaults and action.required:
            action.required = False
    sp.set_defaults(**defaults)
