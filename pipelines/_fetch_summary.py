"""What ``straggler data check`` reports: the verification results grouped by folder.

Examples
--------
>>> import tempfile
>>> from pipelines._fetch_checksums import verify_file
>>> from pipelines._fetch_manifest import load_manifest, select
>>> checks = [verify_file(tempfile.mkdtemp(), f) for f in select(load_manifest(), ["swim"])]
>>> summarize(checks, allow_missing=["swim"])[0].failed
False
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pipelines._fetch_entries import FileCheck, SourceFile
from pipelines._fetch_manifest import _require_matches

__all__ = ["GroupSummary", "describe_absent", "summarize"]


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
    >>> from pipelines._fetch_flowbench import load_flowbench_manifest
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
    >>> from pipelines._fetch import verify
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
