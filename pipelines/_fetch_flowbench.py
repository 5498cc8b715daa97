"""FlowBench in the data directory: its shipped file list and the metadata beside the runs.

``pipelines/data/flowbench_sources.tsv``, derived from FlowBench's upstream ``MANIFEST.tsv``
(path, bytes, sha256; url = a pinned base + path), lists its 2,122 files by their uncompressed
upstream bytes; they live under ``flowbench/`` in the data directory, the run CSVs
gzip-compressed (``.csv.gz``), and a plain ``.csv`` whose bytes match is accepted too.

Examples
--------
>>> flowbench_manifest_path().name
'flowbench_sources.tsv'
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from pipelines._fetch_entries import SourceFile, _check_relative

__all__ = [
    "FLOWBENCH_COLUMNS",
    "FLOWBENCH_FOLDER",
    "flowbench_manifest_path",
    "load_flowbench_manifest",
    "write_flowbench_metadata",
]

#: Data-directory folder of FlowBench (``flowbench/parsed/<anomaly>/<workflow>-runNNNN.csv.gz``).
FLOWBENCH_FOLDER = "flowbench"

#: Header of FlowBench's ``MANIFEST.tsv``.
FLOWBENCH_COLUMNS = ("path", "bytes", "sha256", "url")
_PACKAGE_DATA = Path(__file__).resolve().parent / "data"
_RUN_RE = re.compile(r"^(?P<workflow>.+)-run\d+\.csv$")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


def flowbench_manifest_path() -> Path:
    """FlowBench's upstream ``MANIFEST.tsv`` as shipped in the package."""
    return _PACKAGE_DATA / "flowbench_sources.tsv"


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


def _flowbench_manifest_among(
    manifest: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None,
) -> Path | None:
    if manifest is None:
        return None
    items = [manifest] if isinstance(manifest, (str, os.PathLike)) else list(manifest)
    return next((Path(p) for p in items if Path(p).suffix == ".tsv"), None)
