"""``sim_bridge``'s atomic text write (``sim_bridge`` may not import ``mtl``, whose
``mtl/_atomic.py`` serves ``mtl`` and ``pipelines``): written under a fresh hidden name
beside the destination, then renamed over it. The temporary file is created with
``O_CREAT | O_EXCL`` and mode ``0o666``, so the kernel applies the user's umask (0644 as
usual), as a plain ``open()`` would.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``: all of it or, on any error, nothing.

    Examples
    --------
    >>> import tempfile
    >>> atomic_write_text(Path(tempfile.mkdtemp()) / "a.md", "hi").read_text()
    'hi'
    """
    path = Path(path)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:  # pragma: no cover - 64 random bits
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
