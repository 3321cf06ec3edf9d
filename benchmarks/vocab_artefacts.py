"""Where the vocabulary miner finds TensorFlow's artefacts, and how it caches their strings.

A release family's strings are every printable run (5+ bytes, C++ mangled names dropped) of the
shared libraries in that release's Linux wheel, plus the GPU-related Python sources of the
wheel. Wheels are 200-600 MB: `fetch_release` downloads one, reads what it needs, deletes it,
and keeps only `~/.cache/tfdoctor/vocab/<family>/` (strings.txt.gz, python.json.gz, meta.json).
Without that cache, `release_strings` reads what the test environments made by tests/envs/setup.sh
hold: frameworks/<version>/tensorflow/libtensorflow_framework.so.2 and the full tf-cuda venvs.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS", Path.home() / ".cache/tfdoctor/test-envs"))
CACHE = Path(os.environ.get("TFDOCTOR_VOCAB_CACHE", Path.home() / ".cache/tfdoctor/vocab"))

# The wheel per family: the same versions (and Python tags) as tests/envs/setup.sh's frameworks,
# so a framework library fetched here is byte-identical to the one setup.sh would make.
RELEASES: dict[str, tuple[str, str, str]] = {
    "2.0": ("2.0.0", "3.7", "tensorflow-gpu"),  # 2.0's plain `tensorflow` wheel had no CUDA
    "2.1": ("2.1.0", "3.7", "tensorflow"),
    **{f"2.{m}": (f"2.{m}.0", "3.8", "tensorflow") for m in range(2, 12)},
    **{f"2.{m}": (f"2.{m}.0", "3.11", "tensorflow") for m in range(12, 22)},
}
RELEASES["2.16"] = ("2.16.2", "3.11", "tensorflow")
RELEASES["2.17"] = ("2.17.1", "3.11", "tensorflow")
FAMILIES: tuple[str, ...] = tuple(RELEASES)

# Full venvs setup.sh makes: their whole tensorflow package, not only the framework library.
VENVS = {"2.21": "tf-cuda", "2.17": "tf-cuda-2-17"}

# The Windows self-check TensorFlow runs before loading its libraries (read whatever it names).
SELF_CHECK = "python/platform/self_check.py"
# Python sources worth reading: they mention the GPU stack.
_PY_GPU = re.compile(rb"GPU|CUDA|[Cc]u[Dd][Nn][Nn]|XLA|NCCL|TensorRT|nvidia|ptxas|libdevice")
_STRING = re.compile(rb"[\x20-\x7e\t]{5,}")


def _keep(s: str) -> bool:
    return not s.startswith(("_Z", "_ZN", ".text", ".rodata"))


def _so_members(z: zipfile.ZipFile) -> list[str]:
    """Shared libraries of a TF wheel that can hold GPU-stack messages (not TFLite's, not tests')."""
    out = []
    for info in z.infolist():
        n = info.filename
        if not re.search(r"\.so(\.\d+)*$", n) or info.file_size < 1_000_000:
            continue
        if "/lite/" in n or "/include/" in n:
            continue
        out.append(n)
    return out


def _strings_of_stream(stream: Iterable[bytes]) -> set[str]:
    seen: set[str] = set()
    tail = b""
    for chunk in stream:
        buf = tail + chunk
        # Keep an unfinished printable run for the next chunk.
        cut = len(buf)
        while cut > 0 and 0x20 <= buf[cut - 1] <= 0x7E:
            cut -= 1
        for m in _STRING.finditer(buf, 0, cut):
            s = m.group().decode("ascii")
            if _keep(s):
                seen.add(s)
        tail = buf[cut:]
        if len(tail) > 1 << 20:
            tail = b""
    for m in _STRING.finditer(tail):
        seen.add(m.group().decode("ascii"))
    return seen


def _chunks(f, size: int = 8 << 20) -> Iterator[bytes]:
    while chunk := f.read(size):
        yield chunk


def strings_of_file(path: Path) -> set[str]:
    """Printable runs of a file: binutils' `strings` where present (fast), else the same in Python."""
    if shutil.which("strings"):
        out = subprocess.run(["strings", "-a", "-n", "5", str(path)], capture_output=True, check=True).stdout
        return {s for s in out.decode("ascii", "replace").split("\n") if len(s) >= 5 and _keep(s)}
    with path.open("rb") as f:
        return _strings_of_stream(_chunks(f))


def write_cache(family: str, strings: set[str], python: dict[str, str], meta: dict) -> None:
    d = CACHE / family
    d.mkdir(parents=True, exist_ok=True)
    with gzip.open(d / "strings.txt.gz.part", "wt", encoding="ascii") as f:
        f.write("\n".join(sorted(strings)))
    with gzip.open(d / "python.json.gz.part", "wt", encoding="utf-8") as f:
        json.dump(python, f)
    (d / "strings.txt.gz.part").rename(d / "strings.txt.gz")
    (d / "python.json.gz.part").rename(d / "python.json.gz")
    (d / "meta.json").write_text(json.dumps(meta, indent=1))


def _python_sources(z: zipfile.ZipFile) -> dict[str, str]:
    out = {}
    for n in z.namelist():
        if not n.endswith(".py") or "/_api/" in n or "_test.py" in n or "/include/" in n:
            continue
        data = z.read(n)
        if _PY_GPU.search(data) or n.endswith(SELF_CHECK):
            out[n] = data.decode("utf-8", "replace")
    return out


def fetch_release(family: str, *, feed_frameworks: bool = True) -> Path:
    """Download one family's wheel, cache its strings and GPU-related Python, delete the wheel."""
    version, py, dist = RELEASES[family]
    with tempfile.TemporaryDirectory(prefix="tfdoctor-vocab-") as scratch:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-cache-dir",
                "--only-binary=:all:",
                "--python-version",
                py,
                "--platform",
                "manylinux2010_x86_64",
                "--platform",
                "manylinux2014_x86_64",
                "--platform",
                "manylinux_2_17_x86_64",
                "--platform",
                "manylinux_2_27_x86_64",
                "-d",
                scratch,
                f"{dist}=={version}",
            ],
            check=True,
        )
        wheel = next(Path(scratch).glob("*.whl"))
        strings: set[str] = set()
        libs = []
        with zipfile.ZipFile(wheel) as z:
            for member in _so_members(z):
                with z.open(member) as f:
                    strings |= _strings_of_stream(_chunks(f))
                libs.append(member)
                if feed_frameworks and member.endswith("/libtensorflow_framework.so.2"):
                    _feed_framework(z, member, version)
            python = _python_sources(z)
        meta = {"family": family, "wheel": wheel.name, "libraries": libs, "python_files": len(python)}
        write_cache(family, strings, python, meta)
    return CACHE / family


def _feed_framework(z: zipfile.ZipFile, member: str, version: str) -> None:
    """Leave the framework library where tests/envs/setup.sh puts it, so it needs no second download."""
    dest = ENVS / "frameworks" / version / "tensorflow" / "libtensorflow_framework.so.2"
    if dest.exists():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".vocab-part")
    with z.open(member) as src, part.open("wb") as out:
        shutil.copyfileobj(src, out, 8 << 20)
    part.rename(dest)


def _venv_tf(venv: str) -> Path | None:
    found = sorted((ENVS / venv).glob("lib/python3*/site-packages/tensorflow"))
    return found[0] if found else None


def local_release(family: str) -> tuple[set[str], dict[str, str], list[str]] | None:
    """Strings and Python of one family from the test environments alone (what CI has)."""
    libs: list[Path] = []
    python: dict[str, str] = {}
    tf = _venv_tf(VENVS[family]) if family in VENVS else None
    if tf is not None:
        libs = [
            p
            for p in tf.rglob("*.so*")
            if p.is_file()
            and p.stat().st_size >= 1_000_000
            and "/lite/" not in str(p)
            and "/include/" not in str(p)
        ]
        root = tf.parent
        for p in tf.rglob("*.py"):
            rel = p.relative_to(root).as_posix()
            if "/_api/" in rel or "_test.py" in rel or "/include/" in rel:
                continue
            data = p.read_bytes()
            if _PY_GPU.search(data) or rel.endswith(SELF_CHECK):
                python[rel] = data.decode("utf-8", "replace")
    else:
        fw = ENVS / "frameworks" / RELEASES[family][0] / "tensorflow" / "libtensorflow_framework.so.2"
        if fw.exists():
            libs = [fw]
    if not libs:
        return None
    strings: set[str] = set()
    for lib in libs:
        strings |= strings_of_file(lib)
    return strings, python, [str(p) for p in libs]


def cached_release(family: str) -> tuple[set[str], dict[str, str], list[str]] | None:
    d = CACHE / family
    if not (d / "strings.txt.gz").exists():
        return None
    with gzip.open(d / "strings.txt.gz", "rt", encoding="ascii") as f:
        strings = set(f.read().split("\n"))
    with gzip.open(d / "python.json.gz", "rt", encoding="utf-8") as f:
        python = json.load(f)
    meta = json.loads((d / "meta.json").read_text())
    # Caches written before the self-check was kept: take it from the family's venv where there is one.
    tf = _venv_tf(VENVS[family]) if family in VENVS else None
    if tf is not None and not any(k.endswith(SELF_CHECK) for k in python):
        sc = tf / "python" / "platform" / "self_check.py"
        if sc.exists():
            python["tensorflow/" + SELF_CHECK] = sc.read_text(errors="replace")
    return strings, python, [meta["wheel"] + ":" + lib for lib in meta["libraries"]]


SOURCE_PATH = re.compile(
    r"^(?:tensorflow|external/(?:local_xla|local_tsl|xla|tsl))/(?:[\w.+-]+/)*[\w+-]+\.(?:cc|cpp|h|cu)$"
)
"""A source file of TensorFlow, XLA or TSL as a wheel's strings hold it (the __FILE__ of a LOG or
CHECK): the path TensorFlow's glog-style log lines print."""


def _paths(strings: Iterable[str]) -> set[str]:
    return {s for s in strings if SOURCE_PATH.match(s)}


def _all_so(names: Iterable[str]) -> list[str]:
    """Every shared library of a wheel or venv (small ones too: a Python extension's own LOG lines
    name its files), not TFLite's or the headers'."""
    return [n for n in names if re.search(r"\.so(\.\d+)*$", n) and "/lite/" not in n and "/include/" not in n]


def fetch_small_paths(family: str) -> set[str]:
    """The source paths of a family's shared libraries under 1 MB, which the strings cache leaves
    out: each read by HTTP range from the wheel on pip's index (tests/envs/fetch_frameworks.py),
    cached in small_paths.txt beside the strings."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "envs"))
    import fetch_frameworks as ff
    import wheel_range

    out = CACHE / family / "small_paths.txt"
    if out.exists():
        return set(out.read_text().split())
    version, py, dist = RELEASES[family]
    listing = subprocess.run([sys.executable, "-m", "pip", "config", "list"],
                             capture_output=True, text=True).stdout
    settings = ff.pip_settings(listing)
    opener, counter = ff.make_opener(ff.setting(settings, "cert")), ff.Counter()
    files = [w for index in ff.index_urls(settings) for w in ff.read_page(index, dist, opener, counter)]
    wheel = ff.pick_wheel(files, dist, version, py)
    if wheel is None:
        raise RuntimeError(f"no {dist} {version} wheel for Python {py} on the index")
    paths: set[str] = set()
    with wheel_range.RangeFile(wheel.url, opener, counter) as source, zipfile.ZipFile(source) as z:
        for info in z.infolist():
            if info.filename in _all_so([info.filename]) and info.file_size < 1_000_000:
                paths |= _paths(_strings_of_stream([z.read(info)]))
    out.write_text("\n".join(sorted(paths)) + "\n")
    print(f"{family}: {len(paths)} paths from small libraries, {counter.bytes / 1e6:.1f} MB",
          file=sys.stderr, flush=True)
    return paths


def source_paths(family: str) -> set[str] | None:
    """Every TensorFlow/XLA/TSL source path a family's whole wheel names, from its venv in tests/envs
    (every shared library) or from the cache (large libraries' strings plus small_paths.txt)."""
    tf = _venv_tf(VENVS[family]) if family in VENVS else None
    if tf is not None:
        root = tf.parent
        libs = [p for p in _all_so(str(p.relative_to(root)) for p in tf.rglob("*.so*") if p.is_file())]
        return set().union(*(_paths(strings_of_file(root / lib)) for lib in libs))
    cached = cached_release(family)
    if cached is None:
        return None
    return _paths(cached[0]) | fetch_small_paths(family)


if __name__ == "__main__":
    for fam in sys.argv[1:] or reversed(FAMILIES):
        if (CACHE / fam / "strings.txt.gz").exists():
            continue
        print(f"fetching {fam}", file=sys.stderr, flush=True)
        try:
            fetch_release(fam)
        except Exception as e:  # one failed family must not stop the others
            print(f"{fam}: {e!r}", file=sys.stderr, flush=True)
