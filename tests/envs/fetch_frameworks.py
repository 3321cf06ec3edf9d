"""Fetch libtensorflow_framework.so.2 out of TensorFlow wheels by HTTP range, not whole wheels.

    python fetch_frameworks.py DEST VERSION:PYTHON[:DISTRIBUTION] ...

makes DEST/<version>/tensorflow/libtensorflow_framework.so.2 for each spec that lacks it (the
tests/envs/setup.sh cache layout). The wheel is found on the simple pages (PEP 691 JSON or PEP
503 HTML) of the indexes pip is configured with (`pip config list`: PIP_INDEX_URL and friends);
wheel_range.py fetches the member: 12 to 230 MB of a 360 to 610 MB wheel, CRC-32 checked. A
server that ignores Range gets the whole-wheel download, said on stderr; a wheel no simple page
lists goes through `pip download`, as before. The bytes downloaded are counted and printed.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path

from wheel_range import (
    Counter,
    FetchError,
    Wheel,
    fetch_member,
    fetch_member_whole,
    make_opener,
    request,
)

MEMBER = "libtensorflow_framework.so.2"
PLATFORMS = ("manylinux2010_x86_64", "manylinux2014_x86_64", "manylinux_2_17_x86_64",
             "manylinux_2_27_x86_64")  # setup.sh's old `pip download --platform` list, in its order
PYPI = "https://pypi.org/simple"


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
        with opener.open(request(page, {"Accept": accept}), timeout=180) as response:
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
