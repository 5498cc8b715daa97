"""The demo's stages: what one is (:class:`Stage`), how one runs a Python API function with
its output logged (:func:`api_stage`, :func:`run_logged`), and whether its command is built
(:func:`command_available`)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO


@dataclass
class Stage:
    """One step of the demo and, after it ran, its outcome."""

    name: str
    section: str
    command: str | None
    needs: tuple[str, ...] = ()
    argv: list[str] | None = None
    out: str | None = None
    status: str = "pending"
    reason: str | None = None
    wall_seconds: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: runs the stage through the Python API: ``call(overwrite)`` -> the stage's summary
    call: Callable[[bool], Any] | None = field(default=None, repr=False, compare=False)

    def record(self) -> dict[str, Any]:
        """The JSON record of the stage in the demo's ``summary.json``."""
        rec = asdict(self)
        rec.pop("call")
        rec.update(rec.pop("extra"))
        return rec


def api_stage(
    name: str,
    section: str,
    command: str,
    config: Any,
    run: Callable[..., Any],
    needs: tuple[str, ...] = (),
    **kw: Any,
) -> Stage:
    """A stage that runs ``run(config, overwrite=..., **kw)`` (a :mod:`pipelines._api`
    function), recorded as the command line ``straggler COMMAND <flags of config>``.

    Examples
    --------
    >>> from pipelines._api import fidelity
    >>> from pipelines._fidelity_config import FidelityConfig
    >>> s = api_stage("fidelity", "fidelity", "fidelity", FidelityConfig(out="o"), fidelity)
    >>> s.argv, s.out
    (['fidelity', '--out', 'o'], 'o')
    """
    from pipelines.commands._params import to_argv

    def call(overwrite: bool) -> Any:
        return run(config, overwrite=overwrite, **kw)

    argv = [command, *to_argv(config)]
    return Stage(name, section, command, needs, argv=argv, out=str(config.out), call=call)


def command_available(name: str) -> bool:
    """Whether ``pipelines.commands.<name>`` (a ``straggler`` subcommand) is installed.

    Examples
    --------
    >>> command_available("collect"), command_available("no-such-command")
    (True, False)
    """
    try:
        return importlib.util.find_spec(f"pipelines.commands.{name}") is not None
    except (ImportError, ValueError):
        return False


class _Tee(io.TextIOBase):
    """Write to several streams (the console and a stage log file)."""

    def __init__(self, *streams: TextIO):
        self.streams = streams

    def write(self, s: str) -> int:
        for st in self.streams:
            st.write(s)
        return len(s)

    def flush(self) -> None:
        for st in self.streams:
            st.flush()


def run_logged(run: Callable[[], Any], log_path: Path, command: str = "") -> Any:
    """Run ``run()`` with its standard output, standard error and log records going to the
    console and to ``log_path``; return what it returns.

    An exception is written to the log (its traceback) and to standard error (one line,
    ``straggler COMMAND: error: ...``, as the command line prints it) and raised again;
    ``KeyboardInterrupt`` passes through.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> log = pathlib.Path(tempfile.mkdtemp()) / "logs" / "x.log"
    >>> run_logged(lambda: print("hello") or 3, log)
    hello
    3
    >>> log.read_text()
    'hello\\n'
    """
    import traceback

    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w", encoding="utf-8") as log:
        handler = logging.StreamHandler(log)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        out, err = _Tee(sys.stdout, log), _Tee(sys.stderr, log)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    return run()
                except Exception as exc:
                    log.write(traceback.format_exc())
                    print(f"straggler {command}: error: {exc}", file=err)
                    raise
        finally:
            root.removeHandler(handler)
