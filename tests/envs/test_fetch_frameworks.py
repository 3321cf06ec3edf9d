"""tests/envs/fetch_frameworks.py and wheel_range.py: a member fetched by HTTP range is byte for
byte what zipfile reads from the whole archive, a server that ignores Range still gets a right
library (the whole file), and a damaged member is never kept. Served from 127.0.0.1 by a thread
of the test: no network, and none of the big caches of tests/envs/setup.sh."""

from __future__ import annotations

import hashlib
import http.server
import random
import re
import sys
import threading
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fetch_frameworks import (
    PYPI,
    index_urls,
    main,
    page_files,
    pick_wheel,
    pip_settings,
    setting,
    with_credentials,
)
from wheel_range import Counter, FetchError, RangeFile, Wheel, fetch_member

LIBRARY = "tensorflow/libtensorflow_framework.so.2"


@dataclass
class Server:
    url: str
    files: dict[str, bytes]
    honour_range: bool = True
    log: list[tuple[str, str | None, int]] = field(default_factory=list)  # path, Range, status


def _handler(server: Server) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = server.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            wanted = self.headers.get("Range")
            match = re.fullmatch(r"bytes=(\d*)-(\d*)", wanted or "")
            if not server.honour_range or not match:
                server.log.append((self.path, wanted, 200))
                self._send(200, body, {})
                return
            first, last = match.groups()
            start = len(body) - int(last) if not first else int(first)
            end = len(body) - 1 if not first or not last else min(int(last), len(body) - 1)
            start = max(start, 0)
            server.log.append((self.path, wanted, 206))
            self._send(206, body[start:end + 1], {"Content-Range": f"bytes {start}-{end}/{len(body)}"})

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body)),
                                "Accept-Ranges": "bytes" if server.honour_range else "none"}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    return Handler


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server("", {})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def direct() -> urllib.request.OpenerDirector:
    """An opener that never goes through a proxy of the environment (the server is local)."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def wheel_like(path: Path, *, zip64: bool = False) -> Path:
    """A zip shaped like a wheel: a deflated library, a stored member, a big other member, a
    comment; with zip64,
    more entries than a plain end record can count and a member whose local header carries a
    zip64 extra field the central directory lacks."""
    library = b"".join(i.to_bytes(4, "little") * (i % 7 + 1) for i in range(60000))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("tensorflow/__init__.py", "# tensorflow\n" * 50)
        z.writestr("tensorflow/_pywrap.so", random.Random(0).randbytes(8_000_000))
        z.writestr(LIBRARY, library)
        z.writestr("tensorflow/stored.bin", bytes(range(256)) * 300, compress_type=zipfile.ZIP_STORED)
        if zip64:
            for i in range(zipfile.ZIP_FILECOUNT_LIMIT + 1):
                z.writestr(f"d/{i:05d}", b"")
            with z.open("tensorflow/big.bin", "w", force_zip64=True) as out:
                out.write(library[::-1])
        z.writestr("tensorflow-2.0.0.dist-info/RECORD", "tensorflow/__init__.py,,\n")
        z.comment = b"wheel comment " * 100
    return path


@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("wheels")
    return {"plain": wheel_like(root / "plain.whl"), "zip64": wheel_like(root / "zip64.whl", zip64=True)}


CASES = [("plain", "libtensorflow_framework.so.2"), ("plain", "stored.bin"),
         ("zip64", "libtensorflow_framework.so.2"), ("zip64", "stored.bin"), ("zip64", "big.bin")]


@pytest.mark.parametrize(("archive", "member"), CASES)
def test_ranged_member_is_what_zipfile_reads(archive, member, archives, server, tmp_path):
    """The point of the script: a member fetched by ranges (deflated or stored, plain or zip64
    archive) is exactly the member of the whole file, and far fewer bytes than the file came."""
    data = archives[archive].read_bytes()
    server.files["/w.whl"] = data
    dest, counter, said = tmp_path / "out" / member, Counter(), []
    how = fetch_member(Wheel(server.url + "/w.whl", "w.whl"), member, dest, direct(), counter, said.append)
    with zipfile.ZipFile(archives[archive]) as z:
        assert dest.read_bytes() == z.read(next(n for n in z.namelist() if n.endswith("/" + member)))
    assert how == "by range" and said == []
    assert all(status == 206 and wanted for _, wanted, status in server.log)
    assert counter.bytes < len(data) / 2  # the other members (_pywrap.so) never came
    assert not list(dest.parent.glob("*.part"))


@pytest.mark.parametrize("archive", ["plain", "zip64"])
def test_range_file_is_a_seekable_source_for_zipfile(archive, archives, server):
    """RangeFile stands in for a local file wherever zipfile seeks and reads (the end record
    search, the zip64 records, the central directory, each member)."""
    server.files["/w.whl"] = archives[archive].read_bytes()
    with zipfile.ZipFile(archives[archive]) as local, \
            RangeFile(server.url + "/w.whl", direct(), Counter()) as remote, zipfile.ZipFile(remote) as z:
        assert z.namelist() == local.namelist()
        for name in [n for n in local.namelist() if not n.startswith("d/")]:
            assert z.read(name) == local.read(name)
        assert z.comment == local.comment


def test_server_that_ignores_range_gets_the_whole_download(archives, server, tmp_path):
    """A mirror that answers 200 to a Range request: the library still comes (from the whole
    wheel, its sha256 checked when the index gave one), and the user is told why it cost more."""
    server.honour_range = False
    data = archives["plain"].read_bytes()
    server.files["/w.whl"] = data
    dest, counter, said = tmp_path / LIBRARY, Counter(), []
    wheel = Wheel(server.url + "/w.whl", "w.whl", hashlib.sha256(data).hexdigest())
    how = fetch_member(wheel, "libtensorflow_framework.so.2", dest, direct(), counter, said.append)
    with zipfile.ZipFile(archives["plain"]) as z:
        assert dest.read_bytes() == z.read(LIBRARY)
    assert how == "whole wheel" and counter.bytes == len(data)
    assert len(said) == 1 and "ignores Range" in said[0] and "w.whl" in said[0]

    wrong = tmp_path / "wrong" / LIBRARY
    with pytest.raises(FetchError, match="sha256"):
        fetch_member(Wheel(wheel.url, wheel.filename, "0" * 64), "libtensorflow_framework.so.2", wrong,
                     direct(), Counter(), said.append)
    assert not wrong.exists()


@pytest.mark.parametrize("member", ["libtensorflow_framework.so.2", "stored.bin"])
def test_damaged_member_is_not_kept(member, archives, server, tmp_path):
    """A flipped byte in the member's data (a bad mirror, a cut connection) fails the CRC-32
    check: an error, and neither the library nor a part file is left for the next run to trust."""
    data = bytearray(archives["plain"].read_bytes())
    with zipfile.ZipFile(archives["plain"]) as z:
        info = z.getinfo(next(n for n in z.namelist() if n.endswith("/" + member)))
    middle = info.header_offset + 30 + len(info.filename) + info.compress_size // 2
    data[middle] ^= 0x01
    server.files["/w.whl"] = bytes(data)
    dest = tmp_path / "out" / member
    with pytest.raises(FetchError, match="CRC-32|damaged"):
        fetch_member(Wheel(server.url + "/w.whl", "w.whl"), member, dest, direct(), Counter(), print)
    assert not dest.exists() and not list(dest.parent.glob("*"))


def test_the_wheel_pip_download_would_take_from_json_and_html_pages():
    """Both simple-page formats give the one wheel setup.sh wants: its version exactly (not the
    rc), CPython's tag, a manylinux platform (the earlier listed wins), relative URLs resolved."""
    names = ["tensorflow_gpu-2.0.0-cp37-cp37m-manylinux2010_x86_64.whl",
             "tensorflow_gpu-2.0.0-cp37-cp37m-win_amd64.whl",
             "tensorflow_gpu-2.0.0-cp38-cp38-manylinux2010_x86_64.whl",
             "tensorflow_gpu-2.0.0rc0-cp37-cp37m-manylinux2010_x86_64.whl",
             "tensorflow_gpu-2.0.0-cp37-cp37m-manylinux_2_27_x86_64.whl",
             "tensorflow_gpu-2.0.0.tar.gz"]
    json_page = ('{"meta": {"api-version": "1.0"}, "name": "tensorflow-gpu", "files": ['
                 + ", ".join(f'{{"filename": "{n}", "url": "../../files/{n}", "hashes": {{"sha256": "ab"}}}}'
                             for n in names) + "]}").encode()
    html_page = ("<html><body>" + "".join(f'<a href="https://files.example/p/{n}#sha256=cd">{n}</a><br/>'
                                          for n in names) + "</body></html>").encode()
    page = "https://mirror.example/simple/tensorflow-gpu/"
    from_json = pick_wheel(page_files(json_page, "application/vnd.pypi.simple.v1+json", page),
                           "tensorflow-gpu", "2.0.0", "3.7")
    from_html = pick_wheel(page_files(html_page, "text/html", page), "tensorflow-gpu", "2.0.0", "3.7")
    assert from_json == Wheel(f"https://mirror.example/files/{names[0]}", names[0], "ab")
    assert from_html == Wheel(f"https://files.example/p/{names[0]}", names[0], "cd")
    assert pick_wheel(page_files(html_page, "text/html", page), "tensorflow-gpu", "2.0.0", "3.9") is None
    private = "https://me:secret@mirror.example/simple/tensorflow-gpu/"
    assert with_credentials(from_json, private).url == f"https://me:secret@mirror.example/files/{names[0]}"
    assert with_credentials(from_html, private) == from_html  # another host: no password sent


def test_the_index_is_pip_s_configured_one():
    """The pages read are those pip would read: the environment beats the download section,
    which beats global; extra indexes too; PyPI when nothing is set; none with no-index."""
    listing = ("global.index-url='https://global.example/simple'\n"
               "download.index-url='https://download.example/simple'\n"
               "global.extra-index-url='file:///opt/pypi/simple https://more.example/simple'\n"
               "global.cert='/etc/ssl/certs/ca-certificates.crt'\n")
    settings = pip_settings(listing)
    assert index_urls(settings) == ["https://download.example/simple", "file:///opt/pypi/simple",
                                    "https://more.example/simple"]
    assert setting(settings, "cert") == "/etc/ssl/certs/ca-certificates.crt"
    with_env = pip_settings(listing + ":env:.index-url='https://env.example/simple'\n")
    assert index_urls(with_env)[0] == "https://env.example/simple"
    assert index_urls({}) == [PYPI]
    assert index_urls(pip_settings(":env:.no-index='1'\n")) == []


def test_a_wheel_only_pip_can_find_comes_through_pip_download(tmp_path, monkeypatch, capsys):
    """With no index (find-links only, or --no-index) there is no simple page to read: the
    script hands the wheel to `pip download`, as setup.sh did before, and still keeps only the
    library; a library already there is not fetched again."""
    links = tmp_path / "links"
    links.mkdir()
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    with zipfile.ZipFile(links / f"tensorflow-9.9.9-{tag}-{tag}-manylinux_2_27_x86_64.whl", "w",
                         zipfile.ZIP_DEFLATED) as z:
        z.writestr(LIBRARY, b"\x7fELF" * 1000)
        z.writestr("tensorflow-9.9.9.dist-info/METADATA",
                   "Metadata-Version: 2.1\nName: tensorflow\nVersion: 9.9.9\n")
        z.writestr("tensorflow-9.9.9.dist-info/WHEEL",
                   f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}-{tag}-manylinux_2_27_x86_64\n")
        z.writestr("tensorflow-9.9.9.dist-info/RECORD", "")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    spec = f"9.9.9:{sys.version_info.major}.{sys.version_info.minor}"
    assert main([str(tmp_path / "frameworks"), spec]) == 0
    assert (tmp_path / "frameworks/9.9.9" / LIBRARY).read_bytes() == b"\x7fELF" * 1000
    assert "pip download" in capsys.readouterr().err
    assert main([str(tmp_path / "frameworks"), spec]) == 0
    assert capsys.readouterr().err == ""
