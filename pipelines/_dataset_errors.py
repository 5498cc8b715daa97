"""The error of a trace that breaks the schema of :mod:`sim_bridge.trace`.

Examples
--------
>>> issubclass(TraceError, ValueError)
True
"""

from __future__ import annotations

__all__ = ["TraceError"]


class TraceError(ValueError):
    """A trace breaks the schema of :mod:`sim_bridge.trace`; the message names column and value."""
