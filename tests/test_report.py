"""``straggler report``: a self-contained, escaped HTML page from result directories."""

from __future__ import annotations

import base64
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.cli import main
from pipelines.report import ReportError, build_report, flatten_summary, render_csv, scan_run
from pipelines.report._render import md_text

HOSTILE = '<script>alert("x")</script>'


class _Collector(HTMLParser):
    """Every start tag with its attributes, the text, and whether end tags balance."""

    VOID = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.unbalanced: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.unbalanced.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parse(path: Path) -> _Collector:
    c = _Collector()
    c.feed(path.read_text(encoding="utf-8"))
    c.close()
    return c


def _png(path: Path, seed: int) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot(rng.random(10))
    fig.savefig(path, dpi=40)
    plt.close(fig)
    return path.read_bytes()


def _run(tmp: Path, name: str, summary: dict, **files: str) -> Path:
    d = tmp / name
    d.mkdir()
    (d / "summary.json").write_text(json.dumps(summary))
    for fname, text in files.items():
        (d / fname.replace("__", ".")).write_text(text)
    return d


@pytest.fixture
def runs(tmp_path):
    collect = _run(
        tmp_path,
        "collect",
        {"command": "collect", "rows": 1234, "straggler_share_by_workload": {"SYN": 0.21}},
    )
    frame = pd.DataFrame({"pair": [HOSTILE, "n1/SYN"], HOSTILE: [0.123456, 2.0]})
    frame.to_csv(collect / "per_pair.csv", index=False)
    (collect / "per_pair.md").write_text(f"| twin | x |\n|---|---|\n| {HOSTILE} | **1** |\n")
    (collect / "notes.md").write_text(f"free text {HOSTILE}\n")
    png = _png(collect / "shares.png", 0)
    train = _run(
        tmp_path,
        "train",
        {"command": "train", "best_params": {"lambda0": 0.1}, "argv": ["train", "--out", "x"]},
        trials__csv="lambda0,accuracy\n0.1,0.8\n1.0,0.7\n",
    )
    evaluate = _run(
        tmp_path,
        "evaluate",
        {"command": "evaluate", "table1": {"mean_acc": 0.8}, "table2": {"mean_acc": 0.7}},
        table1__csv="fraction,f0nl\n0.1,0.8\n",
        table2__csv="pair,f0nl\nn1/SYN,0.7\n",
    )
    return {"collect": collect, "train": train, "evaluate": evaluate, "png": png}


def test_report_is_self_contained_and_escaped(runs, tmp_path):
    out = build_report([runs["train"], runs["evaluate"], runs["collect"]], tmp_path / "rep")
    assert out == tmp_path / "rep" / "report.html"
    html_text = out.read_text(encoding="utf-8")
    c = _parse(out)
    assert not c.stack and not c.unbalanced  # every element closed
    names = [t for t, _ in c.tags]
    assert "script" not in names and "link" not in names and "iframe" not in names
    for _tag, attrs in c.tags:
        for key in ("src", "href", "srcset", "data", "action"):
            if key in attrs:
                assert attrs[key].startswith(("data:", "#")), (key, attrs[key][:40])
    assert "http://" not in html_text and "https://" not in html_text
    assert "@import" not in html_text and "url(" not in html_text
    # the hostile cell, header and Markdown text come out as text, not markup
    text = "".join(c.text)
    assert text.count(HOSTILE) >= 4
    assert "&lt;script&gt;" in html_text
    # Markdown is shown as its (escaped) source, not converted: the report's own Markdown
    # parser is gone (issue 14); tables come from the CSV files
    assert "free text" in text and "| **1** |" in text and "<b>1</b>" not in html_text
    assert [t for t, _ in c.tags].count("details") >= 2  # raw summaries behind folds
    # numbers from the CSV and summary
    assert "0.1235" in text and "1234" in text


def test_report_embeds_images_bit_for_bit(runs, tmp_path):
    out = build_report([runs["collect"]], tmp_path / "rep")
    srcs = [a["src"] for t, a in _parse(out).tags if t == "img"]
    assert len(srcs) == 1
    prefix = "data:image/png;base64,"
    assert srcs[0].startswith(prefix)
    assert base64.b64decode(srcs[0][len(prefix) :]) == runs["png"]


def test_sections_follow_the_story_order(runs, tmp_path):
    out = build_report([runs["evaluate"], runs["train"], runs["collect"]], tmp_path / "rep")
    ids = [a["id"] for t, a in _parse(out).tags if t == "h2" and "id" in a]
    assert ids == ["s-collect", "s-train", "s-table1", "s-table2"]
    html_text = out.read_text()
    # Table 2's CSV sits in the Table 2 section, Table 1's in Table 1
    t1, t2 = html_text.index('id="s-table1"'), html_text.index('id="s-table2"')
    assert t1 < html_text.index("table1.csv") < t2 < html_text.index("table2.csv")
    # recorded command lines are shown, unrecorded ones say so
    assert "$ straggler train --out x" in html_text
    assert "arguments not recorded" in html_text


def test_evaluate_directories_go_to_their_table(tmp_path):
    t2 = _run(tmp_path, "t2", {"command": "evaluate", "table": 2}, table2__csv="a\n1\n")
    t1 = _run(tmp_path, "t1", {"command": "evaluate", "table": 1}, table1__csv="a\n1\n")
    out = build_report([t2, t1], tmp_path / "rep")
    ids = [a["id"] for t, a in _parse(out).tags if t == "h2" and "id" in a]
    assert ids == ["s-table1", "s-table2"]


def test_demo_directory_expands_into_its_stages(runs, tmp_path):
    demo = tmp_path / "demo"
    demo.mkdir()
    stages = [
        {"name": "collect", "status": "ok", "out": str(runs["collect"]), "wall_seconds": 1.5},
        {"name": "train", "status": "ok", "out": str(runs["train"]), "argv": ["train", "-x"]},
        {
            "name": "compare",
            "section": "compare",
            "status": "skipped",
            "reason": "command not built",
            "out": None,
        },
    ]
    (demo / "summary.json").write_text(
        json.dumps({"command": "demo", "stages": stages, "wall_seconds": 3.0})
    )
    for out in (
        build_report([], tmp_path / "a", from_demo=demo),
        build_report([demo], tmp_path / "b"),
    ):
        c = _parse(out)
        ids = [a["id"] for t, a in c.tags if t in ("h2", "section") and "id" in a]
        assert ids == ["headline", "demo", "s-collect", "s-train", "s-compare"]
        text = "".join(c.text)
        assert "command not built" in text and "$ straggler train -x" in text


def test_missing_summary_is_a_clear_error(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"empty has no summary\.json"):
        build_report([empty], tmp_path / "rep")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_report([tmp_path / "nope"], tmp_path / "rep")
    assert main(["report", str(empty), "--out", str(tmp_path / "rep")]) == 2
    assert "no summary.json" in capsys.readouterr().err
    assert not (tmp_path / "rep" / "report.html").exists()


def test_bad_inputs(tmp_path):
    with pytest.raises(ReportError, match="no result directory"):
        build_report([], tmp_path / "rep")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.json").write_text("{not json")
    with pytest.raises(ReportError, match=r"bad[/\\]summary\.json: not valid JSON"):
        build_report([bad], tmp_path / "rep")
    lst = _run(tmp_path, "lst", {"command": "demo"})
    with pytest.raises(ReportError, match="no 'stages' list"):
        build_report([lst], tmp_path / "rep")


def test_existing_report_survives_a_failed_run(runs, tmp_path):
    out = build_report([runs["collect"]], tmp_path / "rep")
    before = out.read_bytes()
    with pytest.raises(FileNotFoundError):
        build_report([runs["collect"], tmp_path / "missing"], tmp_path / "rep")
    assert out.read_bytes() == before


def test_long_csv_is_truncated_with_a_note(tmp_path):
    p = tmp_path / "long.csv"
    pd.DataFrame({"i": np.arange(500)}).to_csv(p, index=False)
    rendered = render_csv(p, max_rows=25)
    assert rendered.count("<tr") == 26  # header + 25 rows
    assert "first 25 of 500 rows" in rendered
    junk = tmp_path / "junk.csv"
    junk.write_bytes(b"")
    assert "not a readable CSV" in render_csv(junk)


def test_scan_skips_model_and_hidden_directories(tmp_path):
    d = _run(tmp_path, "r", {"command": "x"}, a__csv="a\n1\n")
    for sub in ("predictor", ".hidden", "plots"):
        (d / sub).mkdir()
        (d / sub / "b.csv").write_text("b\n2\n")
    run = scan_run(d)
    assert [p.relative_to(d).as_posix() for p in run.tables] == ["a.csv", "plots/b.csv"]
    assert run.command == "x"


def test_flatten_summary_keeps_short_scalar_lists_only():
    flat = dict(flatten_summary({"a": {"b": {"c": {"d": 1}}}, "l": [{"x": 1}], "s": "t"}))
    assert flat == {"s": "t"}  # depth beyond 3 and lists of dicts are left to summary.json


def _compare_summary(per_seed: dict[str, list[float]], significant: set[str]) -> dict:
    """A compare summary with Table 3 (Average, 99p) and Table 4 rows for workload ALL."""
    t3, t4 = [], []
    for pred, vals in per_seed.items():
        row = {"workload": "ALL", "predictor": pred, "n": len(vals), "per_seed": vals}
        row.update(mean=float(np.mean(vals)), significant_holm=pred in significant)
        t3 += [{**row, "statistic": "Average"}, {**row, "statistic": "99p"}]
        t4.append(dict(row))
    return {
        "command": "compare",
        "predictors": list(per_seed),
        "policies": {"mtl": "MTL f0,n,l", "random": "random refusal", "oracle": "oracle"},
        "table3": t3,
        "table4": t4,
        "speculation": "late",
        "significance": {"seeds": len(next(iter(per_seed.values())))},
    }


def test_headline_figures_intervals_and_verdict():
    from scipy import stats

    from pipelines._headline import flat_figures, headline

    vals = {"mtl": [4.0, 6.0, 5.0, 7.0], "random": [1.0, -1.0, 0.5, 0.0], "oracle": [9.0] * 4}
    train = {
        "config": {"variant": "f0nl", "traces": "t", "metric": "roc_auc"},
        "test": {"rows": 40, "positives": 10, "accuracy": 0.7, "roc_auc": 0.6, "pr_auc": 0.3},
        "threshold": {"value": 0.3, "rule": "maximise balanced_accuracy on the validation rows"},
    }
    fid = {"counts": {"pass": 3, "fail": 1, "not_measured": 2}, "facts": []}
    h = headline(train=train, compare=_compare_summary(vals, {"mtl"}), fidelity=fid)
    q = h["quality"]
    assert q["majority_accuracy"] == 0.75 and q["pr_auc_baseline"] == 0.25
    mtl = h["gains"]["policies"][0]
    lo, hi = stats.t.interval(0.95, 3, loc=np.mean(vals["mtl"]), scale=stats.sem(vals["mtl"]))
    assert mtl["mean_jct"]["ci_low"] == pytest.approx(lo)
    assert mtl["p99_jct"]["ci_high"] == pytest.approx(hi)
    assert h["helped"] is True and h["verdict"].startswith("Prediction helped here")
    assert "Holm" in h["verdict"]
    assert "3 of 4 measured facts" in h["fidelity"]["text"]
    flat = flat_figures(h)
    assert flat["p99_jct_gain_pct"]["mtl"] == pytest.approx(5.5)
    assert flat["task_seconds_gain_ci"]["mtl"] == [pytest.approx(lo), pytest.approx(hi)]
    # nothing significant: the sentence says so plainly
    h2 = headline(compare=_compare_summary(vals, set()))
    assert h2["helped"] is False and h2["verdict"].startswith("No significant gain")
    # only the control is significant: not prediction
    h3 = headline(compare=_compare_summary(vals, {"random"}))
    assert h3["helped"] is False


def test_headline_opens_the_report(runs, tmp_path):
    vals = {"mtl": [4.0, 6.0, 5.0], "random": [1.0, 0.0, 0.5]}
    cmp_dir = _run(tmp_path, "compare", _compare_summary(vals, set()))
    out = build_report([runs["collect"], cmp_dir], tmp_path / "rep")
    text = out.read_text()
    body = text[text.index("<main>") :]
    assert body.index('id="headline"') < body.index("<nav>") < body.index('id="s-collect"')
    assert "No significant gain" in body[: body.index("<nav>")]
    # the raw summary is behind a fold, command lines wrap
    assert "raw summary.json" in text and "white-space:pre-wrap" in text


def test_jct_difference_table_is_the_t_interval_and_the_plot_keeps_the_legend_out(tmp_path):
    from scipy import stats

    from pipelines._plots import jct_difference_table, plot_jct_difference

    rng = np.random.default_rng(3)
    rows = [
        {"workload": w, "predictor": p, "statistic": s, "per_seed": list(rng.normal(5, 3, 4))}
        for w in ("ALL", "SYN")
        for p in ("mtl", "random", "oracle")
        for s in ("Average", "50p", "99p", "97p")
    ]
    t = jct_difference_table(rows)
    assert list(dict.fromkeys(t["statistic"])) == ["50p", "99p", "Average"]  # plot order, no 97p
    for rec in t.to_dict("records"):
        v = next(
            r["per_seed"]
            for r in rows
            if (r["workload"], r["predictor"], r["statistic"])
            == ("ALL", rec["predictor"], rec["statistic"])
        )
        lo, hi = stats.t.interval(0.95, len(v) - 1, loc=np.mean(v), scale=stats.sem(v))
        assert (rec["mean"], rec["ci_low"], rec["ci_high"]) == pytest.approx((np.mean(v), lo, hi))
    # compare's CSV spells per_seed as 'a;b'; a tidy one-value-per-seed frame works too
    csv_rows = [{**r, "per_seed": ";".join(map(str, r["per_seed"]))} for r in rows]
    assert jct_difference_table(csv_rows)["mean"].tolist() == pytest.approx(t["mean"].tolist())
    with pytest.raises(ValueError, match="workload 'FB2009' is not in the table"):
        jct_difference_table(rows, workload="FB2009")

    import matplotlib.pyplot as plt

    captured = {}
    original = plt.Figure.savefig

    def spy(fig, *a, **k):
        ax = fig.axes[0]
        fig.canvas.draw()
        captured["legend_x0"] = ax.get_legend().get_window_extent().x0
        captured["axes_x1"] = ax.get_window_extent().x1
        captured["n_entries"] = len(ax.get_legend().get_texts())
        return original(fig, *a, **k)

    plt.Figure.savefig = spy
    try:
        out = plot_jct_difference(rows, tmp_path / "d.png", labels={"mtl": "MTL"})
    finally:
        plt.Figure.savefig = original
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert captured["legend_x0"] >= captured["axes_x1"]  # the legend covers no data
    assert captured["n_entries"] == 3 + 1  # three policies and the speculation line


# ----------------------------------------------------------------------------- templates


def _section_dirs(tmp: Path) -> dict[str, Path]:
    """One minimal result directory per section of the story, keyed by section."""
    vals = {"mtl": [4.0, 6.0, 5.0], "random": [1.0, 0.0, 0.5]}
    return {
        "fidelity": _run(tmp, "fid", {"command": "fidelity", "counts": {"pass": 2}}),
        "collect": _run(tmp, "col", {"command": "collect", "rows": 10}),
        "train": _run(tmp, "tr", {"command": "train", "test": {"rows": 4, "accuracy": 0.5}}),
        "table1": _run(tmp, "t1", {"command": "evaluate", "table": 1}, table1__csv="a\n1\n"),
        "table2": _run(tmp, "t2", {"command": "evaluate", "table": 2}, table2__csv="a\n2\n"),
        "compare": _run(tmp, "cmp", _compare_summary(vals, {"mtl"})),
        "replication": _run(tmp, "rep", {"command": "replication", "r": 3}),
        "flowbench": _run(tmp, "fb", {"command": "collect", "source": "flowbench", "rows": 5}),
    }


def test_each_section_renders_from_its_input_and_is_named_when_absent(tmp_path):
    from pipelines.report import SECTIONS

    dirs = _section_dirs(tmp_path)
    headings = dict(SECTIONS)
    for key, d in dirs.items():
        out = build_report([d], tmp_path / f"rep_{key}")
        c = _parse(out)
        ids = [a["id"] for t, a in c.tags if t == "h2" and "id" in a]
        assert ids == [f"s-{key}"], key
        html_text = out.read_text(encoding="utf-8")
        note = html_text[html_text.index('class="note absent"') :]
        note = html.unescape(note[: note.index("</p>")])
        for other, heading in SECTIONS:
            # every other section of the story is named as missing, this one is not
            assert (heading in note) == (other != key), (key, other)
        md = (out.parent / "report.md").read_text(encoding="utf-8")
        assert f"## {headings[key]}" in md or f"## {md_text(headings[key])}" in md
    # all of them: nothing is missing, and the story's order holds
    out = build_report(list(dirs.values())[::-1], tmp_path / "rep_all")
    ids = [a["id"] for t, a in _parse(out).tags if t == "h2" and "id" in a]
    assert ids == [f"s-{k}" for k, _ in SECTIONS]
    assert 'class="note absent"' not in out.read_text(encoding="utf-8")
    assert "Not in this report" not in (out.parent / "report.md").read_text(encoding="utf-8")


def test_a_hostile_workload_name_is_text_in_both_renderings(tmp_path):
    vals = {"mtl": [4.0, 6.0, 5.0], "random": [1.0, 0.0, 0.5]}
    summary = _compare_summary(vals, {"mtl"})
    for rec in summary["table3"] + summary["table4"]:
        rec["workload"] = HOSTILE
    summary["policies"]["mtl"] = HOSTILE + "|**x**"
    cmp_dir = _run(tmp_path, "cmp", summary)
    col = _run(tmp_path, "col", {"command": "collect", "workloads": [HOSTILE], "rows": 3})
    pd.DataFrame({"workload": [HOSTILE], HOSTILE: [1.5]}).to_csv(col / "w.csv", index=False)
    (col / "w.md").write_text(f"| {HOSTILE} |\n")
    (col / "<img src=x onerror=alert(1)>.png").write_bytes(b"not a png")
    out = build_report([cmp_dir, col], tmp_path / "rep", title=HOSTILE)
    c = _parse(out)
    assert not c.stack and not c.unbalanced
    names = [t for t, _ in c.tags]
    assert "script" not in names and names.count("img") == 0  # the fake PNG is a note
    text = "".join(c.text)
    # title, header, pivot columns (workload x label), CSV cell + header, Markdown source, ...
    assert text.count(HOSTILE) >= 8
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    # raw only inside fenced code (a quoted Markdown source, shown as code, never as markup)
    assert "<script" not in _FENCED.sub("", md) and "<img" not in md
    assert md.count(f"| {HOSTILE} |") == 1  # w.md, quoted
    assert md.count("&lt;script&gt;") >= 6
    # a '|' in a label does not split a Markdown table row
    for line in md.splitlines():
        if line.startswith("| statistic"):
            assert _md_row(line) == [
                "statistic",
                f"{HOSTILE} {HOSTILE}|**x**",
                f"{HOSTILE} random refusal",
            ]
    assert any("alert(&quot;x&quot;)" in cell or 'alert("x")' in cell for cell in _md_cells(md))


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


class _Tables(HTMLParser):
    """The cells of every table outside the headline box, as text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self._cell: list[str] | None = None
        self._headline = 0
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self._depth += 1
            if dict(attrs).get("id") == "headline":
                self._headline = self._depth
        if tag in ("td", "th") and not self._headline:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "section":
            if self._headline == self._depth:
                self._headline = 0
            self._depth -= 1
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _md_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [html.unescape(re.sub(r"\\(.)", r"\1", c)).strip() for c in cells]


_FENCED = re.compile(r"^(`{3,})[^\n]*\n.*?^\1$", re.S | re.M)


def _md_cells(md: str) -> list[str]:
    """Cells of the report's own Markdown tables (not of Markdown sources quoted in fences)."""
    rows = [_md_row(line) for line in _FENCED.sub("", md).splitlines() if line.startswith("|")]
    return [c for r in rows if not all(re.fullmatch(r"-*:?", x) for x in r) for c in r]


def test_markdown_and_html_carry_the_same_numbers(runs, tmp_path):
    vals = {"mtl": [4.0, 6.0, 5.0], "random": [1.0, 0.0, 0.5]}
    summary = _compare_summary(vals, {"mtl"})
    for rec in summary["table3"] + summary["table4"]:
        rec["std"] = float(np.std(rec["per_seed"], ddof=1))
    cmp_dir = _run(tmp_path, "compare", summary)
    train = _run(
        tmp_path,
        "train2",
        {"command": "train", "test": {"rows": 40, "positives": 10, "accuracy": 0.7, "f1": 0.31}},
    )
    demo = tmp_path / "demo"
    demo.mkdir()
    stages = [
        {"name": n, "status": "ok", "out": str(d), "wall_seconds": 1.25 * i}
        for i, (n, d) in enumerate([("collect", runs["collect"]), ("compare", cmp_dir)])
    ] + [{"name": "train", "status": "failed", "out": None, "reason": "exit 3"}]
    (demo / "summary.json").write_text(json.dumps({"command": "demo", "stages": stages}))
    out = build_report([runs["train"], runs["evaluate"], train], tmp_path / "rep", from_demo=demo)
    parser = _Tables()
    parser.feed(out.read_text(encoding="utf-8"))
    md = (out.parent / "report.md").read_text(encoding="utf-8")
    md_cells = [c for c in _md_cells(md) if c not in ("key", "value")]  # the kv header
    html_numbers = sorted(_NUMBER.findall(" ".join(parser.cells)))
    md_numbers = sorted(_NUMBER.findall(" ".join(md_cells)))
    assert len(html_numbers) > 40
    # every Markdown table is well formed: each row has its header's number of cells
    table: list[str] = []
    for line in [*_FENCED.sub("", md).splitlines(), ""]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            assert {len(_md_row(r)) for r in table} == {len(_md_row(table[0]))}, table[0]
            table = []
    assert html_numbers == md_numbers
    # and they are the data's: Table 3's cells are the summary's means and spreads
    for rec in summary["table3"]:
        cell = f"{rec['mean']:.2f}% ± {rec['std']:.2f}"
        assert cell in " ".join(parser.cells) and cell in " ".join(md_cells)
    # the CSV numbers, to four significant digits, in both
    for v in pd.read_csv(runs["collect"] / "per_pair.csv").iloc[:, 1]:
        assert f"{v:.4g}" in parser.cells and f"{v:.4g}" in md_cells


def test_templates_ship_with_the_package():
    import fnmatch
    import importlib.resources
    import tomllib

    files = importlib.resources.files("pipelines.report") / "templates"
    names = sorted(f.name for f in files.iterdir())
    assert {"report.html.j2", "report.md.j2", "report.css"} <= set(names)
    root = Path(__file__).resolve().parents[1]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    globs = data["package-data"]["pipelines"]
    for name in names:
        assert any(fnmatch.fnmatch(f"report/templates/{name}", g) for g in globs), name


def test_markdown_report_survives_a_failed_run_and_links_figures(runs, tmp_path):
    build_report([runs["collect"]], tmp_path / "rep")
    md_path = tmp_path / "rep" / "report.md"
    before = md_path.read_bytes()
    with pytest.raises(FileNotFoundError):
        build_report([runs["collect"], tmp_path / "missing"], tmp_path / "rep")
    assert md_path.read_bytes() == before
    links = re.findall(r"!\[[^\]]*\]\(<([^>]+)>\)", before.decode())
    assert [(md_path.parent / link).resolve() for link in links] == [
        (runs["collect"] / "shares.png").resolve()
    ]


def test_markdown_copy_of_a_csv_is_folded_a_presentation_is_open(tmp_path):
    d = _run(
        tmp_path,
        "r",
        {"command": "replication"},
        plain__csv="p,latency z\n0.1,1.5\n",
        plain__md="| p | latency z |\n|---|---|\n| 0.1 | 1.5 |\n",
        pivot__csv="model,fraction,accuracy\nf0,0.1,0.5\n",
        pivot__md="| % training data | f0 |\n|---|---|\n| 10 | 50.0%±8.2 |\n",
    )
    out = build_report([d], tmp_path / "rep")
    text = out.read_text(encoding="utf-8")
    folded = [html.unescape(m) for m in re.findall(r"<details class=\"md\"><summary>([^<]*)", text)]
    assert folded == ["Markdown source: plain.md (its tables are shown above, from the data)"]
    assert '<div class="md"><p class="fname">pivot.md</p>' in text
    assert "50.0%±8.2" in text


def test_unreadable_inputs_are_notes_in_both_renderings(tmp_path):
    d = _run(tmp_path, "r", {"command": "collect", "rows": 1})
    (d / "latin.md").write_bytes("caf\xe9 | na\xefve".encode("latin-1"))
    (d / "empty.csv").write_bytes(b"")
    out = build_report([d], tmp_path / "rep")
    text = "".join(_parse(out).text)
    md = (out.parent / "report.md").read_text(encoding="utf-8")
    for rendering in (text, html.unescape(re.sub(r"\\(.)", r"\1", md))):
        assert "latin.md: not UTF-8 text" in rendering
        assert "empty.csv: not a readable CSV table" in rendering


def test_an_incomplete_directory_is_reported_as_such_not_as_final(runs, tmp_path):
    # a summary.json beside the incomplete-marker: an interrupted run (or an interrupted
    # --overwrite rerun that kept the old summary.json), or one still running
    from pipelines._io import INCOMPLETE_MARKER
    from pipelines.report import INCOMPLETE_NOTE

    vals = {"mtl": [4.0, 6.0, 5.0], "random": [1.0, 0.0, 0.5]}
    cmp_dir = _run(tmp_path, "compare", _compare_summary(vals, {"mtl"}))
    (cmp_dir / INCOMPLETE_MARKER).write_text('{"command": "compare"}')
    assert scan_run(cmp_dir).incomplete and not scan_run(runs["collect"]).incomplete
    out = build_report([runs["collect"], cmp_dir], tmp_path / "rep")
    page = html.unescape(" ".join(_parse(out).text))
    md = (tmp_path / "rep" / "report.md").read_text()
    for text in (page, md):
        assert text.count(INCOMPLETE_NOTE) == 1  # the compare block, not the collect one
        assert "Table 3: improvement" in text  # the run is shown, not dropped
    # the headline does not present the interrupted run's numbers as final
    head = page[page.index("Headline") : page.index("Prediction helped here")]
    assert "not final" in head.lower()
    md_head = md[md.index("**Headline**") :].splitlines()[0]
    assert "not final" in md_head.lower() and "Prediction helped here" in md_head
    # without the marker, the same inputs give a final headline and no note
    (cmp_dir / INCOMPLETE_MARKER).unlink()
    out = build_report([runs["collect"], cmp_dir], tmp_path / "rep2")
    page = html.unescape(" ".join(_parse(out).text))
    assert INCOMPLETE_NOTE not in page and "not final" not in page.lower()


def test_the_command_the_api_and_the_keyword_form_write_the_same_page(runs, tmp_path, capsys):
    # `straggler report` parses its flags into a ReportConfig and runs pipelines.write_report
    # on it; build_report is the same runner with the config's fields as arguments
    import pipelines

    dirs = [runs["train"], runs["collect"]]
    argv = ["report", *map(str, dirs), "--out", str(tmp_path / "cli"), "--title", "T <1>"]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip() == f"wrote {tmp_path / 'cli' / 'report.html'}"
    cfg = pipelines.ReportConfig(run_dirs=dirs, out=tmp_path / "api", title="T <1>")
    pages = {
        "cli": tmp_path / "cli" / "report.md",
        "api": pipelines.write_report(cfg).with_name("report.md"),
        "kw": build_report(dirs, tmp_path / "kw", title="T <1>").with_name("report.md"),
    }
    # the pages differ only in the minute they were generated at
    when = re.compile(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC")
    texts = {k: when.sub("generated WHEN", p.read_text()) for k, p in pages.items()}
    assert texts["cli"] == texts["api"] == texts["kw"]
    assert texts["cli"].startswith("# T &lt;1&gt;\n") and "generated WHEN" in texts["cli"]
