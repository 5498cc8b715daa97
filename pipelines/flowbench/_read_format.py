"""FlowBench's file format as the reader takes it: the upstream columns and their names in
the raw table, the anomaly folders, and the error naming where a file breaks it (part of
:mod:`pipelines.flowbench._read`)."""

from __future__ import annotations

#: Upstream column -> name in the raw table (numeric columns).
NUMERIC_COLUMNS: dict[str, str] = {
    "ready": "ready",
    "submit": "submit",
    "execute_start": "start",
    "execute_end": "end",
    "kickstart_executables_cpu_time": "cpu_time",
    "kickstart_status": "status",
    "kickstart_executables_exitcode": "exitcode",
    "kickstart_online_iowait": "iowait",
    "kickstart_online_bytes_read": "bytes_read",
    "kickstart_online_bytes_written": "bytes_written",
    "kickstart_online_read_system_calls": "read_calls",
    "kickstart_online_write_system_calls": "write_calls",
}


#: Upstream column -> name in the raw table (string columns).
STRING_COLUMNS: dict[str, str] = {
    "anomaly_type": "anomaly_type",
    "type": "pegasus_type",
    "kickstart_site": "site",
    "kickstart_hostname": "host",
    "kickstart_transformations": "transformation",
}


#: Columns that may be empty (kickstart's online counters are absent for about half the
#: compute jobs; ``anomaly_type`` is ``None`` on unaffected executors).
OPTIONAL_COLUMNS = frozenset(
    {"anomaly_type", "iowait", "bytes_read", "bytes_written", "read_calls", "write_calls"}
)


#: Every column the reader needs (the first, unnamed upstream column is the DAG node id).
RAW_COLUMNS: tuple[str, ...] = ("node_id", *STRING_COLUMNS, *NUMERIC_COLUMNS)


#: Folder names of upstream's anomaly classes.
ANOMALY_FOLDERS: tuple[str, ...] = ("normal", "cpu_2", "cpu_3", "cpu_4", "hdd_5", "hdd_10")


class FlowBenchFormatError(ValueError):
    """A FlowBench file is malformed; ``file``, ``row`` and ``column`` say where.

    ``row`` is the 0-based data row (None for the header or an unreadable stream start),
    ``column`` the upstream column name (None when the whole row is affected).

    Examples
    --------
    >>> e = FlowBenchFormatError("a.csv", 3, "execute_end", "is before execute_start")
    >>> str(e)
    "a.csv: row 3 (line 5), column 'execute_end': is before execute_start"
    >>> (e.file, e.row, e.column)
    ('a.csv', 3, 'execute_end')
    """

    def __init__(self, file, row: int | None, column: str | None, problem: str):
        self.file, self.row, self.column = str(file), row, column
        where = "header" if row is None else f"row {row} (line {row + 2})"
        col = "every column" if column is None else f"column {column!r}"
        super().__init__(f"{self.file}: {where}, {col}: {problem}")
