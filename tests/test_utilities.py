"""The shared utilities of issue 14: one atomic write per layer (files get the user's umask),
one data-directory resolver, one estimator factory, one cross-fitted Platt helper and one GC
pause."""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import sim_bridge._atomic as sb_atomic
from mtl import _atomic


@contextmanager
def _umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _writers(tmp_path: Path):
    """Every atomic writer, as ``(name, write(path, text) -> path)``."""
    from pipelines._io import atomic_write_text as pipelines_text

    def through_path(path, text):
        with _atomic.atomic_path(path) as tmp:
            tmp.write_text(text)
        return path

    def temp_file(path, text):
        fd, tmp = _atomic.create_temp_file(path.parent, ".x.", ".part")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
        return path

    return [
        ("mtl text", _atomic.atomic_write_text),
        ("mtl bytes", lambda p, t: _atomic.atomic_write_bytes(p, t.encode())),
        ("mtl path", through_path),
        ("mtl temp file", temp_file),
        ("sim_bridge text", sb_atomic.atomic_write_text),
        ("pipelines text", pipelines_text),
    ]


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path, mask, expected):
    for name, write in _writers(tmp_path):
        with _umask(mask):
            path = write(tmp_path / f"{name}.txt", "content")
        assert path.read_text() == "content", name
        assert _mode(path) == expected, (name, oct(_mode(path)))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{name}.txt" for name, _ in _writers(tmp_path)
    )


def test_a_replaced_file_gets_the_umask_not_its_old_mode(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    path.chmod(0o600)
    with _umask(0o022):
        _atomic.atomic_write_text(path, "new")
    assert (path.read_text(), _mode(path)) == ("new", 0o644)


def _fails_midway(tmp_path):
    """Writers that fail after their temporary file exists, as ``(name, call(path))``."""

    def path_block(path):
        with _atomic.atomic_path(path) as tmp:
            tmp.write_text("half")
            assert tmp.exists()
            raise RuntimeError("midway")

    return [
        ("mtl bytes", lambda p: _atomic.atomic_write_bytes(p, object())),  # write() raises
        ("mtl path", path_block),
        ("sim_bridge text", lambda p: sb_atomic.atomic_write_text(p, "\ud800")),  # encode
    ]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    for name, call in _fails_midway(tmp_path):
        path = tmp_path / f"{name}.txt"
        path.write_text("old")
        with pytest.raises((TypeError, RuntimeError, UnicodeEncodeError)):
            call(path)
        assert path.read_text() == "old", name
        assert sorted(p.name for p in tmp_path.iterdir() if name in p.name) == [path.name]


def test_a_failed_first_write_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        _atomic.atomic_write_bytes(tmp_path / "new.bin", object())
    assert list(tmp_path.iterdir()) == []


def test_predictor_artifact_files_follow_the_umask(tmp_path):
    from mtl import GroupedMTLSVC, Predictor, make_grouped_classification

    X, y = make_grouped_classification(120, 3, 2, 3, seed=0)
    pred = Predictor.from_estimator(GroupedMTLSVC(variant="f0").fit(X, y))
    with _umask(0o077):
        out = pred.save(tmp_path / "private")
    with _umask(0o022):
        shared = pred.save(tmp_path / "shared")
    assert {_mode(p) for p in out.iterdir()} == {0o600}
    assert {_mode(p) for p in shared.iterdir()} == {0o644}


def test_no_site_creates_files_with_mkstemp():
    root = Path(__file__).resolve().parents[1]
    users = [
        str(p.relative_to(root))
        for pkg in ("mtl", "sim_bridge", "pipelines")
        for p in (root / pkg).rglob("*.py")
        if "mkstemp(" in p.read_text(encoding="utf-8")
    ]
    assert users == []
