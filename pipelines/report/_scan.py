"""Reading result directories: ``summary.json``, the files beside it, a demo's stage list."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Sub-directories never scanned (model artefacts, tracking stores, caches).
SKIP_DIRS = frozenset(
    {"predictor", "models", "work", "mlruns", "mlartifacts", "artifacts", "__pycache__"}
)


#: What the report says of a directory holding the incomplete-marker
#: (:data:`pipelines._io.INCOMPLETE_MARKER`) beside its ``summary.json``.
INCOMPLETE_NOTE = "incomplete: interrupted or still running; numbers may be stale"


class ReportError(ValueError):
    """A result directory cannot be reported (bad ``summary.json``, bad demo listing)."""


@dataclass
class RunDir:
    """One scanned result directory.

    Attributes
    ----------
    path : Path
        The directory.
    summary : dict
        Its ``summary.json``.
    tables, markdown, images : list of Path
        CSV files, Markdown files and PNG files, sorted by path. A CSV with a Markdown file of
        the same stem (the command's presentable version of it) is shown folded.
    incomplete : str
        Empty, or why the directory is not one finished output set (:func:`incomplete_note`).

    Examples
    --------
    >>> RunDir(Path("runs/x"), {"command": "train"}).command
    'train'
    >>> RunDir(Path("runs/x"), {}).command
    'x'
    """

    path: Path
    summary: dict[str, Any]
    tables: list[Path] = field(default_factory=list)
    markdown: list[Path] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)
    incomplete: str = ""

    @property
    def command(self) -> str:
        """The command that wrote the directory (``summary["command"]``, else its name)."""
        cmd = self.summary.get("command")
        return str(cmd) if isinstance(cmd, str) and cmd else self.path.name

    @property
    def files(self) -> list[Path]:
        """Tables, Markdown files and images, in that order."""
        return [*self.tables, *self.markdown, *self.images]


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read ``path/summary.json``.

    It is read even beside the incomplete-marker (a report shows such a run, marked); ask
    :func:`incomplete_note` (or :func:`scan_run`) whether its numbers are final.

    Raises
    ------
    FileNotFoundError
        ``path`` is not a directory, or has no ``summary.json``.
    ReportError
        ``summary.json`` is not a JSON object.

    Examples
    --------
    >>> import tempfile
    >>> read_summary(tempfile.mkdtemp())
    Traceback (most recent call last):
    ...
    FileNotFoundError: ... has no summary.json; it is not the output directory of a straggler ...
    """
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"result directory {path} does not exist or is not a directory")
    file = path / "summary.json"
    if not file.is_file():
        raise FileNotFoundError(
            f"{path} has no summary.json; it is not the output directory of a straggler command"
        )
    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReportError(f"{file}: not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise ReportError(f"{file}: expected a JSON object, got {type(doc).__name__}")
    return doc


def incomplete_note(path: str | os.PathLike[str]) -> str:
    """:data:`INCOMPLETE_NOTE` (naming the writer) when ``path`` holds the incomplete-marker.

    The marker is written before a command writes its output set and removed only after it
    succeeded, so with it present ``summary.json`` may be an earlier run's or a partial one.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> incomplete_note(d)
    ''
    >>> _ = (d / ".straggler-incomplete").write_text('{"command": "train"}')
    >>> incomplete_note(d)
    'incomplete: interrupted or still running; numbers may be stale (train left ...)'
    """
    from pipelines._io import INCOMPLETE_MARKER

    marker = Path(path) / INCOMPLETE_MARKER
    if not marker.exists():
        return ""
    try:
        who = json.loads(marker.read_text(encoding="utf-8")).get("command") or "a run"
    except (ValueError, OSError, AttributeError):
        who = "a run"
    return f"{INCOMPLETE_NOTE} ({who} left {INCOMPLETE_MARKER} in {path})"


def scan_run(path: str | os.PathLike[str]) -> RunDir:
    """Read ``summary.json`` and list the CSV, Markdown and PNG files of a result directory.

    The directory and its sub-directories one level down are scanned; hidden entries and
    model, tracking and cache directories (:data:`SKIP_DIRS`) are not. A directory holding
    the incomplete-marker is still read, with :attr:`RunDir.incomplete` saying so.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "summary.json").write_text('{"command": "x"}')
    >>> _ = (d / "t.csv").write_text("a\\n1\\n")
    >>> [p.name for p in scan_run(d).tables]
    ['t.csv']
    """
    path = Path(path)
    run = RunDir(path=path, summary=read_summary(path), incomplete=incomplete_note(path))
    files: list[Path] = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file():
            files.append(entry)
        elif (
            entry.is_dir() and entry.name not in SKIP_DIRS and not (entry / "summary.json").exists()
        ):
            files.extend(
                f for f in sorted(entry.iterdir()) if f.is_file() and not f.name.startswith(".")
            )
    kinds = {".csv": run.tables, ".md": run.markdown, ".png": run.images}
    for f in files:
        kind = kinds.get(f.suffix.lower())
        if kind is not None:
            kind.append(f)
    return run


def demo_stages(demo_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The demo summary and its stage records (``name, status, out, argv, wall_seconds``).

    Relative stage output directories are resolved against ``demo_dir``.

    Raises
    ------
    ReportError
        The summary has no ``stages`` list of objects.
    """
    demo_dir = Path(demo_dir)
    summary = read_summary(demo_dir)
    stages = summary.get("stages")
    if not isinstance(stages, list) or not all(isinstance(s, dict) for s in stages):
        raise ReportError(
            f"{demo_dir / 'summary.json'}: no 'stages' list; is this a straggler demo directory?"
        )
    out = []
    for s in stages:
        rec = dict(s)
        if rec.get("out"):
            p = Path(str(rec["out"]))
            rec["out"] = str(p if p.is_absolute() else demo_dir / p)
        out.append(rec)
    return summary, out
