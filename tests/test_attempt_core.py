"""The compiled Attempt (``sim_bridge._attempt_core``) against its reference, ``PyAttempt``.

The compiled class holds the attempt's numbers as C fields and its last read (``_prog``) and
deferred solve (``_solve``) as C fields behind properties. To Python it must read and write
as the reference does: the same fields in the same order, the same values after its
constructor and after any writes the engine makes, the same pairs and triples (or None),
the same representation, and it must travel (pickle, deepcopy) with all of it. Whole
replays on the reference classes and the compiled ones give equal tables
(``tests/test_same_tables_on_any_cpu.py`` runs LATE with the extensions off), and the
compiled readers are held to the Python ones in their own tests
(``tests/test_progress_core.py``, ``tests/test_tenancy_fast_paths.py``,
``tests/test_pop_live.py``).
"""

from __future__ import annotations

import copy
import math
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge._jobs import Job, PyAttempt, Task

core = pytest.importorskip("sim_bridge._attempt_core")
CAttempt = core.Attempt
FIELDS = PyAttempt.__slots__  # the names a reader sees, in the reference's order

FLOATS = ("launch_time", "start_fraction", "_end", "_c0", "_work", "_seg_t", "_seg_done")
INTS = ("uid", "index", "node", "state")
OBJECTS = ("task", "end_time", "_dem", "_step_rate", "_rec", "_ckpt", "_pid")

any_float = st.floats(allow_nan=True, allow_infinity=True)
small_int = st.integers(min_value=-(2**62), max_value=2**62)


def _task() -> Task:
    job = Job()
    job.job_id, job.uid, job.finish_time = "j7", 0, None
    return Task(0, job, 2, 0, "map", 10.0, 0.5)


def _same(x, y) -> bool:
    """Equal values of equal types, NaN equal to NaN, item by item in a tuple."""
    if type(x) is not type(y):
        return False
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, float) and math.isnan(x):
        return math.isnan(y)
    return x == y


def _fields(a) -> dict:
    return {name: getattr(a, name) for name in FIELDS}


def test_the_fields_are_the_references():
    assert all(hasattr(CAttempt, name) for name in FIELDS)
    assert set(FLOATS) | set(INTS) | set(OBJECTS) | {"_prog", "_solve"} == set(FIELDS)
    assert CAttempt.OBJECT_FIELDS == OBJECTS


@given(
    uid=small_int,
    index=st.integers(0, 50),
    node=st.integers(0, 10**6),
    launch=any_float,
    sf=st.floats(0.0, 1.0),
    pid=st.one_of(st.none(), st.integers(0, 100)),
)
def test_a_new_attempt_reads_as_the_references(uid, index, node, launch, sf, pid):
    task = _task()
    ref = PyAttempt(uid, task, index, node, launch, sf, pid)
    new = CAttempt(uid, task, index, node, launch, sf, pid)
    got, want = _fields(new), _fields(ref)
    for name in FIELDS:
        assert _same(got[name], want[name]) or got[name] is want[name], name
    assert new.job is ref.job is task.job and new.running is ref.running is True
    assert repr(new) == repr(ref)


writes = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(FLOATS), any_float),
        st.tuples(st.sampled_from(INTS), small_int.filter(lambda x: x >= 0)),
        st.tuples(
            st.just("_prog"),
            st.one_of(st.none(), st.tuples(any_float, any_float)),
        ),
        st.tuples(
            st.just("_solve"),
            st.one_of(st.none(), st.tuples(small_int, any_float, any_float)),
        ),
        st.tuples(
            st.sampled_from(OBJECTS[1:]),
            st.one_of(st.none(), any_float, st.tuples(st.floats(0, 1), st.floats(0, 1))),
        ),
    ),
    max_size=30,
)


@settings(max_examples=200)
@given(writes=writes)
def test_writes_read_back_as_the_references(writes):
    """Any sequence of the engine's writes (numbers to the number fields, pairs, triples or
    None to ``_prog`` and ``_solve``) reads back the same from both classes."""
    task = _task()
    ref = PyAttempt(3, task, 0, 4, 1.5, 0.0)
    new = CAttempt(3, task, 0, 4, 1.5, 0.0)
    for name, value in writes:
        if name == "state":
            value %= 3
        setattr(ref, name, value)
        setattr(new, name, value)
    got, want = _fields(new), _fields(ref)
    for name in FIELDS:
        assert _same(got[name], want[name]) or got[name] is want[name], name
    if ref.state in (0, 1, 2):
        assert repr(new) == repr(ref)


def test_pairs_and_triples_hold_ints_as_the_floats_they_are_read_as():
    """A pair or triple written with ints (by hand) reads back as the engine writes it: the
    time and work as floats, the sequence number as an int."""
    a = CAttempt(0, None, 0, 0, 0.0, 0.0)
    a._prog = (400, 3)
    a._solve = (9, 4, 2)
    assert a._prog == (400.0, 3.0) and type(a._prog[0]) is float
    assert a._solve == (9, 4.0, 2.0) and [type(x) for x in a._solve] == [int, float, float]
    with pytest.raises(ValueError):
        a._prog = (1.0, 2.0, 3.0)
    with pytest.raises(TypeError):
        a._work = "x"


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_an_attempt_travels_with_its_fields(how):
    task = _task()
    a = CAttempt(11, task, 1, 7, 2.5, 0.25, 3)
    a._prog, a._solve, a._dem, a._step_rate = (4.0, 1.5), (9, 4.0, 2.5), (0.1,) * 4, [1, None, 0.2]
    a.state, a.end_time, a._end, a._rec = 2, 6.0, 6.0, 12
    twin = pickle.loads(pickle.dumps(a)) if how == "pickle" else copy.deepcopy(a)
    assert type(twin) is CAttempt
    for name in FIELDS:
        if name != "task":
            assert _same(getattr(twin, name), getattr(a, name)), name
    assert twin.task.task_id == task.task_id


def test_a_subclass_is_read_by_name():
    """A subclass (as the tests that force the readers' Python paths make) keeps the fields."""

    class Sub(CAttempt):
        __slots__ = ()

    s = Sub(1, _task(), 0, 2, 3.0, 0.0)
    s._prog = (5.0, 1.0)
    assert s._prog == (5.0, 1.0) and s._seg_t == 3.0 and type(s) is not CAttempt


def test_the_modules_examples_run():
    """A compiled module's examples are not collected by ``--doctest-modules``."""
    import doctest

    result = doctest.testmod(core)
    assert result.attempted > 0 and result.failed == 0


memo_ops = st.lists(
    st.one_of(
        st.tuples(st.just("get"), st.sampled_from([0, 1, 2, -1, -2, -3])),
        st.tuples(st.just("set"), st.sampled_from([0, -3]), small_int),
        st.tuples(st.just("set"), st.sampled_from([1, -2]), st.sampled_from([None, (0.5,) * 4])),
        st.tuples(st.just("set"), st.sampled_from([2, -1]), any_float),
        st.tuples(st.just("whole"), small_int, st.sampled_from([None, (0.1,) * 4]), any_float),
    ),
    max_size=25,
)


@settings(max_examples=200)
@given(ops=memo_ops)
def test_a_rate_memo_reads_and_writes_as_the_list_it_replaces(ops):
    """``RateMemo`` against ``[step, demand, rate]``: the reads and writes ``Cluster.work_with``
    and the engine make (by index, from the end, whole), its length, items and equality."""
    ref, new = [-1, None, 0.0], core.RateMemo()
    for op in ops:
        if op[0] == "get":
            assert _same(new[op[1]], ref[op[1]]) or new[op[1]] is ref[op[1]]
        elif op[0] == "set":
            ref[op[1]] = op[2]
            new[op[1]] = op[2]
        else:
            ref[:] = op[1:]
            new[:] = op[1:]
    assert len(new) == len(ref) == 3
    assert all(_same(x, y) or x is y for x, y in zip(new, ref, strict=True))
    if not any(isinstance(x, float) and math.isnan(x) for x in ref):
        assert new == ref and new == core.RateMemo(*ref)
    assert new[1] is ref[1]  # the demand is the object written: compared by identity


def test_a_rate_memo_refuses_what_a_memo_never_is():
    m = core.RateMemo()
    with pytest.raises(IndexError):
        m[3]
    with pytest.raises(IndexError):
        m[3] = 1
    with pytest.raises(ValueError):
        m[1:] = (None, 0.0)
    with pytest.raises(TypeError):
        m[2] = "fast"
    assert m != 3 and list(m) == [-1, None, 0.0]
    assert pickle.loads(pickle.dumps(core.RateMemo(4, (0.1,) * 4, 0.5))) == [4, (0.1,) * 4, 0.5]


def test_a_new_memo_is_a_rate_memo_where_the_extension_is_built():
    from sim_bridge._jobs import Attempt, list_memo, new_memo

    assert list_memo() == [-1, None, 0.0]
    assert (type(new_memo()) is core.RateMemo) is (Attempt is CAttempt)
