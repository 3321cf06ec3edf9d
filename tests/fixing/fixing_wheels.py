"""Tiny real wheels (zip + dist-info) that pip installs, uninstalls and reinstalls offline."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

# Requires-Dist of the real wheels (research/compat.md section 7; wheel METADATA).
TF_215_REQUIRES = ("numpy<2.0.0,>=1.23.5", "protobuf!=4.21.0,!=4.21.1,!=4.21.2,!=4.21.3,"
                   "!=4.21.4,!=4.21.5,<5.0.0dev,>=3.20.3", "keras<2.16,>=2.15.0",
                   "ml-dtypes~=0.2.0")
TF_221_REQUIRES = ("numpy>=1.26.0", "protobuf<8.0.0,>=6.31.1", "keras>=3.12.0",
                   "ml-dtypes<1.0.0,>=0.5.1")


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(directory: Path, name: str, version: str, files: dict[str, str],
                requires: tuple[str, ...] = ()) -> Path:
    """A py3-none-any wheel with these files and Requires-Dist lines."""
    stem = f"{name.replace('-', '_')}-{version}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}-py3-none-any.whl"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    entries = dict(files)
    entries[f"{stem}.dist-info/METADATA"] = meta
    entries[f"{stem}.dist-info/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: tfdoctor-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    record = "".join(f"{p},{_digest(c.encode())},{len(c.encode())}\n" for p, c in entries.items())
    entries[f"{stem}.dist-info/RECORD"] = record + f"{stem}.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for p, c in entries.items():
            zf.writestr(p, c)
    return path


def fake_tf(directory: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A distribution providing the `tensorflow` package, with a build_info.py of its own."""
    build = f"build_info = {{'is_cuda_build': False, 'distribution': '{name}'}}\n"
    return build_wheel(directory, name, version, {
        "tensorflow/__init__.py": f"__version__ = '{version}'  # {name}\n",
        "tensorflow/python/platform/build_info.py": build}, requires)
