"""The streamed result tables of the Python loop, written job by job to Parquet.

A streaming run (``simulate(..., trace_sink=path)``) hands every finished job to a
:class:`TraceSink`: its attempts' columns are read into flat arrays at once (the job is then
released, so its objects go), and once ``row_group_rows`` rows are buffered they become Parquet
row groups (``pyarrow.parquet.ParquetWriter``) of whole jobs -- a job of more rows gets row
groups of its own of at most that many rows (:func:`row_group_bounds`) -- and one chunk of the
summary (:class:`~sim_bridge._stream_summary.StreamSummary`, the keys of
:class:`~sim_bridge._metrics.SummaryAccumulator` from flat columns); the job rows, a few numbers
a job, stay in memory as columns (:class:`~sim_bridge._job_rows.JobRows`). A streamed run
imports no pandas: the rows go from NumPy to Arrow (:func:`arrow_array`), and the job table is a
DataFrame only when asked for (:meth:`TraceSink.jobs_table`). :mod:`sim_bridge._attempt_columns`
reads the attempts' columns, :func:`columns_table` builds their rows (:func:`attempt_table` both
at once); the jobs' rows, like those, are built by :mod:`sim_bridge.trace` (the trace contract
and the one table builder, which the in-memory engines use too). The file is written under a
hidden temporary name and renamed when closed, so a ``tasks.parquet`` on disk always has its
footer; a run that stops early closes it too (the rows of every job finished so far: each job in
the file is whole).
"""

from __future__ import annotations

import math
import os
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sim_bridge._attempt_columns import ATTEMPT_COLUMNS, attempt_columns, job_attempt_columns
from sim_bridge._cluster import COUNTER_NAMES
from sim_bridge._job_rows import JobRows
from sim_bridge._record_spill import RecordSpill
from sim_bridge._row_maps import RowMaps, pages_to_disk
from sim_bridge._stream_summary import StreamSummary
from sim_bridge._trace_columns import task_columns
from sim_bridge.trace import DEFAULT_BETA, jobs_table, task_ids, tasks_table
from sim_bridge.trace import node_names as trace_node_names

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "write_trace",
    "COMPLETE_KEY",
    "ROW_GROUP_ROWS",
    "TraceSink",
    "arrow_array",
    "attempt_table",
    "row_group_bounds",
    "trace_status",
]

#: Key of the Parquet footer metadata saying whether a streamed trace is complete
#: (``b"true"``/``b"false"``); ``STOP_REASON_KEY`` says why it stopped.
COMPLETE_KEY = b"straggler.complete"
STOP_REASON_KEY = b"straggler.stop_reason"

#: Rows buffered before a flush (and a summary chunk) of a streaming run; a flush writes its
#: whole jobs as one row group, a job of more rows as row groups of this many rows at most
#: (:func:`row_group_bounds`). The buffer holds flat columns (~150 bytes a row; the jobs'
#: objects are released when received) and each row group is built and written at once, so a
#: flush holds one group's columns and Arrow table (~390 bytes a row, < 2 x 3 MB) beside the
#: buffer: a job of 114k attempts, FB-2009's largest, is 14 row groups, no longer one Arrow
#: table of ~45 MB.
ROW_GROUP_ROWS = 1 << 13
_A_FINISHED = 1
_TRUTH = ("work", "noise", "slowdown_launch", "slowdown_median")


def attempt_table(
    atts: list,
    cluster,
    *,
    record_counters: bool,
    rstates: np.ndarray | None = None,
    dstates: np.ndarray | None = None,
    truth: np.ndarray | None = None,
    node_names: np.ndarray | None = None,
) -> pd.DataFrame:
    """Trace rows of ``atts`` (closed :class:`~sim_bridge._engine.Attempt` objects), in order.

    Reads the attempts' columns and hands them to :func:`sim_bridge.trace.tasks_table` (the
    one table builder: columns, dtypes, node names, ``truth_*`` and ``c_*`` columns).

    Parameters
    ----------
    atts : list of Attempt
    cluster : Cluster
        Reads the ``c_*`` counters at each launch.
    record_counters : bool
        Add the ``c_*`` columns (from ``rstates`` and ``dstates``).
    rstates : ndarray (n, 4), optional
        Running count and 1/5/15-minute load averages of each attempt's node at its launch.
    dstates : ndarray (n, 4), optional
        The co-located tenants' demand at each launch (None: co-located contention off).
    truth : ndarray (n, 4), optional
        The ``truth_*`` columns (None: not recorded).
    node_names : ndarray, optional
        The trace's name of each node (:func:`sim_bridge.trace.node_names` when not given).

    Examples
    --------
    >>> from sim_bridge import Cluster, JobSpec, Workload
    >>> from sim_bridge._engine import Simulator
    >>> from sim_bridge.policies import get_policy
    >>> from sim_bridge.trace import TASK_COLUMNS
    >>> cluster, done = Cluster(1, 1, 0, ideal=True), []
    >>> w = Workload("SYN", [JobSpec("j", 0.0, [1.0, 2.0])])
    >>> Simulator(cluster, [w], get_policy("none"), get_policy("fifo"),
    ...     noise=False, skew=(0, 0), keep_history=False, on_job_done=done.append).run()
    >>> atts = [a for job in done for task in job.tasks for a in task.attempts]
    >>> t = attempt_table(atts, cluster, record_counters=False)
    >>> t[["task_id", "node", "duration", "outcome"]].values.tolist()
    [['j-m0', 'n0000', 1.0, 'finished'], ['j-m1', 'n0000', 2.0, 'finished']]
    >>> list(t.columns) == list(TASK_COLUMNS)
    True
    """
    cols = attempt_columns(atts)
    parts = [np.zeros((len(atts), 4)) if rstates is None else np.asarray(rstates, dtype=float)]
    parts += [np.asarray(x, dtype=float) for x in (dstates, truth) if x is not None]
    rec = np.hstack(parts) if len(parts) > 1 else parts[0]
    return columns_table(
        cols,
        rec,
        cluster,
        record_counters=record_counters,
        tenancy=dstates is not None,
        record_truth=truth is not None,
        node_names=node_names,
    )


def columns_table(
    cols: dict[str, np.ndarray],
    rec: np.ndarray,
    cluster,
    *,
    record_counters: bool,
    tenancy: bool = False,
    record_truth: bool = False,
    node_names: np.ndarray | None = None,
) -> pd.DataFrame:
    """Trace rows from :func:`attempt_columns` and the launch records ``rec`` (n, 4 [+ 4
    tenants' demand] [+ 4 truth]: running count and load averages of the node at launch),
    through :func:`sim_bridge.trace.tasks_table`; the ``c_*`` counters are read from the
    cluster's paths at each launch. Row for row the same as :func:`attempt_table`.
    """
    return tasks_table(
        **_row_columns(
            cols,
            rec,
            cluster,
            record_counters=record_counters,
            tenancy=tenancy,
            record_truth=record_truth,
            node_names=node_names,
        )
    )


def _row_columns(
    cols: dict[str, np.ndarray],
    rec: np.ndarray,
    cluster,
    *,
    record_counters: bool,
    tenancy: bool,
    record_truth: bool,
    node_names: np.ndarray | None,
    launch_levels: bool = False,
) -> dict[str, Any]:
    """The keyword arguments of :func:`sim_bridge.trace.tasks_table` for :func:`columns_table`.

    ``rec`` holds per row the running count and load averages at launch, then the co-located
    demand (``tenancy``), the truth (``record_truth``) and the node's background levels at
    launch (``launch_levels``: the counters are computed from them, not from the paths)."""
    node, launch = cols["node"], cols["launch_time"]
    row_job_ids = cols["job_id"]
    phase = cols["phase"]
    at_truth = 4 + 4 * tenancy
    at_levels = at_truth + 4 * record_truth
    counters = None
    if record_counters:
        dem = rec[:, 4:8].T if tenancy else None
        lv = rec[:, at_levels : at_levels + 4].T if launch_levels else None
        c = cluster.counters(
            node, launch, rec[:, 0], rec[:, 1], rec[:, 2], rec[:, 3], dem, levels=lv
        )
        counters = {name: c[name] for name in COUNTER_NAMES}
    truth = None
    if record_truth:
        truth = {k: rec[:, at_truth + i] for i, k in enumerate(_TRUTH)}
    return dict(
        job_id=row_job_ids,
        task_id=task_ids(row_job_ids.tolist(), phase.tolist(), cols["task_index"].tolist()),
        attempt=cols["attempt"],
        workload=cols["workload"],
        node=node,
        phase=phase,
        submit_time=cols["submit_time"],
        launch_time=launch,
        end_time=cols["end_time"],
        outcome=np.where(cols["state"] == _A_FINISHED, "finished", "killed").astype(object),
        input_work=cols["input_work"],
        node_names=trace_node_names(cluster.n_nodes) if node_names is None else node_names,
        truth=truth,
        counters=counters,
    )


class TraceSink:
    """Receives finished jobs (``Simulator(on_job_done=sink.add_job)``) and streams their rows.

    Parameters
    ----------
    cluster : Cluster
    path : path, optional
        The Parquet file to write (its parent must exist). None: the chunks are kept in
        memory and :meth:`close` returns them concatenated (tests compare the two paths).
    record_counters : bool
        Add the ``c_*`` counter columns.
    tenancy : bool
        Each attempt's launch record holds the co-located tenants' demand (4 values).
    record_truth : bool
        Each attempt's launch record ends with its hidden truth (4 values).
    beta : float
        Straggler threshold of the summary (:class:`~sim_bridge._stream_summary.StreamSummary`).
    row_group_rows : int
        Attempts buffered before a flush; a job of more attempts is written in row groups of
        at most this many (:func:`row_group_bounds`).

    Examples
    --------
    >>> import tempfile, pathlib, pyarrow.parquet as pq, sim_bridge
    >>> from sim_bridge import JobSpec
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "tasks.parquet"
    >>> r = sim_bridge.simulate([JobSpec(f"j{i}", float(i), [1.0]) for i in range(3)],
    ...     nodes=1, ideal=True, noise=False, skew=(0, 0), trace_sink=f, progress=False)
    >>> pq.read_table(f).num_rows, r.summary["complete"], r.tasks is None
    (3, True, True)
    """

    def __init__(
        self,
        cluster,
        *,
        path: str | os.PathLike[str] | None = None,
        record_counters: bool = True,
        tenancy: bool = False,
        record_truth: bool = False,
        beta: float = DEFAULT_BETA,
        row_group_rows: int = ROW_GROUP_ROWS,
    ):
        if not (isinstance(row_group_rows, (int, np.integer)) and row_group_rows >= 1):
            raise ValueError(
                f"parameter row_group_rows must be an integer >= 1, got {row_group_rows!r}"
            )
        self.cluster = cluster
        self.path = None if path is None else Path(path)
        self._tmp: Path | None = None
        if self.path is not None:
            if not self.path.parent.is_dir():
                raise FileNotFoundError(
                    f"parameter trace_sink: directory {self.path.parent} does not exist"
                )
            self._tmp = self.path.with_name(f".{self.path.name}.part")
        #: where the engine moves its live jobs' launch records past 64 KiB a job (a hidden
        #: directory beside the file, made at the first spill and removed by :meth:`finish`)
        self.spill = RecordSpill(
            None if self.path is None else self.path.with_name(f".{self.path.name}.spill")
        )
        #: where the engine maps its big live jobs' done-task rows (unlinked files in the same
        #: directory), when that directory is on a disk (:func:`pages_to_disk`)
        self.rows: RowMaps | None = None
        if self.path is not None and pages_to_disk(self.path.parent):
            self.rows = RowMaps(self.path.with_name(f".{self.path.name}.spill"))
        self.record_counters = bool(record_counters)
        self.tenancy = bool(tenancy)
        #: each launch record ends with the node's background levels at launch (set by
        #: ``simulate`` with the engine's ``_launch_levels``): the counters are read from
        #: them, so the sink holds no path steps for its buffered jobs
        self.launch_levels = False
        self.record_truth = bool(record_truth)
        self.row_group_rows = int(row_group_rows)
        self.acc = StreamSummary(beta)
        self._node_names = trace_node_names(cluster.n_nodes)
        #: the buffered jobs' rows: per job its columns (:func:`attempt_columns`) and its
        #: attempts' launch records, read when the job is received (its objects can then go)
        self._parts: list[dict[str, np.ndarray]] = []
        self._recs: list[np.ndarray] = []
        self._n_buf = 0
        #: jobs received whose rows are read: :meth:`Job.release` breaks their cycles at the
        #: next job received, once the engine's hooks for the finish that handed this one
        #: over have run
        self._received: list = []
        #: the oldest submission among the buffered jobs: the counters at their launches are
        #: read at the flush, so the cluster keeps its paths from there (``Cluster.hold``)
        self._oldest = math.inf
        self._rows = JobRows()  # every received job's row (a few numbers a job)
        self._writer: Any = None  # a pyarrow.parquet.ParquetWriter once written
        self._chunks: list[pd.DataFrame] = []
        self.rows_written = 0
        self.row_groups = 0
        self.closed = False

    @property
    def _width(self) -> int:
        """Values in an attempt's launch record."""
        return 4 + 4 * self.tenancy + 4 * self.record_truth + 4 * self.launch_levels

    # -- the engine's callback
    def add_job(self, job) -> None:
        """Read the rows of ``job`` (finished: every attempt closed) into the buffer."""
        if self._received:
            self.release_received()
        if self._n_buf >= self.row_group_rows:
            self.flush()  # the previous job filled the buffer: written now it is released
        cols, offsets = job_attempt_columns(job)
        self._parts.append(cols)
        self._recs.append(self._launch_records(job, offsets))
        self._received.append(job)
        if self.record_counters and not self.launch_levels and job.submit_time < self._oldest:
            self._oldest = job.submit_time
            self.cluster.hold("trace_sink", job.submit_time)
        n = len(cols["node"])
        self._rows.add(job, n)
        self._n_buf += n

    def _launch_records(self, job, offsets: np.ndarray | None) -> np.ndarray:
        """The launch records (n, width) at ``offsets`` in the job's flat ``_recs`` (where the
        engine shed its closed attempts': :func:`sim_bridge._jobs.shed_closed`), or each
        attempt's own list when ``offsets`` is None (an engine that did not shed them)."""
        width = self._width
        if offsets is None:
            atts = [a for task in job.tasks for a in task.attempts]
            return np.array(list(map(attrgetter("_rec"), atts)), dtype=float).reshape(-1, width)
        flat = self.spill.records(job)  # its buffer, after its file's if it spilled
        out = flat.reshape(-1, width)[offsets // width]
        job._recs = None  # read once (the job is done): its flat records go before the flush
        return out

    @property
    def jobs_done(self) -> int:
        """Jobs received so far."""
        return len(self._rows)

    def flush(self) -> None:
        """Write the buffered rows (:func:`row_group_bounds`; nothing when the buffer is
        empty)."""
        parts, recs, n = self._parts, self._recs, self._n_buf
        self._parts, self._recs, self._n_buf = [], [], 0
        if n:
            sizes = [len(r) for r in recs]
            if len(parts) == 1:  # one (big) job: no copy
                cols, rec = parts[0], recs[0]
            else:
                cols = {k: np.concatenate([p[k] for p in parts]) for k in ATTEMPT_COLUMNS}
                rec = np.concatenate(recs)
            del parts, recs
            self._write(cols, rec, sizes)
        if self._oldest != math.inf:
            self._oldest = math.inf
            self.cluster.hold("trace_sink", None)

    def release_received(self) -> None:
        """Release the jobs whose rows are read (:meth:`Job.release`): with the cyclic
        collector paused, their job <-> task <-> attempt cycles would keep them to the end of
        the run. Called at the next :meth:`add_job` and by :meth:`close`."""
        received, self._received = self._received, []
        for job in received:
            job.release()

    def _columns(self, cols: dict[str, np.ndarray], rec: np.ndarray) -> dict[str, np.ndarray]:
        """The trace columns of buffered rows (:func:`columns_table`'s, as flat arrays)."""
        return task_columns(
            **_row_columns(
                cols,
                rec,
                self.cluster,
                record_counters=self.record_counters,
                tenancy=self.tenancy,
                record_truth=self.record_truth,
                node_names=self._node_names,
                launch_levels=self.launch_levels,
            )
        )

    def _write(self, cols: dict[str, np.ndarray], rec: np.ndarray, sizes: list[int]) -> None:
        """Row groups from the buffered columns of jobs of ``sizes`` rows, in order
        (:func:`row_group_bounds`), each built and written at once: a job of 100k attempts
        never holds its whole table. The summary reads the flush whole from the flat columns
        (no pandas)."""
        n = len(rec)
        finished = cols["state"] == _A_FINISHED
        self.acc.add(
            job_id=cols["job_id"],
            attempt=cols["attempt"],
            finished=finished,
            duration=cols["end_time"] - cols["launch_time"],  # tasks_table's ``duration``
            phase=cols["phase"],
        )
        del finished
        self.rows_written += n
        for lo, hi in row_group_bounds(sizes, self.row_group_rows):
            sl = slice(lo, hi)
            columns = self._columns({k: v[sl] for k, v in cols.items()}, rec[sl])
            if self.path is None:
                import pandas as pd

                self._chunks.append(pd.DataFrame(columns))
            else:
                self._write_group(columns)
            del columns

    def _write_group(self, columns: dict[str, np.ndarray]) -> None:
        """One Parquet row group from trace columns (:func:`arrow_array`)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrow = pa.Table.from_arrays(
            [arrow_array(v) for v in columns.values()], names=list(columns)
        )
        if self._writer is None:
            # the system allocator: Arrow's default pool (mimalloc) keeps ~30 MB more resident
            # after encoding a row group of 100k rows (measured on the FB-2009 day's largest job)
            self._writer = pq.ParquetWriter(
                self._tmp, arrow.schema, memory_pool=pa.system_memory_pool()
            )
        self._writer.write_table(arrow, row_group_size=max(arrow.num_rows, 1))
        self.row_groups += 1

    def finish(self, complete: bool = True, stop_reason: str | None = None) -> None:
        """Write what is buffered and close the file (renamed to ``path``; its footer says
        whether the run was ``complete``, see :func:`trace_status`). The job rows stay:
        :meth:`job_columns`, :meth:`jobs_table`, :meth:`summary`."""
        if self.closed:
            raise RuntimeError("the trace sink is already closed")
        self.flush()
        self.release_received()
        self.spill.close()  # the jobs not done (a run stopped early) are not in the trace
        if self.rows is not None:
            self.rows.close()
        if self.path is not None:
            if self._writer is None:  # no row at all: an empty file with the trace's columns
                self._write(attempt_columns([]), np.zeros((0, self._width)), [])
            self._writer.add_key_value_metadata(
                {
                    COMPLETE_KEY: b"true" if complete else b"false",
                    STOP_REASON_KEY: (stop_reason or "").encode(),
                }
            )
            self._writer.close()
            assert self._tmp is not None  # set with the path
            os.replace(self._tmp, self.path)
        self.closed = True

    def job_rows(self) -> dict[str, Any]:
        """The received jobs' rows in arrival order (by ``uid``), as columns with their
        attempt counts: what :func:`sim_bridge.trace.jobs_table` builds the job table from
        (a few numbers a job, no link to the cluster or the jobs' objects)."""
        return self._rows.columns()

    def jobs_table(self) -> pd.DataFrame:
        """The job table of the jobs received (arrival order; pandas imported here)."""
        return jobs_table(**self.job_rows())

    def job_columns(self) -> dict[str, np.ndarray]:
        """The columns of :meth:`jobs_table` that the summary reads, without pandas."""
        cols = self.job_rows()
        submit, finish = cols["submit_time"], cols["finish_time"]
        return {
            "submit_time": submit,
            "finish_time": finish,
            "jct": finish - submit,  # as jobs_table computes them
            "met_deadline": finish <= cols["deadline"],
        }

    def close(
        self, complete: bool = True, stop_reason: str | None = None
    ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
        """:meth:`finish`, then the job table (arrival order) and, without a path, the trace
        (else None)."""
        self.finish(complete, stop_reason)
        jobs = self.jobs_table()
        tasks = None
        if self.path is None:
            import pandas as pd

            tasks = (
                pd.concat(self._chunks, ignore_index=True)
                if self._chunks
                else self._table(attempt_columns([]), np.zeros((0, self._width)))
            )
        return jobs, tasks

    def _table(self, cols: dict[str, np.ndarray], rec: np.ndarray) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._columns(cols, rec))

    def summary(self, jobs: Any = None) -> dict:
        """The summary keys of :func:`sim_bridge.summarize` over what was received (``jobs``:
        a job table, default the sink's own job columns)."""
        return self.acc.summary(self.job_columns() if jobs is None else jobs)


def row_group_bounds(sizes: list[int], rows: int) -> list[tuple[int, int]]:
    """Row ranges ``(lo, hi)`` of the row groups of consecutive jobs of ``sizes`` rows: whole
    jobs together, except that a job of more than ``rows`` rows gets row groups of its own of
    at most ``rows`` rows (one empty group when there is no row).

    Examples
    --------
    >>> row_group_bounds([3, 2, 10, 1], 4)
    [(0, 5), (5, 9), (9, 13), (13, 15), (15, 16)]
    >>> row_group_bounds([], 4)
    [(0, 0)]
    """
    bounds: list[tuple[int, int]] = []
    lo = hi = 0
    for m in sizes:
        if m > rows:
            if hi > lo:
                bounds.append((lo, hi))
            bounds += [(a, min(a + rows, hi + m)) for a in range(hi, hi + m, rows)]
            lo = hi = hi + m
        else:
            hi += m
    if hi > lo or not bounds:
        bounds.append((lo, hi))
    return bounds


def _pandas_major() -> int:
    """The installed pandas' major version, read from its metadata (pandas not imported)."""
    from importlib.metadata import version

    return int(version("pandas").split(".")[0])


def arrow_array(values: np.ndarray) -> Any:
    """A trace column as the Arrow array ``pyarrow.Table.from_pandas`` makes of it (strings:
    ``large_string`` under pandas 3, whose strings are ``str`` columns, else ``string``; an
    empty object column ``null``; NaN floats: null),
    built from its buffers: ``pyarrow.array`` imports pandas to look for pandas types, and a
    streamed run imports no pandas.

    Examples
    --------
    >>> arrow_array(np.array(["ab", "c"], dtype=object)).to_pylist()
    ['ab', 'c']
    >>> arrow_array(np.array([1.5, np.nan])).to_pylist(), arrow_array(np.array([3])).type
    ([1.5, None], DataType(int64))
    """
    import pyarrow as pa

    n = len(values)
    kind = values.dtype.kind
    if kind == "O":
        if not n:
            return pa.nulls(0)
        encoded = [v.encode() for v in values.tolist()]
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.fromiter(map(len, encoded), np.int64, n), out=offsets[1:])
        large = _pandas_major() >= 3
        if not large and offsets[-1] >= 2**31:
            raise ValueError(f"a string column of {offsets[-1]} bytes: too big for one row group")
        kind_, offsets_ = (
            (pa.large_string(), offsets) if large else (pa.string(), offsets.astype(np.int32))
        )
        buffers = [None, pa.py_buffer(offsets_), pa.py_buffer(b"".join(encoded))]
        return pa.Array.from_buffers(kind_, n, buffers, null_count=0)
    if kind == "f":
        data = np.ascontiguousarray(values, dtype=np.float64)
        missing = np.isnan(data)
        nulls = int(missing.sum())
        valid = pa.py_buffer(np.packbits(~missing, bitorder="little")) if nulls else None
        return pa.Array.from_buffers(pa.float64(), n, [valid, pa.py_buffer(data)], nulls)
    if kind in "iu":
        data = np.ascontiguousarray(values, dtype=np.int64)
        return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(data)], null_count=0)
    if kind == "b":
        bits = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(bits)], null_count=0)
    raise TypeError(f"parameter values: no Arrow column for dtype {values.dtype!r}")


def trace_status(path: str | os.PathLike[str]) -> tuple[bool | None, str | None]:
    """``(complete, stop_reason)`` from a Parquet trace's footer (``(None, None)``: a file not
    written by a streaming run, which says nothing).

    Examples
    --------
    >>> import tempfile, pathlib, sim_bridge
    >>> from sim_bridge import JobSpec
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
    >>> _ = sim_bridge.simulate([JobSpec(f"j{i}", float(i), [1.0]) for i in range(9)],
    ...     nodes=1, ideal=True, trace_sink=f, max_events=4, progress=False)
    >>> trace_status(f)
    (False, 'max_events=4')
    """
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path).metadata or {}
    if COMPLETE_KEY not in meta:
        return None, None
    reason = meta.get(STOP_REASON_KEY, b"").decode() or None
    return meta[COMPLETE_KEY] == b"true", reason


def write_trace(
    tasks: pd.DataFrame, path: str | os.PathLike[str], row_group_rows: int = ROW_GROUP_ROWS
) -> int:
    """Write a whole trace to ``path`` in row groups (through a hidden temporary file and a
    rename), its footer marked complete; returns the number of row groups.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "t.parquet"
    >>> write_trace(pd.DataFrame({"x": range(5)}), f, 2), trace_status(f)
    (3, (True, None))
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    tmp = path.with_name(f".{path.name}.part")
    arrow = pa.Table.from_pandas(tasks, preserve_index=False)
    groups = 0
    with pq.ParquetWriter(tmp, arrow.schema) as writer:
        for lo in range(0, max(arrow.num_rows, 1), row_group_rows):
            writer.write_table(arrow.slice(lo, row_group_rows), row_group_size=row_group_rows)
            groups += 1
        writer.add_key_value_metadata({COMPLETE_KEY: b"true", STOP_REASON_KEY: b""})
    os.replace(tmp, path)
    return groups
