"""The shared ``--workers N`` / ``--scheduler URL`` options of the commands that run sweeps.

Every command that runs many independent simulations or fits (``compare``, ``evaluate``,
``train``) adds them with :func:`add_engine_options` and turns them into a
:class:`pipelines._sweep.Engine` with :func:`engine_from_args`. Without either option (and
without ``STRAGGLER_DASK_SCHEDULER``) the command runs in this process as before; Dask is not
imported.

Examples
--------
>>> import argparse
>>> p = argparse.ArgumentParser()
>>> add_engine_options(p)
>>> engine_from_args(p.parse_args(["--workers", "2"]), environ={}).describe()
'Dask LocalCluster of 2 process(es) on 127.0.0.1'
>>> engine_from_args(p.parse_args([]), environ={}).uses_dask
False
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

SCHEDULER_ENV = "STRAGGLER_DASK_SCHEDULER"  # the same name as pipelines._sweep.SCHEDULER_ENV


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--workers`` and ``--scheduler`` (mutually exclusive) to ``parser``."""
    g = parser.add_argument_group(
        "where the runs go (Dask; needs pip install 'straggler-mtl[dask]')"
    )
    x = g.add_mutually_exclusive_group()
    x.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="start a local Dask cluster of N worker processes for the runs (default: run "
        "them one after the other in this process)",
    )
    x.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help=f"send the runs to an existing Dask scheduler (default: ${SCHEDULER_ENV} when "
        "set); data and outputs must be on paths every worker can read and write",
    )


def engine_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None):
    """The :class:`pipelines._sweep.Engine` of the parsed options (and the environment).

    Raises :class:`pipelines._sweep.DaskNotInstalledError` (a ``ValueError``: the CLI prints
    it, with the install command, and exits 2) before any work when Dask is asked for but
    missing.
    """
    from pipelines._sweep import Engine, require_dask

    engine = Engine.resolve(
        getattr(args, "workers", None), getattr(args, "scheduler", None), environ=environ
    )
    if engine.uses_dask:
        require_dask()
    return engine
