"""TF-TRT's TensorRT: the one this TensorFlow loads, and the one installed.

What TensorFlow wants is what its own output names: the DSO loader's line for libnvinfer
("Could not load dynamic library 'libnvinfer.so.7'", every release's wording; the plugin library
carries the same version) and TF-TRT's `get_linked_tensorrt_version()`, which prints the version
TensorFlow was built with as a tuple ("(7, 2, 2)"). What is installed: TF-TRT's
`get_loaded_tensorrt_version()`, a libnvinfer Debian package as `apt list --installed` or
`dpkg -l` lists it (its name carries the major: libnvinfer8 8.0.0-1+cuda11.0), a library the
loader opened, and a libnvinfer file the user says is installed ("the actual libraries are named
libnvinfer.so.10"). `ldconfig -p` entries and pip's tensorrt wheels are read where they are
(the ldconfig recogniser, pip list).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk

NAME = "TensorRT lines"

_TRIGGER = Trigger(("nvinfer",), folded=("tensorrt",))
# TensorFlow's DSO loader, every release: "Could not load dynamic library 'libnvinfer.so.7'; dlerror: ..."
# and "Successfully opened dynamic library libnvinfer.so.7"
_DLOPEN = re.compile(r"(?P<verb>Could not load|Successfully opened) dynamic library '?"
                     r"(?P<so>libnvinfer(?:_plugin)?\.so\.\d{1,3}(?:\.\d{1,3}){0,3})\b")
_API = re.compile(r"get_(?P<which>linked|loaded)_tensorrt_version\s*\(\s*\)")
_TUPLE = re.compile(r"\(\s*(\d{1,3}),\s*(\d{1,3}),\s*(\d{1,3})\s*\)")
# apt list --installed: "libnvinfer8/unknown,now 8.0.0-1+cuda11.0 amd64 [installed,upgradable to: ...]";
# dpkg -l: "ii  libnvinfer8  8.0.0-1+cuda11.0  amd64  TensorRT runtime libraries"
_APT = re.compile(r"^\s*(?P<pkg>libnvinfer(?:-plugin)?\d{1,3})/\S{1,200}\s+(?P<v>\d{1,3}(?:\.\d{1,3}){1,3})"
                  r"\S{0,100}\s+\S{1,40}\s+\[installed")
_DPKG = re.compile(r"^\s*[ih]i\s+(?P<pkg>libnvinfer(?:-plugin)?\d{1,3})(?::\w{1,20})?\s+"
                   r"(?P<v>\d{1,3}(?:\.\d{1,3}){1,3})")
# The user's words about the files they have: a libnvinfer soname said to be installed, never one
# said to be missing or wanted.
_SAID_FILE = re.compile(r"\blibnvinfer(?:_plugin)?\.so\.(?P<v>\d{1,3}(?:\.\d{1,3}){0,3})\b")
_SAID_HAVE = re.compile(r"\binstalled\b|\bI have\b|\bare named\b|\bis named\b", re.IGNORECASE)
_SAID_NOT = re.compile(r"\bnot\b|n't\b|\bcannot\b|\bmissing\b|\bno such\b|\bfail|\bwants?\b|\bneeds?\b|"
                       r"\bexpect|\blook(?:s|ing)? for\b|\bshould\b|\brequir|\btr(?:y|ies|ied|ying)\b|"
                       r"dynamic library|dlerror", re.IGNORECASE)


def _soname(so: str) -> str:
    return so.replace("libnvinfer_plugin.", "libnvinfer.", 1)


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """tensorrt.wanted, tensorrt.installed and tensorrt.stated observations, one per line."""
    api_pending: list[tuple[str, int]] = []  # (the API called, lines left to find its tuple in)
    for number, line in Walk(lines, _TRIGGER, lambda: bool(api_pending)):
        if api_pending:
            which, left = api_pending.pop()
            if left > 1:
                api_pending.append((which, left - 1))
            hit = _TUPLE.search(line)
            if hit:
                api_pending.clear()
                yield Observation(f"tensorrt.{which}", ".".join(hit.groups()), number, NAME)
                continue
        if "nvinfer" not in line and "tensorrt" not in line.lower():
            continue
        api = _API.search(line)
        if api:
            which = "wanted" if api.group("which") == "linked" else "installed"
            rest = _TUPLE.search(line, api.end())
            if rest:
                yield Observation(f"tensorrt.{which}", ".".join(rest.groups()), number, NAME)
            else:
                api_pending[:] = [(which, 3)]
            continue
        dl = _DLOPEN.search(line)
        if dl:
            so = _soname(dl.group("so"))
            yield Observation("tensorrt.wanted", so, number, NAME)
            if dl.group("verb") == "Successfully opened":
                yield Observation("tensorrt.installed", so, number, NAME)
            continue
        pkg = _APT.search(line) or _DPKG.search(line)
        if pkg:
            yield Observation("tensorrt.installed", pkg.group("v"), number, NAME)
            continue
        said = _SAID_FILE.search(line)
        if said and _SAID_HAVE.search(line) and not _SAID_NOT.search(line):
            yield Observation("tensorrt.stated", f"libnvinfer.so.{said.group('v')}", number, NAME)
