"""A control for the predictor placement: refuse free nodes at random, at a given rate.

:class:`~sim_bridge.policies.PredictorPlacement` holds tasks back from nodes its predictor
distrusts, which both avoids bad nodes (the value of the prediction) and spreads load and
delays launches (a value any refusal has). :class:`RandomRefusalPlacement` refuses as often
but knowing nothing: each free node a task looks at is refused independently with probability
``refusal_rate``, with the same bounded wait. Run it at a predictor run's ``refusal_rate_``;
what the predictor gains beyond the control is the value of what it knows.

Examples
--------
>>> import sim_bridge
>>> from sim_bridge.policies import ConstantPredictor, PredictorPlacement
>>> jobs = [sim_bridge.JobSpec(f"j{i}", 15.0 * i, [20.0] * 6) for i in range(8)]
>>> informed = PredictorPlacement(ConstantPredictor(0.0))
>>> _ = sim_bridge.simulate(jobs, "late", informed, nodes=6, seed=1)
>>> informed.refusal_rate_  # this predictor never refuses
0.0
>>> control = RandomRefusalPlacement(refusal_rate=informed.refusal_rate_, seed=3)
>>> r = sim_bridge.simulate(jobs, "late", control, nodes=6, seed=1)
>>> r.summary["placement"], control.stats_["node_refusals"]
('random-refusal', 0)
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from sim_bridge.policies._placement import ORDERS, HeldDeadlines, TaskQueue
from sim_bridge.policies._predictor import refusal_rate
from sim_bridge.policies._registry import register_policy
from sim_bridge.policies.base import Launch, PlacementPolicy, Wake, check_fraction, check_positive

__all__ = ["RandomRefusalPlacement"]

_WAKE_TAG = "random-refusal"


@register_policy
class RandomRefusalPlacement(PlacementPolicy):
    """Random refusal (control): refuse each free node with probability refusal_rate; launch
    anyway after max_wait seconds.

    Parameters
    ----------
    refusal_rate : float in [0, 1]
        Probability that a task refuses a free node it looks at (0: FIFO).
    max_wait : float
        Seconds a task may be held back after it was first refused everywhere; then it
        launches on the least recently freed free node (there are no scores to pick a best).
    seed : int
        Seed of the policy's own ``numpy.random.Generator`` (built in :meth:`reset`, so every
        run with the same seed makes the same draws).

    Attributes
    ----------
    stats_ : dict of str to int
        Counts of the last run, as :class:`~sim_bridge.policies.PredictorPlacement` counts
        them: ``launches``, ``refused`` (task-passes in which a task was held back),
        ``forced``, ``node_checks`` and ``node_refusals`` (the (task, free node) pairs looked
        at, and those refused).
    refusal_rate_ : float
        ``node_refusals / node_checks`` of the last run (NaN if no node was looked at); close
        to ``refusal_rate`` on a long run.

    Notes
    -----
    Waiting tasks are taken in ``order`` (``"fair"`` or ``"fifo"``, as the predictor placement)
    and each looks at the nodes with a free slot
    in least-recently-freed order, refusing each one independently with probability
    ``refusal_rate`` and launching on the first it accepts, as the predictor placement's
    threshold mode does with its scores. The draws are fresh for every task and every pass
    (one geometric draw per task: the number of refusals before the first acceptance). A
    task refused on every free node waits, at most ``max_wait`` seconds after its first such
    refusal (a :class:`~sim_bridge.policies.base.Wake` at its deadline), and is looked at
    again at every later pass. As in the predictor placement, once a job has as many tasks
    held in a pass as there are free slots, its other tasks wait for the next pass.

    Examples
    --------
    >>> import sim_bridge
    >>> jobs = [sim_bridge.JobSpec("j", 0.0, [20.0] * 4)]
    >>> pol = RandomRefusalPlacement(refusal_rate=1.0, max_wait=5.0)
    >>> sim_bridge.simulate(jobs, "none", pol, nodes=4, seed=1).tasks["launch_time"].tolist()
    [5.0, 5.0, 5.0, 5.0]
    >>> pol.refusal_rate_
    1.0
    """

    name = "random-refusal"

    def __init__(
        self, refusal_rate: float = 0.2, max_wait: float = 20.0, seed: int = 0, order: str = "fair"
    ):
        self.refusal_rate = refusal_rate
        self.max_wait = max_wait
        self.seed = seed
        self.order = order

    def validate(self) -> None:
        check_fraction(self, "refusal_rate", self.refusal_rate)
        check_positive(self, "max_wait", self.max_wait, allow_zero=True)
        if not (isinstance(self.order, str) and self.order in ORDERS):
            raise ValueError(
                f"{self.name}: parameter order must be one of {list(ORDERS)}, got {self.order!r}"
            )
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"{self.name}: parameter seed must be an int >= 0, got {seed!r}")

    def reset(self) -> None:
        self._rng = np.random.default_rng(self.seed)
        self._q = float(self.refusal_rate)
        self._deadline = HeldDeadlines(self.max_wait)  # task uid -> (task, launch by)
        self._wake_at = math.inf
        #: counts of the last run (the keys PredictorPlacement uses for the same things)
        self.stats_: dict[str, int] = dict.fromkeys(
            ("launches", "refused", "forced", "node_checks", "node_refusals"), 0
        )

    @property
    def refusal_rate_(self) -> float:
        """Share of the (task, free node) pairs looked at in the last run that were refused
        (``stats_["node_refusals"] / stats_["node_checks"]``; NaN if none was looked at)."""
        stats = getattr(self, "stats_", None)
        if stats is None:
            raise AttributeError(
                f"{type(self).__name__} has no refusal_rate_ before a run (simulate first)"
            )
        return refusal_rate(stats)

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params.pop("stats_", None)
        return params

    def _refusals(self, m: int) -> int:
        """Refusals before the first acceptance among ``m`` nodes (``m``: refused by all)."""
        q = self._q
        if q <= 0.0:
            return 0
        if q >= 1.0:
            return m
        return min(int(self._rng.geometric(1.0 - q)) - 1, m)

    def assign(self, view, free):
        """Launch waiting tasks (job arrival order) on the first free node, in
        least-recently-freed order, that a random draw does not refuse; a task refused
        everywhere waits until its deadline, then takes the least recently freed node."""
        now = view.now
        slots = dict(free)
        alive = [n for n in slots if slots[n]]  # nodes with a free slot, LRF order
        deadlines = self._deadline
        deadlines.start(now)
        draw = self._refusals
        out: list = []
        st = self.stats_
        n_refused = n_checks = n_refusals = 0
        queue = TaskQueue(view, self.order, sum(slots.values()))
        for _job, task in queue:
            m = len(alive)
            k = draw(m)
            n_refusals += k
            if k < m:
                n_checks += k + 1
                j = k
            else:
                n_checks += m
                if deadlines.may_wait(task):
                    queue.hold()
                    n_refused += 1
                    continue
                j = 0
                st["forced"] += 1
            node = alive[j]
            deadlines.pop(task.uid, None)
            out.append(Launch(task, node))
            queue.launched()
            st["launches"] += 1
            slots[node] -= 1
            if not slots[node]:
                del alive[j]
        st["refused"] += n_refused
        st["node_checks"] += n_checks
        st["node_refusals"] += n_refusals
        deadlines.prune(view.waiting_count)
        earliest = deadlines.earliest
        if earliest < math.inf and queue.n_free and not (now < self._wake_at <= earliest):
            self._wake_at = earliest
            out.append(Wake(earliest, _WAKE_TAG))
        return out

    def on_wake(self, view, tag):
        if tag == _WAKE_TAG and view.now >= self._wake_at:
            self._wake_at = math.inf
        return []
