"""Small output helpers shared by every command: atomic writes and ``summary.json``."""

from __future__ import annotations

import json
import math
import os
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

    A crash midway never leaves a truncated file behind; the file gets the user's umask
    (0644 as usual). The one implementation is :func:`mtl._atomic.atomic_write_text`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_text(d / "a.txt", "hi").read_text()
    'hi'
    """
    # imported when used: importing the mtl package loads pandas and scipy (begin_output,
    # which claims a directory before every guarded command, writes with sim_bridge's)
    from mtl._atomic import atomic_write_text as write

    return write(path, text)


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

#: Locked (``flock``) by the process writing an output directory for as long as it runs; the
#: kernel releases it when that process ends, however it ends. It names the holder.
LOCK_FILE = ".straggler-lock"


class OutputError(ValueError):
    """An ``--out`` directory cannot be used (a file, not writable, holds earlier results) or
    holds an interrupted, half-written output set."""


def _snapshot(out: Path) -> dict[str, tuple[int, int]]:
    return {
        p.name: (p.stat().st_size, p.stat().st_mtime_ns)
        for p in out.iterdir()
        if p.name not in (INCOMPLETE_MARKER, LOCK_FILE)
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
    lock_fd: int | None = None


def _lock(out: Path, command: str) -> int | None:
    """Take the exclusive lock of ``out`` (``None`` where ``fcntl`` does not exist) or raise
    :class:`OutputError` naming the process that holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
        os.close(fd)
        raise OutputError(
            f"--out {out} is in use by {holder}; wait for it to finish or choose another directory"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} (straggler {command})".encode(), 0)
    return fd


def begin_output(
    out: str | os.PathLike[str], *, overwrite: bool = False, command: str = ""
) -> OutputClaim:
    """Claim ``out`` for one run: check it, then write :data:`INCOMPLETE_MARKER`.

    Refused (:class:`OutputError`, the message names ``--out`` and the path): ``out`` is an
    existing file; ``out`` is not writable; another process holds its lock
    (:data:`LOCK_FILE`, the message names that process); ``out`` holds the finished results
    of an earlier run (a ``summary.json``) and ``overwrite`` is false. A directory left by an
    interrupted run (marker present) may be written again. The lock is held until
    :func:`end_output` (or the process's end). Returns what :func:`end_output` needs.

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
    created = not out.exists()
    fd = None
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = _lock(out, command)
        if not overwrite and not (out / INCOMPLETE_MARKER).exists() and _holds_results(out):
            raise OutputError(
                f"--out {out} holds the results of an earlier run (summary.json); pass "
                "--overwrite to replace them, or choose another directory"
            )
        before = _snapshot(out)
        doc = {"command": command, "pid": os.getpid(), "overwrite": overwrite}
        # sim_bridge's writer (``out`` exists): mtl's would import pandas, hence pyarrow,
        # before the command runs, and a streamed simulate sets Arrow's allocator only
        # before that import (sim_bridge.lean_allocators)
        from sim_bridge._atomic import atomic_write_text as write_marker

        write_marker(out / INCOMPLETE_MARKER, json.dumps(doc) + "\n")
    except OSError as exc:
        if fd is not None:
            os.close(fd)
        raise OutputError(f"--out {out}: cannot write there ({exc.strerror or exc})") from exc
    except OutputError:
        if fd is not None:
            os.close(fd)
        raise
    return OutputClaim(out, before, created, fd)


def end_output(claim: OutputClaim, *, ok: bool) -> None:
    """Finish a run begun with :func:`begin_output`: on success remove the marker (the output
    set is complete); on failure keep it, unless the run changed nothing (then the directory
    is left as it was, and removed if the run created it). Releases the lock."""
    try:
        if not ok and _snapshot(claim.out) != claim.before:
            return
        (claim.out / INCOMPLETE_MARKER).unlink(missing_ok=True)
        if not ok and claim.created:
            (claim.out / LOCK_FILE).unlink(missing_ok=True)
            try:
                claim.out.rmdir()
            except OSError:
                pass
    finally:
        if claim.lock_fd is not None:
            os.close(claim.lock_fd)


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
    summary = Path(directory) / "summary.json"
    if summary.is_file():
        try:
            s = json.loads(summary.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            s = {}
        if isinstance(s, dict) and (s.get("complete") is False or s.get("status") == "incomplete"):
            why = s.get("stop_reason") or s.get("message") or "stopped early"
            raise OutputError(
                f"{summary}: the run that wrote it did not finish ({why}); its files hold only "
                "part of the run. Rerun that command into it"
            )
