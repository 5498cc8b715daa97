"""Read FlowBench run files (``parsed/<folder>/<workflow>-runNNNN.csv[.gz]``) into one table.

Each file is one workflow run; each row one Pegasus job. The reader keeps the columns the
trace and the causal counters need, renames them (:data:`RAW_COLUMNS`), checks them, and
adds the run's identity (``folder``, ``workflow``, ``run``, ``job_id``). Gzip-compressed
(the shared copy) and plain files (what upstream serves) are read alike.

Every malformed or missing value raises :class:`FlowBenchFormatError` naming the file, the
row (0-based data row; the header is line 1, data row ``i`` is line ``i + 2``) and the column.
The columns and the error live in :mod:`pipelines.flowbench._read_format` (re-exported here).
"""

from __future__ import annotations

import csv
import gzip
import os
import re
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from pipelines.flowbench._read_format import (
    ANOMALY_FOLDERS,
    NUMERIC_COLUMNS,
    OPTIONAL_COLUMNS,
    RAW_COLUMNS,
    STRING_COLUMNS,
    FlowBenchFormatError,
)

__all__ = [
    "ANOMALY_FOLDERS",
    "NUMERIC_COLUMNS",
    "OPTIONAL_COLUMNS",
    "RAW_COLUMNS",
    "STRING_COLUMNS",
    "FlowBenchFormatError",
    "list_run_files",
    "read_flowbench",
    "read_run",
    "resolve_parsed_dir",
]


_FILE_RE = re.compile(r"^(?P<workflow>.+)-run(?P<run>\d+)\.csv(?:\.gz)?$")


def resolve_parsed_dir(data_dir: str | os.PathLike[str]) -> Path:
    """The ``parsed`` directory under a data directory, a FlowBench directory or itself.

    Tried in order: ``DIR/flowbench/parsed``, ``DIR/parsed``, ``DIR``.

    Raises
    ------
    FileNotFoundError
        When none holds an anomaly folder with a run file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "flowbench/parsed/normal").mkdir(parents=True)
    >>> _ = (d / "flowbench/parsed/normal/x-run0001.csv").write_text("")
    >>> resolve_parsed_dir(d) == d / "flowbench/parsed"
    True
    """
    base = Path(data_dir)
    for cand in (base / "flowbench" / "parsed", base / "parsed", base):
        if cand.is_dir() and any(_run_files(cand)):
            return cand
    raise FileNotFoundError(
        f"no FlowBench run files under {base} (looked for flowbench/parsed/<folder>/"
        "<workflow>-runNNNN.csv[.gz], parsed/<folder>/..., <folder>/...)"
    )


def _run_files(parsed: Path) -> Iterable[Path]:
    for sub in sorted(p for p in parsed.iterdir() if p.is_dir()):
        for f in sorted(sub.iterdir()):
            if _FILE_RE.match(f.name):
                yield f


def list_run_files(
    data_dir: str | os.PathLike[str],
    workflows: Iterable[str] | None = None,
    anomalies: Iterable[str] | None = None,
) -> list[Path]:
    """Run files under ``data_dir`` (see :func:`resolve_parsed_dir`), filtered, sorted.

    A run present both gzip-compressed and plain is read once (the plain file).

    Raises
    ------
    ValueError
        When ``workflows`` or ``anomalies`` names something absent (naming the parameter).
    """
    parsed = resolve_parsed_dir(data_dir)
    by_run: dict[tuple[str, str], Path] = {}
    for f in _run_files(parsed):
        key = (f.parent.name, f.name.removesuffix(".gz"))
        if key not in by_run or f.suffix == ".csv":
            by_run[key] = f
    files = [by_run[k] for k in sorted(by_run)]
    present_w = sorted({_FILE_RE.match(f.name)["workflow"] for f in files})
    present_a = sorted({f.parent.name for f in files})
    if workflows is not None:
        workflows = list(workflows)
        bad = [w for w in workflows if w not in present_w]
        if bad or not workflows:
            raise ValueError(f"workflows: {bad or workflows} not present; present: {present_w}")
        files = [f for f in files if _FILE_RE.match(f.name)["workflow"] in workflows]
    if anomalies is not None:
        anomalies = list(anomalies)
        bad = [a for a in anomalies if a not in present_a]
        if bad or not anomalies:
            raise ValueError(f"anomalies: {bad or anomalies} not present; present: {present_a}")
        files = [f for f in files if f.parent.name in anomalies]
    if not files:
        raise ValueError(f"no run file of workflows={workflows} in anomalies={anomalies}")
    return files


def _read_csv(path: Path, typed: bool) -> pd.DataFrame:
    dtype: dict = dict.fromkeys(STRING_COLUMNS, str)
    if typed:
        dtype.update(dict.fromkeys(NUMERIC_COLUMNS, np.float64))
    else:
        dtype.update(dict.fromkeys(NUMERIC_COLUMNS, str))
    return pd.read_csv(
        path,
        usecols=lambda c: c in dtype or c in ("", "node_id") or c.startswith("Unnamed: 0"),
        dtype=dtype,
        keep_default_na=False,
        na_values={c: [""] for c in dtype},
        compression="gzip" if path.suffix == ".gz" else None,
    )


def _good_rows_before_break(path: Path) -> int:
    """How many data rows a broken gzip stream yields before it fails."""
    n = -1
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
            for _ in fh:
                n += 1
    except (EOFError, OSError, zlib.error, UnicodeDecodeError):
        pass
    return max(n, 0)


#: Arrow schema of one file's needed columns after renaming.
_SCHEMA = pa.schema(
    [("node_id", pa.string())]
    + [(d, pa.string()) for d in STRING_COLUMNS.values()]
    + [(d, pa.float64()) for d in NUMERIC_COLUMNS.values()]
)


def _header(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        line = fh.readline()
    return next(csv.reader([line])) if line.strip() else []


def _load_fast(path: Path) -> pa.Table:
    """Arrow's CSV reader (~3x pandas per file); any surprise raises, for :func:`_load`."""
    header = _header(path)
    first = header[0]
    if not (first in ("", "node_id") or first.startswith("Unnamed: 0")):
        raise ValueError("unexpected first column")
    if any(c not in header for c in (*STRING_COLUMNS, *NUMERIC_COLUMNS)):
        raise ValueError("missing column")
    types = {first: pa.string(), **dict.fromkeys(STRING_COLUMNS, pa.string())}
    types.update(dict.fromkeys(NUMERIC_COLUMNS, pa.float64()))
    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(use_threads=False),
        convert_options=pacsv.ConvertOptions(
            include_columns=[first, *STRING_COLUMNS, *NUMERIC_COLUMNS],
            column_types=types,
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )
    return table.rename_columns(_SCHEMA.names)


def _load(path: Path) -> pa.Table:
    """One file's needed columns, renamed (:data:`RAW_COLUMNS`); numbers as float64.

    Arrow reads a well-formed file; on any problem pandas reads it again, carefully, to
    name the file, row and column at fault (or to read what Arrow would not).
    """
    try:
        return _load_fast(path)
    except Exception:  # noqa: BLE001 - the careful path names the problem or reads the file
        frame = _load_careful(path)
    frame = frame.rename(columns={**STRING_COLUMNS, **NUMERIC_COLUMNS})
    return pa.Table.from_pandas(frame, schema=_SCHEMA, preserve_index=False)


def _load_careful(path: Path) -> pd.DataFrame:
    """:func:`_load` with pandas, raising :class:`FlowBenchFormatError` at the first fault."""
    try:
        try:
            frame = _read_csv(path, typed=True)
        except ValueError as exc:  # a non-numeric cell: find it on a string read
            if "could not convert" not in str(exc) and "Unable to parse" not in str(exc):
                raise
            frame = _read_csv(path, typed=False)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        row = _good_rows_before_break(path)
        raise FlowBenchFormatError(
            path, row, None, f"truncated or corrupt gzip stream ({exc}); rows before it are fine"
        ) from exc
    except pd.errors.ParserError as exc:
        raise FlowBenchFormatError(path, None, None, f"cannot parse as CSV: {exc}") from exc
    except pd.errors.EmptyDataError as exc:
        raise FlowBenchFormatError(path, None, None, "empty file (no header)") from exc
    first = frame.columns[0] if len(frame.columns) else None
    if first in ("", "node_id") or (isinstance(first, str) and first.startswith("Unnamed: 0")):
        frame = frame.rename(columns={first: "node_id"})
    needed = ["node_id", *STRING_COLUMNS, *NUMERIC_COLUMNS]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise FlowBenchFormatError(path, None, missing[0], f"missing column(s) {missing}")
    for src in NUMERIC_COLUMNS:
        col = frame[src]
        if col.dtype != np.float64:
            num = pd.to_numeric(col, errors="coerce")
            bad = (num.isna() & col.notna()).to_numpy()
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise FlowBenchFormatError(path, i, src, f"non-numeric value {col.iloc[i]!r}")
            frame[src] = num.astype(np.float64)
    return frame[needed]


def _check(frame: pd.DataFrame, files: list[Path], file_idx: np.ndarray, rows: np.ndarray):
    """Raise for a missing required value or an end before its start (first offending row)."""
    for dst in ("node_id", *STRING_COLUMNS.values(), *NUMERIC_COLUMNS.values()):
        if dst in OPTIONAL_COLUMNS:
            continue
        v = frame[dst]
        na = v.isna().to_numpy()
        if dst in NUMERIC_COLUMNS.values():
            na = na | ~np.isfinite(v.to_numpy(np.float64))
        if na.any():
            i = int(np.flatnonzero(na)[0])
            raise FlowBenchFormatError(
                files[file_idx[i]],
                int(rows[i]),
                _upstream(dst),
                f"missing or non-finite value {v.iloc[i]!r}",
            )
    s, e = frame["start"].to_numpy(), frame["end"].to_numpy()
    bad = e < s
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise FlowBenchFormatError(
            files[file_idx[i]],
            int(rows[i]),
            "execute_end",
            f"execute_end {float(e[i])!r} is before execute_start {float(s[i])!r}",
        )


def _assemble(files: list[Path], parts: list[pa.Table]) -> pd.DataFrame:
    lengths = np.array([p.num_rows for p in parts], dtype=np.int64)
    raw = pa.concat_tables(parts).to_pandas(strings_to_categorical=True)
    file_idx = np.repeat(np.arange(len(files)), lengths)
    rows = np.arange(len(raw), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    _check(raw, files, file_idx, rows)
    anomaly = raw["anomaly_type"]
    if "None" not in anomaly.cat.categories:
        anomaly = anomaly.cat.add_categories(["None"])
    raw["anomaly_type"] = anomaly.fillna("None")
    runs = [f.name.removesuffix(".gz").removesuffix(".csv") for f in files]
    per_file = {
        "folder": [f.parent.name for f in files],
        "workflow": [_FILE_RE.match(f.name)["workflow"] for f in files],
        "run": runs,
        "job_id": [f"{f.parent.name}/{r}" for f, r in zip(files, runs, strict=True)],
    }
    for col, values in per_file.items():
        codes, cats = pd.factorize(pd.Series(values))
        raw[col] = pd.Categorical.from_codes(codes[file_idx], categories=cats)
    raw["row"] = rows
    return raw


def read_run(path: str | os.PathLike[str]) -> pd.DataFrame:
    """One run file as a raw table (columns renamed as in :data:`RAW_COLUMNS`).

    Adds ``folder`` (the anomaly folder), ``workflow``, ``run`` (the file name without
    suffixes), ``job_id`` (``folder/run``) and ``row`` (the 0-based data row).

    Raises
    ------
    FlowBenchFormatError
        Truncated or corrupt gzip, missing column, a non-numeric or missing required value,
        ``execute_end`` before ``execute_start``; the message names file, row and column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "normal"; d.mkdir()
    >>> f = d / "wf-run0001.csv"
    >>> _ = f.write_text(",anomaly_type,type,ready,submit,execute_start,execute_end,"
    ...   "kickstart_site,kickstart_hostname,kickstart_transformations,"
    ...   "kickstart_executables_cpu_time,kickstart_status,kickstart_executables_exitcode,"
    ...   "kickstart_online_iowait,kickstart_online_bytes_read,kickstart_online_bytes_written,"
    ...   "kickstart_online_read_system_calls,kickstart_online_write_system_calls\\n"
    ...   "a_ID1,None,compute,0,1,2,9,condorpool,w-container-0-3,a,5,0,0,,,,,\\n")
    >>> r = read_run(f)
    >>> [str(v) for v in r.loc[0, ["job_id", "node_id", "host", "start", "end"]]]
    ['normal/wf-run0001', 'a_ID1', 'w-container-0-3', '2.0', '9.0']
    """
    path = Path(path)
    if _FILE_RE.match(path.name) is None:
        raise FlowBenchFormatError(path, None, None, "file name is not <workflow>-runNNNN.csv[.gz]")
    return _assemble([path], [_load(path)])


def _upstream(dst: str) -> str:
    for src, d in {**STRING_COLUMNS, **NUMERIC_COLUMNS}.items():
        if d == dst:
            return src
    return dst


def read_flowbench(
    data_dir: str | os.PathLike[str],
    *,
    workflows: Iterable[str] | None = None,
    anomalies: Iterable[str] | None = None,
    progress=None,
) -> pd.DataFrame:
    """Every selected run file of ``data_dir`` as one raw table (see :func:`read_run`).

    String columns become categoricals (the table stays small: ~280k rows in ~60 MB).

    Parameters
    ----------
    data_dir : path-like
        A data directory, a FlowBench directory or its ``parsed`` directory.
    workflows, anomalies : iterable of str, optional
        Keep only these workflows (e.g. ``1000-genome``) and anomaly folders (e.g. ``normal``).
    progress : callable, optional
        Called as ``progress(done, total)`` after each file.
    """
    files = list_run_files(data_dir, workflows, anomalies)
    parts = []
    for k, f in enumerate(files):
        parts.append(_load(f))
        if progress is not None:
            progress(k + 1, len(files))
    return _assemble(files, parts)
