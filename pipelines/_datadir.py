"""Where the public data lives: a CLI flag, then ``STRAGGLER_DATA_DIR``, then ``data/``.

Same order as ``sim_bridge.resolve_data_dir``. The checkout's ``data/`` is the directory
beside the installed ``pipelines`` package, which is the repository root for the editable
install the project uses (``pip install -e``).
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the data directory when no flag is given (the name
#: ``sim_bridge._workloads.DATA_DIR_ENV`` reads).
DATA_DIR_ENV = "STRAGGLER_DATA_DIR"


def checkout_root() -> Path:
    """The repository root of this checkout (the parent of the ``pipelines`` package)."""
    return Path(__file__).resolve().parents[1]


def resolve_data_dir(flag: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the data directory: ``flag``, then ``$STRAGGLER_DATA_DIR``, then ``data/``.

    The directory need not exist yet (``straggler data fetch`` creates it). This is
    :func:`sim_bridge.resolve_data_dir` with ``must_exist=False``, the project's one resolver
    (imported when called: ``sim_bridge`` loads pandas, and building the CLI must not).

    Parameters
    ----------
    flag : path-like or None
        The value of a ``--data-dir`` option; ``None`` or ``""`` means not given.

    Returns
    -------
    pathlib.Path
        An absolute path.

    Examples
    --------
    >>> import os
    >>> resolve_data_dir("/tmp/d") == Path("/tmp/d")
    True
    >>> os.environ.pop(DATA_DIR_ENV, None) and None
    >>> resolve_data_dir() == checkout_root() / "data"
    True
    """
    from sim_bridge._workloads import resolve_data_dir as resolve

    return resolve(flag, must_exist=False)
