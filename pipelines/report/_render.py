"""The Jinja2 environment of the report: HTML (autoescaped) and Markdown from one model."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import jinja2

from pipelines.report._model import Report

_MD_SPECIAL = re.compile(r"([\\`*\[\]|])")


def md_text(value: Any) -> str:
    """Text for a Markdown line or table cell: HTML and Markdown markup are escaped.

    Examples
    --------
    >>> md_text('<script>a|b</script> *x*')
    '&lt;script&gt;a\\\\|b&lt;/script&gt; \\\\*x\\\\*'
    """
    text = html.escape(" ".join(str(value).split()), quote=False)
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_code(value: Any) -> str:
    """An inline code span long enough to hold any backticks in ``value``.

    Examples
    --------
    >>> md_code("a`b")
    '``a`b``'
    """
    text = " ".join(str(value).split())
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


class _Fences:
    """Fenced blocks kept aside while the rendered Markdown's blank lines are tidied."""

    def __init__(self) -> None:
        self.blocks: list[str] = []

    def __call__(self, value: Any, lang: str = "") -> str:
        text = str(value).rstrip("\n")
        fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
        self.blocks.append(f"{fence}{lang}\n{text}\n{fence}")
        return f"\x00fence{len(self.blocks) - 1}\x00"

    def restore(self, text: str) -> str:
        return re.sub(r"\x00fence(\d+)\x00", lambda m: self.blocks[int(m.group(1))], text)


@cache
def environment() -> jinja2.Environment:
    """The report's templates (``pipelines/report/templates``); ``*.html*`` autoescaped."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipelines.report", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["md"] = md_text
    env.filters["code"] = md_code
    return env


def _html_macro(name: str) -> Any:
    env = environment()
    return getattr(env.get_template("_parts.html.j2", globals={}).module, name)


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page (inline CSS, images as ``data:`` URIs).

    Examples
    --------
    >>> page = render_html(Report(title="<T>", generated="now", n_sources=0))
    >>> "<title>&lt;T&gt;</title>" in page
    True
    """
    return environment().get_template("report.html.j2").render(r=report)


def render_markdown(report: Report) -> str:
    """The report as Markdown: the same sections, key numbers and tables; figures linked.

    Examples
    --------
    >>> print(render_markdown(Report(title="<T>", generated="now", n_sources=1)))
    # &lt;T&gt;
    <BLANKLINE>
    straggler report, generated now from 1 result directory.
    <BLANKLINE>
    """
    fences = _Fences()
    text = environment().get_template("report.md.j2").render(r=report, fence=fences)
    text = re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
    return fences.restore(text)


def render_csv(path: str | os.PathLike[str], max_rows: int | None = None) -> str:
    """An escaped HTML table of a CSV file (first ``max_rows`` rows), or a note if unreadable.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text("name,x\\n<b>,0.123456\\n")
    >>> "&lt;b&gt;" in render_csv(p) and "0.1235" in render_csv(p)
    True
    """
    from pipelines.report._collect import MAX_TABLE_ROWS, read_table

    grid = read_table(path, MAX_TABLE_ROWS if max_rows is None else max_rows)
    return str(_html_macro("csv")(grid))


def train_metrics_table(summary: Mapping[str, Any]) -> str:
    """Test and validation metrics of a ``straggler train`` summary beside their baselines (HTML).

    Examples
    --------
    >>> h = train_metrics_table({"test": {"accuracy": 0.75, "rows": 4, "positives": 1}})
    >>> "majority class" in h and "0.75" in h
    True
    """
    from pipelines.report._summary import train_metrics

    return str(_html_macro("grid")(train_metrics(summary)))
