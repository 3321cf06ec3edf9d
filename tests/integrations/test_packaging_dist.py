"""Packaging: the sdist builds a wheel (python -m build), the wheel ships the integration
scripts and the JSON Schema, and the sdist's own integration tests pass against that wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import change, healthy
from programs import REPO, TFDOCTOR, venv_program, version, write_facts


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """sdist, then the wheel built from that sdist (build's default), then the wheel installed
    into a directory of its own."""
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run(
        [sys.executable, "-m", "build", "-o", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Building wheel from sdist" in run.stdout or "from sdist" in run.stdout + run.stderr
    sdist, wheel = next(out.glob("*.tar.gz")), next(out.glob("*.whl"))
    target = out / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return {"sdist": sdist, "wheel": wheel, "site": target, "out": out}


def test_wheel_ships_the_scripts_executable_and_the_schema(built):
    """Every file of integrations/ is in the wheel (shell scripts executable) with the schema."""
    with zipfile.ZipFile(built["wheel"]) as whl:
        infos = {i.filename: i for i in whl.infolist()}
    shipped = sorted(
        p.relative_to(REPO).as_posix() for p in (REPO / "integrations").rglob("*") if p.is_file()
    )
    for rel in shipped:
        info = infos[f"tfdoctor/{rel}"]
        if rel.endswith(".sh"):
            assert (info.external_attr >> 16) & 0o111, rel
    assert "tfdoctor/schema/report.schema.json" in infos


def test_installed_wheel_says_where_its_integrations_are(built):
    """From the installed wheel, `tfdoctor integrations path` points inside the package."""
    code = (
        "import sys; from tfdoctor.cli import cli; from tfdoctor.integrations_cmd import integrations;"
        " cli.add_command(integrations); sys.exit(cli(prog_name='tfdoctor'))"
    )
    env = {**os.environ, "PYTHONPATH": str(built["site"])}
    paths = {}
    for name in ("", "slurm", "schema", "cluster-schema"):
        run = subprocess.run(
            [sys.executable, "-c", code, "integrations", "path", *([name] if name else [])],
            env=env,
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        paths[name] = run.stdout.strip()
    site = str(built["site"] / "tfdoctor")
    assert all(p.startswith(site) for p in paths.values()), paths
    assert os.access(os.path.join(paths["slurm"], "tfdoctor-slurm.sh"), os.X_OK)
    assert paths["schema"].endswith("schema/report.schema.json")
    assert paths["cluster-schema"].endswith("schema/cluster.schema.json")
    cluster_schema = json.loads(Path(paths["cluster-schema"]).read_text())
    assert cluster_schema["properties"]["kind"] == {"const": "cluster"}


def test_license_is_in_the_wheel_and_the_sdist(built):
    """The metadata says Apache-2.0; the LICENSE text itself ships in both archives (the wheel's
    .dist-info/licenses, named by License-File) byte for byte as in the repository."""
    license_text = (REPO / "LICENSE").read_bytes()
    assert b"Apache License" in license_text and b"Version 2.0, January 2004" in license_text
    assert b"END OF TERMS AND CONDITIONS" in license_text, "the full text, not a notice"
    with zipfile.ZipFile(built["wheel"]) as whl:
        dist_info = next(n.split("/")[0] for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = whl.read(f"{dist_info}/METADATA").decode()
        assert whl.read(f"{dist_info}/licenses/LICENSE") == license_text
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()
    with tarfile.open(built["sdist"]) as tar:
        member = next(m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/LICENSE"))
        extracted = tar.extractfile(member)
        assert extracted is not None and extracted.read() == license_text


def test_check_jsonschema_validates_a_real_report_with_the_shipped_schema(built, tmp_path):
    """check-jsonschema, given the wheel's schema, accepts `tfdoctor --json` and rejects a
    damaged report (so the pass means something)."""
    checker = venv_program("check-jsonschema")
    print(version([checker, "--version"]))
    facts = write_facts(tmp_path / "facts.json", change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    report = tmp_path / "report.json"
    report.write_text(
        subprocess.run([TFDOCTOR, "replay", str(facts), "--json"], capture_output=True, text=True).stdout
    )
    schema = built["site"] / "tfdoctor" / "schema" / "report.schema.json"
    ok = subprocess.run([checker, "--schemafile", str(schema), str(report)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    damaged = json.loads(report.read_text())
    damaged["verdict"]["status"] = "fine"
    report.write_text(json.dumps(damaged))
    bad = subprocess.run([checker, "--schemafile", str(schema), str(report)], capture_output=True, text=True)
    assert bad.returncode == 1


def test_the_sdists_integration_tests_pass_against_its_wheel(built):
    """Unpack the sdist and run its own integration tests (no daemons: the fast ones) with the
    wheel built from it first on the path: integrations/ and the tests travel together."""
    unpacked = built["out"] / "unpacked"
    with tarfile.open(built["sdist"]) as tar:
        tar.extractall(unpacked, filter="data")
    root = next(unpacked.iterdir())
    assert (root / "integrations" / "slurm" / "tfdoctor-slurm.sh").exists()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/integrations/test_cloud_init.py",
            "tests/integrations/test_kubernetes.py",
            "tests/share/test_integrations.py",
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(built["site"])},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout
