"""Issue 13: every node's rates computed a few steps at a time (``Cluster(rate_steps=...)``).

With a window, a streamed run computes the profiles' rates and running sums of every node a
part at a time, as far as a read reaches. On 33,000 nodes a part of the paths' 120 steps is
1 MB a step of them with two profiles, held until the clock passes the part. Smaller rating
parts are dropped as the clock passes them. The oracle is the same cluster that rates whole
parts of the paths: every read and every solve is the same float, bit for bit, and a whole
run's tables are the same.
"""

from __future__ import annotations

import pytest
from _streamed_pair import streamed_equals_in_memory
from hypothesis import given, settings
from hypothesis import strategies as st

from sim_bridge import Cluster
from sim_bridge._cluster import PastPaths
from sim_bridge._simulate import path_part_steps, path_rate_steps

PROFILES = ((0.5, 0.2, 1.0, 0.3), (1.0, 0.0, 0.1, 0.0), (0.0, 0.7, 0.0, 0.9))
EXTEND = 120  # the paths' part on 33,000 nodes


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _finish(c: Cluster, node: int, pid: int, out, demand):
    """A bounded solve gone on with until it ends (as the engine does when its clock gets
    there)."""
    while isinstance(out, PastPaths):
        out = c.end_resume(node, pid, out, demand)
    return out


OPS = st.lists(
    st.tuples(
        st.sampled_from(["end", "end_with", "cum_at", "launch", "pressure", "clock"]),
        st.integers(0, 4),  # node
        st.integers(0, 2),  # profile (the next one not yet registered: registered now)
        st.floats(0.0, 1.0),  # how far
    ),
    min_size=4,
    max_size=30,
)


@settings(max_examples=30, deadline=None)
@given(rate_steps=st.sampled_from([1, 8, 10, 24, 60]), ops=OPS)
def test_reads_and_solves_are_the_same_floats(rate_steps, ops):
    """A window that follows a clock, read as a streamed run's engine reads it (the rates
    from the clock on, bounded solves and their resumes, cumulative work, launch points and
    pressure, profiles registered along the way), gives the same floats when every node's
    rates are computed ``rate_steps`` at a time as when a whole part of the paths is."""
    whole, part = (
        Cluster(5, 2, seed=4, keep_paths=False, extend_steps=EXTEND, rate_steps=r)
        for r in (EXTEND, rate_steps)
    )
    both = (whole, part)
    n_pids, clock = 0, 0.0
    for c in both:
        c.hold("test", clock, rates_from=clock)
    for kind, node, p, x in ops:
        if p >= n_pids:
            assert [c.profile_id(PROFILES[n_pids]) for c in both] == [n_pids] * 2
            p, n_pids = n_pids, n_pids + 1
        if kind == "clock":  # the clock goes on; the steps before it are released
            clock += x * 3 * EXTEND * 60.0
            for c in both:
                c.hold("test", clock, rates_from=clock)
            continue
        t0 = clock + x * 1800.0
        if kind in ("end", "end_with"):
            work = 1.0 + x * 4 * EXTEND * 60.0
            demand = (0.1, 0.0, 0.3 * x, 0.0) if kind == "end_with" else (0.0,) * 4
            first = [c.end_with(node, p, t0, work, demand, within=True) for c in both]
            out = [_finish(c, node, p, o, demand) for c, o in zip(both, first, strict=True)]
        elif kind == "cum_at":
            out = [c.cum_at(node, p, t0) for c in both]
        elif kind == "launch":
            out = [c.launch_point(node, p, t0) for c in both]
        else:
            out = [c.pressure(node, p, t0) for c in both]
        assert out[0] == out[1], (kind, out)
        assert part.rates_base_step >= part.base_step


@settings(max_examples=20, deadline=None)
@given(
    rate_steps=st.sampled_from([5, 10, 15, 30]),
    moves=st.lists(st.integers(1, 40), min_size=5, max_size=40),
)
def test_the_rates_kept_follow_the_clock(rate_steps, moves):
    """With the rates held from a clock that reads them at the clock, the rates kept after
    each read reach back less than two rating parts before the previous hold, whatever the
    paths' part: the steps the clock went on by since, the part the clock is in and at most
    one not yet released. (The paths' first part is rated whole when the cluster is made,
    before any hold: the clock starts past it.)"""
    c = Cluster(6, 2, seed=5, keep_paths=False, extend_steps=EXTEND, rate_steps=rate_steps)
    pid = c.profile_id(PROFILES[0])
    k, most = EXTEND, 0
    c.hold("engine", k * 60.0, rates_from=k * 60.0)
    c.cum_at(3, pid, k * 60.0 + 1.0)
    for step in moves:
        k += step
        c.hold("engine", k * 60.0, rates_from=k * 60.0)
        c.cum_at(3, pid, k * 60.0 + 1.0)  # a read at the clock
        kept = c._rhorizon - c.rates_base_step
        most = max(most, kept)
        assert c.rates_base_step <= k < c._rhorizon
        assert kept < step + 2 * rate_steps, (k, kept)
    assert most >= 1


@settings(max_examples=50, deadline=None)
@given(
    nodes=st.integers(1, 200_000),
    extend=st.sampled_from(_divisors(1440)),
    cap=st.integers(1, 64 << 20),
)
def test_path_rate_steps_is_the_largest_part_that_fits(nodes, extend, cap):
    """The obvious search: every divisor of the paths' part, the largest whose rates and
    running sums of one profile (16 bytes a node and step) fit."""
    got = path_rate_steps(nodes, extend, cap)
    fits = [d for d in _divisors(extend) if 16 * nodes * d <= cap]
    assert got == (max(fits) if fits else 1)
    assert extend % got == 0


def test_the_default_parts_on_the_fb2010_cluster():
    """On FB-2010's 33,000 nodes the paths grow by 2 h and the rates by 15 min (8 MiB a
    profile); a small cluster rates whole parts of its paths."""
    assert path_part_steps(33_000) == 120 and path_rate_steps(33_000, 120) == 15
    assert path_rate_steps(20, path_part_steps(20)) == path_part_steps(20)


@pytest.mark.parametrize("bad", [0, 7, 240, 2.5, "10", None])
def test_a_cluster_names_a_bad_rating_part(bad):
    if bad is None:  # the default: the paths' part
        assert Cluster(3, 1, extend_steps=60).rate_steps == 60
        return
    with pytest.raises(
        ValueError, match=f"rate_steps must be a divisor of extend_steps=120, got {bad!r}"
    ):
        Cluster(3, 1, extend_steps=120, rate_steps=bad)


class _Spy(Cluster):
    """A cluster that records the rates it keeps at each hold."""

    made: list[_Spy] = []

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.kept: list[int] = []
        _Spy.made.append(self)

    def hold(self, reader, t, *, rates_from=None, nodes=None):
        super().hold(reader, t, rates_from=rates_from, nodes=nodes)
        self.kept.append(self._rhorizon - self.rates_base_step)


@pytest.mark.parametrize("policy", ["late", "none"])
def test_a_streamed_run_rating_small_parts_is_the_in_memory_run(tmp_path, monkeypatch, policy):
    """A streamed run whose cluster rates 3 steps at a time writes the in-memory run's trace
    and job table, bit for bit."""
    cl = streamed_equals_in_memory(tmp_path, monkeypatch, policy, _Spy, rate_steps=3)
    assert cl.rate_steps == 3 and cl.kept
