"""Small output helpers shared by every command: atomic writes and ``summary.json``."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename.

    A crash midway never leaves a truncated file behind.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_text(d / "a.txt", "hi").read_text()
    'hi'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_summary(out_dir: str | os.PathLike[str], summary: Mapping[str, Any]) -> Path:
    """Write ``summary.json`` (non-finite floats become ``null``) atomically into ``out_dir``.

    Examples
    --------
    >>> import tempfile, json
    >>> p = write_summary(tempfile.mkdtemp(), {"x": float("nan"), "n": 3})
    >>> json.loads(p.read_text())
    {'n': 3, 'x': None}
    """
    text = json.dumps(_jsonable(summary), indent=2, sort_keys=True) + "\n"
    return atomic_write_text(Path(out_dir) / "summary.json", text)


#: Written first into an output directory and removed last: while it exists the directory's
#: files are not one consistent output set (a run is writing, or was killed), and readers
#: (:func:`require_complete`, e.g. :func:`pipelines._dataset.load_trace`) refuse it.
INCOMPLETE_MARKER = ".straggler-incomplete"


class OutputError(ValueError):
    """An ``--out`` directory cannot be used (a file, not writable, holds earlier results) or
    holds an interrupted, half-written output set."""


def _snapshot(out: Path) -> dict[str, tuple[int, int]]:
    return {
        p.name: (p.stat().st_size, p.stat().st_mtime_ns)
        for p in out.iterdir()
        if p.name != INCOMPLETE_MARKER
    }


def _holds_results(out: Path) -> bool:
    """A finished, non-resumable output set: ``summary.json`` whose ``status`` is not
    ``"incomplete"`` (``straggler train`` stopped by ``--max-trials`` resumes into its own
    directory)."""
    summary = out / "summary.json"
    if not summary.is_file():
        return False
    try:
        status = json.loads(summary.read_text(encoding="utf-8")).get("status")
    except (ValueError, AttributeError, OSError):
        return True
    return status != "incomplete"


@dataclass(frozen=True)
class OutputClaim:
    """What :func:`begin_output` found: the directory, its listing (name -> size, mtime) and
    whether the run created it."""

    out: Path
    before: dict[str, tuple[int, int]]
    created: bool


def begin_output(
    out: str | os.PathLike[str], *, overwrite: bool = False, command: str = ""
) -> OutputClaim:
    """Claim ``out`` for one run: check it, then write :data:`INCOMPLETE_MARKER`.

    Refused (:class:`OutputError`, the message names ``--out`` and the path): ``out`` is an
    existing file; ``out`` is not writable; ``out`` holds the finished results of an earlier
    run (a ``summary.json``) and ``overwrite`` is false. A directory left by an interrupted
    run (marker present) may be written again. Returns what :func:`end_output` needs.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> claim = begin_output(d, command="demo")
    >>> (d / INCOMPLETE_MARKER).is_file()
    True
    >>> _ = write_summary(d, {"status": "complete"}); end_output(claim, ok=True)
    >>> begin_output(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pipelines._io.OutputError: --out .../run holds the results of an earlier run ...
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out}: is an existing file, not a directory")
    if out.is_dir() and not (out / INCOMPLETE_MARKER).exists() and _holds_results(out):
        if not overwrite:
            raise OutputError(
                f"--out {out} holds the results of an earlier run (summary.json); pass "
                "--overwrite to replace them, or choose another directory"
            )
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        before = _snapshot(out)
        doc = {"command": command, "pid": os.getpid(), "overwrite": overwrite}
        atomic_write_text(out / INCOMPLETE_MARKER, json.dumps(doc) + "\n")
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot write there ({exc.strerror or exc})") from exc
    return OutputClaim(out, before, created)


def end_output(claim: OutputClaim, *, ok: bool) -> None:
    """Finish a run begun with :func:`begin_output`: on success remove the marker (the output
    set is complete); on failure keep it, unless the run changed nothing (then the directory
    is left as it was, and removed if the run created it)."""
    if not ok and _snapshot(claim.out) != claim.before:
        return
    (claim.out / INCOMPLETE_MARKER).unlink(missing_ok=True)
    if not ok and claim.created:
        try:
            claim.out.rmdir()
        except OSError:
            pass


def require_complete(directory: str | os.PathLike[str]) -> None:
    """Raise :class:`OutputError` when ``directory`` holds :data:`INCOMPLETE_MARKER`: a run
    writing it was interrupted (or is still running), so its files may mix two runs.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> require_complete(d)
    >>> _ = (d / INCOMPLETE_MARKER).write_text("{}")
    >>> require_complete(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pipelines._io.OutputError: .../...: incomplete output set ...
    """
    marker = Path(directory) / INCOMPLETE_MARKER
    if marker.exists():
        try:
            who = json.loads(marker.read_text(encoding="utf-8")).get("command") or "a run"
        except (ValueError, OSError, AttributeError):
            who = "a run"
        raise OutputError(
            f"{directory}: incomplete output set ({INCOMPLETE_MARKER} present: {who} writing "
            "it was interrupted or is still running); rerun that command into it"
        )
