"""Download one manifest entry: stream, hash on the way, verify, then rename into place.

Every file is streamed to a temporary ``.download.*.part`` file in its destination folder (made
by :func:`mtl._atomic.create_temp_file`, so it follows the user's umask), hashed on the way,
and renamed into place only when its size and SHA-256 match the manifest, so a failed or
tampered download never leaves a corrupt file where a reader would look. Files already present
and verified are skipped, so an interrupted fetch resumes.

A gzip-stored file is served uncompressed by its upstream URL: the download is checked against
the upstream sum, then compressed deterministically (level 9, ``mtime=0``). With ``base_url``
(a mirror holding the data directory layout, e.g. ``../shared/data`` served over HTTP) the
stored bytes themselves are downloaded and checked against ``sha256`` (FlowBench: their
decompressed content against the manifest).

Examples
--------
>>> import hashlib, tempfile
>>> from pipelines._fetch_entries import SourceFile
>>> mirror, data = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
>>> _ = (mirror / "a.txt").write_bytes(b"hi")
>>> sha = hashlib.sha256(b"hi").hexdigest()
>>> f = SourceFile("a", "a.txt", (mirror / "a.txt").as_uri(), 2, sha)
>>> fetch_file(data, f), fetch_file(data, f), (data / "a.txt").read_bytes()
('downloaded', 'present', b'hi')
"""

from __future__ import annotations

import gzip
import hashlib
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from pipelines._fetch_checksums import (
    _CHUNK,
    _BadGzip,
    _describe,
    _sha256_gzip_content,
    verify_file,
)
from pipelines._fetch_entries import SourceFile
from pipelines._fetch_errors import ChecksumMismatchError, DownloadError

__all__ = ["fetch_file"]

_BIG_FILE = 4 << 20  # files above this size get their own byte progress bar


def _download(
    url: str, dest_dir: Path, label: str, expected_size: int | None, timeout: float
) -> tuple[Path, int, str]:
    """Stream ``url`` into a temporary file in ``dest_dir``; return (tmp path, size, sha256)."""
    from mtl._atomic import create_temp_file  # imported when used: mtl loads sklearn

    fd, tmp = create_temp_file(dest_dir, ".download.", ".part")
    h = hashlib.sha256()
    n = 0
    try:
        req = urllib.request.Request(url, headers={"User-Agent": "straggler-mtl data fetch"})
        with urllib.request.urlopen(req, timeout=timeout) as resp, os.fdopen(fd, "wb") as out:
            total = resp.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else expected_size
            from tqdm.auto import tqdm

            small = (total or 0) < _BIG_FILE
            with tqdm(
                total=total, unit="B", unit_scale=True, desc=label, leave=False, disable=small
            ) as bar:
                while chunk := resp.read(_CHUNK):
                    out.write(chunk)
                    h.update(chunk)
                    n += len(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, OSError) as exc:
        Path(tmp).unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        if isinstance(exc, urllib.error.HTTPError):
            reason = f"HTTP {exc.code} {exc.reason}"
        raise DownloadError(f"{label}: download from {url} failed: {reason}") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp), n, h.hexdigest()


def _fetch_one(
    data_dir: Path, f: SourceFile, base_url: str | None, timeout: float
) -> tuple[str, int]:
    """:func:`fetch_file` that also returns the number of bytes downloaded."""
    before = verify_file(data_dir, f)
    if before.status == "ok":
        return "present", 0
    target = data_dir / f.path
    target.parent.mkdir(parents=True, exist_ok=True)
    check_content = False  # verify the downloaded .gz by its decompressed content
    if base_url:
        url = base_url.rstrip("/") + "/" + urllib.parse.quote(f.path)
        if f.sha256 is not None:
            want: tuple[int | None, str | None] = (f.size, f.sha256)
        else:
            want, check_content = (f.upstream_size, f.upstream_sha256), True
    else:
        url = f.url
        want = (f.upstream_size, f.upstream_sha256) if f.gzip_stored else (f.size, f.sha256)
    tmp, n, digest = _download(
        url, target.parent, f.path, None if check_content else want[0], timeout
    )
    try:
        got: tuple[int, str] = (n, digest)
        what = ""
        if check_content:
            try:
                got = _sha256_gzip_content(tmp)
            except _BadGzip as exc:
                raise ChecksumMismatchError(
                    f"{f.path}: download from {url} is not usable: {exc}; nothing was written"
                ) from None
            what = "decompressed content "
        if got != want:
            raise ChecksumMismatchError(
                f"{f.path}: checksum mismatch for {url}: {what}{_describe(want, got)}; "
                "nothing was written"
            )
        if f.gzip_stored and not base_url:
            # FlowBench's copies carry the file name in the gzip header (as the shared copy).
            name = Path(f.plain_path).name if f.plain_path else ""
            tmp = _gzip_deterministic(tmp, target.parent, name)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    if before.found and before.found != f.path:  # a bad plain alternative: the .gz replaces it
        (data_dir / before.found).unlink(missing_ok=True)
    return ("replaced" if before.status != "missing" else "downloaded"), n


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
        ``"downloaded"`` or ``"replaced"`` (a file with a wrong sum or a corrupt ``.gz`` was
        there and has been replaced, atomically, by a verified download).

    Raises
    ------
    ChecksumMismatchError
        The download does not match the manifest; the message names the file, the URL, the
        expected and the received size/SHA-256. The destination is left untouched.
    DownloadError
        Network or HTTP failure; the destination is left untouched.
    """
    return _fetch_one(Path(data_dir), f, base_url, timeout)[0]


def _gzip_deterministic(plain: Path, dest_dir: Path, name: str = "") -> Path:
    """Compress ``plain`` (then delete it) at level 9, ``mtime=0``, header file name ``name``."""
    from mtl._atomic import create_temp_file  # imported when used: mtl loads sklearn

    fd, gz = create_temp_file(dest_dir, ".download.", ".gz.part")
    try:
        with open(plain, "rb") as src, os.fdopen(fd, "wb") as raw:
            with gzip.GzipFile(
                filename=name, mode="wb", fileobj=raw, compresslevel=9, mtime=0
            ) as z:
                while chunk := src.read(_CHUNK):
                    z.write(chunk)
    except BaseException:
        Path(gz).unlink(missing_ok=True)
        raise
    finally:
        plain.unlink(missing_ok=True)
    return Path(gz)
