"""Each command's parameters, declared once: dataclass fields carrying their flag.

A command's settings are one dataclass (e.g. :class:`pipelines.TrainConfig`); every field
that is a command-line flag is declared with :func:`option`, which stores an :class:`Option`
(help, flag, type, choices, how the flag's text becomes the field's value) in the field's
metadata. From that one declaration:

* :func:`add_options` adds the flags to the command's argparse parser (and so
  ``--config FILE.toml``, whose keys are the parser's long flags, :mod:`pipelines._config`);
* :func:`config_from_args` builds the dataclass from the parsed namespace;
* :func:`to_argv` writes the command line of a dataclass (the demo records it).

Fields without :func:`option` (e.g. ``TrainConfig.curve_fractions``) are Python-API only.

Examples
--------
>>> import argparse
>>> from dataclasses import dataclass
>>> @dataclass
... class Hello:
...     out: str = option(help="output directory")
...     times: int = option(3, type=int, help="how often (3)")
...     loud: bool = option(True, flag="--quiet", switch="off", help="no capitals")
>>> p = argparse.ArgumentParser()
>>> add_options(p, Hello)
>>> args = p.parse_args(["--out", "o", "--quiet"])
>>> config_from_args(Hello, args)
Hello(out='o', times=3, loud=False)
>>> to_argv(Hello(out="o", times=5))
['--out', 'o', '--times', '5']
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import MISSING, dataclass
from typing import Any


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


#: :attr:`Option.cli_default` when the flag's default is the field's.
UNSET: Any = _Unset()

#: The metadata key of a field's :class:`Option`.
KEY = "cli"

#: How a bool field is a flag: ``"on"``: ``--x`` sets True (store_true); ``"off"``: ``--no-x``
#: sets False (the flag is the negation); ``"both"``: ``--x`` / ``--no-x``.
SWITCHES = ("on", "off", "both")


@dataclass(frozen=True)
class Option:
    """How one dataclass field is a command-line flag."""

    help: str
    #: the long flag; default ``--`` + the field name with ``-`` for ``_``
    flag: str | None = None
    #: argparse ``type=``: the flag's text -> value, raising ``ArgumentTypeError`` on bad input
    type: Callable[[str], Any] | None = None
    choices: Iterable[Any] | None = None
    metavar: str | None = None
    #: a bool field's switch kind (:data:`SWITCHES`)
    switch: str | None = None
    #: the flag may be repeated (argparse ``append``)
    repeat: bool = False
    #: argparse ``nargs`` (e.g. ``"+"``: one flag, several values)
    nargs: str | int | None = None
    #: more spellings of the flag (e.g. ``("--workloads",)`` beside ``--workload``)
    aliases: tuple[str, ...] = ()
    #: the help's argument group: (title, description)
    group: tuple[str, str] | None = None
    #: a positional argument (named by :attr:`metavar`) instead of a flag
    positional: bool = False
    #: the flag's parsed value -> the field's value (e.g. a comma-separated text -> a list)
    parse: Callable[[Any], Any] | None = None
    #: the field's value -> the flag's text (or texts, one per repetition); default ``str``
    format: Callable[[Any], str | list[str]] | None = None
    #: the flag's default when it differs from the field's (e.g. the text of a list)
    cli_default: Any = UNSET


def option(default: Any = MISSING, *, default_factory: Any = MISSING, **kw: Any) -> Any:
    """A dataclass field that is also a flag (keywords: :class:`Option`'s).

    No ``default`` (and no ``default_factory``) makes the flag required.

    Examples
    --------
    >>> f = option(0.25, type=float, help="validation share")
    >>> f.metadata["cli"].help, f.default
    ('validation share', 0.25)
    """
    return dataclasses.field(
        default=default, default_factory=default_factory, metadata={KEY: Option(**kw)}
    )


class RegistryChoices:
    """The keys of a registry (``module.NAME``), imported only when a value is checked.

    Given as :attr:`Option.choices`, it becomes the flag's argparse ``type`` (not argparse
    ``choices``, which the help formatter lists and so would import the registry's package
    on every ``--help``): a new entry in the registry is a new choice without editing the
    command, and a wrong value is answered with the whole list.

    Examples
    --------
    >>> c = RegistryChoices("pipelines.commands._outputs", "GUARDED_COMMANDS")
    >>> "train" in c, c("train")
    (True, 'train')
    >>> c("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: invalid choice: 'nope' (choose from simulate, collect, ...)
    """

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def _keys(self) -> list[Any]:
        return list(getattr(importlib.import_module(self.module), self.name))

    def __call__(self, text: str) -> str:
        """``text`` when it is a key of the registry (argparse ``type=``)."""
        keys = self._keys()
        if text not in keys:
            raise argparse.ArgumentTypeError(
                f"invalid choice: {text!r} (choose from {', '.join(map(str, keys))})"
            )
        return text

    def __contains__(self, value: object) -> bool:
        return value in self._keys()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __repr__(self) -> str:
        return f"RegistryChoices({self.module}.{self.name})"


def options(cls: type) -> list[tuple[dataclasses.Field, Option]]:
    """The fields of dataclass ``cls`` that are flags, in declaration order."""
    return [(f, f.metadata[KEY]) for f in dataclasses.fields(cls) if KEY in f.metadata]


def flag_of(f: dataclasses.Field, opt: Option) -> str:
    """The long flag of a field (``--`` + its name with dashes unless :attr:`Option.flag`)."""
    return opt.flag or "--" + f.name.replace("_", "-")


def _dest(f: dataclasses.Field, opt: Option) -> str:
    """The namespace attribute argparse gives the flag (its long name with ``_``)."""
    return flag_of(f, opt)[2:].replace("-", "_")


def _default(f: dataclasses.Field, opt: Option) -> Any:
    if opt.cli_default is not UNSET:
        return opt.cli_default
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return None


def add_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    cls: type,
    *,
    skip: Iterable[str] = (),
) -> None:
    """Add a flag to ``parser`` for every :func:`option` field of ``cls`` (except ``skip``).

    Raises
    ------
    TypeError
        A field's :attr:`Option.switch` is not one of :data:`SWITCHES`.
    """
    skip = set(skip)
    groups: dict[str, argparse._ArgumentGroup] = {}
    target = parser
    for f, opt in options(cls):
        if f.name in skip:
            continue
        parser = target
        if opt.group is not None:
            if opt.group[0] not in groups:
                groups[opt.group[0]] = target.add_argument_group(*opt.group)
            parser = groups[opt.group[0]]
        flag = flag_of(f, opt)
        kw: dict[str, Any] = {"help": opt.help, "dest": _dest(f, opt)}
        if opt.positional:
            kw.update(choices=opt.choices, metavar=opt.metavar)
            if opt.nargs is not None:  # e.g. "*": any number of them
                kw["nargs"] = opt.nargs
            parser.add_argument(kw.pop("dest"), **kw)
            continue
        required = f.default is MISSING and f.default_factory is MISSING
        if opt.switch is not None:
            if opt.switch not in SWITCHES:
                raise TypeError(f"{cls.__name__}.{f.name}: switch {opt.switch!r} not in {SWITCHES}")
            if opt.switch == "both":
                kw.update(action=argparse.BooleanOptionalAction, default=_default(f, opt))
            else:
                kw["action"] = "store_true"
            parser.add_argument(flag, *opt.aliases, **kw)
            continue
        if required:
            kw["required"] = True
        else:
            kw["default"] = _default(f, opt)
        if opt.repeat:
            kw["action"] = "append"
        for name in ("type", "choices", "metavar", "nargs"):
            if getattr(opt, name) is not None:
                kw[name] = getattr(opt, name)
        if isinstance(opt.choices, RegistryChoices):  # checked lazily, not listed by --help
            kw["type"] = kw.pop("choices")
        parser.add_argument(flag, *opt.aliases, **kw)


def config_from_args(cls: type, args: argparse.Namespace, **overrides: Any) -> Any:
    """The ``cls`` instance of a parsed namespace (``overrides`` win, e.g. values the
    command computes from several flags).

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class C:
    ...     names: list = option(default_factory=list, cli_default="a,b", help="names",
    ...                          parse=lambda t: t.split(","), format=",".join)
    >>> config_from_args(C, argparse.Namespace(names="x,y"))
    C(names=['x', 'y'])
    """
    values: dict[str, Any] = {}
    for f, opt in options(cls):
        if f.name in overrides:
            continue
        value = getattr(args, _dest(f, opt))
        if opt.switch == "off":
            value = not value
        elif opt.parse is not None:
            value = opt.parse(value)
        values[f.name] = value
    return cls(**values, **overrides)


def to_argv(config: Any) -> list[str]:
    """The flags that give ``config`` (those whose value differs from the flag's default).

    Examples
    --------
    >>> from pipelines._train_config import TrainConfig
    >>> to_argv(TrainConfig(traces="t", out="o", grid="small", register=False))
    ['--traces', 't', '--out', 'o', '--grid', 'small', '--no-register']
    """
    argv: list[str] = []
    for f, opt in options(type(config)):
        value = getattr(config, f.name)
        flag = flag_of(f, opt)
        required = f.default is MISSING and f.default_factory is MISSING
        if opt.switch is not None:
            on = bool(value) if opt.switch != "off" else not value
            if opt.switch == "both" and value is not None and value != _default(f, opt):
                argv.append(flag if value else "--no-" + flag[2:])
            elif opt.switch != "both" and on:
                argv.append(flag)
            continue
        if not required:
            default = _default(f, opt)
            if opt.parse is not None and default is not None:
                default = opt.parse(default)
            if value == default:
                continue
        if value is None:
            continue
        texts = opt.format(value) if opt.format is not None else str(value)
        texts = [texts] if isinstance(texts, str) else list(texts)
        if opt.positional:
            argv += texts
            continue
        if opt.nargs is not None:  # one flag, several values
            argv += [flag, *texts]
            continue
        for text in texts:
            argv += [flag, text]
    return argv
