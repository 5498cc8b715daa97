"""``straggler report``: one self-contained HTML page from result directories.

Every ``straggler`` command that computes results writes ``summary.json`` (and CSV, Markdown
and PNG files) into its output directory. :func:`build_report` scans such directories and
writes ``report.html``: inline CSS, every image embedded as a ``data:`` URI, no script, font or
stylesheet fetched from anywhere, so a browser opens it with no network. Tables are rendered
from the CSV files with pandas (every cell escaped); a Markdown table with a CSV of the same
name is not repeated; other Markdown files are shown as preformatted text.

Sections follow the story of the demo: trace collection, training, Table 1, Table 2,
Tables 3-4, the replication example; directories of other commands get a section of their
own after those. A ``straggler demo`` directory (its ``summary.json`` lists the stages) expands
into its stages, with the command line, wall time and status of each.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from pipelines._headline import headline, render_headline
from pipelines._io import atomic_write_text

#: Section keys in report order, with their headings.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("fidelity", "The simulated world against published facts (straggler fidelity)"),
    ("collect", "Trace collection"),
    ("train", "Training (Optuna grid, MLflow tracking)"),
    ("table1", "Table 1: accuracy against the amount of training data"),
    ("table2", "Table 2: generalising to an unseen (node, workload) pair"),
    ("compare", "Tables 3-4: predictor-informed scheduling against speculation"),
    ("replication", "Replication example (seed 002): analysis against the engine"),
    ("flowbench", "Real executions (FlowBench): Table 1 on a real cluster's runs"),
)

#: Command name (``summary.json`` key ``command``) -> section key.
COMMAND_SECTION: dict[str, str] = {
    "fidelity": "fidelity",
    "collect": "collect",
    "train": "train",
    "evaluate": "table1",
    "compare": "compare",
    "replication": "replication",
    "reproduce": "replication",
}

#: Rows shown per table; the rest is in the CSV file beside the report's source.
MAX_TABLE_ROWS = 60
#: Summary numbers shown per section.
MAX_SUMMARY_ITEMS = 60
#: Characters of a raw summary.json shown behind its fold.
MAX_RAW_JSON = 60_000
#: Images larger than this are linked by name, not embedded.
MAX_IMAGE_BYTES = 8_000_000
#: Sub-directories never scanned (model artefacts, tracking stores, caches).
SKIP_DIRS = frozenset(
    {"predictor", "models", "work", "mlruns", "mlartifacts", "artifacts", "__pycache__"}
)

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


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
    """

    path: Path
    summary: dict[str, Any]
    tables: list[Path] = field(default_factory=list)
    markdown: list[Path] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)

    @property
    def command(self) -> str:
        """The command that wrote the directory (``summary["command"]``, else its name)."""
        cmd = self.summary.get("command")
        return str(cmd) if isinstance(cmd, str) and cmd else self.path.name


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read ``path/summary.json``.

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


def scan_run(path: str | os.PathLike[str]) -> RunDir:
    """Read ``summary.json`` and list the CSV, Markdown and PNG files of a result directory.

    The directory and its sub-directories one level down are scanned; hidden entries and
    model, tracking and cache directories (:data:`SKIP_DIRS`) are not.
    """
    path = Path(path)
    run = RunDir(path=path, summary=read_summary(path))
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
    for f in files:
        suffix = f.suffix.lower()
        if suffix == ".csv":
            run.tables.append(f)
        elif suffix == ".md":
            run.markdown.append(f)
        elif suffix == ".png":
            run.images.append(f)
    return run


def demo_stages(demo_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The demo summary and its stage records (``name, status, out, argv, wall_seconds``).

    Relative stage output directories are resolved against ``demo_dir``.
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


# ----------------------------------------------------------------------------- rendering


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _fmt_number(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return f"{v:,}".replace(",", " ") if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:.4g}"
    return str(v)


def flatten_summary(summary: Mapping[str, Any], prefix: str = "", depth: int = 3) -> list:
    """``(dotted key, value)`` pairs of the scalar entries of a summary, nested dicts included.

    Lists of up to 8 scalars are kept (shown joined); longer lists and deeper nesting are left
    to ``summary.json``.

    Examples
    --------
    >>> flatten_summary({"a": 1, "b": {"c": 2.5, "d": [1, 2]}, "e": list(range(20))})
    [('a', 1), ('b.c', 2.5), ('b.d', [1, 2])]
    """
    items: list[tuple[str, Any]] = []
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if depth > 1:
                items.extend(flatten_summary(value, f"{name}.", depth - 1))
        elif isinstance(value, list):
            if len(value) <= 8 and all(
                v is None or isinstance(v, (str, int, float, bool)) for v in value
            ):
                items.append((name, value))
        else:
            items.append((name, value))
    return items


#: Headline entries of each command's summary (dotted-key prefixes), shown open; the full
#: list of numbers is folded below them.
KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "collect": (
        "workloads",
        "sources",
        "nodes",
        "slots",
        "hours",
        "attempt_rows",
        "rows",
        "pairs",
        "excluded_jobs",
        "straggler_share",
        "straggler_share_by_workload",
        "simulation.p99_jct",
        "wall_seconds",
    ),
    "train": (
        "status",
        "message",
        "config.variant",
        "config.metric",
        "threshold",
        "study.grid_points",
        "study.points_completed",
        "best_params",
        "model.registered_uri",
        "tracking_uri",
        "wall_seconds",
    ),
    "evaluate": ("table", "fractions", "pairs", "data.rows", "verdicts", "wall_seconds"),
    "compare": ("workloads", "seeds", "speculation", "significance", "wall_seconds"),
    "fidelity": ("counts", "profile", "settings.workloads", "interval_method", "wall_seconds"),
    "replication": (
        "seed_paper",
        "distribution",
        "n_tasks",
        "runs",
        "r",
        "max_abs_z",
        "agreement",
        "best_latency",
        "wall_seconds",
    ),
}


def _kv_rows(items: Sequence[tuple[str, Any]]) -> str:
    rows = []
    for key, value in items:
        if isinstance(value, list) and any(isinstance(v, str) and len(v) > 40 for v in value):
            cell = "<ul>" + "".join(f"<li>{_esc(v)}</li>" for v in value) + "</ul>"
        else:
            shown = ", ".join(_fmt_number(v) for v in value) if isinstance(value, list) else value
            cell = _esc(_fmt_number(shown))
        rows.append(f"<tr><th>{_esc(key)}</th><td>{cell}</td></tr>")
    return f'<table class="kv">{"".join(rows)}</table>'


def _summary_table(summary: Mapping[str, Any], command: str = "", skip: Iterable[str] = ()) -> str:
    skip = set(skip)
    items = [(k, v) for k, v in flatten_summary(summary) if k.split(".")[0] not in skip]
    if not items:
        return ""
    prefixes = KEY_FIELDS.get(command, ())
    key = [
        (k, v)
        for k, v in items
        if any(k == p or k.startswith(p if p.endswith(".") else p + ".") for p in prefixes)
    ]
    shown = key or items[:MAX_SUMMARY_ITEMS]
    return f'<div class="keynums">{_kv_rows(shown)}</div>' + _raw_json(summary)


def _raw_json(summary: Mapping[str, Any]) -> str:
    """The whole ``summary.json`` behind a fold (long lists of runs cut to keep the page light)."""
    text = json.dumps(summary, indent=1, default=str, sort_keys=True)
    if len(text) > MAX_RAW_JSON:
        text = text[:MAX_RAW_JSON] + f"\n... ({len(text) - MAX_RAW_JSON} more characters)"
    return (
        '<details class="summary"><summary>raw summary.json</summary>'
        f'<pre class="json">{_esc(text)}</pre></details>'
    )


def render_csv(path: str | os.PathLike[str], max_rows: int = MAX_TABLE_ROWS) -> str:
    """An escaped HTML table of a CSV file (first ``max_rows`` rows), or a note if unreadable.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,x\\n<b>,0.123456\\n")
    >>> "&lt;b&gt;" in render_csv(p) and "0.1235" in render_csv(p)
    True
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        return f'<p class="note">{_esc(path.name)}: not a readable CSV table ({_esc(exc)})</p>'
    shown = frame.head(max_rows)
    body = shown.to_html(
        index=False,
        escape=True,
        border=0,
        na_rep="",
        classes="tbl",
        float_format=lambda v: f"{v:.4g}",
    )
    note = ""
    if len(frame) > max_rows:
        note = (
            f'<p class="note">first {max_rows} of {len(frame)} rows; all in {_esc(path.name)}</p>'
        )
    return f'<div class="scroll">{body}</div>{note}'


def render_image(path: str | os.PathLike[str]) -> str:
    """A ``<figure>`` with the PNG embedded as a base64 ``data:`` URI."""
    path = Path(path)
    data = path.read_bytes()
    if not data.startswith(_PNG_MAGIC):
        return f'<p class="note">{_esc(path.name)}: not a PNG file, not embedded</p>'
    if len(data) > MAX_IMAGE_BYTES:
        return f'<p class="note">{_esc(path.name)}: {len(data)} bytes, too large to embed</p>'
    b64 = base64.b64encode(data).decode("ascii")
    return (
        f'<figure><img alt="{_esc(path.stem)}" src="data:image/png;base64,{b64}">'
        f"<figcaption>{_esc(path.name)}</figcaption></figure>"
    )


def _inline(text: str) -> str:
    """Escape, then ``code`` and **bold** (the only inline Markdown the commands write)."""
    out = _esc(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)


def _md_cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [c.strip() for c in line.split("|")]


def markdown_to_html(text: str) -> str:
    r"""The small Markdown subset the commands write: headings, pipe tables, bullets, text.

    Everything is escaped first, so no markup from the file survives.

    Examples
    --------
    >>> h = markdown_to_html("# T\n\n| a | b |\n|---|---|\n| <1> | `x` |\n\n- one\n")
    >>> h[:62]
    '<h3>T</h3><table class="tbl"><tr><th>a</th><th>b</th></tr><tr>'
    >>> h[62:]
    '<td>&lt;1&gt;</td><td><code>x</code></td></tr></table><ul><li>one</li></ul>'
    """
    html_parts: list[str] = []
    lines = text.splitlines()
    i = 0
    para: list[str] = []

    def flush() -> None:
        if para:
            html_parts.append(f"<p>{_inline(' '.join(para))}</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
        elif stripped.startswith("#"):
            flush()
            level = min(len(stripped) - len(stripped.lstrip("#")) + 2, 5)
            html_parts.append(f"<h{level}>{_inline(stripped.lstrip('#').strip())}</h{level}>")
            i += 1
        elif stripped.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                cells = _md_cells(lines[i])
                if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                    rows.append(cells)
                i += 1
            if rows:
                head = "".join(f"<th>{_inline(c)}</th>" for c in rows[0])
                body = "".join(
                    "<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>"
                    for r in rows[1:]
                )
                html_parts.append(f'<table class="tbl"><tr>{head}</tr>{body}</table>')
        elif stripped.startswith(("- ", "* ")):
            flush()
            items = []
            while i < len(lines) and lines[i].strip().startswith(("- ", "* ")):
                items.append(f"<li>{_inline(lines[i].strip()[2:])}</li>")
                i += 1
            html_parts.append(f"<ul>{''.join(items)}</ul>")
        else:
            para.append(stripped)
            i += 1
    flush()
    return "".join(html_parts)


def _render_markdown(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return f'<p class="note">{_esc(path.name)}: not UTF-8 text</p>'
    return f'<div class="md"><p class="fname">{_esc(path.name)}</p>{markdown_to_html(text)}</div>'


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return path.name


def _split_evaluate(run: RunDir) -> dict[str, list[Path]]:
    """Files of an ``evaluate`` directory by table: names with ``table2``/``pair`` go to Table 2."""
    parts: dict[str, list[Path]] = {"table1": [], "table2": []}
    for f in [*run.tables, *run.markdown, *run.images]:
        name = f.name.lower().replace("_", "").replace("-", "")
        key = "table2" if ("table2" in name or "pairout" in name or "leave" in name) else "table1"
        parts[key].append(f)
    return parts


@dataclass
class _Block:
    """What one result directory contributes to one section."""

    run: RunDir
    files: list[Path]
    stage: dict[str, Any] | None = None
    summary_part: Mapping[str, Any] | None = None


def _stage_line(stage: Mapping[str, Any]) -> str:
    status = str(stage.get("status", ""))
    wall = stage.get("wall_seconds")
    wall_txt = f", {float(wall):.1f} s" if isinstance(wall, (int, float)) else ""
    reason = f": {stage['reason']}" if stage.get("reason") else ""
    return (
        f'<p class="status {_esc(status)}">stage {_esc(status)}{_esc(wall_txt)}{_esc(reason)}</p>'
    )


def _command_block(run: RunDir | None, stage: Mapping[str, Any] | None) -> str:
    cmd = None
    if stage and stage.get("argv"):
        cmd = "straggler " + " ".join(str(a) for a in stage["argv"])
    elif run is not None:
        for key in ("command_line", "argv"):
            val = run.summary.get(key)
            if isinstance(val, list):
                cmd = "straggler " + " ".join(str(a) for a in val)
            elif isinstance(val, str):
                cmd = val
            if cmd:
                break
        if cmd is None:
            cmd = f"straggler {run.command} ... (arguments not recorded in summary.json)"
    return f'<pre class="cmd">$ {_esc(cmd)}</pre>' if cmd else ""


def _cell_or(value: Any, missing: str) -> str:
    """A number as the report shows it; ``missing`` for None/NaN (an undefined ratio)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    return _fmt_number(value)


def train_metrics_table(summary: Mapping[str, Any]) -> str:
    """Test and validation metrics of a ``straggler train`` summary beside their baselines.

    Examples
    --------
    >>> h = train_metrics_table({"test": {"accuracy": 0.75, "rows": 4, "positives": 1}})
    >>> "majority class" in h and "0.75" in h
    True
    """
    test = summary.get("test") or {}
    val = summary.get("validation") or {}
    rows_n, pos = test.get("rows"), test.get("positives")
    rate = test.get("positive_rate")
    if rate is None and rows_n:
        rate = (pos or 0) / rows_n
    major = test.get("majority_accuracy")
    if major is None and rate is not None:
        major = max(rate, 1 - rate)
    base = {
        "accuracy": (major, "majority class"),
        "balanced_accuracy": (0.5, "one answer"),
        "roc_auc": (0.5, "random ranking"),
        "pr_auc": (rate, "positive rate"),
    }
    names = ["accuracy", "balanced_accuracy", "roc_auc", "pr_auc", "precision", "recall", "f1"]
    body = []
    for m in names:
        if m not in test and m not in val:
            continue
        b, what = base.get(m, (None, ""))
        body.append(
            f"<tr><th>{_esc(m)}</th><td>{_esc(_cell_or(test.get(m), 'n/a'))}</td>"
            f"<td>{_esc(_cell_or(val.get(m), 'n/a'))}</td><td>{_esc(_cell_or(b, ''))}</td>"
            f"<td>{_esc(what)}</td></tr>"
        )
    chosen = (summary.get("config") or {}).get("metric")
    thr = summary.get("threshold") or {}
    note = f"grid chosen by validation {chosen}" if chosen else ""
    if thr:
        note += f"; threshold {_fmt_number(thr.get('value'))} by rule {thr.get('rule')}"
    return (
        f'<table class="tbl"><tr><th>metric</th><th>test ({_esc(rows_n)} rows)</th>'
        f"<th>validation</th><th>baseline</th><th>baseline is</th></tr>{''.join(body)}</table>"
        + (f'<p class="note">{_esc(note)}</p>' if note else "")
    )


def _render_block(block: _Block) -> str:
    run = block.run
    parts = [f'<p class="src">from <code>{_esc(run.path)}</code></p>']
    if block.stage:
        parts.append(_stage_line(block.stage))
    parts.append(_command_block(run, block.stage))
    summary = block.summary_part if block.summary_part is not None else run.summary
    if run.command == "train" and isinstance(summary.get("test"), Mapping):
        parts.append(train_metrics_table(summary))
    parts.append(_summary_table(summary, run.command, skip=("command", "command_line", "argv")))
    md_stems = {f.with_suffix("") for f in block.files if f.suffix.lower() == ".md"}
    for f in block.files:
        if f.suffix.lower() == ".md":
            parts.append(_render_markdown(f))
    for f in block.files:
        if f.suffix.lower() == ".csv":
            name = _esc(_rel(f, run.path))
            if f.with_suffix("") in md_stems:
                parts.append(
                    f'<details class="data"><summary>data: {name}</summary>{render_csv(f)}'
                    "</details>"
                )
            else:
                parts.append(f"<h4>{name}</h4>{render_csv(f)}")
    images = [render_image(f) for f in block.files if f.suffix.lower() == ".png"]
    if images:
        parts.append(f'<div class="figs">{"".join(images)}</div>')
    return f'<div class="block">{"".join(parts)}</div>'


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7f9;line-height:1.45}
header{background:#1f3a5f;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:1.5em}header p{margin:0;opacity:.85}
main{max-width:1200px;margin:0 auto;padding:12px 28px 40px}
nav{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:8px 16px;margin:16px 0}
nav a{margin-right:14px;color:#1f3a5f}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:4px 20px 16px;
margin:18px 0;overflow-x:auto}
table.kv td{overflow-wrap:anywhere}
h2{border-bottom:2px solid #1f3a5f;padding-bottom:4px;font-size:1.25em}
h4{margin:14px 0 4px;font-size:.95em;color:#333}
.block{border-top:1px dashed #ccd;margin-top:10px;padding-top:6px}
.src{font-size:.85em;color:#556}
pre{background:#f0f2f5;padding:8px;border-radius:4px;overflow-x:auto;font-size:.85em}
pre.cmd{background:#15202b;color:#e6edf3;white-space:pre-wrap;overflow-wrap:anywhere}
pre.json{max-height:420px;overflow:auto}
section.headline{border:2px solid #1f3a5f;background:#fbfcfe}
section.headline h3{font-size:1em;margin:8px 0 4px}
section.headline th{text-align:left}
.hcol{display:inline-block;vertical-align:top;margin-right:24px}
.verdict{font-size:1.1em;font-weight:600;padding:8px 12px;border-radius:4px}
.verdict.yes{background:#e6f4ea;color:#1a7f37}.verdict.no{background:#fff4e5;color:#8a4b00}
td.up{color:#1a7f37}td.down{color:#b42318}
table{border-collapse:collapse;font-size:.85em;margin:4px 0}
th,td{border:1px solid #d6dae0;padding:3px 8px;text-align:right}
th{background:#eef1f5}table.kv th{text-align:left;font-weight:normal;color:#334}
table.kv td{text-align:left;font-family:ui-monospace,monospace}
.scroll{overflow-x:auto;max-height:520px;overflow-y:auto}
.figs{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:6px 0;background:#fff;border:1px solid #e3e6ea;padding:6px}
figure img{max-width:min(560px,100%);height:auto;display:block}
figcaption{font-size:.8em;color:#556;text-align:center}
.note{font-size:.85em;color:#667}
.status{font-weight:600}.status.ok{color:#1a7f37}.status.failed{color:#b42318}
.status.skipped{color:#9a6700}
details summary{cursor:pointer;color:#1f3a5f}
.md{margin:8px 0}.md table th,.md table td{text-align:left}.md h3{font-size:1.05em}
.fname{font-size:.8em;color:#778;margin:10px 0 0}
"""


def _stage_table(stages: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for s in stages:
        wall = s.get("wall_seconds")
        rows.append(
            "<tr>"
            f"<td>{_esc(s.get('name', ''))}</td>"
            f'<td class="status {_esc(s.get("status", ""))}">{_esc(s.get("status", ""))}</td>'
            f"<td>{_esc(f'{float(wall):.1f}' if isinstance(wall, (int, float)) else '')}</td>"
            f"<td>{_esc(s.get('out') or '')}</td>"
            f"<td>{_esc(s.get('reason') or '')}</td>"
            "</tr>"
        )
    return (
        "<table><tr><th>stage</th><th>status</th><th>wall s</th><th>output</th>"
        f"<th>note</th></tr>{''.join(rows)}</table>"
    )


def build_report(
    run_dirs: Sequence[str | os.PathLike[str]] = (),
    out: str | os.PathLike[str] = "report",
    *,
    from_demo: str | os.PathLike[str] | None = None,
    title: str = "Straggler prediction: results",
) -> Path:
    """Write ``out/report.html`` from result directories and/or a demo directory.

    Parameters
    ----------
    run_dirs : sequence of path
        Output directories of ``straggler`` commands (each with ``summary.json``). A demo
        directory given here is expanded into its stages, as with ``from_demo``.
    out : path
        Directory receiving ``report.html`` (created if missing; the file is written
        atomically).
    from_demo : path, optional
        A ``straggler demo`` output directory; its stages are reported in order.
    title : str
        Page title.

    Returns
    -------
    Path
        The written ``report.html``.

    Raises
    ------
    FileNotFoundError
        A directory is missing or has no ``summary.json``.
    ReportError
        No directory given, or a ``summary.json`` is malformed.
    """
    sources = [Path(p) for p in run_dirs]
    if from_demo is not None:
        sources.insert(0, Path(from_demo))
    if not sources:
        raise ReportError("no result directory given (pass RUN_DIR ... or --from DEMO_DIR)")

    blocks: dict[str, list[_Block]] = {}
    extra_titles: dict[str, str] = {}
    demos: list[tuple[Path, dict[str, Any], list[dict[str, Any]]]] = []
    pending: list[tuple[Path, dict[str, Any] | None]] = []
    for i, src in enumerate(sources):
        summary = read_summary(src)
        is_from = from_demo is not None and i == 0
        if summary.get("command") == "demo" or (is_from and "stages" in summary):
            dsum, stages = demo_stages(src)
            demos.append((src, dsum, stages))
            for st in stages:
                if st.get("name") == "report" or not st.get("out"):
                    continue  # the report itself, or a stage that wrote nothing
                if st.get("status") == "ok" and Path(st["out"]).resolve() != src.resolve():
                    pending.append((Path(st["out"]), st))
        else:
            pending.append((src, None))

    for path, stage in pending:
        run = scan_run(path)
        cmd = run.command
        table = run.summary.get("table")
        if "flowbench" in (run.summary.get("source"), run.summary.get("trace_source")):
            blocks.setdefault("flowbench", []).append(
                _Block(run, [*run.tables, *run.markdown, *run.images], stage)
            )
            continue
        if cmd == "evaluate" and table in (1, 2, "1", "2"):
            key = f"table{table}"
            blocks.setdefault(key, []).append(
                _Block(run, [*run.tables, *run.markdown, *run.images], stage)
            )
            continue
        if cmd == "evaluate":
            parts = _split_evaluate(run)
            subs = {k: run.summary.get(k) for k in ("table1", "table2")}
            if not any(isinstance(v, Mapping) for v in subs.values()):
                subs = {"table1": run.summary, "table2": {}}
            for key in ("table1", "table2"):
                if key == "table2" and not parts[key] and not subs[key]:
                    continue
                sub = subs[key] if isinstance(subs[key], Mapping) else {}
                blocks.setdefault(key, []).append(_Block(run, parts[key], stage, sub))
            continue
        key = COMMAND_SECTION.get(cmd) or (stage or {}).get("section") or cmd
        if key not in dict(SECTIONS):
            extra_titles.setdefault(key, f"straggler {cmd}")
        blocks.setdefault(key, []).append(
            _Block(run, [*run.tables, *run.markdown, *run.images], stage)
        )

    by_command: dict[str, dict[str, Any]] = {}
    for path, _stage in pending:
        summ = read_summary(path)
        if "flowbench" in (summ.get("source"), summ.get("trace_source")):
            continue  # the headline is about the simulated loop; FlowBench has its section
        by_command.setdefault(str(summ.get("command")), summ)
    head = headline(
        train=by_command.get("train"),
        compare=by_command.get("compare"),
        fidelity=by_command.get("fidelity"),
        collect=by_command.get("collect"),
    )

    root = Path(out)
    stage_by_section: dict[str, list[dict[str, Any]]] = {}
    for _, _, stages in demos:
        for st in stages:
            if st.get("status") != "ok":
                stage_by_section.setdefault(str(st.get("section") or st.get("name")), []).append(st)

    ordered = [(k, t) for k, t in SECTIONS if k in blocks or k in stage_by_section]
    ordered += [(k, extra_titles.get(k, k)) for k in blocks if k not in dict(SECTIONS)]
    ordered += [(k, k) for k in stage_by_section if k not in dict(SECTIONS) and k not in blocks]

    body = [render_headline(head)]
    for src, dsum, stages in demos:
        total = dsum.get("wall_seconds")
        total_txt = f" in {float(total):.1f} s" if isinstance(total, (int, float)) else ""
        lines = [
            f"<h2>Demo run{_esc(total_txt)}</h2>",
            f'<p class="src">from <code>{_esc(src)}</code></p>',
        ]
        if dsum.get("data_note"):
            lines.append(f"<p>{_esc(dsum['data_note'])}</p>")
        if dsum.get("argv"):
            lines.append(_command_block(None, {"argv": dsum["argv"]}))
        lines.append(_stage_table(stages))
        body.append(f'<section id="demo">{"".join(lines)}</section>')
    nav = []
    for key, heading in ordered:
        nav.append(f'<a href="#s-{_esc(key)}">{_esc(heading.split(":")[0])}</a>')
        inner = [f'<h2 id="s-{_esc(key)}">{_esc(heading)}</h2>']
        for st in stage_by_section.get(key, []):
            inner.append(
                f'<div class="block"><p class="src">stage {_esc(st.get("name", ""))}</p>'
                f"{_stage_line(st)}{_command_block(None, st)}</div>"
            )
        for block in blocks.get(key, []):
            inner.append(_render_block(block))
        body.append(f"<section>{''.join(inner)}</section>")

    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    page = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{_esc(title)}</h1><p>straggler report, generated {_esc(when)} from "
        f"{len(pending)} result director{'y' if len(pending) == 1 else 'ies'}</p></header>"
        f"<main>{body[0]}<nav>{''.join(nav)}</nav>{''.join(body[1:])}</main></body></html>\n"
    )
    root.mkdir(parents=True, exist_ok=True)
    path = atomic_write_text(root / "report.html", page)
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)  # a page to share, not a temporary file
    return path
