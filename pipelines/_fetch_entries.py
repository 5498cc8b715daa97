"""What the dataset manifests list (:class:`SourceFile`) and what verifying one found
(:class:`FileCheck`).

Examples
--------
>>> f = SourceFile("a", "swim/a.tsv.gz", "https://x/a.tsv", 10, "0" * 64, 20, "1" * 64, True)
>>> f.folder, f.gzip_stored, f.plain_path, f.matches("swim")
('swim', True, 'swim/a.tsv', True)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FileCheck", "SourceFile"]


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


def _check_relative(where: str, rel: str) -> None:
    """Raise ``ValueError`` (prefixed by ``where``) unless ``rel`` stays inside the data directory.

    Examples
    --------
    >>> _check_relative("m.json: files[0]", "swim/a.tsv")
    >>> _check_relative("m.json: files[0]", "../etc/passwd")
    Traceback (most recent call last):
    ...
    ValueError: m.json: files[0]: path must be relative inside the data directory: '../etc/passwd'
    """
    if not rel or rel.startswith("/") or ".." in rel.split("/") or "\\" in rel:
        raise ValueError(f"{where}: path must be relative inside the data directory: {rel!r}")
