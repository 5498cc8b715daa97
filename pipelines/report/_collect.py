"""Result directories -> a :class:`~pipelines.report._model.Report` (sections, blocks, tables).

Sections follow the story of the demo: trace collection, training, Table 1, Table 2,
Tables 3-4, the replication example; directories of other commands get a section of their
own after those. A ``straggler demo`` directory expands into its stages.
"""

from __future__ import annotations

import base64
import datetime as _dt
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from pipelines._headline import headline, render_headline
from pipelines.report._model import (
    Block,
    DemoRun,
    Document,
    Figure,
    Grid,
    Report,
    Section,
    Stage,
    fmt_number,
)
from pipelines.report._scan import ReportError, RunDir, demo_stages, read_summary, scan_run
from pipelines.report._summary import key_numbers, train_metrics
from pipelines.report._views import VIEWS

if TYPE_CHECKING:
    from pipelines._report_config import ReportConfig

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
#: Images larger than this are linked by name, not embedded.
MAX_IMAGE_BYTES = 8_000_000

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def read_table(path: str | os.PathLike[str], max_rows: int = MAX_TABLE_ROWS, **kw: Any) -> Grid:
    """The first ``max_rows`` rows of a CSV file, or an empty grid saying why it is unreadable.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("a\\n1\\n2\\n3\\n")
    >>> g = read_table(p, max_rows=2)
    >>> g.rows, g.note
    ([['1'], ['2']], 'first 2 of 3 rows; all in t.csv')
    """
    path = Path(path)
    kw.setdefault("name", path.name)
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        return Grid([], [], error=f"{path.name}: not a readable CSV table ({exc})", **kw)
    grid = Grid.from_frame(frame, max_rows, **kw)
    if grid.cut:
        grid.note = f"first {max_rows} of {grid.total_rows} rows; all in {path.name}"
    return grid


def read_figure(path: Path, root: Path) -> Figure:
    """A PNG file as a :class:`Figure` (not embedded when it is no PNG or too large)."""
    link = Path(os.path.relpath(path, root)).as_posix()
    fig = Figure(name=path.name, alt=path.stem, link=link)
    data = path.read_bytes()
    if not data.startswith(_PNG_MAGIC):
        fig.note = f"{path.name}: not a PNG file, not embedded"
    elif len(data) > MAX_IMAGE_BYTES:
        fig.note = f"{path.name}: {len(data)} bytes, too large to embed"
    else:
        fig.data_uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return fig


def _read_document(path: Path, name: str, folded: bool) -> Document:
    try:
        return Document(name, path.read_text(encoding="utf-8"), folded)
    except UnicodeDecodeError:
        return Document(name, "", folded, error=f"{path.name}: not UTF-8 text")


def copies_table(markdown: str, grid: Grid) -> bool:
    """Whether a Markdown file opens with ``grid``'s header as a pipe-table row (a plain copy).

    Such a file says nothing the CSV table does not; a Markdown file shaped otherwise (a
    pivot, a caption, claims) is the command's own presentation and is shown open.

    Examples
    --------
    >>> g = Grid(["a b", "c"], [])
    >>> copies_table("| a b | c |\\n|---|---|\\n", g), copies_table("| c | a b |\\n", g)
    (True, False)
    """
    first = next((line for line in markdown.splitlines() if line.strip()), "")
    squeeze = re.compile(r"\s+")
    header = "|" + "|".join(squeeze.sub("", c) for c in grid.columns) + "|"
    return bool(grid.columns) and squeeze.sub("", first) == header


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def stage_line(stage: Mapping[str, Any]) -> Stage:
    """The status line of a demo stage (``stage skipped: reason``), with its command."""
    status = str(stage.get("status", ""))
    wall = stage.get("wall_seconds")
    wall_txt = f", {float(wall):.1f} s" if isinstance(wall, (int, float)) else ""
    reason = f": {stage['reason']}" if stage.get("reason") else ""
    return Stage(
        str(stage.get("name", "")),
        status,
        f"stage {status}{wall_txt}{reason}",
        _command(None, stage),
    )


def _command(run: RunDir | None, stage: Mapping[str, Any] | None) -> str | None:
    """The command line that wrote a directory (from the demo stage, else its summary)."""
    if stage and stage.get("argv"):
        return "straggler " + " ".join(str(a) for a in stage["argv"])
    if run is None:
        return None
    for key in ("command_line", "argv"):
        val = run.summary.get(key)
        if isinstance(val, list) and val:
            return "straggler " + " ".join(str(a) for a in val)
        if isinstance(val, str) and val:
            return val
    return f"straggler {run.command} ... (arguments not recorded in summary.json)"


def _block(
    run: RunDir,
    files: Sequence[Path],
    stage: Mapping[str, Any] | None,
    root: Path,
    summary: Mapping[str, Any] | None = None,
) -> Block:
    summary = run.summary if summary is None else summary
    block = Block(source=str(run.path), command=_command(run, stage), incomplete=run.incomplete)
    if stage:
        block.stage = stage_line(stage)
    if run.command == "train" and isinstance(summary.get("test"), Mapping):
        block.metrics = train_metrics(summary)
    block.key_numbers, block.raw_json = key_numbers(summary, run.command)
    if run.command in VIEWS:
        block.views = VIEWS[run.command](summary)
    twins: dict[Path, Grid] = {}
    for f in files:
        suffix = f.suffix.lower()
        if suffix == ".csv":
            twins[f.with_suffix("")] = grid = read_table(f, name=_rel(f, run.path))
            block.tables.append(grid)
        elif suffix == ".png":
            block.figures.append(read_figure(f, root))
    for f in files:
        if f.suffix.lower() == ".md":
            doc = _read_document(f, _rel(f, run.path), folded=bool(block.views))
            twin = twins.get(f.with_suffix(""))
            doc.folded = doc.folded or (twin is not None and copies_table(doc.text, twin))
            block.documents.append(doc)
    return block


def _split_evaluate(run: RunDir) -> dict[str, list[Path]]:
    """Files of an ``evaluate`` directory by table: names with ``table2``/``pair`` go to Table 2."""
    parts: dict[str, list[Path]] = {"table1": [], "table2": []}
    for f in run.files:
        name = f.name.lower().replace("_", "").replace("-", "")
        key = "table2" if ("table2" in name or "pairout" in name or "leave" in name) else "table1"
        parts[key].append(f)
    return parts


def _is_flowbench(summary: Mapping[str, Any]) -> bool:
    return "flowbench" in (summary.get("source"), summary.get("trace_source"))


def _sources(
    sources: Sequence[Path], from_demo: bool
) -> tuple[list[tuple[Path, dict[str, Any], list[dict[str, Any]]]], list[tuple[Path, Any]]]:
    """Demo directories (with their stages) and the result directories to report, in order."""
    demos: list[tuple[Path, dict[str, Any], list[dict[str, Any]]]] = []
    pending: list[tuple[Path, dict[str, Any] | None]] = []
    for i, src in enumerate(sources):
        summary = read_summary(src)
        if summary.get("command") == "demo" or (from_demo and i == 0 and "stages" in summary):
            dsum, stages = demo_stages(src)
            demos.append((src, dsum, stages))
            for st in stages:
                if st.get("name") == "report" or not st.get("out"):
                    continue  # the report itself, or a stage that wrote nothing
                if st.get("status") == "ok" and Path(st["out"]).resolve() != src.resolve():
                    pending.append((Path(st["out"]), st))
        else:
            pending.append((src, None))
    return demos, pending


def _demo_run(src: Path, dsum: Mapping[str, Any], stages: Sequence[Mapping[str, Any]]) -> DemoRun:
    total = dsum.get("wall_seconds")
    rows = []
    for s in stages:
        wall = s.get("wall_seconds")
        rows.append(
            [
                str(s.get("name", "")),
                str(s.get("status", "")),
                f"{float(wall):.1f}" if isinstance(wall, (int, float)) else "",
                str(s.get("out") or ""),
                str(s.get("reason") or ""),
            ]
        )
    return DemoRun(
        source=str(src),
        wall=f" in {float(total):.1f} s" if isinstance(total, (int, float)) else "",
        data_note=str(dsum.get("data_note") or ""),
        command=_command(None, {"argv": dsum["argv"]}) if dsum.get("argv") else None,
        stages=Grid(
            ["stage", "status", "wall s", "output", "note"],
            rows,
            total_rows=len(rows),
            text_columns=[0, 1, 3, 4],
            status_column=1,
        ),
    )


def collect_report(cfg: ReportConfig) -> Report:
    """Read the result directories (and/or the demo directory) of ``cfg`` into a
    :class:`Report`; ``cfg.out`` only anchors the relative links of figures in the Markdown
    rendering. Raises what :func:`pipelines.report.run_report` raises on bad input.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> from pipelines._report_config import ReportConfig
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "summary.json").write_text(json.dumps({"command": "collect", "rows": 7}))
    >>> rep = collect_report(ReportConfig(run_dirs=[d], out="report"))
    >>> [s.key for s in rep.sections], rep.sections[0].blocks[0].key_numbers[0].text
    (['collect'], '7')
    >>> "Tables 3-4: predictor-informed scheduling against speculation" in rep.absent
    True
    """
    from_demo = cfg.from_demo
    sources = [Path(p) for p in cfg.run_dirs]
    if from_demo is not None:
        sources.insert(0, Path(from_demo))
    if not sources:
        raise ReportError("no result directory given (pass RUN_DIR ... or --from DEMO_DIR)")
    root = Path(cfg.out)
    demos, pending = _sources(sources, from_demo is not None)

    blocks: dict[str, list[Block]] = {}
    extra_titles: dict[str, str] = {}
    summaries: list[tuple[dict[str, Any], bool]] = []
    for path, stage in pending:
        run = scan_run(path)
        summaries.append((run.summary, bool(run.incomplete)))
        cmd, table = run.command, run.summary.get("table")
        if _is_flowbench(run.summary):
            blocks.setdefault("flowbench", []).append(_block(run, run.files, stage, root))
        elif cmd == "evaluate" and table in (1, 2, "1", "2"):
            blocks.setdefault(f"table{table}", []).append(_block(run, run.files, stage, root))
        elif cmd == "evaluate":
            parts = _split_evaluate(run)
            subs = {k: run.summary.get(k) for k in ("table1", "table2")}
            if not any(isinstance(v, Mapping) for v in subs.values()):
                subs = {"table1": run.summary, "table2": {}}
            for key in ("table1", "table2"):
                if key == "table2" and not parts[key] and not subs[key]:
                    continue
                sub = subs[key] if isinstance(subs[key], Mapping) else {}
                blocks.setdefault(key, []).append(_block(run, parts[key], stage, root, sub))
        else:
            key = COMMAND_SECTION.get(cmd) or (stage or {}).get("section") or cmd
            if key not in dict(SECTIONS):
                extra_titles.setdefault(key, f"straggler {cmd}")
            blocks.setdefault(key, []).append(_block(run, run.files, stage, root))

    # the headline is about the simulated loop; a finished run of a command is preferred to
    # an incomplete one, which (when it is all there is) makes the headline provisional
    by_command: dict[str, tuple[dict[str, Any], bool]] = {}
    for summ, partial in sorted(summaries, key=lambda s: s[1]):
        if not _is_flowbench(summ):
            by_command.setdefault(str(summ.get("command")), (summ, partial))
    inputs = ("train", "compare", "fidelity", "collect")
    head = headline(
        **{k: by_command[k][0] if k in by_command else None for k in inputs},
        incomplete=[k for k in inputs if k in by_command and by_command[k][1]],
    )

    not_run: dict[str, list[Stage]] = {}
    for _, _, stages in demos:
        for st in stages:
            if st.get("status") != "ok":
                key = str(st.get("section") or st.get("name"))
                not_run.setdefault(key, []).append(stage_line(st))
    known = dict(SECTIONS)
    ordered = [(k, t) for k, t in SECTIONS if k in blocks or k in not_run]
    ordered += [(k, extra_titles.get(k, k)) for k in blocks if k not in known]
    ordered += [(k, k) for k in not_run if k not in known and k not in blocks]
    return Report(
        title=cfg.title,
        generated=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        n_sources=len(pending),
        headline_html=render_headline(head),
        verdict=str(head.get("verdict") or head.get("provisional") or ""),
        demos=[_demo_run(*d) for d in demos],
        sections=[Section(k, t, not_run.get(k, []), blocks.get(k, [])) for k, t in ordered],
        absent=[t for k, t in SECTIONS if k not in blocks and k not in not_run],
    )


__all__ = [
    "COMMAND_SECTION",
    "MAX_TABLE_ROWS",
    "SECTIONS",
    "collect_report",
    "fmt_number",
    "read_figure",
    "read_table",
    "stage_line",
]
