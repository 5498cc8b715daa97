"""Download the public datasets listed in ``data/sources.json`` and verify their SHA-256.

Every file is streamed to a temporary file in its destination folder, hashed on the way, and
renamed into place only when its size and SHA-256 match the manifest, so a failed or tampered
download never leaves a corrupt file where the simulator would read it. Files already present
with the right sum are skipped.

Files stored gzip-compressed (``*.gz`` entries with an ``upstream`` record) are served
uncompressed by their upstream URL: the download is checked against the upstream sum, then
compressed deterministically (``mtime=0``). Such a file counts as valid when either its bytes
match ``sha256`` or its decompressed content matches ``upstream.sha256`` (two gzip encoders
need not produce the same bytes). With ``base_url`` (a mirror holding the data directory
layout, e.g. ``../shared/data`` served over HTTP) the stored bytes themselves are downloaded
and checked against ``sha256``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines._datadir import checkout_root

_CHUNK = 1 << 16


class ChecksumMismatchError(ValueError):
    """A downloaded or present file does not have the size/SHA-256 of the manifest."""


class DownloadError(OSError):
    """A file could not be downloaded (network error, HTTP error status)."""


@dataclass(frozen=True)
class SourceFile:
    """One manifest entry: where a file comes from and what it must hash to.

    Attributes
    ----------
    name : str
        Short unique name (``--only`` selects by it or by the folder).
    path : str
        Path relative to the data directory, ``/``-separated.
    url : str
        Upstream URL.
    size, sha256 : int, str
        Size and SHA-256 of the file as stored in the data directory.
    upstream_size, upstream_sha256 : int or None, str or None
        For gzip-stored files: size and SHA-256 of the uncompressed upstream file.
    """

    name: str
    path: str
    url: str
    size: int
    sha256: str
    upstream_size: int | None = None
    upstream_sha256: str | None = None

    @property
    def folder(self) -> str:
        """The dataset folder (first path component)."""
        return self.path.split("/", 1)[0]

    @property
    def gzip_stored(self) -> bool:
        """Whether the file is stored gzip-compressed while upstream serves it plain."""
        return self.upstream_sha256 is not None


def manifest_path() -> Path:
    """The manifest ``data/sources.json`` of this checkout."""
    return checkout_root() / "data" / "sources.json"


def load_manifest(path: str | os.PathLike[str] | None = None) -> list[SourceFile]:
    """Read and validate the dataset manifest.

    Parameters
    ----------
    path : path-like, optional
        Defaults to :func:`manifest_path`.

    Returns
    -------
    list of SourceFile

    Raises
    ------
    FileNotFoundError
        When the manifest is missing (for example in a non-editable install).
    ValueError
        When an entry lacks a field or has a malformed one; the message names the entry.

    Examples
    --------
    >>> files = load_manifest()
    >>> sorted({f.folder for f in files})[:2]
    ['alibaba-v2017-batch-task', 'alibaba-v2017-cloudsimpy-jobs']
    """
    path = Path(path) if path is not None else manifest_path()
    if not path.is_file():
        raise FileNotFoundError(
            f"dataset manifest not found: {path} (it ships in the repository's data/ folder; "
            "run from a checkout installed with pip install -e)"
        )
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    entries = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected an object with a 'files' list")
    out: list[SourceFile] = []
    names: set[str] = set()
    for i, e in enumerate(entries):
        out.append(_parse_entry(path, i, e))
        if out[-1].name in names:
            raise ValueError(f"{path}: files[{i}]: duplicate name {out[-1].name!r}")
        names.add(out[-1].name)
    return out


def _parse_entry(path: Path, i: int, e: Any) -> SourceFile:
    where = f"{path}: files[{i}]"
    if not isinstance(e, dict):
        raise ValueError(f"{where}: expected an object, got {e!r}")
    for key, typ in (("name", str), ("path", str), ("url", str), ("size", int), ("sha256", str)):
        if not isinstance(e.get(key), typ):
            raise ValueError(
                f"{where}: field {key!r} missing or not {typ.__name__}: {e.get(key)!r}"
            )
    rel = e["path"]
    if rel.startswith("/") or ".." in rel.split("/") or "\\" in rel:
        raise ValueError(f"{where}: path must be relative inside the data directory: {rel!r}")
    if len(e["sha256"]) != 64:
        raise ValueError(f"{where}: sha256 must be 64 hex digits: {e['sha256']!r}")
    up = e.get("upstream")
    if up is not None and (not isinstance(up, dict) or up.get("compression") != "gzip"):
        raise ValueError(f"{where}: upstream must be {{'compression': 'gzip', ...}}: {up!r}")
    return SourceFile(
        name=e["name"],
        path=rel,
        url=e["url"],
        size=e["size"],
        sha256=e["sha256"].lower(),
        upstream_size=None if up is None else int(up["size"]),
        upstream_sha256=None if up is None else str(up["sha256"]).lower(),
    )


def select(files: Sequence[SourceFile], only: Iterable[str] | None) -> list[SourceFile]:
    """Keep the entries whose name or folder is in ``only`` (all when ``only`` is empty).

    Raises
    ------
    ValueError
        Naming an ``only`` value that matches nothing, with the valid choices.

    Examples
    --------
    >>> [f.name for f in select(load_manifest(), ["swim-license"])]
    ['swim-license']
    """
    wanted = [w for w in (only or []) if w]
    if not wanted:
        return list(files)
    for w in wanted:
        if not any(w in (f.name, f.folder) for f in files):
            choices = sorted({f.folder for f in files} | {f.name for f in files})
            raise ValueError(f"--only {w!r} matches no dataset; choose from: {', '.join(choices)}")
    return [f for f in files if f.name in wanted or f.folder in wanted]


def _sha256_file(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
            n += len(chunk)
    return n, h.hexdigest()


def _sha256_gzip_content(path: Path) -> tuple[int, str] | None:
    h = hashlib.sha256()
    n = 0
    try:
        with gzip.open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                h.update(chunk)
                n += len(chunk)
    except (OSError, EOFError):
        return None
    return n, h.hexdigest()


def file_status(data_dir: str | os.PathLike[str], f: SourceFile) -> str:
    """``"ok"``, ``"missing"`` or ``"mismatch"`` for one manifest entry in ``data_dir``.

    Examples
    --------
    >>> import tempfile
    >>> file_status(tempfile.mkdtemp(), load_manifest()[0])
    'missing'
    """
    target = Path(data_dir) / f.path
    if not target.is_file():
        return "missing"
    if _sha256_file(target) == (f.size, f.sha256):
        return "ok"
    if f.gzip_stored and _sha256_gzip_content(target) == (f.upstream_size, f.upstream_sha256):
        return "ok"
    return "mismatch"


def _download(url: str, dest_dir: Path, label: str, expected_size: int | None, timeout: float):
    """Stream ``url`` into a temporary file in ``dest_dir``; return (tmp path, size, sha256)."""
    fd, tmp = tempfile.mkstemp(dir=dest_dir, prefix=".download.", suffix=".part")
    h = hashlib.sha256()
    n = 0
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "straggler-mtl data fetch"})
        with urllib.request.urlopen(req, timeout=timeout) as resp, os.fdopen(fd, "wb") as out:
            total = resp.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else expected_size
            from tqdm.auto import tqdm

            with tqdm(total=total, unit="B", unit_scale=True, desc=label, leave=False) as bar:
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    h.update(chunk)
                    n += len(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError) as exc:
        Path(tmp).unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"{label}: download from {url} failed: {reason}") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp), n, h.hexdigest()


def fetch_file(
    data_dir: str | os.PathLike[str],
    f: SourceFile,
    base_url: str | None = None,
    timeout: float = 60.0,
) -> str:
    """Make ``data_dir / f.path`` present and verified; return what happened.

    Returns
    -------
    str
        ``"present"`` (already there with the right sum, nothing downloaded),
        ``"downloaded"`` or ``"replaced"`` (a file with a wrong sum was there and has been
        replaced, atomically, by a verified download).

    Raises
    ------
    ChecksumMismatchError
        The download does not match the manifest; the message names the file, the URL, the
        expected and the received size/SHA-256. The destination is left untouched.
    DownloadError
        Network or HTTP failure; the destination is left untouched.
    """
    data_dir = Path(data_dir)
    target = data_dir / f.path
    before = file_status(data_dir, f)
    if before == "ok":
        return "present"
    target.parent.mkdir(parents=True, exist_ok=True)
    if base_url:
        url = base_url.rstrip("/") + "/" + urllib.parse.quote(f.path)
        want = (f.size, f.sha256)
    else:
        url = f.url
        want = (f.upstream_size, f.upstream_sha256) if f.gzip_stored else (f.size, f.sha256)
    tmp, n, digest = _download(url, target.parent, f.path, want[0], timeout)
    try:
        if (n, digest) != want:
            raise ChecksumMismatchError(
                f"{f.path}: checksum mismatch for {url}: expected {want[0]} bytes sha256 "
                f"{want[1]}, got {n} bytes sha256 {digest}; nothing was written"
            )
        if f.gzip_stored and not base_url:
            tmp = _gzip_deterministic(tmp, target.parent)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return "replaced" if before == "mismatch" else "downloaded"


def _gzip_deterministic(plain: Path, dest_dir: Path) -> Path:
    fd, gz = tempfile.mkstemp(dir=dest_dir, prefix=".download.", suffix=".gz.part")
    try:
        with open(plain, "rb") as src, os.fdopen(fd, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as z:
                while chunk := src.read(_CHUNK):
                    z.write(chunk)
    except BaseException:
        Path(gz).unlink(missing_ok=True)
        raise
    finally:
        plain.unlink(missing_ok=True)
    return Path(gz)


def fetch(
    data_dir: str | os.PathLike[str],
    only: Iterable[str] | None = None,
    base_url: str | None = None,
    manifest: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
) -> dict[str, str]:
    """Fetch every selected manifest file into ``data_dir``.

    Files are processed independently: one failure does not stop the others. After all were
    tried, the first failure is re-raised with the list of every failed file.

    Returns
    -------
    dict
        ``path -> "present" | "downloaded" | "replaced"``.
    """
    files = select(load_manifest(manifest), only)
    results: dict[str, str] = {}
    errors: list[Exception] = []
    for f in files:
        try:
            results[f.path] = fetch_file(data_dir, f, base_url=base_url, timeout=timeout)
        except (ChecksumMismatchError, DownloadError) as exc:
            errors.append(exc)
    if errors:
        msg = "; ".join(str(e) for e in errors)
        raise type(errors[0])(f"{len(errors)} of {len(files)} file(s) failed: {msg}")
    return results


def check(
    data_dir: str | os.PathLike[str],
    only: Iterable[str] | None = None,
    manifest: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """``path -> "ok" | "missing" | "mismatch"`` for every selected manifest file.

    Examples
    --------
    >>> import tempfile
    >>> set(check(tempfile.mkdtemp()).values())
    {'missing'}
    """
    return {f.path: file_status(data_dir, f) for f in select(load_manifest(manifest), only)}
