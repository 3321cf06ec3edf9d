"""Helpers for the target-interpreter tests: recorded text, temporary venvs with fake installs."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def data(name: str) -> str:
    """A recorded fixture file from tests/probes_target/data."""
    return (DATA / name).read_text(encoding="utf-8")


def record_hash(content: bytes) -> str:
    """The `sha256=...` field pip writes into RECORD for a file with this content."""
    return (
        "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
    )


@dataclass
class FakeVenv:
    """A real venv (python -m venv --without-pip) whose site-packages the test fills by hand."""

    python: str
    site: Path

    def add_dist(
        self,
        name: str,
        version: str,
        requires: Iterable[str] = (),
        record: dict[str, bytes] | None = None,
        site: Path | None = None,
    ) -> Path:
        """A wheel-style dist-info directory: METADATA (+ RECORD hashing the given files)."""
        where = site or self.site
        where.mkdir(parents=True, exist_ok=True)
        dist = where / f"{name.replace('-', '_')}-{version}.dist-info"
        dist.mkdir()
        lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
        lines += [f"Requires-Dist: {r}" for r in requires]
        (dist / "METADATA").write_text(
            "\n".join(lines) + "\n\nLong description: Name: not-a-header\n"
        )
        rows = [
            f"{path},{record_hash(content)},{len(content)}"
            for path, content in (record or {}).items()
        ]
        rows.append(f"{dist.name}/METADATA,,")
        (dist / "RECORD").write_text("\n".join(rows) + "\n")
        return dist

    def add_tensorflow(
        self,
        build_info: str | None = None,
        cuda_config: str | None = None,
        extra: dict[str, str] | None = None,
        site: Path | None = None,
    ) -> Path:
        """A `tensorflow/` package directory holding only the files the probe reads."""
        pkg = (site or self.site) / "tensorflow"
        files = {"__init__.py": "raise ImportError('the static probe must never import this')\n"}
        if build_info is not None:
            files["python/platform/build_info.py"] = build_info
        if cuda_config is not None:
            files["include/external/local_config_cuda/cuda/cuda/cuda_config.h"] = cuda_config
        files.update(extra or {})
        for rel, text in files.items():
            (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
            (pkg / rel).write_text(text)
        return pkg


def make_venv(root: Path, python: str = sys.executable) -> FakeVenv:
    """A fresh venv without pip (fast); site-packages found by asking it."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(root)], check=True)
    py = root / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return FakeVenv(str(py), Path(site))


def build_elf_with_runpath(directory: Path, filename: str, runpath: str) -> Path:
    """A tiny real shared object with DT_RUNPATH, compiled by the system C compiler."""
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / filename
    cc = os.environ.get("CC", "cc")
    subprocess.run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-x",
            "c",
            "-",
            "-o",
            str(out),
            f"-Wl,-soname,{filename}",
            "-Wl,--enable-new-dtags",
            f"-Wl,-rpath,{runpath}",
        ],
        input="int tfdoctor_fake_framework;\n",
        text=True,
        check=True,
    )
    return out


def script(path: Path, body: str) -> str:
    """An executable shell script standing in for a broken `--python`."""
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)
