"""What a report shows, as plain data: the templates render it, HTML and Markdown alike.

Every number is formatted here, once, so the two renderings carry the same figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd


def fmt_number(v: Any) -> str:
    """A summary value as the report shows it: 4 significant digits, big integers grouped.

    Examples
    --------
    >>> fmt_number(0.123456), fmt_number(12345), fmt_number(True), fmt_number(float("nan"))
    ('0.1235', '12 345', 'True', 'nan')
    """
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return f"{v:,}".replace(",", " ") if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    return str(v)


def fmt_cell(v: Any) -> str:
    """A table cell: floats to 4 significant digits, missing values empty.

    Examples
    --------
    >>> fmt_cell(2.0), fmt_cell(float("nan")), fmt_cell(None), fmt_cell(123456), fmt_cell("a")
    ('2', '', '', '123456', 'a')
    """
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or v is pd.NaT:
        return ""
    if isinstance(v, float) and not isinstance(v, bool):
        return f"{v:.4g}"
    return str(v)


@dataclass
class Grid:
    """A table of display strings.

    Attributes
    ----------
    columns : list of str
        Header cells.
    rows : list of list of str
        Body cells, already formatted.
    name : str
        File the table came from (relative to its result directory), or empty.
    total_rows : int
        Rows in the source; more than ``len(rows)`` when the table is cut.
    row_headers : bool
        The first cell of each row is a row header.
    note : str
        A line under the table.
    error : str
        Why the source could not be read (then the table is empty).
    text_columns : list of int
        Positions of the columns holding text (left-aligned; numbers align right).
    status_column : int
        Position of a column of stage statuses (``ok``, ``failed``, ...), coloured; -1: none.
    """

    columns: list[str]
    rows: list[list[str]]
    name: str = ""
    total_rows: int = 0
    row_headers: bool = False
    note: str = ""
    error: str = ""
    text_columns: list[int] = field(default_factory=list)
    status_column: int = -1

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, max_rows: int, **kw: Any) -> Grid:
        """The first ``max_rows`` rows of ``frame``, cells through :func:`fmt_cell`.

        Examples
        --------
        >>> g = Grid.from_frame(pd.DataFrame({"x": [0.123456, None]}), 1)
        >>> g.columns, g.rows, g.total_rows, g.text_columns
        (['x'], [['0.1235']], 2, [])
        """
        shown = frame.head(max_rows)
        rows = [[fmt_cell(v) for v in rec] for rec in shown.itertuples(index=False, name=None)]
        text = [
            i
            for i, dtype in enumerate(frame.dtypes)
            if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        ]
        kw.setdefault("text_columns", text)
        return cls([str(c) for c in frame.columns], rows, total_rows=len(frame), **kw)

    @property
    def cut(self) -> bool:
        """True when only the first rows are shown."""
        return self.total_rows > len(self.rows)


@dataclass
class KeyNumber:
    """One summary entry: a dotted key and its value as text (or as a list of long strings)."""

    key: str
    text: str = ""
    items: list[str] = field(default_factory=list)


@dataclass
class Figure:
    """A PNG: embedded as a ``data:`` URI in HTML, linked by path in Markdown."""

    name: str
    alt: str
    link: str
    data_uri: str = ""
    note: str = ""


@dataclass
class Document:
    """A Markdown file a command wrote, shown as its source text.

    ``folded`` when a CSV of the same name holds its table: the table is rendered from the
    CSV and the Markdown source is kept behind a fold.
    """

    name: str
    text: str
    folded: bool = False
    error: str = ""


@dataclass
class Stage:
    """A demo stage's status line: ``stage ok, 1.5 s``."""

    name: str
    status: str
    line: str
    command: str | None = None


@dataclass
class Block:
    """What one result directory contributes to one section; ``incomplete`` (empty, or
    :func:`pipelines.report.incomplete_note`) says its numbers may not be final."""

    source: str
    command: str | None
    incomplete: str = ""
    stage: Stage | None = None
    metrics: Grid | None = None
    views: list[Grid] = field(default_factory=list)
    key_numbers: list[KeyNumber] = field(default_factory=list)
    raw_json: str = ""
    documents: list[Document] = field(default_factory=list)
    tables: list[Grid] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)


@dataclass
class Section:
    """A report section: its anchor key, heading, stages that did not run, blocks."""

    key: str
    heading: str
    stages: list[Stage] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)

    @property
    def nav(self) -> str:
        """The heading up to its first colon (the link text in the page's navigation)."""
        return self.heading.split(":")[0]


@dataclass
class DemoRun:
    """A ``straggler demo`` directory: where, how long, its command and its stage table."""

    source: str
    wall: str
    data_note: str
    command: str | None
    stages: Grid


@dataclass
class Report:
    """Everything one report shows.

    ``absent`` lists the headings of the story's sections that no input fills (the report
    says they are missing instead of leaving the reader to notice).
    """

    title: str
    generated: str
    n_sources: int
    headline_html: str = ""
    verdict: str = ""
    demos: list[DemoRun] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
