"""A module imported when one of its names is first read, so that ``import sim_bridge`` and a
streamed run load no pandas (~45 MB of RSS) until something builds or reads a DataFrame.

Examples
--------
>>> math_ = LazyModule("math")
>>> math_.sqrt(4.0)
2.0
>>> isinstance(pandas, LazyModule) and pandas.__name__ == "pandas"
True
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["LazyModule", "pandas"]


class LazyModule(types.ModuleType):
    """Stands for the module ``name``: the first attribute read imports it (its names are
    then copied here, so later reads are plain attribute reads).

    Parameters
    ----------
    name : str
        The module's import name.
    """

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, attr)


#: pandas, imported when a function first reads one of its names (modules bind it as ``pd``
#: outside ``TYPE_CHECKING``; type checkers see the real module)
pandas = LazyModule("pandas")
