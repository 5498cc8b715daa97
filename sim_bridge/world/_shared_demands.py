"""Co-tenants' demands of equal bits share one tuple.

Every running attempt under co-located demand holds its co-tenants' summed demand
(``Attempt._dem``: a tuple of four floats, 168 bytes with its floats), and a node's tenants
get new ones each time its tenants change. The values are few: on an FB-2010 day at 1
simulated hour, 100,798 running attempts held 90,562 tuples of 55 distinct values (one value
86,305 times; a node's tenants are mostly one stage's tasks). :func:`share_demands` gives each
new demand the pool's tuple of the same bits, so the duplicates go as soon as they are made.

Only tuples whose equality means equal bits are shared: four exact floats, no NaN (never
equal) and no ``-0.0`` (equal to ``0.0``). So an attempt's demand has the same floats, and
every computation from it (rates, ends, the trace's launch records) the same results, bit
for bit. An attempt may now get back the very tuple it held before (its demand went back
to an earlier value while that tuple stayed in the pool): its rate memo, which checks the
demand by identity (``memo[1] is att._dem``), then gives the rate it computed for that step
under those same floats, the float a new computation gives (a step's rate is a function of
the node, profile, step and the demand's values): the memo changes no value. The pool is
emptied when it holds ``SHARED_DEMANDS_MAX`` tuples. ``tests/test_shared_demands.py`` holds the
traces to those of runs without sharing.

Examples
--------
>>> pool = {}
>>> a, b = (0.5, 0.0, 0.25, 0.0), (0.5, 0.0, 0.25, 0.0)
>>> dems = [a, None, b, (float("nan"), 0.0, 0.0, 0.0)]
>>> share_demands_py(dems, pool, 8)
>>> dems[2] is a, dems[1] is None, len(pool)
(True, True, 1)
"""

from __future__ import annotations

import math
import os

__all__ = [
    "SHARED_DEMANDS_MAX",
    "SHARE_DEMANDS",
    "share_demands",
    "share_demands_py",
]

#: Tuples the pool holds before it is emptied (about 0.7 MB at most).
SHARED_DEMANDS_MAX = 4096
#: Share equal demands (off: each re-solve keeps the tuples it made; the tests compare).
SHARE_DEMANDS = True

try:  # the compiled loop; share_demands_py when not built
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        raise ImportError("STRAGGLER_NO_EXTENSIONS is set")
    from sim_bridge._tenants_core import share_demands as _share_demands_c
except ImportError:  # pragma: no cover - no C compiler, or an extension built before it
    _share_demands_c = None


def _bits_equal_when_equal(dem: object) -> bool:
    """Whether ``dem`` is a tuple of four exact floats, none NaN or ``-0.0``."""
    if type(dem) is not tuple or len(dem) != 4:
        return False
    for x in dem:
        if type(x) is not float or x != x or (x == 0.0 and math.copysign(1.0, x) < 0.0):
            return False
    return True


def share_demands_py(dems: list, pool: dict, cap: int) -> None:
    """Replace, in place, each demand of ``dems`` that may be shared by ``pool``'s equal
    tuple (adding it when the pool has none, the pool emptied first when it then holds
    ``cap``). Other items (None, a tuple with a NaN or a ``-0.0``) are left as they are.
    The reference of the compiled loop (``sim_bridge._tenants_core.share_demands``)."""
    last = last_out = None  # the last tuple shared, and what it became
    for i, dem in enumerate(dems):
        if dem is last and last is not None:  # a run of one tuple: no hashing
            dems[i] = last_out
            continue
        if not _bits_equal_when_equal(dem):
            continue
        last = dem
        got = pool.get(dem)
        if got is not None:
            dems[i] = last_out = got
            continue
        if len(pool) >= cap:
            pool.clear()
        pool[dem] = last_out = dem


def share_demands(dems: list, pool: dict, cap: int = SHARED_DEMANDS_MAX) -> None:
    """:func:`share_demands_py`, in C when ``sim_bridge._tenants_core`` is built.

    Examples
    --------
    >>> pool, dems = {}, [(0.1, 0.0, 0.0, 0.0), (0.1, 0.0, 0.0, 0.0)]
    >>> share_demands(dems, pool)
    >>> dems[0] is dems[1]
    True
    """
    if _share_demands_c is not None:
        _share_demands_c(dems, pool, cap)
    else:
        share_demands_py(dems, pool, cap)
