"""One member of a zip on an HTTP(S) server, fetched by Range requests instead of the whole file.

zipfile reads the archive's end (end of central directory, zip64 records) and central directory
through RangeFile, a seekable file whose reads are Range requests; the member's bytes then come in
one more request, inflated as they stream and checked against the central directory's CRC-32 and
size before the file is kept. A server that answers a range with the whole file (200) gets the
whole-file download instead. Stdlib only (tests/envs/setup.sh runs it before any venv exists).
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import ssl
import struct
import tempfile
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

# The end of central directory record (22 bytes), its longest comment, and the zip64 locator
# (20) and record (56) before it: one request finds the central directory of any wheel.
TAIL = 22 + 0xFFFF + 20 + 56
CHUNK = 1 << 20
LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature ... file name length, extra field length


class FetchError(Exception):
    """A member could not be fetched (no such wheel or member, a bad archive, a CRC mismatch)."""


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


def request(url: str, headers: dict[str, str]) -> urllib.request.Request:
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
        wanted = request(self.url, {"Range": byte_range, "Accept-Encoding": "identity"})
        return self._opener.open(wanted, timeout=self._timeout)

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
