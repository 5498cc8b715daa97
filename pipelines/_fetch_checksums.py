"""Verify a manifest entry in the data directory by size and SHA-256.

A gzip-stored file counts as valid when either its bytes match ``sha256`` or its decompressed
content matches ``upstream.sha256`` (two gzip encoders need not produce the same bytes); an
uncompressed alternative (``plain_path``) is checked against the upstream bytes.

Examples
--------
>>> import tempfile
>>> from pipelines._fetch_manifest import load_manifest
>>> file_status(tempfile.mkdtemp(), load_manifest()[0])
'missing'
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from pathlib import Path

from pipelines._fetch_entries import FileCheck, SourceFile

__all__ = ["file_status", "verify_file"]

_CHUNK = 1 << 16


def _sha256_file(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


class _BadGzip(Exception):
    """A ``.gz`` that does not decompress; the message says why."""


def _sha256_gzip_content(path: Path) -> tuple[int, str]:
    """Size and SHA-256 of the decompressed content; :class:`_BadGzip` when it cannot be read."""
    h = hashlib.sha256()
    n = 0
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
                n += len(chunk)
    except EOFError as exc:
        raise _BadGzip(f"truncated gzip stream after {n} decompressed bytes ({exc})") from exc
    except (OSError, zlib.error) as exc:
        raise _BadGzip(f"not a valid gzip file after {n} decompressed bytes ({exc})") from exc
    return n, h.hexdigest()


def _describe(want: tuple[int | None, str | None], got: tuple[int, str]) -> str:
    return f"expected {want[0]} bytes sha256 {want[1]}, got {got[0]} bytes sha256 {got[1]}"


def _verify_at(target: Path, rel: str, f: SourceFile, plain: bool) -> FileCheck:
    """Check one existing candidate file of ``f``."""
    if plain:  # an uncompressed copy of a gzip-stored entry: compare with upstream bytes
        got = _sha256_file(target)
        want = (f.upstream_size, f.upstream_sha256)
        if got == want:
            return FileCheck(f, "ok", rel)
        return FileCheck(f, "mismatch", rel, f"{rel}: {_describe(want, got)}")
    stored = (f.size, f.sha256)
    got_stored: tuple[int, str] | None = None
    if f.sha256 is not None:
        got_stored = _sha256_file(target)
        if got_stored == stored:
            return FileCheck(f, "ok", rel)
    if not f.gzip_stored:
        assert got_stored is not None
        return FileCheck(f, "mismatch", rel, f"{rel}: {_describe(stored, got_stored)}")
    want = (f.upstream_size, f.upstream_sha256)
    try:
        content = _sha256_gzip_content(target)
    except _BadGzip as exc:
        return FileCheck(f, "corrupt", rel, f"{rel}: {exc}")
    if content == want:
        return FileCheck(f, "ok", rel)
    return FileCheck(f, "mismatch", rel, f"{rel}: decompressed content {_describe(want, content)}")


def verify_file(data_dir: str | os.PathLike[str], f: SourceFile) -> FileCheck:
    """Verify one manifest entry in ``data_dir`` (the stored form, then a plain alternative).

    Examples
    --------
    >>> import tempfile
    >>> from pipelines._fetch_manifest import load_manifest
    >>> verify_file(tempfile.mkdtemp(), load_manifest()[0]).status
    'missing'
    """
    data_dir = Path(data_dir)
    first_bad: FileCheck | None = None
    candidates = [(f.path, False)] + ([(f.plain_path, True)] if f.plain_path else [])
    for rel, plain in candidates:
        assert rel is not None
        target = data_dir / rel
        if not target.is_file():
            continue
        res = _verify_at(target, rel, f, plain)
        if res.status == "ok":
            return res
        first_bad = first_bad or res
    return first_bad or FileCheck(f, "missing")


def file_status(data_dir: str | os.PathLike[str], f: SourceFile) -> str:
    """``"ok"``, ``"missing"``, ``"mismatch"`` or ``"corrupt"`` for one manifest entry.

    Examples
    --------
    >>> import tempfile
    >>> from pipelines._fetch_manifest import load_manifest
    >>> file_status(tempfile.mkdtemp(), load_manifest()[0])
    'missing'
    """
    return verify_file(data_dir, f).status
