"""Atomic file writes whose results carry the user's umask (0644 as usual, not 0600).

A file is written under a fresh hidden name beside its destination and renamed over it, so a
reader sees the old file or the new one, never half of one; a failure removes the temporary
file and leaves the old one as it was.

The temporary file is created by ``os.open(..., O_CREAT | O_EXCL, 0o666)`` under a random
name: the kernel applies the process umask as it would for a plain ``open()``. (``mkstemp``
creates 0600 files, and reading the umask with ``os.umask(0)`` then restoring it is not
thread-safe.) This module is the one implementation for ``mtl`` and ``pipelines``;
``sim_bridge``, which may not import ``mtl``, has its own text-only twin in
``sim_bridge/_atomic.py``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_bytes", "atomic_write_text", "create_temp_file"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def create_temp_file(
    directory: str | os.PathLike[str], prefix: str = ".tmp.", suffix: str = ""
) -> tuple[int, Path]:
    """Create a new empty file ``<directory>/<prefix><random><suffix>`` open for writing.

    Its mode is ``0o666`` minus the process umask, as a plain ``open()`` would give.

    Parameters
    ----------
    directory : path-like
        Where to create it (the destination's folder, so a rename is atomic).
    prefix, suffix : str
        Around 16 random hex digits.

    Returns
    -------
    (int, pathlib.Path)
        The open file descriptor (the caller closes it) and the file's path.

    Examples
    --------
    >>> import tempfile
    >>> fd, p = create_temp_file(tempfile.mkdtemp(), ".x.", ".part")
    >>> os.close(fd); p.name.startswith(".x.") and p.name.endswith(".part")
    True
    """
    directory = Path(directory)
    for _ in range(100):
        path = directory / f"{prefix}{secrets.token_hex(8)}{suffix}"
        try:
            return os.open(path, _FLAGS, 0o666), path
        except FileExistsError:  # pragma: no cover - 64 random bits
            continue
    raise FileExistsError(f"no free temporary name in {directory} after 100 tries")


@contextmanager
def atomic_path(
    path: str | os.PathLike[str], suffix: str = ".tmp", prefix: str | None = None
) -> Iterator[Path]:
    """A temporary path beside ``path``; renamed over ``path`` when the block succeeds.

    For writers that take a file name (``np.savez``, ``fig.savefig``, ``shutil.copyfile``).
    The file exists (empty, with the umask's mode) when the block starts; on an exception it
    is removed and ``path`` is left as it was. Missing parent folders are created.

    Parameters
    ----------
    path : path-like
        The destination.
    suffix : str, default ".tmp"
        End of the temporary name (e.g. ``".png"`` for a writer that picks the format from it).
    prefix : str, optional
        Start of the temporary name; default ``".<name of path>."``.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with atomic_path(d / "a.txt") as tmp:
    ...     _ = tmp.write_text("hi")
    >>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('hi', ['a.txt'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = create_temp_file(path.parent, f".{path.name}." if prefix is None else prefix, suffix)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see the module); return ``path``.

    Examples
    --------
    >>> import tempfile
    >>> atomic_write_bytes(Path(tempfile.mkdtemp()) / "a.bin", b"\\x00\\x01").read_bytes()
    b'\\x00\\x01'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = create_temp_file(path.parent, f".{path.name}.", ".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see the module); return ``path``.

    A crash midway never leaves a truncated file behind.

    Examples
    --------
    >>> import tempfile
    >>> atomic_write_text(Path(tempfile.mkdtemp()) / "a.txt", "hi").read_text()
    'hi'
    """
    return atomic_write_bytes(path, text.encode("utf-8"))
