"""A streaming run's big live jobs' done-task rows, in file-backed maps the OS pages.

A done task of a live job is a row in its job (:func:`sim_bridge._jobs.task_to_row`: 4 ints
in ``Job._one``, 3 floats in ``Job._done_f``; 56 bytes a task, allocated for all the job's
tasks at its first done one). The jobs alive at 24 h of an FB-2010 day hold 8.6M tasks, so
their rows are some 480 MB that nothing reads until the job ends, except a policy that reads
a done task again; a done task that ran several attempts adds 80 bytes an attempt
(``Job._many_i``, ``Job._many_f``: :mod:`sim_bridge._closed_attempts`). :class:`RowMaps`
gives a job of at least ``min_tasks`` tasks those four arrays (the last two with room for
:data:`MANY_ROOM` attempts a task) as views of a shared file mapping (a sparse file,
unlinked as soon as it is mapped: nothing is left on disk, even by a run that is killed),
and :meth:`RowMaps.give_back` returns the mapped pages to the kernel
(``madvise(MADV_DONTNEED)``). The rows stay in the file and the page cache: a later read
faults its page back in, with the same bytes, so no value of the run changes. They leave the
process's resident memory, and the kernel may write them to disk and reclaim them under
pressure, as it does for any file.

A write to a sparse file's page that the disk has no room for kills the process (``SIGBUS``)
instead of raising, so a mapping is made only while the disk has twice its size free
(:data:`FREE_FACTOR`); otherwise the job keeps arrays. A disk filled by something else during
the run can still do it: the trace, written to a ``.part`` file renamed at its end, is then
not mistaken for a complete one.

This only moves memory out of the process if the file is on a disk: on a ``tmpfs`` or
``ramfs`` (where ``/tmp`` is on some systems) the page cache is the memory itself, so
:func:`pages_to_disk` is False there and the jobs keep their rows in memory, as without this
module.

Examples
--------
>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> from sim_bridge._jobs import Job
>>> maps = RowMaps(d, min_tasks=4)
>>> small, big = Job(), Job()
>>> small.n_tasks, big.n_tasks = 3, 5
>>> maps.assign(small), small._one  # a small job keeps its rows in arrays of its own
(False, None)
>>> maps.assign(big), len(big._one), len(big._done_f), big._one[3], big._done_f[2]
(True, 20, 15, 0, 0.0)
>>> len(big._many_i), len(big._many_f), big._many_n  # room for 2 attempts a task
(40, 60, 0)
>>> big._one[3], big._done_f[2] = 41, 2.5
>>> maps.give_back()  # the pages go back to the kernel; the bytes stay
>>> big._one[3], big._done_f[2]
(41, 2.5)
>>> maps.close()
"""

from __future__ import annotations

import mmap
import os
import tempfile
from pathlib import Path
from typing import Any

from sim_bridge._closed_attempts import MANY_F, MANY_I
from sim_bridge._jobs import DONE_F, ONE_ROW

__all__ = [
    "FREE_FACTOR",
    "GIVE_BACK_TICKS",
    "MANY_ROOM",
    "ROW_MAP_MIN_TASKS",
    "ROW_MAP_SEGMENT",
    "RowMaps",
    "pages_to_disk",
]

#: a job's rows go to a map from this many tasks (224 KiB of rows); smaller jobs keep arrays
#: (most of the rows alive are big jobs': FB-2010's tasks are in jobs of thousands)
ROW_MAP_MIN_TASKS = 4096

#: the bytes of one file mapping; a job's rows start on a page of their own
ROW_MAP_SEGMENT = 1 << 30

#: a mapping is made only while its disk has this many times its size free
FREE_FACTOR = 2

#: the engine's checks (every 1,024 events) between two page returns (:meth:`RowMaps.tick`):
#: a page written since faults back in once (a few microseconds), so not at every check
GIVE_BACK_TICKS = 64

#: closed attempts' rows a job's mapping has room for, a task (its done tasks that ran several
#: attempts, ``Job._many_i`` and ``Job._many_f``: 80 bytes an attempt); past it the job's
#: further rows go on in arrays (:func:`sim_bridge._closed_attempts.pack_closed`). Under LATE
#: two in five tasks ran two attempts: 0.9 a task. Room not written costs neither memory nor
#: disk (a sparse file)
MANY_ROOM = 2

_PAGE = mmap.PAGESIZE
_ONE_BYTES = 8 * ONE_ROW  # a task's ints in Job._one
_DONE_BYTES = 8 * DONE_F  # a task's floats in Job._done_f
_MANY_I_BYTES = 8 * MANY_I  # a closed attempt's ints in Job._many_i
_MANY_F_BYTES = 8 * MANY_F  # a closed attempt's floats in Job._many_f
_MEMORY_FS = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs"})


def pages_to_disk(directory: str | Path) -> bool:
    """Whether a file in ``directory`` is backed by a disk, so that pages the process gives
    back leave memory (False on ``tmpfs``/``ramfs``, whose page cache is the memory, and
    where the file system's type cannot be read from ``/proc/self/mounts``).

    Examples
    --------
    >>> import sys
    >>> pages_to_disk("/dev/shm") if sys.platform == "linux" else False
    False
    """
    if not hasattr(mmap, "MADV_DONTNEED"):
        return False
    try:
        where = os.path.realpath(directory)
        best, kind = "", None
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                point = parts[1].replace("\\040", " ")
                inside = where == point or where.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, parts[2]
    except OSError:
        return False
    return kind is not None and kind not in _MEMORY_FS


class _Segment:
    """One file mapping, handed out from its start (``used`` bytes so far) to ``jobs``."""

    __slots__ = ("jobs", "map", "used")

    def __init__(self, directory: Path, size: int):
        # a file without a name (unlinked at once, or O_TMPFILE): the mapping keeps it alive,
        # and nothing of it outlives the process
        with tempfile.TemporaryFile(prefix="rows-", dir=directory) as f:
            os.ftruncate(f.fileno(), size)  # sparse: no block is written until a row is
            self.map = mmap.mmap(f.fileno(), size)
        self.used = 0
        #: the jobs given rows here and not released yet
        self.jobs: list[Any] = []


class RowMaps:
    """The row arrays of a streaming run's big live jobs, as views of file mappings.

    Parameters
    ----------
    directory : path
        Where the (unlinked) files are made: beside the trace, on its disk.
    min_tasks : int, optional
        Jobs of fewer tasks keep arrays (:meth:`assign`; default :data:`ROW_MAP_MIN_TASKS`).
    segment : int, optional
        Bytes of one mapping (default :data:`ROW_MAP_SEGMENT`); a job whose rows need more
        gets a mapping of its own.
    """

    def __init__(
        self, directory: str | Path, min_tasks: int | None = None, segment: int | None = None
    ):
        min_tasks = ROW_MAP_MIN_TASKS if min_tasks is None else min_tasks
        segment = ROW_MAP_SEGMENT if segment is None else segment
        if not (isinstance(min_tasks, int) and min_tasks >= 1):
            raise ValueError(f"parameter min_tasks must be an integer >= 1, got {min_tasks!r}")
        if not (isinstance(segment, int) and segment >= _PAGE):
            raise ValueError(f"parameter segment must be an integer >= {_PAGE}, got {segment!r}")
        self.directory = Path(directory)
        self.min_tasks = min_tasks
        self.segment = segment
        self._segments: list[_Segment] = []
        self._made = False  # whether the directory was made here (close removes it)
        self._ticks = 0
        #: jobs given rows here, and the bytes of those rows
        self.jobs = 0
        self.bytes = 0

    def assign(self, job: Any) -> bool:
        """Give ``job`` (of ``job.n_tasks`` tasks) its ``_one`` and ``_done_f`` (``4 *
        n_tasks`` int64 and ``3 * n_tasks`` float64) and the room of its ``_many_i`` and
        ``_many_f`` (:data:`MANY_ROOM` attempts a task), all zero, in a mapping. False, and
        nothing set, for a job under ``min_tasks``, or when no file can be made or its disk
        has not :data:`FREE_FACTOR` times its size free (the job then keeps arrays, as
        without maps)."""
        n = job.n_tasks
        if n < self.min_tasks:
            return False
        room = int(MANY_ROOM * n)
        sizes = (_ONE_BYTES * n, _DONE_BYTES * n, _MANY_I_BYTES * room, _MANY_F_BYTES * room)
        need = -(-sum(sizes) // _PAGE) * _PAGE
        seg = self._segments[-1] if self._segments else None
        if seg is None or seg.used + need > len(seg.map):
            try:
                if not self.directory.is_dir():
                    self.directory.mkdir(parents=True)
                    self._made = True
                size = max(self.segment, need)
                st = os.statvfs(self.directory)
                if st.f_bavail * st.f_frsize < FREE_FACTOR * size:
                    return False  # a full disk would kill the run (module doc): arrays
                seg = _Segment(self.directory, size)
            except OSError:  # no descriptor, no file: the job keeps its rows in memory
                return False
            self._segments.append(seg)
        lo = seg.used
        seg.used = lo + need
        whole = memoryview(seg.map)
        views: list[memoryview] = []
        for size, code in zip(sizes, ("q", "d", "q", "d"), strict=True):
            views.append(whole[lo : lo + size].cast(code))  # type: ignore[call-overload]
            lo += size
        job._one, job._done_f, job._many_i, job._many_f = views
        seg.jobs.append(job)
        self.jobs += 1
        self.bytes += need
        return True

    def tick(self) -> None:
        """The engine's periodic check: :meth:`give_back` at every
        :data:`GIVE_BACK_TICKS`-th call."""
        self._ticks += 1
        if self._ticks >= GIVE_BACK_TICKS:
            self._ticks = 0
            self.give_back()

    def give_back(self) -> None:
        """Return every mapping's pages to the kernel (their bytes stay in the file), and drop
        the mappings whose jobs all let their rows go (``Job.release``)."""
        keep = []
        last = self._segments[-1] if self._segments else None
        for seg in self._segments:
            seg.jobs = [j for j in seg.jobs if j._one is not None]
            if seg is not last and not seg.jobs:
                continue  # unmapped once the last view of it goes
            if seg.used:
                seg.map.madvise(mmap.MADV_DONTNEED, 0, seg.used)
            keep.append(seg)
        self._segments = keep

    def close(self) -> None:
        """Forget every mapping (each is unmapped once the last view of it goes), and remove
        the directory if it was made here and is empty."""
        self._segments = []
        if self._made:
            self._made = False
            try:
                self.directory.rmdir()
            except OSError:  # not empty (another run's files) or gone already
                pass
