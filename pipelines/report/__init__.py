"""``straggler report``: one self-contained HTML page (and its Markdown twin) from result dirs.

Every ``straggler`` command that computes results writes ``summary.json`` (and CSV, Markdown
and PNG files) into its output directory. :func:`run_report` (given the command's
:class:`pipelines.ReportConfig`; :func:`build_report` takes its fields as arguments) scans
such directories and writes ``report.html``: inline CSS, every image embedded as a ``data:``
URI, no script, font or stylesheet fetched from anywhere, so a browser opens it with no
network. Beside it, ``report.md`` carries the same sections, numbers and tables, with the
figures linked.

The package works in three steps, one module each:

- ``_scan``: read a result directory (:func:`read_summary`, :func:`scan_run`,
  :func:`incomplete_note`, :func:`demo_stages`);
- ``_collect``: turn the directories into a :class:`Report` of sections, blocks and tables
  of display strings (every number formatted once, there);
- ``_render``: the Jinja2 templates in ``templates/`` (HTML autoescaped) render that model.

Tables are rendered from the data (CSV files, and for ``compare`` the tables of its
``summary.json``), every cell escaped. A Markdown file a command wrote is not converted: it
is shown as its source text, folded when the report already shows the same table (a plain
copy of its CSV twin, or compare's Tables 3-4), open when it is the command's own
presentation (Table 1's pivot with standard errors, say).

Examples
--------
>>> from pipelines.report import SECTIONS
>>> [key for key, _ in SECTIONS][:3]
['fidelity', 'collect', 'train']
"""

from pipelines.report._build import build_report, run_report
from pipelines.report._collect import (
    COMMAND_SECTION,
    MAX_IMAGE_BYTES,
    MAX_TABLE_ROWS,
    SECTIONS,
    collect_report,
    read_table,
)
from pipelines.report._model import Block, Grid, Report, Section
from pipelines.report._render import (
    render_csv,
    render_html,
    render_markdown,
    train_metrics_table,
)
from pipelines.report._scan import (
    INCOMPLETE_NOTE,
    SKIP_DIRS,
    ReportError,
    RunDir,
    demo_stages,
    incomplete_note,
    read_summary,
    scan_run,
)
from pipelines.report._summary import KEY_FIELDS, flatten_summary

__all__ = [
    "COMMAND_SECTION",
    "INCOMPLETE_NOTE",
    "KEY_FIELDS",
    "MAX_IMAGE_BYTES",
    "MAX_TABLE_ROWS",
    "SECTIONS",
    "SKIP_DIRS",
    "Block",
    "Grid",
    "Report",
    "ReportError",
    "RunDir",
    "Section",
    "build_report",
    "collect_report",
    "demo_stages",
    "flatten_summary",
    "incomplete_note",
    "read_summary",
    "read_table",
    "render_csv",
    "render_html",
    "render_markdown",
    "run_report",
    "scan_run",
    "train_metrics_table",
]
