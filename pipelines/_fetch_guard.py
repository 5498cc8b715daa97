"""A fetch's hold on the data directory: its lock, and the partial files a killed fetch left.

A fetch holds a lock on the data directory; partial files left by a killed fetch are removed
when the next one starts (and on every exit path of a fetch).

Examples
--------
>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> with _fetch_lock(d):
...     (d / ".fetch.lock").read_text().isdigit()
True
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pipelines._fetch_entries import SourceFile
from pipelines._fetch_errors import DataDirBusyError

__all__ = ["clean_partials"]

_PARTIAL_GLOB = ".download.*.part"
_LOCK_NAME = ".fetch.lock"


def clean_partials(data_dir: str | os.PathLike[str], files: Iterable[SourceFile]) -> list[Path]:
    """Remove ``.download.*.part`` files left in the folders of ``files`` by a killed fetch.

    Only call this while holding the fetch lock (:func:`fetch` does): a partial file is then
    stale by construction, because no other fetch can be writing it.

    Returns
    -------
    list of pathlib.Path
        The files removed.

    Examples
    --------
    >>> import tempfile
    >>> from pipelines._fetch_manifest import load_manifest
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "swim").mkdir(), (d / "swim" / ".download.x1.part").write_text("half")
    >>> [p.name for p in clean_partials(d, load_manifest())]
    ['.download.x1.part']
    """
    data_dir = Path(data_dir)
    dirs = {data_dir} | {(data_dir / f.path).parent for f in files}
    removed: list[Path] = []
    for d in sorted(dirs):
        if not d.is_dir():
            continue
        for p in sorted(d.glob(_PARTIAL_GLOB)):
            try:
                p.unlink()
                removed.append(p)
            except FileNotFoundError:  # pragma: no cover - gone meanwhile
                pass
    return removed


@contextmanager
def _fetch_lock(data_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``data_dir`` (POSIX ``flock``; a no-op elsewhere)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    lock_path = data_dir / _LOCK_NAME
    with open(lock_path, "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            raise DataDirBusyError(
                f"{data_dir}: another `straggler data fetch` (pid {holder}) is writing into this "
                f"data directory; wait for it or stop it (lock file {lock_path})"
            ) from None
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(str(os.getpid()))
            fh.flush()
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
