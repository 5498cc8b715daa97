"""Small output helpers shared by every command: atomic writes and ``summary.json``."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
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
