"""The target child reads tfdoctor's start-up preload and conda-meta, in a real venv."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tfdoctor.host import Host
from tfdoctor.probes.target import probe_target

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "fixes" / "activation-hook-ld-library-path.sh"


def write_preload(site: Path, libs: list[Path], only_for: Path) -> None:
    """The .pth exactly as the fix script writes it."""
    args = [a for lib in libs for a in ("--preload", str(lib))]
    subprocess.run(["sh", str(SCRIPT), *args, "--only-for", str(only_for), "preload",
                    str(site / "tfdoctor-preload.pth")], check=True)


def probe(python: str):
    issues: list = []
    facts, _tf = probe_target(Host(python=python, env=dict(os.environ)), issues)
    assert issues == [] and facts.error is None
    return facts


def test_preloads_are_existing_files_for_the_installed_tensorflow(fake_venv):
    """Only files that exist, in the file's order, and only while the TensorFlow it was written
    for (its .dist-info) is installed: after an upgrade the preload is inert and says so."""
    dist = fake_venv.add_dist("tensorflow", "2.21.0")
    libs = fake_venv.site / "nvidia" / "cusolver" / "lib"
    libs.mkdir(parents=True)
    (libs / "libcusolver.so.11").write_bytes(b"\x7fELF")
    (libs / "libcublas.so.12").write_bytes(b"\x7fELF")
    write_preload(fake_venv.site, [libs / "libcublas.so.12", libs / "gone.so.1",
                                   libs / "libcusolver.so.11"], dist)
    assert probe(fake_venv.python).preloads == (str(libs / "libcublas.so.12"),
                                                str(libs / "libcusolver.so.11"))
    dist.rename(dist.with_name("tensorflow-2.22.0.dist-info"))
    assert probe(fake_venv.python).preloads == ()


def test_preload_is_inert_for_another_tensorflow(fake_venv):
    """The interpreter starts normally and loads nothing when the .dist-info is gone."""
    write_preload(fake_venv.site, [Path("/lib/x86_64-linux-gnu/libz.so.1")],
                  fake_venv.site / "tensorflow-9.9.9.dist-info")
    code = ("import importlib.util, sys; importlib.util.find_spec('tensorflow'); "
            "print('libz.so' in open('/proc/self/maps').read())")
    out = subprocess.run([fake_venv.python, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False" and not out.stderr


def test_conda_meta_is_read_and_filtered(fake_venv):
    """conda-meta/*.json: TensorFlow's build string and the CUDA packages, nothing else; a
    damaged record is skipped."""
    prefix = Path(fake_venv.python).parent.parent
    meta = prefix / "conda-meta"
    meta.mkdir()
    for name, version, build in (("tensorflow-base", "2.17.0", "cuda120py311h4d8b8a7_203"),
                                 ("cudatoolkit", "11.8.0", "h4ba93d1_13"),
                                 ("libcusolver", "11.6.1.9", "hbd13f7d_0"),
                                 ("openssl", "3.3.2", "hb9d3cd8_0")):
        (meta / f"{name}-{version}-{build}.json").write_text(
            json.dumps({"name": name, "version": version, "build": build}))
    (meta / "broken-1-0.json").write_text("{")
    facts = probe(fake_venv.python)
    assert facts.is_conda is True
    assert facts.conda_packages == {"cudatoolkit": "11.8.0 h4ba93d1_13",
                                    "libcusolver": "11.6.1.9 hbd13f7d_0",
                                    "tensorflow-base": "2.17.0 cuda120py311h4d8b8a7_203"}
