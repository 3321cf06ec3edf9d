"""Compile stub shared libraries from C with the system compiler, cached between runs.

`build_stub(source, soname, defines)` returns the path of a shared object whose DT_SONAME is
`soname`, built from `source` (a file in this directory) with `-D` defines. Builds are cached
under $TFDOCTOR_STUB_CACHE (default ~/.cache/tfdoctor/stubs) by a hash of the source, soname,
defines and compiler, so a test run builds each variant once. `python tests/stubs/build.py`
builds every stub the suite uses (CI runs it once before pytest).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "tfdoctor" / "stubs"
    return Path(os.environ.get("TFDOCTOR_STUB_CACHE", default))


def build_stub(source: str, soname: str, defines: dict[str, str | int] | None = None,
               libs: tuple[str, ...] = ()) -> Path:
    """The cached shared object for `source` built as `soname` with `defines`."""
    src = HERE / source
    cc = os.environ.get("CC", "cc")
    flags = [f"-D{k}={v}" for k, v in sorted((defines or {}).items())]
    key = hashlib.sha256(
        "\0".join([src.read_text(), soname, *flags, *libs, cc]).encode()
    ).hexdigest()[:16]
    out = cache_dir() / key / soname
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".so", delete=False) as tmp:
        tmp_path = Path(tmp.name)
    argv = [cc, "-shared", "-fPIC", "-O1", "-o", str(tmp_path), str(src),
            f"-Wl,-soname,{soname}", *flags, *libs]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        tmp_path.unlink(missing_ok=True)
        raise RuntimeError(f"stub build failed: {' '.join(argv)}\n{proc.stderr}")
    tmp_path.replace(out)  # atomic: parallel test workers never see half a library
    return out


def install_stub(built: Path, directory: Path, filename: str | None = None) -> Path:
    """Copy a built stub into a fake tree (copies, so each tree is self-contained)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / (filename or built.name)
    shutil.copy2(built, target)
    return target


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    from stubs import catalogue  # type: ignore[import-not-found]

    for path in catalogue.build_all():
        print(path)
