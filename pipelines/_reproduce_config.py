"""The settings of ``straggler reproduce SEED`` (:class:`ReproduceConfig`), declared once.

Light at import (the CLI builds its parser from it); :func:`pipelines.reproduce` runs one.

Examples
--------
>>> ReproduceConfig(seed_paper="002", out="runs/seed002", quick=True).seed
0
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.commands._params import option

#: The seed papers ``straggler reproduce`` regenerates.
SEED_PAPERS: tuple[str, ...] = ("000", "001", "002", "003")


@dataclass
class ReproduceConfig:
    """Settings of one ``straggler reproduce`` run (see ``straggler reproduce --help``)."""

    seed_paper: str = option(
        positional=True,
        metavar="SEED",
        choices=SEED_PAPERS,
        help="seed paper: 000, 001, 002 or 003",
    )
    out: str = option(help="output directory")
    quick: bool = option(False, switch="on", help="scaled-down sizes (seconds)")
    seed: int = option(0, type=int, help="root seed of every random draw (0)")
    #: a progress bar (None: when the output is a terminal)
    progress: bool | None = None
