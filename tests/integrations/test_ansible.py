"""The provisioning playbook run by real ansible-core against localhost (-c local).

tfdoctor is the real CLI replaying a facts file (healthy or broken); the playbook runs from a
directory other than the report directory, which must not matter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import change, healthy
from programs import INTEGRATIONS, TFDOCTOR, venv_program, version, write_facts

PLAYBOOK = INTEGRATIONS / "provisioning" / "ansible-playbook.yml"


def play(tmp_path, **extra: object) -> tuple[int, str]:
    """ansible-playbook on localhost; returns its exit status and output."""
    playbook = venv_program("ansible-playbook")
    env = {
        "PATH": f"{os.path.dirname(playbook)}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "LC_ALL": "C.UTF-8",
    }
    run = subprocess.run(
        [
            playbook,
            "-i",
            "localhost,",
            "-c",
            "local",
            str(PLAYBOOK),
            "-e",
            json.dumps({"tfdoctor_hosts": "all", **extra}),
        ],
        cwd=tmp_path / "elsewhere",
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return run.returncode, run.stdout + run.stderr


@pytest.fixture
def where(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    return tmp_path


@pytest.mark.parametrize("broken", [False, True])
def test_playbook_saves_the_report_and_fails_only_a_broken_host(where, broken):
    """Healthy: ok, report saved at the absolute directory. Broken: the host fails with the
    root cause, its report saved first."""
    print(version([venv_program("ansible-playbook"), "--version"]))
    facts = change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}) if broken else healthy()
    write_facts(where / "facts.json", facts)
    reports = where / "reports"
    code, out = play(
        where,
        tfdoctor=TFDOCTOR,
        tfdoctor_args=["replay", str(where / "facts.json")],
        tfdoctor_report_dir=str(reports),
    )
    saved = json.loads((reports / "localhost.json").read_text())
    if broken:
        assert code == 2, out
        assert "tfdoctor exit 1 on localhost: cuda-visible-devices-hides-all" in out
        assert saved["verdict"]["status"] == "problems"
    else:
        assert code == 0, out
        assert saved["verdict"]["status"] == "healthy"
    assert oct((reports / "localhost.json").stat().st_mode & 0o777) == "0o600"


def test_a_host_without_tfdoctor_fails_clearly(where):
    """No tfdoctor at the configured path: the host fails saying so; no empty report."""
    code, out = play(
        where, tfdoctor=str(where / "no-such-tfdoctor"), tfdoctor_report_dir=str(where / "reports")
    )
    assert code == 2, out
    assert f"tfdoctor is not installed at {where / 'no-such-tfdoctor'} on localhost" in out
    assert not (where / "reports" / "localhost.json").exists()


def test_a_relative_report_directory_is_refused(where):
    """The old bug: a relative destination resolved differently per task. Now refused upfront."""
    code, out = play(where, tfdoctor=TFDOCTOR, tfdoctor_report_dir="reports")
    assert code == 2 and "must be an absolute path" in out


FAKE_BROKEN = """#!/bin/sh
# A host whose tfdoctor finds a problem: records that it ran, prints a report, exits 1.
echo "$@" >> {ran}
echo '{{"verdict": {{"status": "problems", "root_cause": "fake-broken-host"}}}}'
exit 1
"""


def play_inventory(where, inventory: str, *options: str) -> tuple[int, str]:
    """ansible-playbook with an inventory file (connection=local) and no extra vars, so that only
    the inventory and the playbook's own defaults decide the settings."""
    playbook = venv_program("ansible-playbook")
    path = where / "inventory.yml"
    path.write_text(inventory)
    env = {
        "PATH": f"{os.path.dirname(playbook)}:/usr/bin:/bin",
        "HOME": str(where),
        "ANSIBLE_LOCAL_TEMP": str(where / "ansible-tmp"),
        "ANSIBLE_NOCOLOR": "1",
        "LC_ALL": "C.UTF-8",
    }
    run = subprocess.run([playbook, "-i", str(path), *options, str(PLAYBOOK)], cwd=where / "elsewhere",
                         env=env, capture_output=True, text=True, timeout=180)
    return run.returncode, run.stdout + run.stderr


def inventory(host_vars: dict, group_vars: dict) -> str:
    """localhost in the playbook's default group gpu_nodes, connection=local."""
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, **host_vars}
    return json.dumps({"gpu_nodes": {"hosts": {"localhost": host}, "vars": group_vars}})


def test_inventory_host_and_group_vars_take_effect(where):
    """The settings set in inventory are the ones used (play vars used to outrank them and the
    default /opt/tfdoctor path and --quick ran instead): tfdoctor and tfdoctor_report_dir as group
    vars, tfdoctor_args as a host var replaying a broken machine."""
    write_facts(where / "facts.json", change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    reports = where / "group-reports"
    code, out = play_inventory(where, inventory(
        host_vars={"tfdoctor_args": ["replay", str(where / "facts.json")]},
        group_vars={"tfdoctor": TFDOCTOR, "tfdoctor_report_dir": str(reports)},
    ))
    assert code == 2, out
    assert "tfdoctor exit 1 on localhost: cuda-visible-devices-hides-all" in out
    assert json.loads((reports / "localhost.json").read_text())["verdict"]["status"] == "problems"


@pytest.mark.parametrize("broken", [True, False])
def test_check_mode_runs_the_read_only_check(where, broken):
    """`--check` runs tfdoctor (it only reads) and fails a broken host; it used to skip the
    command and pass every host. Nothing is written on the controller under --check."""
    ran = where / "ran.txt"
    fake = where / "fake-tfdoctor"
    fake.write_text(FAKE_BROKEN.format(ran=ran) if broken else f"#!/bin/sh\necho \"$@\" >> {ran}\n"
                    "echo '{\"verdict\": {\"status\": \"healthy\", \"root_cause\": null}}'\n")
    fake.chmod(0o755)
    reports = where / "reports"
    code, out = play_inventory(where, inventory(
        host_vars={"tfdoctor": str(fake)}, group_vars={"tfdoctor_report_dir": str(reports)}),
        "--check")
    assert ran.read_text().split() == ["--quick", "--redact", "--json"], "the default tfdoctor_args"
    if broken:
        assert code == 2, out
        assert "tfdoctor exit 1 on localhost: fake-broken-host" in out and "failed=1" in out
    else:
        assert code == 0, out
    assert not reports.exists()
