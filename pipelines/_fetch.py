"""Download the public datasets and verify their SHA-256 (``straggler data fetch|check``).

The public entry of the data fetch; each job has its own module:

- :mod:`pipelines._fetch_manifest` reads and validates ``data/sources.json`` (SWIM, Alibaba)
  and selects entries; :mod:`pipelines._fetch_flowbench` reads FlowBench's shipped file list
  (2,122 files stored under ``flowbench/``, the run CSVs gzip-compressed) and puts its
  metadata beside the data; :mod:`pipelines._fetch_entries` holds the entry and result types.
- :mod:`pipelines._fetch_checksums` verifies a file by size and SHA-256 (a gzip-stored file
  also by its decompressed content).
- :mod:`pipelines._fetch_download` streams one file to a temporary ``.download.*.part`` beside
  its destination, checks it and renames it into place, so a failed or tampered download never
  leaves a corrupt file where a reader would look.
- :mod:`pipelines._fetch_guard` holds the lock on the data directory and removes the partial
  files a killed fetch left; :mod:`pipelines._fetch_summary` groups ``data check`` results.

Files already present and verified are skipped, so an interrupted fetch resumes.

Examples
--------
>>> import tempfile
>>> set(check(tempfile.mkdtemp(), only=["swim-license"]).values())
{'missing'}
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from pipelines._fetch_checksums import file_status, verify_file
from pipelines._fetch_download import _fetch_one, fetch_file
from pipelines._fetch_entries import FileCheck, SourceFile
from pipelines._fetch_errors import ChecksumMismatchError, DataDirBusyError, DownloadError
from pipelines._fetch_flowbench import (
    FLOWBENCH_COLUMNS,
    FLOWBENCH_FOLDER,
    _flowbench_manifest_among,
    flowbench_manifest_path,
    load_flowbench_manifest,
    write_flowbench_metadata,
)
from pipelines._fetch_guard import _fetch_lock, clean_partials
from pipelines._fetch_manifest import default_manifests, load_manifest, manifest_path, select
from pipelines._fetch_summary import GroupSummary, describe_absent, summarize

__all__ = [
    "FLOWBENCH_COLUMNS",
    "FLOWBENCH_FOLDER",
    "ChecksumMismatchError",
    "DataDirBusyError",
    "DownloadError",
    "FileCheck",
    "GroupSummary",
    "ProgressCallback",
    "SourceFile",
    "check",
    "clean_partials",
    "default_manifests",
    "describe_absent",
    "fetch",
    "fetch_file",
    "file_status",
    "flowbench_manifest_path",
    "load_flowbench_manifest",
    "load_manifest",
    "manifest_path",
    "select",
    "summarize",
    "verify",
    "verify_file",
    "write_flowbench_metadata",
]

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
