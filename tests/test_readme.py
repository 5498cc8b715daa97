"""The README runs as written: its ``bash``/``sh`` and ``python`` blocks, in order.

Every such block carries an HTML comment right above it saying how the test treats it:

- ``<!-- readme-test: run -->``: run, in order, in one scratch directory (a small trace);
- ``<!-- readme-test: heavy (why) -->``: needs the network, a server or minutes; run only with
  ``STRAGGLER_README_HEAVY=1``;
- ``<!-- readme-test: skip (why) -->``: not runnable here (``make test`` itself).

Shell blocks run under ``bash -euo pipefail`` with the venv's ``bin`` first on ``PATH``;
Python blocks run with this interpreter. No data directory is visible, so every command
uses the synthetic workload.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*readme-test:\s*(run|heavy|skip)\b([^>]*)-->\s*\Z")
RUNNABLE = {"bash", "sh", "python"}


@dataclass
class Block:
    """One fenced code block of the README."""

    lang: str
    code: str
    mode: str | None  # run / heavy / skip, None when unmarked
    line: int


def readme_blocks(text: str) -> list[Block]:
    """The runnable fenced blocks of ``text`` with the marker right above each (if any)."""
    blocks = []
    for m in FENCE.finditer(text):
        lang = m.group(1).lower()
        if lang not in RUNNABLE:
            continue
        before = text[: m.start()].rstrip("\n")
        mark = MARKER.search(before[-300:])
        blocks.append(
            Block(
                lang,
                m.group(2),
                mark.group(1) if mark else None,
                text.count("\n", 0, m.start()) + 1,
            )
        )
    return blocks


def test_readme_blocks_are_found_and_every_one_is_marked():
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    unmarked = [b.line for b in blocks if b.mode is None]
    assert not unmarked, f"README blocks without a readme-test marker at lines {unmarked}"
    modes = {b.mode for b in blocks}
    assert "run" in modes and {b.lang for b in blocks if b.mode == "run"} >= {"bash", "python"}


def test_marker_parser_on_a_sample():
    text = "x\n<!-- readme-test: heavy (net) -->\n```bash\necho hi\n```\n\n```text\nno\n```\n"
    (b,) = readme_blocks(text)
    assert (b.lang, b.code, b.mode, b.line) == ("bash", "echo hi\n", "heavy", 3)


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    (tmp / "no-data").mkdir(exist_ok=True)
    env["STRAGGLER_DATA_DIR"] = str(
        tmp / "no-data"
    )  # the synthetic workload, whatever is installed
    env.update(TQDM_DISABLE="1", MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    return env


def _run_block(block: Block, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    if block.lang == "python":
        argv = [sys.executable, "-c", block.code]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", block.code]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _run_all(mode: str, tmp_path: Path) -> list[tuple[Block, str]]:
    (tmp_path / "runs").mkdir()
    env = _env(tmp_path)
    done = []
    for block in readme_blocks(README.read_text(encoding="utf-8")):
        if block.mode not in ("run", mode):
            continue
        res = _run_block(block, tmp_path, env)
        assert res.returncode == 0, (
            f"README block at line {block.line} ({block.lang}) failed with code "
            f"{res.returncode}:\n{block.code}\n--- stdout\n{res.stdout[-3000:]}\n--- stderr\n"
            f"{res.stderr[-3000:]}"
        )
        done.append((block, res.stdout))
    return done


@pytest.mark.slow
def test_readme_runs_as_written(tmp_path):
    done = _run_all("run", tmp_path)
    assert len(done) >= 6
    runs = tmp_path / "runs"
    # what the walk-through promises exists
    body = json.loads((runs / "train" / "serving_example.json").read_text())
    from mtl import load_predictor

    pred = load_predictor(runs / "train" / "predictor")
    cols = body["dataframe_split"]["columns"]
    assert cols == ["node", "workload", *pred.feature_names]  # complete, in signature order
    assert all(len(r) == len(cols) for r in body["dataframe_split"]["data"])
    report = (runs / "report" / "report.html").read_text(encoding="utf-8")
    assert 'id="headline"' in report
    assert json.loads((runs / "table1-from-config" / "summary.json").read_text())["table"] == 1
    train = json.loads((runs / "train" / "summary.json").read_text())
    assert train["study"]["grid_points"] == 2 * 2  # lambda0 x omega of runs/grid.json


@pytest.mark.skipif(
    os.environ.get("STRAGGLER_README_HEAVY", "") in ("", "0"),
    reason="heavy README blocks (network, server, minutes): set STRAGGLER_README_HEAVY=1",
)
def test_readme_heavy_blocks(tmp_path):
    _run_all("heavy", tmp_path)
