"""Reading the workloads' data files: SWIM day samples and the Alibaba 2017 batch_task table.

Each reader returns plain row tuples and raises :class:`~sim_bridge.DataFormatError` naming
file, line and column on a malformed row or a damaged file (:class:`_CheckedText`); the
rows become jobs in :mod:`sim_bridge._workload_replay`.

Examples
--------
>>> SWIM_FILES["FB2009"]
'swim/FB-2009_samples_24_times_1hr_0.tsv'
"""

from __future__ import annotations

import csv
import gzip
import math
import zlib
from collections.abc import Iterator
from pathlib import Path

from sim_bridge._errors import DataFormatError

__all__ = ["ALI2017_FILE", "SWIM_FILES", "read_ali2017", "read_swim"]


SWIM_FILES = {
    "FB2009": "swim/FB-2009_samples_24_times_1hr_0.tsv",
    "FB2010": "swim/FB-2010_samples_24_times_1hr_0.tsv",
}
ALI2017_FILE = "alibaba-v2017-batch-task/batch_task_v2017_with_header.csv.gz"


class _CheckedText:
    """A data file's lines; a damaged file (truncated or corrupt gzip, bytes that are not
    UTF-8) raises :class:`DataFormatError` naming the file and the line reached, instead of a
    zlib/EOF/Unicode traceback."""

    def __init__(self, path: Path):
        self.path = path
        if path.suffix == ".gz":
            self._fh = gzip.open(path, "rt", encoding="utf-8", newline="")
        else:
            self._fh = path.open("r", encoding="utf-8", newline="")

    def __enter__(self) -> _CheckedText:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[str]:
        done = 0
        try:
            for line in self._fh:
                yield line
                done += 1
        except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
            raise DataFormatError(
                self.path,
                done + 1,
                "-",
                f"damaged file ({type(exc).__name__}: {exc}); `straggler data check` "
                "verifies it, `straggler data fetch` replaces it",
            ) from exc


def _open_text(path: Path) -> _CheckedText:
    return _CheckedText(path)


def read_swim(path: str | Path) -> list[tuple[str, float, float, float, float]]:
    """Rows ``(job_id, submit_s, input_bytes, shuffle_bytes, output_bytes)`` of a SWIM file.

    Raises :class:`DataFormatError` naming file, line and column on a malformed row.
    """
    path = Path(path)
    rows: list[tuple[str, float, float, float, float]] = []
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            cells = line.split("\t")
            if len(cells) < 6:
                raise DataFormatError(
                    path, lineno, len(cells), f"expected >= 6 columns, found {len(cells)}"
                )
            vals = []
            for col in (1, 3, 4, 5):
                try:
                    v = float(cells[col])
                except ValueError:
                    raise DataFormatError(
                        path, lineno, col + 1, f"{cells[col]!r} is not a number"
                    ) from None
                if not math.isfinite(v) or v < 0:
                    raise DataFormatError(path, lineno, col + 1, f"{cells[col]!r} must be >= 0")
                vals.append(v)
            submit_s, input_bytes, shuffle_bytes, output_bytes = vals
            rows.append((cells[0], submit_s, input_bytes, shuffle_bytes, output_bytes))
    return rows


def read_ali2017(path: str | Path) -> list[tuple[float, float, str, str, int]]:
    """Terminated rows ``(create, end, job_id, task_id, instances)`` of the 2017 batch_task
    table (other statuses have no completion and are skipped)."""
    path = Path(path)
    rows = []
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        for lineno, rec in enumerate(reader, start=1):
            if lineno == 1 and rec and not rec[0].strip().lstrip("-").isdigit():
                continue  # header
            if not rec:
                continue
            if len(rec) < 6:
                raise DataFormatError(
                    path, lineno, len(rec), f"expected 8 columns, found {len(rec)}"
                )
            if rec[5].strip() != "Terminated":
                continue
            vals = []
            for col in (0, 1, 4):
                try:
                    vals.append(float(rec[col]))
                except ValueError:
                    raise DataFormatError(
                        path, lineno, col + 1, f"{rec[col]!r} is not a number"
                    ) from None
            create, end, inst = vals
            if inst < 1 or inst != int(inst):
                raise DataFormatError(
                    path, lineno, 5, f"number_of_instances {rec[4]!r} must be an integer >= 1"
                )
            rows.append((create, end, rec[2].strip(), rec[3].strip(), int(inst)))
    return rows
