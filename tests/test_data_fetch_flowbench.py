"""FlowBench in ``straggler data fetch|check``: a tiny fake upstream served over loopback HTTP.

The fake manifest has the shape of FlowBench's ``MANIFEST.tsv`` (sums of the uncompressed
upstream bytes); the fetched run CSVs are stored gzip-compressed, and the checks also accept
them plain. The last tests run against ``../shared/data/flowbench`` (a gzip-stored copy without
the montage runs) when it is there.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from pipelines._fetch import (
    ChecksumMismatchError,
    DataDirBusyError,
    DownloadError,
    _fetch_lock,
    check,
    fetch,
    flowbench_manifest_path,
    load_flowbench_manifest,
    verify,
)
from pipelines.cli import main


class _Server:
    """A threaded http.server on 127.0.0.1 that counts GETs; ``/stall`` sends 64 KiB and hangs."""

    def __init__(self, root: Path):
        self.requests: list[str] = []
        self.stalled = threading.Event()
        self.release = threading.Event()
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server API
                outer.requests.append(self.path)
                if self.path != "/stall":
                    return super().do_GET()
                self.send_response(200)
                self.send_header("Content-Length", str(8 << 20))
                self.end_headers()
                self.wfile.write(b"x" * (64 << 10))
                self.wfile.flush()
                outer.stalled.set()
                outer.release.wait(60)

            def log_message(self, *args):  # keep test output quiet
                pass

        handler = functools.partial(Handler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def _no_partials(root: Path) -> bool:
    return not [p for p in root.rglob("*") if p.name.startswith(".download.")]


# A fake upstream: two workflows (wfa, wfb), two anomaly folders, the schema README.
_UPSTREAM = {
    "parsed/README.md": b"# schema\n",
    "parsed/normal/wfa-run0001.csv": b"job,runtime\n"
    + b"".join(f"j{i},{i * 0.5}\n".encode() for i in range(200)),
    "parsed/cpu_2/wfa-run0002.csv": b"job,runtime\nj0,1.5\nj1,2.5\n",
    "parsed/normal/wfb-run0001.csv": b"job,runtime\nk0,9.0\n",
}


def _row(rel: str, data: bytes, url: str) -> str:
    return f"{rel}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}\t{url}"


def _write_manifest(path: Path, base: str, override: dict[str, bytes] | None = None) -> Path:
    """A FlowBench-style manifest for ``_UPSTREAM`` (``override`` changes the pinned bytes)."""
    rows = ["path\tbytes\tsha256\turl"]
    for rel, data in _UPSTREAM.items():
        pinned = (override or {}).get(rel, data)
        rows.append(_row(rel, pinned, f"{base}/{rel}"))
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture()
def upstream(tmp_path):
    root = tmp_path / "upstream"
    for rel, data in _UPSTREAM.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    with _Server(root) as srv:
        srv.manifest = _write_manifest(tmp_path / "fb.tsv", srv.url)
        yield srv


def _stored(dest: Path, rel: str) -> Path:
    return dest / "flowbench" / (rel + ".gz" if rel.endswith(".csv") else rel)


def test_fetch_downloads_verifies_and_stores_gzip(upstream, tmp_path):
    dest = tmp_path / "data"
    got = fetch(dest, manifest=upstream.manifest)
    assert got == {str(_stored(dest, r).relative_to(dest)): "downloaded" for r in _UPSTREAM}
    for rel, data in _UPSTREAM.items():
        p = _stored(dest, rel)
        if rel.endswith(".csv"):
            raw = p.read_bytes()
            assert raw[:2] == b"\x1f\x8b" and raw[4:8] == b"\0\0\0\0"  # gzip, mtime 0
            assert gzip.decompress(raw) == data
        else:
            assert p.read_bytes() == data
    # The manifest, provenance and licence travel with the data.
    fb = dest / "flowbench"
    assert (fb / "MANIFEST.tsv").read_bytes() == upstream.manifest.read_bytes()
    assert "straggler data fetch" in (fb / "PROVENANCE.md").read_text()
    assert "MIT License" in (fb / "LICENSE.FlowBench").read_text()
    assert set(check(dest, manifest=upstream.manifest).values()) == {"ok"}
    assert _no_partials(dest)


def test_parallel_and_serial_fetch_agree(upstream, tmp_path):
    serial = fetch(tmp_path / "a", manifest=upstream.manifest, jobs=1)
    parallel = fetch(tmp_path / "b", manifest=upstream.manifest, jobs=3)
    assert list(serial.items()) == list(parallel.items())  # same files, same order
    for rel in _UPSTREAM:
        a, b = _stored(tmp_path / "a", rel), _stored(tmp_path / "b", rel)
        assert a.read_bytes() == b.read_bytes()  # deterministic gzip


@pytest.mark.parametrize(
    ("flag", "value"), [("--jobs", "0"), ("--timeout", "nan"), ("--timeout", "-1")]
)
def test_bad_fetch_options_are_usage_errors(upstream, tmp_path, capsys, flag, value):
    argv = ["data", "fetch", "--data-dir", str(tmp_path), "--manifest", str(upstream.manifest)]
    assert main(argv + [flag, value]) == 2
    assert f"{flag} must be" in capsys.readouterr().err
    assert upstream.requests == []


def test_resume_skips_verified_files(upstream, tmp_path):
    dest = tmp_path / "data"
    fetch(dest, manifest=upstream.manifest)
    n_first = len(upstream.requests)
    assert n_first == len(_UPSTREAM)
    gone = "parsed/cpu_2/wfa-run0002.csv"
    _stored(dest, gone).unlink()
    seen: list[tuple[str, str]] = []
    got = fetch(dest, manifest=upstream.manifest, on_file=lambda f, s, n: seen.append((f.name, s)))
    assert upstream.requests[n_first:] == [f"/{gone}"]  # only the absent file was asked for
    assert got[str(_stored(dest, gone).relative_to(dest))] == "downloaded"
    assert sorted(s for _, s in seen) == ["downloaded"] + ["present"] * (len(_UPSTREAM) - 1)


def test_wrong_sum_is_named_and_leaves_nothing(upstream, tmp_path):
    bad_rel = "parsed/normal/wfb-run0001.csv"
    pinned = b"job,runtime\nk0,9.5\n"  # the manifest pins other bytes than the host serves
    manifest = _write_manifest(tmp_path / "bad.tsv", upstream.url, {bad_rel: pinned})
    dest = tmp_path / "data"
    with pytest.raises(ChecksumMismatchError) as info:
        fetch(dest, manifest=manifest)
    msg = str(info.value)
    assert "1 of 4 file(s) failed" in msg and f"flowbench/{bad_rel}.gz" in msg
    assert hashlib.sha256(pinned).hexdigest() in msg  # expected
    assert hashlib.sha256(_UPSTREAM[bad_rel]).hexdigest() in msg  # received
    assert not _stored(dest, bad_rel).exists()
    assert not (dest / "flowbench" / bad_rel).exists()
    assert _no_partials(dest)
    # The other files arrived and are verified.
    status = check(dest, manifest=manifest)
    assert sorted(status.values()) == ["missing", "ok", "ok", "ok"]


def test_plain_csv_accepted_and_bad_plain_replaced(upstream, tmp_path):
    dest = tmp_path / "data"
    rel = "parsed/normal/wfa-run0001.csv"
    plain = dest / "flowbench" / rel
    plain.parent.mkdir(parents=True)
    plain.write_bytes(_UPSTREAM[rel])
    by_name = {c.file.name: c for c in verify(dest, manifest=upstream.manifest)}
    assert by_name[f"flowbench/{rel}"].status == "ok"
    assert by_name[f"flowbench/{rel}"].found == f"flowbench/{rel}"
    plain.write_bytes(_UPSTREAM[rel][:-3])
    c = {c.file.name: c for c in verify(dest, manifest=upstream.manifest)}[f"flowbench/{rel}"]
    assert c.status == "mismatch" and f"flowbench/{rel}:" in c.detail
    assert f"expected {len(_UPSTREAM[rel])} bytes" in c.detail
    got = fetch(dest, manifest=upstream.manifest)
    assert got[f"flowbench/{rel}.gz"] == "replaced"
    assert not plain.exists()  # the bad plain copy does not shadow the verified .gz
    assert gzip.decompress(_stored(dest, rel).read_bytes()) == _UPSTREAM[rel]


def _truncated(data: bytes) -> bytes:
    return gzip.compress(data)[:-12]


def _bad_crc(data: bytes) -> bytes:
    gz = bytearray(gzip.compress(data))
    gz[-8] ^= 0xFF  # the CRC32 of the trailer
    return bytes(gz)


def _bad_block(data: bytes) -> bytes:
    gz = bytearray(gzip.compress(data))
    gz[10] = 0xFF  # first deflate block header: reserved block type (zlib.error)
    return bytes(gz)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_truncated, "truncated gzip stream"),
        (lambda data: b"not gzip at all", "not a valid gzip file"),
        (_bad_crc, "not a valid gzip file"),
        (_bad_block, "not a valid gzip file after 0 decompressed bytes (Error -3"),
    ],
    ids=["truncated", "not-gzip", "crc", "bad-deflate"],
)
def test_corrupt_gz_is_named_not_a_traceback(upstream, tmp_path, capsys, make, why):
    dest = tmp_path / "data"
    fetch(dest, manifest=upstream.manifest)
    rel = "parsed/normal/wfa-run0001.csv"
    gz = _stored(dest, rel)
    gz.write_bytes(make(_UPSTREAM[rel]))
    c = {c.file.name: c for c in verify(dest, manifest=upstream.manifest)}[f"flowbench/{rel}"]
    assert c.status == "corrupt"
    assert c.detail.startswith(f"flowbench/{rel}.gz: {why}")
    capsys.readouterr()
    rc = main(["data", "check", "--data-dir", str(dest), "--manifest", str(upstream.manifest)])
    out, err = capsys.readouterr()
    assert rc == 1 and "Traceback" not in out + err
    assert f"corrupt   flowbench/{rel}.gz: {why}" in out
    assert "flowbench: 3 of 4 present and verified; 1 corrupt" in out
    # A fetch repairs it.
    assert fetch(dest, manifest=upstream.manifest)[f"flowbench/{rel}.gz"] == "replaced"
    assert gzip.decompress(gz.read_bytes()) == _UPSTREAM[rel]


def test_check_reports_absent_per_subset_and_exit_codes(upstream, tmp_path, capsys):
    dest = tmp_path / "data"
    fetch(dest, manifest=upstream.manifest, only=["flowbench/wfa"])
    base = ["data", "check", "--data-dir", str(dest), "--manifest", str(upstream.manifest)]
    capsys.readouterr()
    assert main(base) == 1
    out = capsys.readouterr().out
    # README.md is not a wfa file, so it is absent too, named by its path.
    assert "flowbench: 2 of 4 present and verified; 2 absent (parsed/README.md, wfb)" in out
    assert "FAILED: 2 required file(s) absent, 0 corrupt" in out
    allow = ["--allow-missing", "flowbench/wfb", "--allow-missing", "flowbench/parsed/README.md"]
    assert main(base + allow) == 0
    out = capsys.readouterr().out
    assert "2 absent (parsed/README.md, wfb) allowed by --allow-missing" in out
    assert out.rstrip().endswith(": OK")
    assert main(base + ["--allow-missing", "flowbench/wfb"]) == 1
    assert "2 absent (parsed/README.md, wfb), 1 of them allowed" in capsys.readouterr().out
    assert main(base + ["--only", "flowbench/wfa"]) == 0
    assert "flowbench: 2 of 2 present and verified\n" in capsys.readouterr().out
    assert main(base + ["--allow-missing", "montage"]) == 2
    assert "--allow-missing 'montage' matches no dataset" in capsys.readouterr().err
    assert main(base + ["--only", "flowbench/nope"]) == 2


def test_cli_fetch_progress_summary(upstream, tmp_path, capsys):
    dest = tmp_path / "data"
    argv = ["data", "fetch", "--data-dir", str(dest), "--manifest", str(upstream.manifest)]
    assert main(argv + ["--quiet"]) == 0
    out = capsys.readouterr().out
    n_bytes = sum(map(len, _UPSTREAM.values()))
    assert "flowbench: 4 files verified (4 downloaded)" in out
    assert f"4 files verified, {n_bytes / 1e6:.1f} MB downloaded" in out
    assert main(argv + ["--quiet"]) == 0
    assert "flowbench: 4 files verified (4 present)" in capsys.readouterr().out


def test_stale_partials_are_removed_on_start_and_on_error(upstream, tmp_path):
    dest = tmp_path / "data"
    stale = [
        dest / ".download.aaa.part",
        dest / "flowbench" / "parsed" / "normal" / ".download.bbb.part",
        dest / "flowbench" / "parsed" / "cpu_2" / ".download.ccc.gz.part",
    ]
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"half a file")
    keep = dest / "flowbench" / "parsed" / "normal" / "notes.txt"
    keep.write_text("not ours to delete")
    fetch(dest, manifest=upstream.manifest)
    assert not any(p.exists() for p in stale) and keep.exists()
    # On an error path too: a wrong sum, with a fresh stale file planted before the fetch.
    stale[1].write_bytes(b"half")
    bad = _write_manifest(tmp_path / "bad.tsv", upstream.url, {"parsed/README.md": b"other"})
    _stored(dest, "parsed/README.md").unlink()
    with pytest.raises(ChecksumMismatchError):
        fetch(dest, manifest=bad)
    assert _no_partials(dest)


def test_killed_fetch_leaves_part_that_next_fetch_removes(upstream, tmp_path):
    """Kill a fetch mid-download (SIGKILL: no cleanup runs), then fetch again."""
    slow = tmp_path / "slow.tsv"
    big = b"x" * (8 << 20)  # /stall announces these bytes, sends 64 KiB of them and hangs
    row = _row("parsed/normal/big-run0001.csv", big, upstream.url + "/stall")
    slow.write_text(f"path\tbytes\tsha256\turl\n{row}\n")
    dest = tmp_path / "data"
    code = (
        "import sys; from pipelines._fetch import fetch; "
        "fetch(sys.argv[1], manifest=sys.argv[2], progress=False, timeout=600)"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(dest), str(slow)])
    part_dir = dest / "flowbench" / "parsed" / "normal"
    try:
        for _ in range(600):  # wait (at most ~60 s) until the download has started writing
            if list(part_dir.glob(".download.*.part")) and upstream.stalled.is_set():
                break
            time.sleep(0.1)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert list(part_dir.glob(".download.*.part"))  # the kill left a partial file
    fetch(dest, manifest=upstream.manifest)
    assert _no_partials(dest)


def test_second_fetch_is_refused_while_one_holds_the_lock(upstream, tmp_path):
    dest = tmp_path / "data"
    dest.mkdir()
    with _fetch_lock(dest):
        with pytest.raises(DataDirBusyError, match=f"pid {os.getpid()}"):
            fetch(dest, manifest=upstream.manifest)
    assert fetch(dest, manifest=upstream.manifest)  # released


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("path\tsize\tsha256\turl\n", "line 1: header must be"),
        ("path\tbytes\tsha256\turl\nparsed/a-run1.csv\t12\n", "line 2: expected 4"),
        (
            "path\tbytes\tsha256\turl\nparsed/a-run1.csv\tx\t" + "0" * 64 + "\thttp://h/a\n",
            "line 2: column 'bytes'.*'x'",
        ),
        (
            "path\tbytes\tsha256\turl\nparsed/a-run1.csv\t1\tabc\thttp://h/a\n",
            "line 2: column 'sha256'.*'abc'",
        ),
        (
            "path\tbytes\tsha256\turl\n../a-run1.csv\t1\t" + "0" * 64 + "\thttp://h/a\n",
            "line 2: column 'path'.*relative",
        ),
        (
            "path\tbytes\tsha256\turl\nparsed/a-run1.csv\t1\t" + "0" * 64 + "\tftp://h/a\n",
            "line 2: column 'url'",
        ),
    ],
    ids=["header", "fields", "bytes", "sha", "path", "url"],
)
def test_bad_flowbench_manifest_is_named(tmp_path, text, match):
    p = tmp_path / "m.tsv"
    p.write_text(text)
    with pytest.raises(ValueError, match=f"{p.name}: {match}"):
        load_flowbench_manifest(p)


# --- the real manifest and the shared copy -------------------------------------------------


def test_shipped_manifest_is_upstreams(shared_data_dir):
    """The shipped list (derived: a url base and path/bytes/sha256) gives exactly the entries
    of upstream's MANIFEST.tsv (4 columns, full URLs), which the loader also reads."""
    shipped = flowbench_manifest_path()
    files = load_flowbench_manifest()
    assert files == load_flowbench_manifest(shared_data_dir / "flowbench" / "MANIFEST.tsv")
    assert len(files) == len(shipped.read_text().splitlines()) - 2  # url base and header
    commit = "e4f96e6d231b86cb53d783342c79137f416c6711"
    prefix = f"https://raw.githubusercontent.com/PoSeiDon-Workflows/FlowBench/{commit}/"
    assert all(f.url == prefix + f.name.removeprefix("flowbench/") for f in files)


def test_check_tells_the_truth_about_the_shared_copy(shared_data_dir, capsys):
    files = load_flowbench_manifest()
    on_disk = {
        str(p.relative_to(shared_data_dir))
        for p in (shared_data_dir / "flowbench" / "parsed").rglob("*")
        if p.is_file()
    }
    present = [f for f in files if f.path in on_disk or f.plain_path in on_disk]
    absent_subsets = {f.subset for f in files if f not in present}
    assert absent_subsets == {"montage"}  # what PROVENANCE.md says
    base = ["data", "check", "--data-dir", str(shared_data_dir), "--only", "flowbench"]
    assert main(base) == 1
    out = capsys.readouterr().out
    n_absent = len(files) - len(present)
    assert (
        f"flowbench: {len(present)} of {len(files)} present and verified; "
        f"{n_absent} absent (montage)\n" in out
    )
    assert main(base + ["--allow-missing", "flowbench/montage"]) == 0


def test_mirror_of_the_shared_copy(shared_data_dir, tmp_path):
    """``--base-url`` over the gzip-stored shared copy: stored bytes arrive, checked by content."""
    shipped = flowbench_manifest_path().read_text().splitlines()
    picks = shipped[:4]  # url base, header, README.md, a 1000-genome run
    picks += [r for r in shipped if "/montage-run" in r][:2]
    sub = tmp_path / "sub.tsv"
    sub.write_text("\n".join(picks) + "\n")
    dest = tmp_path / "data"
    failed = r"2 of 4 file\(s\) failed \(montage\): .*montage-run.*HTTP 404"
    with _Server(shared_data_dir) as srv:
        with pytest.raises(DownloadError, match=failed):
            fetch(dest, manifest=sub, base_url=srv.url)
    for f in load_flowbench_manifest(sub)[:2]:
        assert (dest / f.path).read_bytes() == (shared_data_dir / f.path).read_bytes()
    assert sorted(check(dest, manifest=sub).values()) == ["missing", "missing", "ok", "ok"]
    assert _no_partials(dest)


def test_upstream_fetch_reproduces_the_shared_copy_bytes(shared_data_dir, tmp_path):
    """Served plain like upstream, the runs are gzipped into the shared copy's exact bytes."""
    shipped = flowbench_manifest_path().read_text().splitlines()
    rows = [shipped[2]] + [r for r in shipped if "/normal/casa-wind-full-run" in r][:1]
    rows += [r for r in shipped if "/hdd_5/predict-future-sales-run" in r][:1]
    served = tmp_path / "served"
    local_rows = ["path\tbytes\tsha256\turl"]  # upstream's own format, URLs on loopback
    with _Server(served) as srv:
        for r in rows:
            rel, size, sha = r.split("\t")
            src = shared_data_dir / "flowbench" / rel
            data = (
                src.read_bytes()
                if src.exists()
                else gzip.decompress((src.parent / (src.name + ".gz")).read_bytes())
            )
            (served / rel).parent.mkdir(parents=True, exist_ok=True)
            (served / rel).write_bytes(data)
            local_rows.append("\t".join([rel, size, sha, f"{srv.url}/{rel}"]))
        manifest = tmp_path / "local.tsv"
        manifest.write_text("\n".join(local_rows) + "\n")
        dest = tmp_path / "data"
        assert set(fetch(dest, manifest=manifest).values()) == {"downloaded"}
    for f in load_flowbench_manifest(manifest):
        assert (dest / f.path).read_bytes() == (shared_data_dir / f.path).read_bytes(), f.path
