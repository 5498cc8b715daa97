"""The policy registry: names -> policy classes, for the CLI and the conformance tests."""

from __future__ import annotations

import inspect
from typing import Any

from sim_bridge.policies.base import Policy, first_paragraph


class UnknownPolicyError(KeyError):
    """No policy is registered under that name (the message lists the registered ones)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


#: name -> policy class (speculation and placement policies share one namespace)
registry: dict[str, type[Policy]] = {}


def register_policy(cls: type[Policy]) -> type[Policy]:
    """Class decorator adding ``cls`` to :data:`registry` under ``cls.name``.

    Registering another class under a taken name raises ``ValueError``.

    Examples
    --------
    >>> from sim_bridge.policies.base import SpeculationPolicy
    >>> @register_policy
    ... class _Doc(SpeculationPolicy):
    ...     "A doctest policy."
    ...     name = "_doctest_policy"
    >>> get_policy("_doctest_policy").describe()
    'A doctest policy.'
    >>> _ = registry.pop("_doctest_policy")
    """
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"policy class {cls.__qualname__} has no usable `name`: {name!r}")
    other = registry.get(name)
    if other is not None and other is not cls:
        raise ValueError(
            f"policy name {name!r} is already registered by {other.__module__}.{other.__qualname__}"
        )
    registry[name] = cls
    return cls


def get_policy(name: str | Policy, **params: Any) -> Policy:
    """Instantiate the registered policy ``name`` with ``params`` (an instance passes through).

    Examples
    --------
    >>> get_policy("spark", quantile=0.9, multiplier=3.0).multiplier
    3.0
    >>> get_policy("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sim_bridge.policies._registry.UnknownPolicyError: unknown policy 'nope'; registered: ...
    """
    if isinstance(name, Policy):
        if params:
            raise ValueError(f"parameters {sorted(params)} given with a policy instance {name!r}")
        return name
    try:
        cls = registry[name]
    except KeyError:
        known = ", ".join(sorted(registry))
        raise UnknownPolicyError(f"unknown policy {name!r}; registered: {known}") from None
    sig = inspect.signature(cls).parameters.values()
    accepted = [p.name for p in sig if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    open_ended = any(p.kind == p.VAR_KEYWORD for p in sig)
    if not open_ended and (unknown := sorted(set(params) - set(accepted))):
        raise ValueError(
            f"{name}: unknown parameter {unknown[0]}={params[unknown[0]]!r}; "
            f"{name} accepts {accepted or 'no parameters'}"
        )
    return cls(**params)


def list_policies(kind: str | None = None) -> dict[str, str]:
    """Registered policy names -> one-line descriptions, sorted by name (``kind`` filters
    ``"speculation"`` or ``"placement"``).

    Examples
    --------
    >>> "late" in list_policies("speculation") and "fifo" in list_policies("placement")
    True
    """
    out = {}
    for name in sorted(registry):
        cls = registry[name]
        if kind is not None and cls.kind != kind:
            continue
        out[name] = first_paragraph(cls.__doc__ or name)
    return out
