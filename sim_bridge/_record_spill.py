"""The launch records of a streaming run's live jobs, on disk past a small buffer a job.

A streaming run writes each job's trace rows when the job ends (every job in a trace is whole,
even in the file of a run stopped early). Until then it keeps each closed attempt's launch
record (4 to 16 floats: the node's running count and load averages, the tenants' demand, the
levels; :func:`sim_bridge._jobs.shed_closed`) in its job's flat ``_recs``. The jobs alive at
24 h of an FB-2010 day hold 8.5M done attempts: ~0.75 GB of records that nothing reads before
their job ends. :class:`RecordSpill` appends a job's records to a file of its own once they
pass ``chunk`` floats (64 KiB) and reads them back, file then buffer, when the job's rows are
written: the same floats (raw IEEE doubles), so the trace does not change.

Examples
--------
>>> from array import array
>>> from sim_bridge._jobs import Job
>>> job = Job()
>>> job.uid, job._recs = 7, array("d", [1.0, 2.0, 3.0])
>>> spill = RecordSpill(None, chunk=2)
>>> spill.put(job)
>>> job._recs.extend([4.0, 5.0])  # more records after the spill: offsets 3 and 4
>>> job._nspill, spill.records(job).tolist()
(3, [1.0, 2.0, 3.0, 4.0, 5.0])
>>> spill.close()
"""

from __future__ import annotations

import shutil
import tempfile
from array import array
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SPILL_DOUBLES", "RecordSpill"]

#: Floats of a job's launch records kept in memory (64 KiB); a closed attempt that takes its
#: job past it sends them all to the job's file (:meth:`RecordSpill.put`). At most that much a
#: live job in memory: ~85 MB for the 1,315 jobs alive at 24 h of an FB-2010 day.
SPILL_DOUBLES = 1 << 13


class RecordSpill:
    """Per job, a file holding the first ``job._nspill`` floats of its launch records.

    Parameters
    ----------
    directory : path or None
        Created (with its parents' existing) at the first spill and removed by
        :meth:`close`; None: a new directory under the system's temporary directory.
    chunk : int, optional
        A job's floats kept in memory before they go to its file (default
        ``SPILL_DOUBLES``).
    """

    def __init__(self, directory: str | Path | None, chunk: int | None = None):
        if chunk is None:
            chunk = SPILL_DOUBLES
        if not (isinstance(chunk, (int, np.integer)) and chunk >= 1):
            raise ValueError(f"parameter chunk must be an integer >= 1, got {chunk!r}")
        self.chunk = int(chunk)
        self._where = None if directory is None else Path(directory)
        self._dir: Path | None = None
        #: files written and bytes appended to them so far
        self.files = 0
        self.bytes = 0

    def _directory(self) -> Path:
        if self._dir is None:
            if self._where is None:
                self._dir = Path(tempfile.mkdtemp(prefix="straggler-spill-"))
            else:
                self._where.mkdir(exist_ok=True)
                for old in self._where.glob("*.f64"):  # left by a run that was killed
                    old.unlink()
                self._dir = self._where
        return self._dir

    def _file(self, job: Any) -> Path:
        return self._directory() / f"{job.uid}.f64"

    def put(self, job: Any) -> None:
        """Append ``job``'s buffered records to its file; its buffer starts empty again."""
        recs = job._recs
        if not recs:
            return
        path = self._file(job)
        if not job._nspill:
            self.files += 1
        with open(path, "ab") as f:
            recs.tofile(f)
        self.bytes += 8 * len(recs)
        job._nspill += len(recs)
        job._recs = array("d")

    def records(self, job: Any) -> np.ndarray:
        """All of ``job``'s launch records (its file, then its buffer) as one float array; its
        file is removed (read once: the job is done)."""
        mem = np.frombuffer(job._recs, dtype=float) if job._recs is not None else np.empty(0)
        if not job._nspill:
            return mem
        path = self._file(job)
        disk = np.fromfile(path, dtype=float)
        if len(disk) != job._nspill:
            raise OSError(
                f"spill file {path}: {len(disk)} floats, {job._nspill} were written (the file "
                "was changed or truncated during the run)"
            )
        path.unlink()
        return np.concatenate([disk, mem])

    def close(self) -> None:
        """Remove the directory and what is left in it (the jobs of a run stopped early)."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
