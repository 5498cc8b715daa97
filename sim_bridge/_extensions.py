"""The optional compiled extensions, loaded when they were built and allowed.

Every ``sim_bridge._*_core`` module is optional: an install without a C compiler runs the
Python references, and ``STRAGGLER_NO_EXTENSIONS=1`` makes ``sim_bridge`` behave as if none
had been built (``tests/test_no_compiler.py``).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["optional_extension"]


def optional_extension(name: str) -> ModuleType | None:
    """The compiled module ``sim_bridge.<name>`` when it was built and extensions are
    allowed, else None.

    Examples
    --------
    >>> optional_extension("_no_such_core") is None
    True
    """
    if os.environ.get("STRAGGLER_NO_EXTENSIONS"):  # force the fallback (tested)
        return None
    try:
        return importlib.import_module(f"sim_bridge.{name}")
    except ImportError:  # pragma: no cover - exercised only on installs without the extension
        return None
