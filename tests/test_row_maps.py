"""Issue 13: a streaming run's big live jobs keep their done-task rows in file mappings whose
pages the engine gives back to the kernel (:mod:`sim_bridge._row_maps`).

Oracles: the same runs with the rows in arrays (the maps off), which must give the same trace
and job table bit for bit, and the run kept in memory; plain arrays written alongside the maps
through random writes, page returns, new segments and released jobs (hypothesis); the
process's resident pages before and after a page return; the file system's type as
``/proc/self/mounts`` gives it.
"""

from __future__ import annotations

import sys
from array import array
from pathlib import Path

import pandas as pd
import pytest
from _crowded import crowded_workload, mapreduce_workload
from hypothesis import given, settings
from hypothesis import strategies as st

import sim_bridge
import sim_bridge._engine as engine
import sim_bridge._row_maps as row_maps
import sim_bridge._sim_lifecycle as lifecycle
import sim_bridge._trace_sink as trace_sink
from sim_bridge._jobs import Job
from sim_bridge._row_maps import RowMaps, pages_to_disk

linux = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def _job(n: int) -> Job:
    job = Job()
    job.n_tasks = n
    return job


@pytest.mark.parametrize(
    ("workload", "policy", "nodes", "slots"),
    [
        (lambda: crowded_workload(4, 40), "late", 8, 6),
        (lambda: crowded_workload(4, 40), "mantri", 8, 6),
        (lambda: mapreduce_workload(40, 3, gap=60.0, max_maps=40, map_mu=4.0), "none", 4, 2),
    ],
)
def test_a_trace_does_not_depend_on_the_maps(tmp_path, monkeypatch, workload, policy, nodes, slots):
    """The same streamed run with the rows in arrays, in maps (every job of 8 tasks or more,
    its pages given back every 16 events) with room for 2 closed attempts a task, and with
    room for 0.1 (jobs whose room fills go on in arrays): the same trace and job table, bit for
    bit, and the same rows as the run kept in memory."""
    w = workload()
    kw = {"nodes": nodes, "slots": slots, "seed": 2, "progress": False, "engine": "python"}
    kept = sim_bridge.simulate(w, policy, "fair", **kw)
    monkeypatch.setattr(engine, "_CHECK_EVERY", 16)
    monkeypatch.setattr(row_maps, "GIVE_BACK_TICKS", 1)
    monkeypatch.setattr(row_maps, "ROW_MAP_MIN_TASKS", 8)
    monkeypatch.setattr(row_maps, "ROW_MAP_SEGMENT", 1 << 20)  # 2 MiB free is enough
    seen = {"gives": 0, "jobs": 0, "in_room": 0, "moved": 0}
    real_give, real_pack = RowMaps.give_back, lifecycle.pack_closed

    def give_back(self):
        seen["gives"] += 1
        seen["jobs"] = self.jobs
        real_give(self)

    def pack(task):
        before = type(task.job._many_i)
        done = real_pack(task)
        if done and before is memoryview:
            seen["in_room" if type(task.job._many_i) is memoryview else "moved"] += 1
        return done

    monkeypatch.setattr(RowMaps, "give_back", give_back)
    monkeypatch.setattr(lifecycle, "pack_closed", pack)
    out = {}
    variants = (("arrays", False, 2), ("maps", True, 2), ("small room", True, 0.1))
    for variant, on, room in variants:
        monkeypatch.setattr(row_maps, "MANY_ROOM", room)
        monkeypatch.setattr(trace_sink, "pages_to_disk", lambda d, on=on: on)
        path = tmp_path / f"{variant}.parquet"
        gives = seen["gives"]
        r = sim_bridge.simulate(w, policy, "fair", trace_sink=path, **kw)
        out[variant] = (pd.read_parquet(path), r.jobs)
        assert r.summary["complete"] is True
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            f"{k}.parquet" for k in out
        )  # nothing left beside the trace
        assert (seen["gives"] > gives + 3) == on  # no maps, no returns
        assert not on or seen["jobs"] > 3
    if policy != "none":  # several attempts packed in a mapping's room, some moved out
        assert seen["in_room"] > 10 and seen["moved"] > 0
    for variant in ("maps", "small room"):
        for a, b in zip(out[variant], out["arrays"], strict=True):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
    pd.testing.assert_frame_equal(out["maps"][1], kept.jobs, check_exact=True)
    key = ["job_id", "task_id", "attempt"]
    got = out["maps"][0].sort_values(key).reset_index(drop=True)
    want = kept.tasks.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_exact=True)


@settings(max_examples=30, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 700), min_size=1, max_size=8),
    ops=st.lists(
        st.tuples(
            st.integers(0, 7),
            st.integers(0, 10**6),
            st.integers(-(2**62), 2**62),
            st.floats(allow_nan=False),
            st.sampled_from(["write", "give", "release"]),
        ),
        max_size=60,
    ),  # fmt: skip
)
def test_the_maps_keep_every_byte(tmp_path_factory, sizes, ops):
    """Jobs of random sizes (small segments: several per mapping, a job bigger than one),
    random writes, page returns and releases, against plain arrays; segments whose jobs
    were all released are dropped."""
    maps = RowMaps(tmp_path_factory.mktemp("maps"), min_tasks=3, segment=4 * 4096)
    jobs = [_job(n) for n in sizes]
    want = []
    for job in jobs:
        mapped = maps.assign(job)
        assert mapped == (job.n_tasks >= 3)
        if not mapped:
            job._one, job._done_f = array("q", bytes(32 * job.n_tasks)), None
        want.append((array("q", bytes(32 * job.n_tasks)), array("d", bytes(24 * job.n_tasks))))
    many = {}  # the mapped jobs' attempts' rows, every one written
    for j, job in enumerate(jobs):  # every row written: ranges that overlap would show
        if job._done_f is not None:
            one, done_f = want[j]
            for k in range(len(one)):
                job._one[k] = one[k] = j * 10**7 + k
            for k in range(len(done_f)):
                job._done_f[k] = done_f[k] = j + k / 8
            many[j] = ([-j - k for k in range(len(job._many_i))],
                       [j - k / 4 for k in range(len(job._many_f))])  # fmt: skip
            job._many_i[:] = array("q", many[j][0])
            job._many_f[:] = array("d", many[j][1])
    for j, pos, i, x, op in ops:
        if j >= len(jobs) or jobs[j]._done_f is None:
            continue
        job, (one, done_f) = jobs[j], want[j]
        if op == "write":
            k = pos % len(one)
            job._one[k] = one[k] = i
            f = pos % len(done_f)
            job._done_f[f] = done_f[f] = x
        elif op == "give":
            maps.give_back()
        else:
            job._one = job._done_f = None  # as Job.release leaves it
    maps.give_back()
    for j, (job, (one, done_f)) in enumerate(zip(jobs, want, strict=True)):
        if job._done_f is not None:
            assert job._one.tolist() == one.tolist()
            assert job._done_f.tolist() == done_f.tolist()
            assert (job._many_i.tolist(), job._many_f.tolist()) == many[j]
    live = [j for j in jobs if j._done_f is not None]
    assert sum(len(s.jobs) for s in maps._segments) == len(live)
    assert len(maps._segments) <= len(live) + 1  # the last one stays, to be filled
    maps.close()


def _resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@linux
def test_pages_given_back_leave_the_process(tmp_path):
    """64 MB of rows written: resident while written, out of the process after a page
    return, and read back the same (the reads fault them in again)."""
    maps = RowMaps(tmp_path, segment=1 << 20)
    job = _job(1_200_000)  # 67 MB of rows (and 192 MB of room for attempts, not written)
    if not maps.assign(job):
        pytest.skip("the test's disk has not twice the mapping (259 MB) free")
    before = _resident_mb()
    one, done_f = job._one, job._done_f
    for k in range(0, len(one), 512):  # a value on every page
        one[k] = k
    for k in range(0, len(done_f), 512):
        done_f[k] = k + 0.5
    written = _resident_mb() - before
    assert written > 50
    maps.give_back()
    assert _resident_mb() - before < 0.1 * written
    assert all(one[k] == k for k in range(0, len(one), 512))
    assert all(done_f[k] == k + 0.5 for k in range(0, len(done_f), 512))
    maps.close()
    assert list(tmp_path.iterdir()) == []  # unlinked when mapped


@linux
def test_pages_to_disk_reads_the_file_systems_type(tmp_path):
    """True where /proc/self/mounts says a disk holds the directory, False on tmpfs."""
    mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
    kinds = {m[1]: m[2] for m in mounts if len(m) > 2}
    for where in ("/dev/shm", str(tmp_path)):
        if not Path(where).is_dir():
            continue
        real = Path(where).resolve()
        point = max((p for p in kinds if real == Path(p) or Path(p) in real.parents), key=len)
        assert pages_to_disk(where) == (kinds[point] not in ("tmpfs", "ramfs", "devtmpfs"))


def test_a_job_keeps_arrays_when_no_file_can_be_made(tmp_path, monkeypatch):
    """No file (a full disk, no descriptor): the job is not given maps, and says so."""

    def refuse(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(row_maps, "_Segment", refuse)
    maps = RowMaps(tmp_path / "rows", min_tasks=1)
    job = _job(10)
    assert maps.assign(job) is False and job._one is None and maps.jobs == 0


def test_a_job_keeps_arrays_on_a_disk_nearly_full(tmp_path, monkeypatch):
    """A mapping whose writes the disk might not hold (less than twice its size free) is
    not made: a write there would kill the run."""
    real = row_maps.os.statvfs
    free = {"blocks": 0}

    class Stat:
        def __init__(self, where):
            st = real(where)
            self.f_frsize, self.f_bavail = st.f_frsize, free["blocks"]

    monkeypatch.setattr(row_maps.os, "statvfs", Stat)
    maps = RowMaps(tmp_path, min_tasks=1, segment=1 << 20)
    job = _job(10)
    assert maps.assign(job) is False and job._one is None
    free["blocks"] = (2 << 20) // real(tmp_path).f_frsize  # exactly twice: enough
    assert maps.assign(job) is True and len(job._one) == 40
    maps.close()


def test_bad_parameters_are_named(tmp_path):
    with pytest.raises(ValueError, match="min_tasks must be an integer >= 1, got 0"):
        RowMaps(tmp_path, min_tasks=0)
    with pytest.raises(ValueError, match="segment must be an integer"):
        RowMaps(tmp_path, segment=10)
