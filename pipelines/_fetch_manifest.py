"""The dataset manifests: read and validate them, select entries (``--only``).

``data/sources.json`` (SWIM, Alibaba) describes each file as stored in the data directory;
FlowBench's list is read by :func:`pipelines._fetch_flowbench.load_flowbench_manifest`.
Files stored gzip-compressed (``*.gz`` entries with an ``upstream`` record) carry the size and
SHA-256 of the uncompressed upstream file beside those of the stored bytes.

Examples
--------
>>> manifest_path().name
'sources.json'
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pipelines._datadir import checkout_root
from pipelines._fetch_entries import SourceFile, _check_relative
from pipelines._fetch_flowbench import (
    FLOWBENCH_FOLDER,
    flowbench_manifest_path,
    load_flowbench_manifest,
)

__all__ = ["default_manifests", "load_manifest", "manifest_path", "select"]


def manifest_path() -> Path:
    """The manifest ``data/sources.json`` of this checkout (SWIM, Alibaba)."""
    return checkout_root() / "data" / "sources.json"


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
