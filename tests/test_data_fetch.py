"""``straggler data fetch/check`` against ``../shared/data`` served over loopback HTTP."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest

from pipelines._datadir import DATA_DIR_ENV, checkout_root, resolve_data_dir
from pipelines._fetch import (
    ChecksumMismatchError,
    DownloadError,
    check,
    fetch,
    file_status,
    load_manifest,
    manifest_path,
    select,
)
from pipelines.cli import main


class _Server:
    """A threaded http.server on 127.0.0.1 (random port) that counts GET requests."""

    def __init__(self, root: Path):
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server API
                outer.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):  # keep test output quiet
                pass

        handler = functools.partial(Handler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _no_partials(root: Path) -> bool:
    return not [p for p in root.rglob("*") if p.name.startswith(".download.")]


def test_manifest_matches_shared_data(shared_data_dir):
    files = load_manifest(manifest_path())  # sources.json (FlowBench: test_data_fetch_flowbench)
    assert {f.folder for f in files} == {
        "swim",
        "alibaba-v2017-batch-task",
        "alibaba-v2018-machine-usage-subset",
        "alibaba-v2017-cloudsimpy-jobs",
    }
    for f in files:
        p = shared_data_dir / f.path
        assert p.stat().st_size == f.size, f.path
        assert _sha(p) == f.sha256, f.path
        assert f.url.startswith("https://"), f.path
        if f.gzip_stored:
            raw = gzip.decompress(p.read_bytes())
            assert (len(raw), hashlib.sha256(raw).hexdigest()) == (
                f.upstream_size,
                f.upstream_sha256,
            )


def test_fetch_mirror_then_skip(shared_data_dir, tmp_path):
    dest = tmp_path / "data"
    with _Server(shared_data_dir) as srv:
        got = fetch(dest, base_url=srv.url, manifest=manifest_path())
        assert set(got.values()) == {"downloaded"}
        n_first = len(srv.requests)
        assert n_first == len(load_manifest(manifest_path()))
        again = fetch(dest, base_url=srv.url, manifest=manifest_path())
        assert set(again.values()) == {"present"}
        assert len(srv.requests) == n_first  # nothing downloaded the second time
    for f in load_manifest(manifest_path()):
        assert (dest / f.path).read_bytes() == (shared_data_dir / f.path).read_bytes()
    assert set(check(dest, manifest=manifest_path()).values()) == {"ok"}
    assert _no_partials(dest)


def test_tampered_file_is_refused_and_nothing_corrupted(shared_data_dir, tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(shared_data_dir / "swim", mirror / "swim")
    bad = mirror / "swim" / "LICENSE.SWIM"
    bad.write_bytes(bad.read_bytes().replace(b"Regents", b"Regentz"))
    dest = tmp_path / "data"
    (dest / "swim").mkdir(parents=True)
    previous = b"an older local copy\n"
    (dest / "swim" / "LICENSE.SWIM").write_bytes(previous)
    entry = next(f for f in load_manifest() if f.path == "swim/LICENSE.SWIM")
    with _Server(mirror) as srv:
        with pytest.raises(ChecksumMismatchError) as info:
            fetch(dest, only=["swim"], base_url=srv.url)
    msg = str(info.value)
    assert "swim/LICENSE.SWIM" in msg
    assert entry.sha256 in msg and _sha(bad) in msg  # expected and got
    # The previous file is untouched, the other swim files arrived intact, no partial files.
    assert (dest / "swim" / "LICENSE.SWIM").read_bytes() == previous
    assert file_status(dest, entry) == "mismatch"
    status = check(dest, only=["swim"])
    assert [p for p, s in status.items() if s != "ok"] == ["swim/LICENSE.SWIM"]
    assert _no_partials(dest)


def test_corrupt_local_file_is_replaced(shared_data_dir, tmp_path):
    dest = tmp_path / "data"
    target = dest / "swim" / "CHANGELOG.SWIM"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"truncated")
    with _Server(shared_data_dir) as srv:
        got = fetch(dest, only=["swim-changelog"], base_url=srv.url)
    assert got == {"swim/CHANGELOG.SWIM": "replaced"}
    assert target.read_bytes() == (shared_data_dir / "swim" / "CHANGELOG.SWIM").read_bytes()


def test_upstream_plain_file_is_verified_then_gzipped(shared_data_dir, tmp_path):
    # Pretend to be the upstream host: it serves machine_meta.csv uncompressed.
    entry = next(f for f in load_manifest() if f.name == "ali2018-machine-meta")
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    plain = gzip.decompress((shared_data_dir / entry.path).read_bytes())
    (upstream / "machine_meta.csv").write_bytes(plain)
    (upstream / "tampered.csv").write_bytes(plain[:-10])
    doc = json.loads((checkout_root() / "data" / "sources.json").read_text())
    e = next(x for x in doc["files"] if x["name"] == entry.name)
    dest = tmp_path / "data"
    with _Server(upstream) as srv:
        e["url"] = f"{srv.url}/tampered.csv"
        (tmp_path / "bad.json").write_text(json.dumps({"files": [e]}))
        with pytest.raises(ChecksumMismatchError, match=entry.upstream_sha256):
            fetch(dest, manifest=tmp_path / "bad.json")
        assert not (dest / entry.path).exists()
        e["url"] = f"{srv.url}/machine_meta.csv"
        (tmp_path / "good.json").write_text(json.dumps({"files": [e]}))
        assert fetch(dest, manifest=tmp_path / "good.json") == {entry.path: "downloaded"}
    assert gzip.decompress((dest / entry.path).read_bytes()) == plain
    assert file_status(dest, entry) == "ok"
    assert _no_partials(dest)


def test_http_error_writes_nothing(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    dest = tmp_path / "data"
    with _Server(empty) as srv:
        with pytest.raises(DownloadError, match="swim/LICENSE.SWIM"):
            fetch(dest, only=["swim-license"], base_url=srv.url)
    assert not (dest / "swim" / "LICENSE.SWIM").exists()
    assert _no_partials(dest)


def test_bad_manifest_and_only(tmp_path):
    with pytest.raises(ValueError, match="'nope' matches no dataset"):
        select(load_manifest(), ["nope"])
    bad = tmp_path / "m.json"
    bad.write_text(
        json.dumps(
            {"files": [{"name": "x", "path": "../x", "url": "u", "size": 1, "sha256": "0" * 64}]}
        )
    )
    with pytest.raises(ValueError, match="files\\[0\\].*relative"):
        load_manifest(bad)
    with pytest.raises(FileNotFoundError, match="manifest not found"):
        load_manifest(tmp_path / "absent.json")


def test_data_dir_resolution(tmp_path, monkeypatch):
    assert resolve_data_dir() == checkout_root() / "data"
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(tmp_path / "flag") == tmp_path / "flag"


def test_cli_fetch_and_check(shared_data_dir, tmp_path, capsys):
    dest = tmp_path / "d"
    # Nothing there: check fails (issue 16) and says how much is absent per folder.
    assert main(["data", "check", "--data-dir", str(dest)]) == 1
    out = capsys.readouterr().out
    for folder in {f.folder for f in load_manifest()}:
        n = len(select(load_manifest(), [folder]))
        assert f"{folder}: 0 of {n} present and verified; {n} absent" in out
    assert f"FAILED: {len(load_manifest())} required file(s) absent, 0 corrupt" in out
    with _Server(shared_data_dir) as srv:
        rc = main(
            ["data", "fetch", "--data-dir", str(dest), "--only", "swim", "--base-url", srv.url]
        )
    assert rc == 0
    capsys.readouterr()
    assert main(["data", "check", "--data-dir", str(dest), "--only", "swim"]) == 0
    out = capsys.readouterr().out
    n_swim = len(select(load_manifest(), ["swim"]))
    assert f"swim: {n_swim} of {n_swim} present and verified\n" in out
    assert out.rstrip().endswith(": OK")
    (dest / "swim" / "LICENSE.SWIM").write_text("x")
    assert main(["data", "check", "--data-dir", str(dest), "--only", "swim"]) == 1
    out = capsys.readouterr().out
    assert "mismatch  swim/LICENSE.SWIM: expected 1792 bytes" in out
    # --allow-missing never excuses a corrupt file.
    argv = ["data", "check", "--data-dir", str(dest), "--only", "swim", "--allow-missing", "swim"]
    assert main(argv) == 1
