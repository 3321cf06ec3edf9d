"""Contract: every fix a check names exists, every script is named, every header is valid."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from tfdoctor.errors import FixError
from tfdoctor.fixing.scripts import load_manual, load_scripts, parse_header, script_for
from tfdoctor.resources import data_dir

PACKAGE = Path(__file__).resolve().parents[2] / "doctor" / "tfdoctor"
# Fixes deliberately printed for a person, never applied without --allow-root (or never at all).
MANUAL_ON_PURPOSE = {
    "reboot-after-driver-upgrade", "blacklist-nouveau", "install-nvidia-driver",
    "upgrade-nvidia-driver", "add-user-to-video-group", "disable-mig", "reset-gpu",
    "wsl-libcuda-path", "install-tf-native-windows", "install-nvidia-container-toolkit",
    "put-matching-ptxas-on-path",
    # issue 10: an NCCL workaround for IOMMU faults, and a step that runs in Windows.
    "disable-nccl-p2p", "wsl-set-version-2",
    # a hybrid-graphics switch that needs a reboot.
    "prime-select-nvidia",
}
# Recipes no check references yet (persistence mode: issue 5, item 3).
UNREFERENCED_RECIPES = {"enable-persistence-mode"}


def referenced_fix_ids() -> set[str]:
    """Every fix id in a Remediation(...) of the checks or the smoke layer, read from source."""
    ids = set()
    for path in list(PACKAGE.glob("checks/*.py")) + list(PACKAGE.glob("smoke/*.py")):
        ids |= set(re.findall(r'Remediation\(\s*"([a-z0-9-]+)"', path.read_text()))
    return ids


def test_every_referenced_fix_exists():
    """A finding that names a fix nobody wrote would leave the user with nothing to run."""
    manual = load_manual()
    missing = sorted(i for i in referenced_fix_ids() if script_for(i) is None and i not in manual)
    assert missing == []


def test_manual_fixes_are_manual_on_purpose():
    """Which fixes need a person is a decision: a new manual id must be added here knowingly."""
    manual_refs = {i for i in referenced_fix_ids() if script_for(i) is None}
    assert manual_refs == MANUAL_ON_PURPOSE
    assert set(load_manual()) == MANUAL_ON_PURPOSE | UNREFERENCED_RECIPES


def test_every_script_is_referenced():
    """A script no check names is dead code that nobody would ever be offered."""
    refs = referenced_fix_ids()
    unused = [s.id for s in load_scripts().values()
              if s.id not in refs and not set(s.covers) & refs]
    assert unused == []
    for script in load_scripts().values():
        assert set(script.covers) <= refs, f"{script.id} covers unknown ids"


@pytest.mark.parametrize("path", sorted(data_dir("fixes").glob("*.sh")), ids=lambda p: p.name)
def test_script_is_valid_posix_sh(path: Path):
    """Scripts run with `sh` (dash on Debian): a syntax error must fail here, not on a user."""
    text = path.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert "\nset -eu\n" in text
    assert subprocess.run(["sh", "-n", str(path)]).returncode == 0
    assert subprocess.run(["bash", "--posix", "-n", str(path)]).returncode == 0


def test_shared_parts_are_not_fixes():
    """fixes/_pip.sh is the body the pip fixes exec, not a fix: it has no header to read, and
    a fix script's own header must still be read (its body is one exec line)."""
    scripts = load_scripts()
    assert (data_dir("fixes") / "_pip.sh").is_file()
    assert not any(fix_id.startswith("_") for fix_id in scripts)
    assert scripts["pin-python-packages"].summary.startswith("Install the numpy")


def test_header_parser_rejects_bad_headers():
    """The planner trusts needs-root; a missing or misspelt value must not read as 'no'."""
    with pytest.raises(FixError, match="needs-root"):
        parse_header("#!/bin/sh\n# fix-id: x\n# summary: s\n# reversible: yes\n", "x.sh")
    with pytest.raises(FixError, match="yes or no"):
        parse_header("#!/bin/sh\n# fix-id: x\n# summary: s\n# needs-root: maybe\n"
                     "# reversible: yes\n", "x.sh")


def test_scripts_ship_in_the_wheel():
    """The wheel maps fixes/ to tfdoctor/fixes: data_dir must find the same scripts."""
    pyproject = (PACKAGE.parents[1] / "pyproject.toml").read_text()
    assert '"fixes" = "tfdoctor/fixes"' in pyproject
    assert (data_dir("fixes") / "manual.toml").is_file()
