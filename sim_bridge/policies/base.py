"""The policy plug-in interface: hooks called by the engine, actions returned to it.

Two concerns compose (``sim_bridge/POLICY_API.md``):

* a :class:`PlacementPolicy` decides which waiting task goes to which free slot
  (:meth:`PlacementPolicy.assign`);
* a :class:`SpeculationPolicy` decides when to copy, restart or kill attempts
  (:meth:`SpeculationPolicy.on_job_arrival`, :meth:`SpeculationPolicy.on_attempt_finished`,
  :meth:`SpeculationPolicy.on_tick`, :meth:`SpeculationPolicy.on_wake`).

Hooks read the cluster through a read-only view (``sim_bridge.SimView``) and return a list of
actions: :class:`Launch`, :class:`Kill`, :class:`Wake`. The engine applies them in order and
validates each one; an invalid action raises :class:`PolicyError` naming the policy and the
action. Every hook has a do-nothing default, so a policy overrides only what it needs. Like a
scikit-learn estimator, ``__init__`` only stores parameters; :meth:`Policy.validate` checks
them when the simulation starts (and names the parameter and the bad value).

See ``sim_bridge/POLICY_API.md`` for a walk-through.

Examples
--------
>>> from sim_bridge.policies.base import Launch, SpeculationPolicy
>>> class CopyAtArrival(SpeculationPolicy):
...     "Nothing at arrival; copy the first running attempt on every scan if a slot is free."
...     name = "copy-once"
...     interval = 10.0
...     def on_tick(self, view):
...         if not view.free_slot_count:
...             return []
...         for job in view.active_jobs():
...             for attempt in job.running.values():
...                 if attempt.task.n_live == 1:
...                     return [Launch(attempt.task)]
...         return []
>>> CopyAtArrival().describe()
'Nothing at arrival; copy the first running attempt on every scan if a slot is free.'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from sim_bridge._errors import PolicyError

if TYPE_CHECKING:  # pragma: no cover
    from sim_bridge._engine import Attempt, FreeSlots, Job, SimView, Task

__all__ = [
    "Action",
    "Kill",
    "Launch",
    "PlacementPolicy",
    "Policy",
    "PolicyError",
    "SpeculationPolicy",
    "Wake",
]


@dataclass(frozen=True, slots=True)
class Launch:
    """Start an attempt of ``task``.

    If the task has not started yet (it is waiting), this is its original attempt (attempt 0);
    if it is running, this is a copy (a speculative attempt). ``node=None`` lets the engine
    pick a free slot (it prefers a node that does not already run an attempt of the task).
    ``start_fraction`` in [0, 1) starts the attempt at that byte offset of the task's input,
    so it only has the rest of the work to do (Shed+ transfers progress this way).
    """

    task: Task
    node: int | None = None
    start_fraction: float = 0.0


@dataclass(frozen=True, slots=True)
class Kill:
    """Kill a running attempt; its slot is free at once. A task left with no live attempt goes
    back to the front of its job's waiting tasks (so a kill-and-restart is ``Kill`` then
    ``Launch``)."""

    attempt: Attempt


@dataclass(frozen=True, slots=True)
class Wake:
    """Ask the engine to call the policy again at simulated time ``at`` (>= now).

    For a placement policy the engine runs a placement pass at that time (so a policy may leave
    a free slot idle, e.g. to wait for a better node, with a bounded wait); for a speculation
    policy it calls :meth:`SpeculationPolicy.on_wake`. ``tag`` is passed back unchanged.
    """

    at: float
    tag: Any = None


Action = Launch | Kill | Wake


class Policy:
    """Common base: a name, a one-line description and parameter validation.

    Subclasses set the class attribute ``name`` (the registry key) and document themselves in
    the first line of their docstring (``straggler policies`` prints it).
    """

    #: registry key, e.g. ``"late"``
    name: ClassVar[str] = "policy"
    #: ``"speculation"`` or ``"placement"``
    kind: ClassVar[str] = "speculation"

    def validate(self) -> None:
        """Check parameters; raise ``ValueError`` naming the parameter and the bad value."""

    def reset(self) -> None:
        """Forget state from a previous run (called once before each simulation)."""

    def describe(self) -> str:
        """The first paragraph of the class docstring, on one line."""
        return first_paragraph(type(self).__doc__ or self.name)

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters (public attributes not starting with ``_``)."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


class SpeculationPolicy(Policy):
    """Speculation / replication: decides when to copy, restart or kill attempts.

    The engine calls the hooks below; each returns a list of actions (possibly empty).
    A ``Launch`` of a *running* task needs a free slot: check ``view.free_slot_count`` (the
    placement policy fills free slots with waiting tasks first, at every event).
    """

    kind: ClassVar[str] = "speculation"
    #: seconds between two :meth:`on_tick` scans while jobs are active; ``None``: no scans
    interval: float | None = None

    def on_job_arrival(self, view: SimView, job: Job) -> list[Action]:
        """A job arrived (its first tasks are waiting; none is running yet)."""
        return []

    def on_attempt_launched(self, view: SimView, attempt: Attempt) -> list[Action]:
        """An attempt has just started (original or copy)."""
        return []

    def on_attempt_finished(self, view: SimView, attempt: Attempt) -> list[Action]:
        """``attempt`` finished (its task is done; sibling attempts were already killed)."""
        return []

    def on_tick(self, view: SimView) -> list[Action]:
        """Periodic scan every ``interval`` seconds (like Hadoop's speculator thread)."""
        return []

    def on_wake(self, view: SimView, tag: Any) -> list[Action]:
        """A :class:`Wake` this policy asked for is due."""
        return []


class PlacementPolicy(Policy):
    """Placement: which waiting task goes to which free slot.

    :meth:`assign` is called after every event while there are both free slots and waiting
    tasks. It may leave slots idle (return fewer launches), but then it must return a
    :class:`Wake` or rely on a later event; the engine raises :class:`PolicyError` if tasks
    are waiting, slots are free and nothing more can ever happen.
    """

    kind: ClassVar[str] = "placement"

    def assign(self, view: SimView, free: FreeSlots) -> list[Action]:
        """Return launches for waiting tasks onto free slots (``free`` maps node -> count)."""
        return []

    def on_wake(self, view: SimView, tag: Any) -> list[Action]:
        """A :class:`Wake` this policy asked for is due (default: nothing extra; the engine
        runs a placement pass anyway)."""
        return []


def first_paragraph(doc: str) -> str:
    """The first paragraph of a docstring on one line.

    Examples
    --------
    >>> first_paragraph("  Two\\n    lines.\\n\\n    Rest.")
    'Two lines.'
    """
    lines = []
    for line in doc.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def check_positive(owner: Policy, name: str, value: object, *, allow_zero: bool = False) -> None:
    """Raise ``ValueError`` naming ``owner``'s parameter ``name`` unless ``value`` is positive.

    Examples
    --------
    >>> check_positive(SpeculationPolicy(), "interval", 5.0)
    >>> check_positive(SpeculationPolicy(), "interval", -1)
    Traceback (most recent call last):
    ...
    ValueError: policy: parameter interval must be > 0, got -1
    """
    ok = (
        isinstance(value, (int, float))
        and math.isfinite(value)
        and (value >= 0 if allow_zero else value > 0)
    )
    if not ok:
        op = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{owner.name}: parameter {name} must be {op}, got {value!r}")


def check_fraction(owner: Policy, name: str, value: object) -> None:
    """Raise ``ValueError`` unless ``0 <= value <= 1``.

    Examples
    --------
    >>> check_fraction(SpeculationPolicy(), "quantile", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: policy: parameter quantile must be in [0, 1], got 1.5
    """
    if not (isinstance(value, (int, float)) and 0.0 <= value <= 1.0):
        raise ValueError(f"{owner.name}: parameter {name} must be in [0, 1], got {value!r}")
