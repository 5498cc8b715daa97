"""Import shim: the report lives in :mod:`pipelines.report` (kept for older imports).

Examples
--------
>>> from pipelines._report import build_report
>>> build_report.__module__
'pipelines.report._build'
"""

from pipelines.report import (  # noqa: F401
    COMMAND_SECTION,
    KEY_FIELDS,
    MAX_TABLE_ROWS,
    SECTIONS,
    ReportError,
    RunDir,
    build_report,
    demo_stages,
    flatten_summary,
    read_summary,
    render_csv,
    scan_run,
    train_metrics_table,
)
