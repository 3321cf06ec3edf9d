"""What TensorFlow says about itself: `tf.sysconfig.get_build_info()`, version prints, issue-template lines.

build_info is a dict repr (one line, or pprint's one pair per line with long values wrapped onto
the next). The version prints are read from the line after the call, or from
"v2.3.0-54-gfcc4b966f1 2.3.1" (GIT_VERSION then VERSION). The issue template's "CUDA/cuDNN version"
is what the user believes is installed, never what TensorFlow was built with: it is read as a
claimed toolkit (toolkit.claimed_version), which tool output (nvcc, a directory) overrides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tfdoctor.triage.observe import Observation

from ._text import Trigger, Walk, clean, strip_prompt

NAME = "build info"

TF_VERSION = re.compile(r"[123]\.\d{1,2}\.\d{1,3}(?:(?:-|\.)?(?:rc|dev|a|b)\d{0,10})?(?:\+[\w.]{1,40})?")
"""A plausible TensorFlow release: "2.15.0", "2.16.0rc0", "2.17.0-dev20240401", "1.15.5+nv22.12"."""
_TF_FAMILY = re.compile(r"(?:(?:tensorflow|tf)\s*(?:==)?\s*)?v?(2\.\d{1,2})", re.I)
_PY_VERSION = re.compile(r"3\.\d{1,2}(?:\.\d{1,3})?|2\.7(?:\.\d{1,3})?")

_BUILD_KEY = re.compile(
    r"""['"](cuda_version|cudnn_version|is_cuda_build|cuda_compute_capabilities)['"]\s*[:,]\s*"""
)
_CAPABILITY = re.compile(r"""['"]((?:sm|compute)_\d{2,3}[a-z]?)['"]""")
_STRING = re.compile(r"""['"]([^'"]{0,40})['"]""")
_GIT_AND_VERSION = re.compile(r"""(?:b?['"])?(?:v\d+\.\d+\.\d+[\w.+-]{0,60}|unknown)['"]?\s+(\S{1,40})""")
_VERSION_CALLS = ("tf.__version__", "tensorflow.__version__", "tf.version.VERSION", "tf.VERSION")
_TEMPLATE = re.compile(
    r"[-*\s]*(?:\*\*)?(TensorFlow|Python) version(?: \([^)]{0,60}\))?(?:\*\*)?\s*:\s*(.*)", re.I
)
_HEADING = re.compile(r"#{2,4}\s*(TensorFlow|Python|CUDA/cuDNN) version\s*", re.I)
_CUDA_TEMPLATE = re.compile(r"[-*\s]*(?:\*\*)?CUDA/cuDNN version(?:\*\*)?\s*:\s*(.*)", re.I)
# The issue template's "### OS platform and distribution" and the value on a line after it
_OS_HEADING = re.compile(r"#{2,4}\s*OS platform and distribution\s*", re.I)
_OS_WINDOWS = re.compile(r"(?:microsoft\s+)?win(?:dows?)?(?:\s*(?:10|11|server)\b.*|\s*\d*)", re.I)
_CUDA_NAMED = re.compile(r"\bcuda[\s_-]*(?:toolkit\s*)?v?(\d{1,2}\.\d)", re.I)
_CUDA_FIRST = re.compile(r"[\s`'\"*]*v?(\d{1,2}\.\d)(?![\d])")
_LOOKAHEAD = 12
# Every line recognise acts on holds one of these ("v2.3.0-54-g... 2.3.1" a "v" and a digit)
_TRIGGER = Trigger(("version", "Version", "VERSION", "unknown", "is_cuda_build", "_capabilities",
                    "is_built_with_cuda()"), ("platform",), re.compile(r"v\d"), line_local=True)


def _obs(path: str, value: Any, line: int) -> Observation:
    return Observation(path, value, line, NAME)


def tf_version(text: str) -> str | None:
    """The TensorFlow version in a short value ("2.15.0", "tf 2.15.0", "v2.15.0", "GIT 2.15.0")."""
    text = text.strip().strip("`'\"*").strip()
    git = _GIT_AND_VERSION.fullmatch(text)
    if git:
        text = git.group(1).strip("'\"")
    for prefix in ("tensorflow", "tf", "TensorFlow", "TF"):
        if text.startswith(prefix + " ") or text.startswith(prefix + "=="):
            text = text[len(prefix) :].lstrip(" =")
    text = text.removeprefix("v").split(" (")[0].strip()
    return text if TF_VERSION.fullmatch(text) else None


def _printed(lines: Sequence[str], number: int, accept: Callable[[str], bool]) -> tuple[int, str] | None:
    """(line, text) of the first of the few lines after line `number` that is a whole accepted value.

    Log lines and prompts may come between a call and what it printed; a value must fill its line.
    """
    for j in range(number, min(number + _LOOKAHEAD, len(lines))):
        if len(lines[j]) > 200:
            continue
        t = clean(lines[j]).strip().strip("'\"")
        if accept(t):
            return j + 1, t
    return None


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Observations from build_info prints, version prints and the issue template's version lines."""
    for number, s in Walk(lines, _TRIGGER):
        if "_version" in s or "is_cuda_build" in s or "_capabilities" in s:
            keys = list(_BUILD_KEY.finditer(s))
            for key in keys:
                yield from _build_key(lines, number, key.group(1), s[key.end() :])
            if keys:
                continue
        if "is_built_with_cuda()" in s:
            out = _printed(lines, number, lambda t: t in ("True", "False"))
            if out:
                yield _obs("tensorflow.is_cuda_build", out[1] == "True", out[0])
        if "version" in s or "Version" in s or "VERSION" in s:
            yield from _version_line(lines, number, s.strip())
            if s.lstrip(" -*")[:1] in ("v", "u"):  # "- unknown 2.4.1. TensorFlow version (use command below):"
                yield from _git_and_version(s.lstrip(" -*").split(". ", 1)[0], number)
        elif "platform" in s.lower() and _OS_HEADING.fullmatch(s.strip()):
            # only native Windows is read here: a WSL or Linux value has its own recognisers
            out = _printed(lines, number, lambda v: bool(v))
            if out and _OS_WINDOWS.fullmatch(out[1]) and "wsl" not in out[1].lower():
                yield _obs("platform.system", "Windows", out[0])
        elif ("v" in s[:8] or "unknown" in s[:12]) and "." in s:
            yield from _git_and_version(strip_prompt(s), number)


def _git_and_version(s: str, number: int) -> Iterator[Observation]:
    """The version of the issue template's `print(tf.version.GIT_VERSION, tf.version.VERSION)`:
    "v2.3.0-54-gfcc4b966f1 2.3.1" from a pip wheel, "unknown 2.4.1" from conda's or a source build."""
    git = _GIT_AND_VERSION.fullmatch(s)
    version = tf_version(git.group(1)) if git else None
    if version:
        yield _obs("tensorflow.version", version, number)


def claimed_cuda(value: str) -> str | None:
    """The CUDA major.minor in a stated value: "11.0/8.0.4", "CUDA 11.2, cuDNN 8.1", "cuda_11.8"."""
    m = _CUDA_NAMED.search(value) or _CUDA_FIRST.match(value)
    return m.group(1) if m and 9 <= int(m.group(1).split(".")[0]) <= 13 else None


def _version_line(lines: Sequence[str], number: int, t: str) -> Iterator[Observation]:
    cuda = _CUDA_TEMPLATE.match(t)
    if cuda:
        claim = claimed_cuda(cuda.group(1))
        if claim:
            yield _obs("toolkit.claimed_version", claim, number)
        return
    template = _TEMPLATE.match(t)
    if template:
        yield from _claimed(template.group(1).lower(), template.group(2), number)
        return
    heading = _HEADING.fullmatch(t)
    if heading:
        what = heading.group(1).lower()
        if what == "cuda/cudnn":
            found = _printed(lines, number, lambda v: len(v) < 60 and claimed_cuda(v) is not None)
            if found:
                yield _obs("toolkit.claimed_version", claimed_cuda(found[1]), found[0])
            return
        accept = (lambda v: _template_tf(v) is not None) if what == "tensorflow" else _PY_VERSION.fullmatch
        out = _printed(lines, number, lambda v: bool(accept(v)))
        if out and what == "tensorflow":
            yield _obs("tensorflow.version", _template_tf(out[1]), out[0])
        elif out:
            yield from _claimed(what, out[1], out[0])
        return
    if any(call in t for call in _VERSION_CALLS):
        same_line = tf_version(t.rsplit("=", 1)[-1]) if "VERSION =" in t else None
        if same_line:
            yield _obs("tensorflow.version", same_line, number)
            return
        out = _printed(lines, number, lambda v: tf_version(v) is not None)
        if out:
            yield _obs("tensorflow.version", tf_version(out[1]), out[0])


def _template_tf(value: str) -> str | None:
    """The answer under the template's "### TensorFlow version": a release, or the release family
    alone ("2.10", "tf 2.15"), which that heading leaves no doubt about."""
    version = tf_version(value)
    if version is None:
        family = _TF_FAMILY.fullmatch(value.strip().strip("`'\"*").strip())
        version = family.group(1) if family else None
    return version


def _claimed(what: str, value: str, number: int) -> Iterator[Observation]:
    if what == "tensorflow":
        version = tf_version(value)
        if version:
            yield _obs("tensorflow.version", version, number)
    else:
        m = _PY_VERSION.fullmatch(value.strip().strip("`*").removeprefix("Python ").strip())
        if m:
            yield _obs("python.version", m.group(0), number)


def _build_key(lines: Sequence[str], number: int, key: str, rest: str) -> Iterator[Observation]:
    first = number - 1  # 0-based index of the line holding the value
    if not rest.strip(" ,") and number < len(lines):
        first, rest = number, clean(lines[number][:1000])  # pprint put the value on the next line
    if key == "is_cuda_build":
        if rest.lstrip().startswith(("True", "False")):
            yield _obs("tensorflow.is_cuda_build", rest.lstrip().startswith("True"), number)
    elif key == "cuda_compute_capabilities":
        caps: list[str] = []
        for j in range(first, min(first + 40, len(lines))):
            text = rest if j == first else lines[j][:1000]
            caps.extend(_CAPABILITY.findall(text))
            if "]" in text:
                break
        if caps:
            yield _obs("tensorflow.compute_capabilities", tuple(caps), number)
    else:
        m = _STRING.match(rest)
        if m and re.fullmatch(r"\d{1,2}(?:\.\d{1,3}){0,2}", m.group(1)):
            yield _obs(f"tensorflow.{key}", m.group(1), number)
