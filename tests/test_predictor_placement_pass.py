"""One placement pass of PredictorPlacement (threshold and rank modes) against a slow,
obvious oracle: the lazy, cached bookkeeping of ``_FirstFit`` / ``_Ranked`` (skipping a
workload's refused or full nodes, returning at once when every free node was refused) must
pick the same nodes and count the same (task, free node) checks and refusals as a plain scan
of every node with a free slot, for random slot maps, scores and task sequences."""

from __future__ import annotations

import numpy as np
import pytest

from sim_bridge.policies._predictor import _FirstFit, _Ranked

THRESHOLD = 0.5
WORKLOADS = ("a", "b", "c")


class _Scores:
    """A scorer stand-in: a fixed probability per (node, workload) for the whole pass."""

    def __init__(self, table: dict[tuple[int, str], float]):
        self.table = table

    def score(self, node, running, workload):
        return self.table[(node, workload)]

    def scores(self, nodes, running, workload):
        return [self.table[(n, workload)] for n in nodes]


class _View:
    def node_running(self, node):
        return 0


def _oracle_pick(slots: dict[int, int], table, w: str, rank: bool):
    """(chosen node or None, checks, refusals, least risky node) by scanning every node with
    a free slot in least-recently-freed order."""
    alive = [n for n, s in slots.items() if s]
    above = [n for n in alive if table[(n, w)] > THRESHOLD]
    best = min(alive, key=lambda n: table[(n, w)])  # min keeps the first on ties
    if rank:
        node = best if table[(best, w)] <= THRESHOLD else None
        return node, len(alive), len(above), best
    node = next((n for n in alive if table[(n, w)] <= THRESHOLD), None)
    # threshold mode: the nodes before the first acceptable one are looked at; without one,
    # every free node is looked at and refused
    if node is None:
        return None, len(alive), len(alive), best
    before = alive[: alive.index(node)]
    return node, len(before) + 1, len(before), best


@pytest.mark.parametrize("rank", [False, True], ids=["threshold", "rank"])
@pytest.mark.parametrize("seed", range(40))
def test_pass_matches_a_plain_scan(seed: int, rank: bool):
    rng = np.random.default_rng(seed)
    n_nodes = int(rng.integers(1, 9))
    order = [int(n) for n in rng.permutation(20)[:n_nodes]]  # node ids, LRF order
    free = {n: int(rng.integers(1, 4)) for n in order}
    # coarse scores: ties and values at the threshold happen
    table = {(n, w): float(rng.choice([0.1, 0.3, 0.5, 0.7, 0.9])) for n in order for w in WORKLOADS}
    nodes = (_Ranked if rank else _FirstFit)(_Scores(table), _View(), free, THRESHOLD)
    slots = dict(free)
    checks = refusals = 0
    while nodes.n_free:
        w = str(rng.choice(WORKLOADS))
        want, c, r, best = _oracle_pick(slots, table, w, rank)
        got = nodes.acceptable(w)
        checks += c
        refusals += r
        assert got == want
        assert (nodes.checks, nodes.refusals) == (checks, refusals)
        if got is None:
            if rng.random() < 0.6:
                continue  # held: the next task looks again
            got = nodes.least_risky(w)  # forced at its deadline
            assert got == best
        nodes.take(got)
        slots[got] -= 1
        assert nodes.n_free == sum(slots.values())
