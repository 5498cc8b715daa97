"""Reader for the Alibaba 2018 ``machine_usage`` series (real background contention)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sim_bridge._errors import DataFormatError

if TYPE_CHECKING:  # _workloads imports this module
    from sim_bridge._workloads import _CheckedText

__all__ = ["MACHINE_USAGE_FILE", "load_machine_levels"]

MACHINE_USAGE_FILE = "alibaba-v2018-machine-usage-subset/machine_usage_m1932-m1947.csv.gz"

# machine_id, time_stamp, cpu_util_percent, mem_util_percent, mem_gps, mkpi, net_in, net_out,
# disk_io_percent (schema_v2018.txt); -1 and 101 mark an invalid disk reading.
_N_COLS = 9


def _open(path: Path) -> _CheckedText:
    from sim_bridge._workloads import _open_text  # one damaged-file check for every reader

    return _open_text(path)


def load_machine_levels(path: str | Path, dt: float = 60.0) -> tuple[list[str], np.ndarray]:
    """Read the machine series and resample them to a grid of ``dt`` seconds.

    Returns the machine ids and an array ``(4, n_machines, n_steps)`` of resource levels in
    [0, 1] (cpu, mem, disk, net) on a common length: each machine's covered span is
    resampled by carrying the last valid reading forward (gaps are held, never invented),
    and shorter machines are tiled to the longest span. ``disk_io_percent`` values of -1 or
    101 (the trace's invalid markers) and empty cells count as missing. ``net`` is the mean
    of ``net_in`` and ``net_out``.

    Raises
    ------
    DataFormatError
        A malformed row (wrong column count, a non-number), naming file, line and column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "mu.csv"
    >>> _ = p.write_text("m_1,0,50,80,,,10,30,-1\\nm_1,120,60,80,,,10,30,40\\n")
    >>> ids, lv = load_machine_levels(p)
    >>> ids, lv.shape, lv[:, 0, :].round(2).tolist()
    (['m_1'], (4, 1, 3), [[0.5, 0.5, 0.6], [0.8, 0.8, 0.8], [0.4, 0.4, 0.4], [0.2, 0.2, 0.2]])
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"machine usage file not found: {path}")
    rows: dict[str, list[tuple[float, float, float, float, float]]] = {}
    with _open(path) as fh:
        for lineno, rec in enumerate(csv.reader(fh), start=1):
            if not rec:
                continue
            if len(rec) != _N_COLS:
                raise DataFormatError(
                    path, lineno, len(rec), f"expected {_N_COLS} columns, found {len(rec)}"
                )
            vals = []
            for col in (1, 2, 3, 6, 7, 8):
                cell = rec[col].strip()
                if cell == "":
                    vals.append(math.nan)
                    continue
                try:
                    v = float(cell)
                except ValueError:
                    raise DataFormatError(
                        path, lineno, col + 1, f"{cell!r} is not a number"
                    ) from None
                vals.append(v)
            t, cpu, mem, nin, nout, disk = vals
            if math.isnan(t):
                raise DataFormatError(path, lineno, 2, "empty time_stamp")
            if disk < 0 or disk > 100:
                disk = math.nan
            net = (nin + nout) / 2.0
            rows.setdefault(rec[0], []).append((t, cpu, mem, disk, net))
    if not rows:
        raise DataFormatError(path, 1, 1, "no rows")
    ids = sorted(rows)
    series = []
    for mid in ids:
        arr = np.array(rows[mid], dtype=float)
        arr = arr[np.argsort(arr[:, 0], kind="stable")]
        times = arr[:, 0]
        grid = np.arange(times[0], times[-1] + dt, dt)
        lv = np.empty((4, grid.size))
        for r in range(4):
            level = arr[:, r + 1]
            ok = ~np.isnan(level)
            if not ok.any():
                lv[r] = 0.0
                continue
            tv, cv = times[ok], level[ok]
            idx = np.searchsorted(tv, grid, side="right") - 1
            lv[r] = cv[np.clip(idx, 0, None)]  # before the first valid reading: hold it back
        series.append(np.clip(lv / 100.0, 0.0, 1.0))
    longest = max(s.shape[1] for s in series)
    out = np.empty((4, len(ids), longest))
    for i, s in enumerate(series):
        reps = -(-longest // s.shape[1])
        out[:, i, :] = np.tile(s, (1, reps))[:, :longest]
    return ids, out
