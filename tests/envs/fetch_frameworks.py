"""Fetch one library out of each TensorFlow wheel by HTTP range requests, not the whole wheel.

    python fetch_frameworks.py DEST VERSION:PYTHON[:DISTRIBUTION] ...

makes DEST/<version>/tensorflow/libtensorflow_framework.so.2 for each spec that lacks it (the
tests/envs/setup.sh cache layout). The wheel is found on the simple pages (PEP 691 JSON or PEP
503 HTML) of the indexes pip is configured with (`pip config list`: PIP_INDEX_URL and friends);
a wheel is a zip, so its end (end of central directory, zip64 records), its central directory
and the one member's bytes are fetched by range: about 40 MB of a 500 MB wheel. The member is
inflated while it streams in and must match the central directory's CRC-32 and size. A server
that answers a range with the whole file (200) gets the whole-wheel download instead, said on
stderr; so does a wheel no simple page lists (`pip download`, as before). Stdlib only: it runs
before any venv exists. The bytes downloaded are counted and printed at the end.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import io
import json
import re
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

MEMBER = "libtensorflow_framework.so.2"
PLATFORMS = ("manylinux2010_x86_64", "manylinux2014_x86_64", "manylinux_2_17_x86_64",
             "manylinux_2_27_x86_64")  # setup.sh's old `pip download --platform` list, in its order
PYPI = "https://pypi.org/simple"
# The end of central directory record (22 bytes), its longest comment, and the zip64 locator
# (20) and record (56) before it: one request finds the central directory of any wheel.
TAIL = 22 + 0xFFFF + 20 + 56
CHUNK = 1 << 20
LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature ... file name length, extra field length


class FetchError(Exception):
    """The library could not be fetched (no such wheel, a bad archive, a CRC mismatch)."""


class NoRange(Exception):
    """The server sent the whole file (200) to a range request; `response` is its open body."""

    def __init__(self, response: io.BufferedIOBase) -> None:
        super().__init__("the server ignores Range")
        self.response = response


@dataclass
class Wheel:
    url: str
    filename: str
    sha256: str | None = None


class Counter:
    """Bytes read from the network (bodies of pages, ranges and whole wheels)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.requests = 0


def make_opener(cert: str | None = None) -> urllib.request.OpenerDirector:
    context = ssl.create_default_context(cafile=cert) if cert else None
    return urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))


def _request(url: str, headers: dict[str, str]) -> urllib.request.Request:
    """A request for `url`, with the user:password of an index URL as Basic auth (as pip does)."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None:
        auth = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers = {**headers, "Authorization": "Basic " + base64.b64encode(auth.encode()).decode()}
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
    return urllib.request.Request(url, headers=headers)


class RangeFile(io.RawIOBase):
    """A read-only, seekable file over an HTTP(S) URL: each read is a Range request.

    Construction fetches the file's last TAIL bytes (where zipfile looks first) and raises
    NoRange if the server answers with the whole file."""

    def __init__(self, url: str, opener: urllib.request.OpenerDirector, counter: Counter,
                 timeout: float = 180.0) -> None:
        super().__init__()
        self.url, self._opener, self._counter, self._timeout = url, opener, counter, timeout
        response = self._open(f"bytes=-{TAIL}")
        if response.status != 206:
            raise NoRange(response)
        with response:
            match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", response.headers.get("Content-Range", ""))
            if not match:
                raise FetchError(f"{url}: no usable Content-Range in a 206 answer")
            self.size = int(match[3])
            self._blocks = [(int(match[1]), self._body(response))]
        self._pos = 0

    def _open(self, byte_range: str):  # noqa: ANN202 (an http.client.HTTPResponse)
        self._counter.requests += 1
        request = _request(self.url, {"Range": byte_range, "Accept-Encoding": "identity"})
        return self._opener.open(request, timeout=self._timeout)

    def _body(self, response) -> bytes:  # noqa: ANN001
        data = response.read()
        self._counter.bytes += len(data)
        return data

    def stream(self, start: int, length: int) -> Iterator[bytes]:
        """The bytes [start, start + length) in chunks, from one request."""
        if length <= 0:
            return
        with self._open(f"bytes={start}-{start + length - 1}") as response:
            if response.status != 206 or not response.headers.get("Content-Range", "").startswith(
                    f"bytes {start}-"):
                raise FetchError(f"{self.url}: range {start}+{length} answered {response.status}")
            left = length
            while left:
                chunk = response.read(min(CHUNK, left))
                if not chunk:
                    raise FetchError(f"{self.url}: range {start}+{length} cut short")
                self._counter.bytes += len(chunk)
                left -= len(chunk)
                yield chunk

    def read_at(self, start: int, length: int) -> bytes:
        for block_start, block in self._blocks:
            if block_start <= start and start + length <= block_start + len(block):
                return block[start - block_start:start - block_start + length]
        data = b"".join(self.stream(start, length))
        self._blocks = [self._blocks[0], (start, data)]  # the tail stays; one more block
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        if base + offset < 0:
            raise OSError(f"seek to {base + offset}")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer) -> int:  # noqa: ANN001 (a writable buffer)
        length = min(len(buffer), max(self.size - self._pos, 0))
        data = self.read_at(self._pos, length)
        buffer[:len(data)] = data
        self._pos += len(data)
        return len(data)

    def readall(self) -> bytes:
        data = self.read_at(self._pos, max(self.size - self._pos, 0))
        self._pos += len(data)
        return data


def find_member(names: Iterable[str], member: str) -> str:
    found = [n for n in names if n == member or n.endswith("/" + member)]
    if not found:
        raise FetchError(f"no {member} in the wheel")
    return found[0]


def inflate(chunks: Iterable[bytes], method: int) -> Iterator[bytes]:
    """The data of a zip member from its compressed bytes (stored or deflated; wheels use no other)."""
    if method == zipfile.ZIP_STORED:
        yield from chunks
        return
    if method != zipfile.ZIP_DEFLATED:
        raise FetchError(f"zip compression method {method} is not stored or deflated")
    decompressor = zlib.decompressobj(-zlib.MAX_WBITS)
    try:
        for chunk in chunks:
            yield decompressor.decompress(chunk)
        yield decompressor.flush()
    except zlib.error as e:
        raise FetchError(f"the deflated member is damaged: {e}") from e
    if not decompressor.eof:
        raise FetchError("the deflated member ends early")


def write_checked(data: Iterable[bytes], info: zipfile.ZipInfo, dest: Path) -> None:
    """Write the member's data to dest (through dest.part) only if its size and CRC-32 are the
    central directory's."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    crc = size = 0
    try:
        with open(part, "wb") as out:
            for chunk in data:
                crc = zlib.crc32(chunk, crc)
                size += len(chunk)
                out.write(chunk)
        if (size, crc) != (info.file_size, info.CRC):
            raise FetchError(f"{info.filename}: {size} bytes, CRC-32 {crc:08x}; the wheel says "
                             f"{info.file_size} bytes, {info.CRC:08x}")
        part.replace(dest)
    finally:
        part.unlink(missing_ok=True)


def fetch_member_ranged(source: RangeFile, member: str, dest: Path) -> None:
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo(find_member(archive.namelist(), member))
    fields = LOCAL_HEADER.unpack(source.read_at(info.header_offset, LOCAL_HEADER.size))
    if fields[0] != b"PK\x03\x04":
        raise FetchError(f"{info.filename}: no local file header at {info.header_offset}")
    # The local header's extra field may differ from the central directory's (zip64 sizes).
    start = info.header_offset + LOCAL_HEADER.size + fields[-2] + fields[-1]
    write_checked(inflate(source.stream(start, info.compress_size), info.compress_type), info, dest)


def fetch_member_whole(wheel_path: Path, member: str, dest: Path) -> None:
    with zipfile.ZipFile(wheel_path) as archive:
        info = archive.getinfo(find_member(archive.namelist(), member))
        with archive.open(info) as src:
            write_checked(iter(lambda: src.read(CHUNK), b""), info, dest)


def save_body(response, path: Path, counter: Counter, sha256: str | None) -> None:  # noqa: ANN001
    digest = hashlib.sha256()
    with response, open(path, "wb") as out:
        for chunk in iter(lambda: response.read(CHUNK), b""):
            counter.bytes += len(chunk)
            digest.update(chunk)
            out.write(chunk)
    if sha256 and digest.hexdigest() != sha256:
        raise FetchError(f"{path.name}: sha256 {digest.hexdigest()}, the index says {sha256}")


def fetch_member(wheel: Wheel, member: str, dest: Path, opener: urllib.request.OpenerDirector,
                 counter: Counter, say: Callable[[str], None]) -> str:
    """Make dest from the wheel's member; says how: by range, whole wheel, local wheel."""
    if wheel.url.startswith("file:"):
        fetch_member_whole(Path(urllib.request.url2pathname(urllib.parse.urlsplit(wheel.url).path)),
                           member, dest)
        return "local wheel"
    try:
        source = RangeFile(wheel.url, opener, counter)
    except NoRange as whole:
        say(f"{urllib.parse.urlsplit(wheel.url).netloc} ignores Range: downloading the whole "
            f"{wheel.filename}")
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch, wheel.filename)
            save_body(whole.response, path, counter, wheel.sha256)
            fetch_member_whole(path, member, dest)
        return "whole wheel"
    with source:
        fetch_member_ranged(source, member, dest)
    return "by range"


# -- finding the wheel -------------------------------------------------------------------------

def pip_settings(listing: str) -> dict[str, str]:
    """`pip config list` output (key='value' lines, environment as :env:.key) as a dict."""
    found = {}
    for line in listing.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            try:
                found[key.strip()] = str(ast.literal_eval(value.strip()))
            except (ValueError, SyntaxError):
                found[key.strip()] = value.strip()
    return found


def setting(settings: dict[str, str], name: str) -> str | None:
    """pip's precedence: the environment, then the download command's section, then global."""
    for scope in (":env:", "download", "global"):
        if f"{scope}.{name}" in settings:
            return settings[f"{scope}.{name}"]
    return None


def index_urls(settings: dict[str, str]) -> list[str]:
    if (setting(settings, "no-index") or "").lower() in ("1", "true", "yes", "on"):
        return []
    return [setting(settings, "index-url") or PYPI, *(setting(settings, "extra-index-url") or "").split()]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")
            if self._href is not None:
                self.links.append((self._href, ""))

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links[-1] = (self._href, self.links[-1][1] + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._href = None


def page_files(body: bytes, content_type: str, page_url: str) -> list[Wheel]:
    """The files of a simple page: PEP 691 JSON or PEP 503 HTML; URLs made absolute."""
    if "json" in content_type:
        files = json.loads(body)["files"]
        return [Wheel(urllib.parse.urljoin(page_url, f["url"]), f["filename"],
                      f.get("hashes", {}).get("sha256")) for f in files]
    parser = _Links()
    parser.feed(body.decode("utf-8", "replace"))
    wheels = []
    for href, text in parser.links:
        url, _, fragment = urllib.parse.urljoin(page_url, href).partition("#")
        name = text.strip() or urllib.parse.unquote(url.rsplit("/", 1)[-1])
        sha = fragment[len("sha256="):] if fragment.startswith("sha256=") else None
        wheels.append(Wheel(url, name, sha))
    return wheels


def pick_wheel(files: Iterable[Wheel], dist: str, version: str, python: str,
               platforms: tuple[str, ...] = PLATFORMS) -> Wheel | None:
    """The wheel `pip download --no-deps --only-binary=:all: --python-version PYTHON --platform
    ...` takes: CPython PYTHON's tag, one of the platforms (the earlier one listed wins)."""
    tag = "cp" + python.replace(".", "")
    best: tuple[int, Wheel] | None = None
    for wheel in files:
        parts = wheel.filename.removesuffix(".whl").split("-")
        if not wheel.filename.endswith(".whl") or len(parts) not in (5, 6):
            continue
        name, ver, pytags, plats = parts[0], parts[1], parts[-3], parts[-1]
        if canonical(name) != canonical(dist) or ver != version or tag not in pytags.split("."):
            continue
        ranks = [platforms.index(p) for p in plats.split(".") if p in platforms]
        if ranks and (best is None or min(ranks) < best[0]):
            best = (min(ranks), wheel)
    return best[1] if best else None


def read_page(index: str, dist: str, opener: urllib.request.OpenerDirector,
              counter: Counter) -> list[Wheel]:
    page = index.rstrip("/") + "/" + canonical(dist) + "/"
    if page.startswith("file:"):
        path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(page).path), "index.html")
        return page_files(path.read_bytes(), "text/html", page) if path.is_file() else []
    accept = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, " \
             "text/html;q=0.1"
    try:
        with opener.open(_request(page, {"Accept": accept}), timeout=180) as response:
            body = response.read()
            counter.bytes += len(body)
            counter.requests += 1
            wheels = page_files(body, response.headers.get("Content-Type", ""), response.url)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return []
        raise
    return [with_credentials(w, page) for w in wheels]


def with_credentials(wheel: Wheel, index: str) -> Wheel:
    """The wheel with the index's user:password when it lies on the index's host, as pip sends."""
    home, there = urllib.parse.urlsplit(index), urllib.parse.urlsplit(wheel.url)
    if home.username is None or there.username is not None or there.hostname != home.hostname:
        return wheel
    netloc = home.netloc.rpartition("@")[0] + "@" + there.netloc
    return Wheel(urllib.parse.urlunsplit(there._replace(netloc=netloc)), wheel.filename, wheel.sha256)


def pip_download(python: str, dist: str, version: str, py: str, scratch: Path) -> Path:
    """The old way, for a wheel no simple page lists (find-links, --no-index): pip downloads it."""
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    subprocess.run([python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                    "--no-cache-dir", "--no-deps", "--only-binary=:all:", "--python-version", py,
                    *platforms, "-d", str(scratch), f"{dist}=={version}"], check=True)
    return next(scratch.glob("*.whl"))


def say(text: str) -> None:
    print(f"tests/envs: {text}", file=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    dest_root, specs = Path(argv[0]), argv[1:]
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                             capture_output=True, text=True).stdout
    settings = pip_settings(listing)
    opener = make_opener(setting(settings, "cert"))
    counter, pages, started, made = Counter(), {}, time.monotonic(), 0
    for spec in specs:
        version, py, *rest = spec.split(":")
        dist = rest[0] if rest else "tensorflow"
        dest = dest_root / version / "tensorflow" / MEMBER
        if dest.is_file():
            continue
        if dist not in pages:
            pages[dist] = [w for index in index_urls(settings)
                           for w in read_page(index, dist, opener, counter)]
        wheel = pick_wheel(pages[dist], dist, version, py)
        before = counter.bytes
        if wheel is None:
            say(f"no {dist} {version} wheel for Python {py} on the index pages: pip download")
            with tempfile.TemporaryDirectory() as scratch:
                path = pip_download(sys.executable, dist, version, py, Path(scratch))
                counter.bytes += path.stat().st_size
                fetch_member_whole(path, MEMBER, dest)
            how = "whole wheel, pip"
        else:
            how = fetch_member(wheel, MEMBER, dest, opener, counter, say)
        made += 1
        say(f"frameworks/{version} made ({how}: {(counter.bytes - before) / 1e6:.1f} MB "
            f"downloaded, {dest.stat().st_size / 1e6:.1f} MB kept)")
    if made:
        say(f"frameworks: {made} made, {counter.bytes / 1e9:.2f} GB downloaded in "
            f"{counter.requests} requests, {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (FetchError, OSError, zipfile.BadZipFile, subprocess.CalledProcessError) as e:
        print(f"tests/envs/fetch_frameworks.py: {e}", file=sys.stderr)
        sys.exit(1)
