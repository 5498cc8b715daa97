"""Where the public data files are: :func:`resolve_data_dir`, the one resolver of the project.

Examples
--------
>>> DATA_DIR_ENV
'STRAGGLER_DATA_DIR'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DATA_DIR_ENV", "resolve_data_dir"]


#: Environment variable naming the data directory when no flag is given.
DATA_DIR_ENV = "STRAGGLER_DATA_DIR"


def resolve_data_dir(
    flag: str | os.PathLike[str] | None = None, *, must_exist: bool = True
) -> Path:
    """The data directory (README, data directory): ``flag``, then ``$STRAGGLER_DATA_DIR``, then
    ``data/`` in the checkout (beside the installed package), as an absolute path.

    The one resolver of the project: ``pipelines.resolve_data_dir`` is this function with
    ``must_exist=False``.

    Parameters
    ----------
    flag : path-like or None
        The value of a ``--data-dir`` option; ``None`` or ``""`` means not given.
    must_exist : bool, default True
        A directory named by the flag or the variable must exist (a reader's typo fails here
        instead of reading as "no data files"). False for a command that creates it
        (``straggler data fetch``). The checkout's ``data/`` need not exist either way.

    Examples
    --------
    >>> resolve_data_dir("/nonexistent/dir")
    Traceback (most recent call last):
    ...
    FileNotFoundError: data directory given by --data-dir does not exist: /nonexistent/dir
    >>> str(resolve_data_dir("/nonexistent/dir", must_exist=False))
    '/nonexistent/dir'
    """
    if flag:
        given_by, p = "data directory given by --data-dir", Path(flag)
    else:
        env = os.environ.get(DATA_DIR_ENV, "").strip()
        if not env:
            return Path(__file__).resolve().parents[1] / "data"
        given_by, p = DATA_DIR_ENV, Path(env)
    p = p.expanduser().resolve()
    if must_exist and not p.is_dir():
        raise FileNotFoundError(f"{given_by} does not exist: {p}")
    return p
