"""The data fetch's rooms: the public entry re-exports each job module's names, and a
download lands through the atomic-write helper with the user's umask."""

from __future__ import annotations

import hashlib
import importlib
import os
import stat

import pytest

from pipelines import _fetch
from pipelines._fetch_download import fetch_file
from pipelines._fetch_entries import SourceFile

ROOMS = (
    "_fetch_checksums",
    "_fetch_download",
    "_fetch_entries",
    "_fetch_errors",
    "_fetch_flowbench",
    "_fetch_guard",
    "_fetch_manifest",
    "_fetch_summary",
)


def test_public_entry_reexports_the_rooms_names():
    for room in ROOMS:
        mod = importlib.import_module(f"pipelines.{room}")
        for name in mod.__all__:
            if name in _fetch.__all__:
                assert getattr(_fetch, name) is getattr(mod, name), (room, name)
    for name in _fetch.__all__:
        assert hasattr(_fetch, name), name


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_downloaded_file_follows_the_umask(tmp_path, umask):
    mirror, data = tmp_path / "mirror", tmp_path / "data"
    mirror.mkdir()
    body = b"one line\n" * 100
    (mirror / "a.txt").write_bytes(body)
    f = SourceFile(
        "a", "x/a.txt", (mirror / "a.txt").as_uri(), len(body), hashlib.sha256(body).hexdigest()
    )
    old = os.umask(umask)
    try:
        assert fetch_file(data, f) == "downloaded"
    finally:
        os.umask(old)
    target = data / "x" / "a.txt"
    assert target.read_bytes() == body
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.txt"]  # no .part left
