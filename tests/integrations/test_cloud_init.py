"""The cloud-init example against the real `cloud-init schema`, and its install script's pins."""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml
from programs import INTEGRATIONS, program, version

CLOUD = INTEGRATIONS / "provisioning" / "cloud-init.yaml"
INSTALL = INTEGRATIONS / "provisioning" / "tfdoctor-install.sh"
GATE = INTEGRATIONS / "provisioning" / "tfdoctor-gate.sh"


def schema(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [program("cloud-init"), "schema", "--config-file", str(path)], capture_output=True, text=True
    )


def test_cloud_init_schema_accepts_the_example_and_rejects_a_broken_one(tmp_path):
    """`cloud-init schema` validates the shipped file; the same check fails a damaged copy, so
    the pass means something."""
    print(version([program("cloud-init"), "--version"]))
    run = schema(CLOUD)
    assert run.returncode == 0 and "Valid cloud-config" in run.stdout, run.stdout + run.stderr
    damaged = yaml.safe_load(CLOUD.read_text())
    damaged["packages"] = 5
    bad = tmp_path / "bad.yaml"
    bad.write_text("#cloud-config\n" + yaml.safe_dump(damaged))
    assert schema(bad).returncode != 0


def test_cloud_init_installs_what_images_lack_and_stops_at_the_first_failure():
    """python3-venv and git come from the distribution; runcmd starts with set -eu; the two
    scripts are the shipped files byte for byte; nothing installs by a bare index name."""
    cloud = yaml.safe_load(CLOUD.read_text())
    assert {"python3-venv", "git"} <= set(cloud["packages"]) and cloud["package_update"] is True
    files = {f["path"]: f["content"] for f in cloud["write_files"]}
    assert files["/usr/local/sbin/tfdoctor-install.sh"] == INSTALL.read_text()
    assert files["/usr/local/sbin/tfdoctor-gate.sh"] == GATE.read_text()
    assert cloud["runcmd"][0] == "set -eu"
    assert "pip install" not in " ".join(map(str, cloud["runcmd"]))


@pytest.mark.parametrize(
    "source, words",
    [
        ("", "set TFDOCTOR_SOURCE"),
        ("tfdoctor", "is not pinned"),
        ("git+https://github.com/ORG/tfdoctor@COMMIT", "full 40-hex commit"),
        ("git+https://github.com/ORG/tfdoctor@main", "full 40-hex commit"),
        ("https://example.com/tfdoctor-0.1.0-py3-none-any.whl", "is not pinned"),
        ("https://example.com/tfdoctor-0.1.0-py3-none-any.whl#sha256=abc", "sha256"),
    ],
)
def test_install_refuses_an_unpinned_source_before_touching_anything(tmp_path, source, words):
    """The placeholder, a branch, a bare name and a hashless wheel all fail loudly, and no venv
    is made."""
    env = {"PATH": os.environ["PATH"], "TFDOCTOR_SOURCE": source, "TFDOCTOR_PREFIX": str(tmp_path / "venv")}
    run = subprocess.run(["sh", str(INSTALL)], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and words in run.stderr, run.stderr
    assert not (tmp_path / "venv").exists()
