"""Error types of the simulator (a leaf module: it imports nothing of ``sim_bridge``)."""

from __future__ import annotations

__all__ = ["DataFormatError", "PolicyError"]


class PolicyError(ValueError):
    """A policy returned an action the engine cannot apply (the message names both)."""


class DataFormatError(ValueError):
    """A data file is malformed; the message names the file, the line and the column.

    Examples
    --------
    >>> print(DataFormatError("a.tsv", 3, 2, "x is not a number"))
    a.tsv: line 3, column 2: x is not a number
    """

    def __init__(self, path: object, line: int, column: int | str, problem: str):
        self.path, self.line, self.column, self.problem = str(path), line, column, problem
        super().__init__(f"{path}: line {line}, column {column}: {problem}")
