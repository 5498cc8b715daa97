"""Pipelines tying the model and the simulator together, and the ``straggler`` CLI.

Public names: the trace loader and validator, Wrangler's straggler labels, the seed's
time-ordered split protocols (Tables 1 and 2), the data directory resolver and the dataset
fetcher, and the output helpers every command uses.
"""

from pipelines._datadir import DATA_DIR_ENV, resolve_data_dir
from pipelines._dataset import (
    DEFAULT_BETA,
    DEFAULT_MIN_TASKS,
    REQUIRED_COLUMNS,
    LabelledTrace,
    TraceError,
    check_classes,
    counter_columns,
    label_stragglers,
    load_trace,
    trace_hash,
    validate_trace,
)
from pipelines._fetch import (
    ChecksumMismatchError,
    DownloadError,
    SourceFile,
    load_manifest,
)
from pipelines._fetch import check as check_data
from pipelines._fetch import fetch as fetch_data
from pipelines._io import atomic_write_text, write_summary
from pipelines._splits import (
    TABLE1_FRACTIONS,
    Split,
    fraction_split,
    leave_pair_out_splits,
    pair_order,
    table1_splits,
)

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_BETA",
    "DEFAULT_MIN_TASKS",
    "REQUIRED_COLUMNS",
    "TABLE1_FRACTIONS",
    "ChecksumMismatchError",
    "DownloadError",
    "LabelledTrace",
    "SourceFile",
    "Split",
    "TraceError",
    "atomic_write_text",
    "check_classes",
    "check_data",
    "counter_columns",
    "fetch_data",
    "fraction_split",
    "label_stragglers",
    "leave_pair_out_splits",
    "load_manifest",
    "load_trace",
    "pair_order",
    "resolve_data_dir",
    "table1_splits",
    "trace_hash",
    "validate_trace",
    "write_summary",
]
