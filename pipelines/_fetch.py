"""Download the public datasets and verify their SHA-256 (``straggler data fetch|check``).

Two manifests list the files. ``data/sources.json`` (SWIM, Alibaba) describes each file as
stored in the data directory. ``pipelines/data/flowbench_sources.tsv``, derived from
FlowBench's upstream ``MANIFEST.tsv`` (path, bytes, sha256; url = a pinned base + path),
lists its 2,122 files by their uncompressed upstream bytes; they live under ``flowbench/`` in
the data directory, the run CSVs gzip-compressed (``.csv.gz``), and a plain ``.csv`` whose
bytes match is accepted too.

Every file is streamed to a temporary ``.download.*.part`` file in its destination folder,
hashed on the way, and renamed into place only when its size and SHA-256 match the manifest, so
a failed or tampered download never leaves a corrupt file where a reader would look. Files
already present and verified are skipped, so an interrupted fetch resumes. A fetch holds a lock
on the data directory; partial files left by a killed fetch are removed when the next one starts
(and on every exit path of a fetch).

Files stored gzip-compressed (``*.gz`` entries with an ``upstream`` record) are served
uncompressed by their upstream URL: the download is checked against the upstream sum, then
compressed deterministically (level 9, ``mtime=0``). Such a file counts as valid when either
its bytes match ``sha256`` or its decompressed content matches ``upstream.sha256`` (two gzip
encoders need not produce the same bytes). With ``base_url`` (a mirror holding the data
directory layout, e.g. ``../shared/data`` served over HTTP) the stored bytes themselves are
downloaded and checked against ``sha256`` (FlowBench: their decompressed content against the
manifest).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines._datadir import checkout_root

_CHUNK = 1 << 16

#: Data-directory folder of FlowBench (``flowbench/parsed/<anomaly>/<workflow>-runNNNN.csv.gz``).
FLOWBENCH_FOLDER = "flowbench"

#: Header of FlowBench's ``MANIFEST.tsv``.
FLOWBENCH_COLUMNS = ("path", "bytes", "sha256", "url")

_PACKAGE_DATA = Path(__file__).resolve().parent / "data"
_PARTIAL_GLOB = ".download.*.part"
_LOCK_NAME = ".fetch.lock"
_RUN_RE = re.compile(r"^(?P<workflow>.+)-run\d+\.csv$")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_BIG_FILE = 4 << 20  # files above this size get their own byte progress bar


class ChecksumMismatchError(ValueError):
    """A downloaded or present file does not have the size/SHA-256 of the manifest."""


class DownloadError(OSError):
    """A file could not be downloaded (network error, HTTP error status)."""


class DataDirBusyError(OSError):
    """Another ``straggler data fetch`` holds the lock on the data directory."""


@dataclass(frozen=True)
class SourceFile:
    """One manifest entry: where a file comes from and what it must hash to.

    Attributes
    ----------
    name : str
        Short unique name (``--only`` selects by it, by the folder or by ``folder/subset``).
    path : str
        Path relative to the data directory, ``/``-separated.
    url : str
        Upstream URL.
    size, sha256 : int or None, str or None
        Size and SHA-256 of the file as stored in the data directory; ``None`` when only the
        upstream content is pinned (FlowBench's gzip-stored CSVs).
    upstream_size, upstream_sha256 : int or None, str or None
        For gzip-stored files: size and SHA-256 of the uncompressed upstream file.
    accept_plain : bool
        A gzip-stored file may also be present uncompressed (``path`` without ``.gz``).
    subset : str or None
        A finer group inside the folder (FlowBench: the workflow), used to select and to
        summarise what is absent.
    """

    name: str
    path: str
    url: str
    size: int | None
    sha256: str | None
    upstream_size: int | None = None
    upstream_sha256: str | None = None
    accept_plain: bool = False
    subset: str | None = None

    @property
    def folder(self) -> str:
        """The dataset folder (first path component)."""
        return self.path.split("/", 1)[0]

    @property
    def gzip_stored(self) -> bool:
        """Whether the file is stored gzip-compressed while upstream serves it plain."""
        return self.upstream_sha256 is not None

    @property
    def plain_path(self) -> str | None:
        """The uncompressed alternative path accepted for this entry, if any."""
        if self.accept_plain and self.path.endswith(".gz"):
            return self.path[: -len(".gz")]
        return None

    def matches(self, key: str) -> bool:
        """Whether ``key`` names this file, its folder or its ``folder/subset``."""
        return key in (self.name, self.folder) or (
            self.subset is not None and key == f"{self.folder}/{self.subset}"
        )


@dataclass(frozen=True)
class FileCheck:
    """What :func:`verify_file` found for one manifest entry.

    Attributes
    ----------
    file : SourceFile
    status : str
        ``"ok"``, ``"missing"``, ``"mismatch"`` (wrong size/SHA-256) or ``"corrupt"`` (a
        ``.gz`` that does not decompress).
    found : str or None
        The path (relative to the data directory) that was examined, ``None`` when absent.
    detail : str
        Empty when ok or missing; otherwise what is wrong, naming the file.
    """

    file: SourceFile
    status: str
    found: str | None = None
    detail: str = ""


def manifest_path() -> Path:
    """The manifest ``data/sources.json`` of this checkout (SWIM, Alibaba)."""
    return checkout_root() / "data" / "sources.json"


def flowbench_manifest_path() -> Path:
    """FlowBench's upstream ``MANIFEST.tsv`` as shipped in the package."""
    return _PACKAGE_DATA / "flowbench_sources.tsv"


def default_manifests() -> list[Path]:
    """The manifests read when none is given: ``sources.json`` and the FlowBench TSV."""
    return [manifest_path(), flowbench_manifest_path()]


def load_manifest(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
) -> list[SourceFile]:
    """Read and validate dataset manifests.

    Parameters
    ----------
    path : path-like or sequence of path-likes, optional
        Defaults to :func:`default_manifests`. A ``.tsv`` is read as a FlowBench manifest
        (:func:`load_flowbench_manifest`), anything else as a ``sources.json``.

    Returns
    -------
    list of SourceFile

    Raises
    ------
    FileNotFoundError
        When a manifest is missing (for example ``data/sources.json`` in a non-editable install).
    ValueError
        When an entry lacks a field or has a malformed one, or two entries share a name; the
        message names the manifest and the entry.

    Examples
    --------
    >>> files = load_manifest()
    >>> sorted({f.folder for f in files})[:2]
    ['alibaba-v2017-batch-task', 'alibaba-v2017-cloudsimpy-jobs']
    >>> sum(f.folder == "flowbench" for f in files)
    2122
    """
    if path is None:
        paths: list[Path] = default_manifests()
    elif isinstance(path, (str, os.PathLike)):
        paths = [Path(path)]
    else:
        paths = [Path(p) for p in path]
    out: list[SourceFile] = []
    names: dict[str, Path] = {}
    for p in paths:
        part = load_flowbench_manifest(p) if p.suffix == ".tsv" else _load_sources_json(p)
        for f in part:
            if f.name in names:
                raise ValueError(f"{p}: duplicate name {f.name!r} (also in {names[f.name]})")
            names[f.name] = p
        out.extend(part)
    return out


def _load_sources_json(path: Path) -> list[SourceFile]:
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


def _check_relative(where: str, rel: str) -> None:
    if not rel or rel.startswith("/") or ".." in rel.split("/") or "\\" in rel:
        raise ValueError(f"{where}: path must be relative inside the data directory: {rel!r}")


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
    _check_relative(where, rel)
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


def load_flowbench_manifest(
    path: str | os.PathLike[str] | None = None, folder: str = FLOWBENCH_FOLDER
) -> list[SourceFile]:
    """Read FlowBench's ``MANIFEST.tsv`` (``path bytes sha256 url``, sums of upstream bytes).

    Each upstream ``parsed/<anomaly>/<workflow>-runNNNN.csv`` becomes an entry stored at
    ``<folder>/parsed/<anomaly>/<workflow>-runNNNN.csv.gz`` (a plain ``.csv`` is accepted too)
    whose subset is the workflow; other files (``parsed/README.md``) are stored as served.

    Parameters
    ----------
    path : path-like, optional
        Defaults to :func:`flowbench_manifest_path`.
    folder : str
        The data-directory folder the files go to.

    Raises
    ------
    FileNotFoundError
        When the manifest is missing.
    ValueError
        On a wrong header, a row without four fields, a bad size, sum, path or URL, or a
        repeated path; the message names the file, the line and the column.

    Examples
    --------
    >>> fb = load_flowbench_manifest()
    >>> fb[1].path, fb[1].subset, fb[1].gzip_stored
    ('flowbench/parsed/cpu_2/1000-genome-run0059.csv.gz', '1000-genome', True)
    >>> sorted({f.subset for f in fb if f.subset})
    ['1000-genome', 'casa-wind-full', 'montage', 'predict-future-sales']
    """
    path = Path(path) if path is not None else flowbench_manifest_path()
    if not path.is_file():
        raise FileNotFoundError(f"FlowBench manifest not found: {path}")
    lines = path.read_text(encoding="utf-8").splitlines()
    # the shipped list is derived from upstream's manifest, not a copy of it: a first line
    # "# url_base<TAB>BASE" and columns path, bytes, sha256 (url = BASE + path)
    base, first = None, 0
    if lines and lines[0].startswith("# url_base\t"):
        base, first = lines[0].split("\t", 1)[1], 1
    columns = FLOWBENCH_COLUMNS[:3] if base is not None else FLOWBENCH_COLUMNS
    if len(lines) <= first or tuple(lines[first].split("\t")) != columns:
        got = lines[first] if len(lines) > first else ""
        raise ValueError(
            f"{path}: line {first + 1}: header must be {chr(9).join(columns)!r}, got {got!r}"
        )
    out: list[SourceFile] = []
    seen: set[str] = set()
    for lineno, line in enumerate(lines[first + 1 :], start=first + 2):
        if not line.strip():
            continue
        where = f"{path}: line {lineno}"
        cells = line.split("\t")
        if len(cells) != len(columns):
            raise ValueError(
                f"{where}: expected {len(columns)} tab-separated fields, got {len(cells)}"
            )
        if base is not None:
            cells.append(base + cells[0])
        rel, size_s, sha, url = cells
        _check_relative(f"{where}: column 'path'", rel)
        if not size_s.isdigit():
            raise ValueError(f"{where}: column 'bytes' is not a byte count: {size_s!r}")
        if not _HEX64.match(sha):
            raise ValueError(f"{where}: column 'sha256' is not 64 hex digits: {sha!r}")
        if not url.startswith(("http://", "https://", "file:")):
            raise ValueError(f"{where}: column 'url' is not an http(s) URL: {url!r}")
        if rel in seen:
            raise ValueError(f"{where}: column 'path' repeats {rel!r}")
        seen.add(rel)
        name = f"{folder}/{rel}"
        run = _RUN_RE.match(rel.rsplit("/", 1)[-1])
        if run:
            out.append(
                SourceFile(
                    name=name,
                    path=f"{folder}/{rel}.gz",
                    url=url,
                    size=None,
                    sha256=None,
                    upstream_size=int(size_s),
                    upstream_sha256=sha.lower(),
                    accept_plain=True,
                    subset=run["workflow"],
                )
            )
        else:
            out.append(
                SourceFile(name=name, path=name, url=url, size=int(size_s), sha256=sha.lower())
            )
    return out


def select(files: Sequence[SourceFile], only: Iterable[str] | None) -> list[SourceFile]:
    """Keep the entries named by ``only`` (all when ``only`` is empty).

    A value names a file (its ``name``), a folder (``swim``, ``flowbench``) or a subset of a
    folder (``flowbench/montage``).

    Raises
    ------
    ValueError
        Naming an ``only`` value that matches nothing, with the valid choices.

    Examples
    --------
    >>> [f.name for f in select(load_manifest(), ["swim-license"])]
    ['swim-license']
    >>> len(select(load_manifest(), ["flowbench/montage"]))
    320
    """
    wanted = [w for w in (only or []) if w]
    if not wanted:
        return list(files)
    _require_matches(files, wanted, "--only")
    return [f for f in files if any(f.matches(w) for w in wanted)]


def _require_matches(files: Sequence[SourceFile], keys: Iterable[str], option: str) -> None:
    for w in keys:
        if not any(f.matches(w) for f in files):
            choices = sorted(
                {f.folder for f in files}
                | {f"{f.folder}/{f.subset}" for f in files if f.subset}
                | {f.name for f in files if f.folder != FLOWBENCH_FOLDER}
            )
            raise ValueError(
                f"{option} {w!r} matches no dataset; choose a folder, folder/subset or file "
                f"name: {', '.join(choices)} (or a FlowBench file as flowbench/parsed/...)"
            )


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
    got = None
    if f.sha256 is not None:
        got = _sha256_file(target)
        if got == stored:
            return FileCheck(f, "ok", rel)
    if not f.gzip_stored:
        assert got is not None
        return FileCheck(f, "mismatch", rel, f"{rel}: {_describe(stored, got)}")
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
    >>> file_status(tempfile.mkdtemp(), load_manifest()[0])
    'missing'
    """
    return verify_file(data_dir, f).status


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


def _copy_if_absent(src: Path, dest: Path) -> bool:
    if dest.exists() or not src.is_file():
        return False
    from mtl._atomic import atomic_path  # imported when used: mtl loads sklearn

    with atomic_path(dest, suffix=".part", prefix=".download.") as tmp:
        shutil.copyfile(src, tmp)
    return True


def write_flowbench_metadata(
    data_dir: str | os.PathLike[str], manifest: str | os.PathLike[str] | None = None
) -> list[Path]:
    """Put ``MANIFEST.tsv``, ``PROVENANCE.md`` and ``LICENSE.FlowBench`` beside the data.

    They come from the package (the manifest: ``manifest`` if given). Files already there are
    kept as they are (a copy such as ``../shared/data/flowbench`` documents its own state).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    folder = Path(data_dir) / FLOWBENCH_FOLDER
    pairs = [
        (Path(manifest) if manifest else flowbench_manifest_path(), folder / "MANIFEST.tsv"),
        (_PACKAGE_DATA / "flowbench_PROVENANCE.md", folder / "PROVENANCE.md"),
        (_PACKAGE_DATA / "flowbench_LICENSE", folder / "LICENSE.FlowBench"),
    ]
    return [dest for src, dest in pairs if _copy_if_absent(src, dest)]


#: Called after each file with (file, status, bytes downloaded).
ProgressCallback = Callable[[SourceFile, str, int], None]


def fetch(
    data_dir: str | os.PathLike[str],
    only: Iterable[str] | None = None,
    base_url: str | None = None,
    manifest: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    timeout: float = 60.0,
    progress: bool = True,
    on_file: ProgressCallback | None = None,
    jobs: int = 4,
) -> dict[str, str]:
    """Fetch every selected manifest file into ``data_dir``; resume where a fetch stopped.

    Files are processed independently: one failure does not stop the others. After all were
    tried, the first failure is re-raised with the list of failed files (the first five named,
    with the count). Stale ``.download.*.part`` files are removed before and after.

    Parameters
    ----------
    data_dir : path-like
        Created if needed.
    only : iterable of str, optional
        Folders, ``folder/subset`` or file names (see :func:`select`).
    base_url : str, optional
        A mirror holding the data-directory layout instead of the upstream URLs.
    manifest : path-like or sequence, optional
        Manifests to read instead of :func:`default_manifests` (see :func:`load_manifest`).
    timeout : float
        Seconds per request.
    progress : bool
        Show a progress bar (files done / total and bytes downloaded) on stderr.
    on_file : callable, optional
        Called after each file with ``(file, status, bytes)``; status is ``"failed"`` on error.
        Called from the calling thread.
    jobs : int
        Files downloaded at the same time (threads; each file is still written atomically).

    Returns
    -------
    dict
        ``path -> "present" | "downloaded" | "replaced"`` for the files that succeeded.

    Raises
    ------
    ValueError
        A bad ``jobs`` or ``timeout``, an ``only`` value that names nothing, a bad manifest.
    ChecksumMismatchError, DownloadError
        After every file was tried, when one or more failed.
    DataDirBusyError
        Another fetch holds the lock on ``data_dir``.
    """
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"--jobs must be a whole number >= 1, got {jobs!r}")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(f"--timeout must be a finite number of seconds > 0, got {timeout!r}")
    all_files = load_manifest(manifest)
    files = select(all_files, only)
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, str] = {}
    errors: list[Exception] = []
    from tqdm.auto import tqdm

    outcomes: dict[int, tuple[str, int, Exception | None]] = {}

    def one(i: int) -> tuple[int, tuple[str, int, Exception | None]]:
        try:
            status, n = _fetch_one(data_dir, files[i], base_url, timeout)
        except (ChecksumMismatchError, DownloadError) as exc:
            return i, ("failed", 0, exc)
        return i, (status, n, None)

    with _fetch_lock(data_dir):
        try:
            clean_partials(data_dir, all_files)
            fetched = failed = 0
            with (
                tqdm(total=len(files), unit="file", desc="data fetch", disable=not progress) as bar,
                ThreadPoolExecutor(max_workers=jobs) as pool,
            ):
                try:
                    for fut in as_completed([pool.submit(one, i) for i in range(len(files))]):
                        i, (status, n, exc) = fut.result()
                        outcomes[i] = (status, n, exc)
                        fetched += n
                        failed += exc is not None
                        bar.update(1)
                        bar.set_postfix_str(f"{fetched / 1e6:.1f} MB, {failed} failed")
                        if on_file is not None:
                            on_file(files[i], status, n)
                except BaseException:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
            if any(f.folder == FLOWBENCH_FOLDER for f in files):
                write_flowbench_metadata(data_dir, _flowbench_manifest_among(manifest))
        finally:
            clean_partials(data_dir, all_files)
    failed_files: list[SourceFile] = []
    for i, f in enumerate(files):
        status, _, exc = outcomes[i]
        if exc is None:
            results[f.path] = status
        else:
            errors.append(exc)
            failed_files.append(f)
    if errors:
        shown = "; ".join(str(e) for e in errors[:5])
        more = f"; ... and {len(errors) - 5} more" if len(errors) > 5 else ""
        which = describe_absent(failed_files, files) if len(errors) > 1 else ""
        which = f" ({which})" if which else ""
        raise type(errors[0])(f"{len(errors)} of {len(files)} file(s) failed{which}: {shown}{more}")
    return results


def _flowbench_manifest_among(
    manifest: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None,
) -> Path | None:
    if manifest is None:
        return None
    items = [manifest] if isinstance(manifest, (str, os.PathLike)) else list(manifest)
    return next((Path(p) for p in items if Path(p).suffix == ".tsv"), None)


def verify(
    data_dir: str | os.PathLike[str],
    only: Iterable[str] | None = None,
    manifest: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
) -> list[FileCheck]:
    """Verify every selected manifest file in ``data_dir`` (see :func:`verify_file`).

    Examples
    --------
    >>> import tempfile
    >>> {c.status for c in verify(tempfile.mkdtemp(), only=["swim"])}
    {'missing'}
    """
    return [verify_file(data_dir, f) for f in select(load_manifest(manifest), only)]


def check(
    data_dir: str | os.PathLike[str],
    only: Iterable[str] | None = None,
    manifest: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
) -> dict[str, str]:
    """``path -> "ok" | "missing" | "mismatch" | "corrupt"`` for every selected manifest file.

    Examples
    --------
    >>> import tempfile
    >>> set(check(tempfile.mkdtemp(), only=["swim"]).values())
    {'missing'}
    """
    return {c.file.path: c.status for c in verify(data_dir, only, manifest)}


@dataclass(frozen=True)
class GroupSummary:
    """What :func:`summarize` found for one folder.

    Attributes
    ----------
    folder : str
    total, ok : int
        Files selected and files present and verified.
    absent : list of SourceFile
        Missing files.
    bad : list of FileCheck
        Files present but wrong (``mismatch``) or unreadable (``corrupt``).
    allowed : list of SourceFile
        The missing files that ``allow_missing`` excuses.
    """

    folder: str
    total: int
    ok: int
    absent: list[SourceFile]
    bad: list[FileCheck]
    allowed: list[SourceFile]

    @property
    def failed(self) -> bool:
        """Whether this folder makes ``data check`` fail (corrupt, or absent and not allowed)."""
        return bool(self.bad) or len(self.allowed) < len(self.absent)

    def line(self, all_files: Sequence[SourceFile]) -> str:
        """One plain sentence, e.g. ``flowbench: 1802 of 2122 present and verified; ...``."""
        text = f"{self.folder}: {self.ok} of {self.total} present and verified"
        if self.absent:
            text += f"; {len(self.absent)} absent ({describe_absent(self.absent, all_files)})"
            if self.allowed:
                text += (
                    " allowed by --allow-missing"
                    if len(self.allowed) == len(self.absent)
                    else f", {len(self.allowed)} of them allowed by --allow-missing"
                )
        if self.bad:
            kinds = sorted({c.status for c in self.bad})
            text += f"; {len(self.bad)} {'/'.join(kinds)}"
        return text


def describe_absent(absent: Sequence[SourceFile], all_files: Sequence[SourceFile]) -> str:
    """Name what is absent: whole subsets by name, partial ones with counts, other files by name.

    Examples
    --------
    >>> fb = load_flowbench_manifest()
    >>> describe_absent([f for f in fb if f.subset == "montage"], fb)
    'montage'
    >>> genome = [f for f in fb if f.subset == "1000-genome"]
    >>> text = describe_absent([fb[0]] + genome[:2], fb)
    >>> text == f"parsed/README.md, 1000-genome 2 of {len(genome)}"
    True
    """
    per_subset: dict[str, int] = {}
    loose: list[str] = []
    for f in absent:
        if f.subset is None:
            loose.append(f.name.removeprefix(f"{f.folder}/"))
        else:
            per_subset[f.subset] = per_subset.get(f.subset, 0) + 1
    totals = {
        s: sum(g.folder == absent[0].folder and g.subset == s for g in all_files)
        for s in per_subset
    }
    parts = loose[:3] + ([f"{len(loose) - 3} more files"] if len(loose) > 3 else [])
    for s, n in sorted(per_subset.items()):
        parts.append(s if n == totals[s] else f"{s} {n} of {totals[s]}")
    return ", ".join(parts)


def summarize(
    checks: Sequence[FileCheck],
    allow_missing: Iterable[str] | None = None,
    known: Sequence[SourceFile] | None = None,
) -> list[GroupSummary]:
    """Group :func:`verify` results by folder, excusing absences named by ``allow_missing``.

    ``allow_missing`` takes the same keys as :func:`select` (``flowbench/montage``, ``swim``,
    a file name); a key that names no file of ``known`` (default: the checked files) raises
    ``ValueError``.

    Examples
    --------
    >>> import tempfile
    >>> s = summarize(verify(tempfile.mkdtemp(), only=["swim"]))
    >>> s[0].folder, s[0].ok, len(s[0].absent), s[0].failed
    ('swim', 0, 6, True)
    """
    keys = [k for k in (allow_missing or []) if k]
    _require_matches(
        known if known is not None else [c.file for c in checks], keys, "--allow-missing"
    )
    out: list[GroupSummary] = []
    for folder in dict.fromkeys(c.file.folder for c in checks):
        group = [c for c in checks if c.file.folder == folder]
        absent = [c.file for c in group if c.status == "missing"]
        out.append(
            GroupSummary(
                folder=folder,
                total=len(group),
                ok=sum(c.status == "ok" for c in group),
                absent=absent,
                bad=[c for c in group if c.status in ("mismatch", "corrupt")],
                allowed=[f for f in absent if any(f.matches(k) for k in keys)],
            )
        )
    return out
