"""Files tfdoctor creates: fixed modes whatever the umask; a read-only or full state directory
is one line and exit code 2, with nothing half-written left behind."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tfdoctor.errors import OutputFileError
from tfdoctor.files import write_atomic

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixing"))
from helpers import judge  # noqa: E402
from test_hook import broken_env_facts  # noqa: E402
from tfdoctor.fixing.apply import apply_plan  # noqa: E402
from tfdoctor.fixing.model import save_plan  # noqa: E402
from tfdoctor.fixing.planner import plan_fixes  # noqa: E402


@pytest.fixture
def umask_000():
    old = os.umask(0)
    yield
    os.umask(old)


def venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path


def modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")}


def test_journal_tree_is_private_under_umask_000(tmp_path, monkeypatch, umask_000):
    """With umask 000 the journal's parents, journal.json, backups and logs used to be world-
    writable: every directory tfdoctor creates is 0700 and every file 0600."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    prefix = venv(tmp_path / "env")
    plan = plan_fixes(judge(broken_env_facts(prefix)))
    result = apply_plan(plan, lambda s: True, lambda s: False)
    assert result.changed
    found = modes(tmp_path / "state")
    assert found and {m for p, m in found.items() if (tmp_path / "state" / p).is_dir()} == {0o700}
    files = {p: m for p, m in found.items() if (tmp_path / "state" / p).is_file()}
    assert any(p.endswith("journal.json") for p in files)
    assert any("/logs/" in p for p in files) and any("/files/" in p for p in files)
    assert set(files.values()) == {0o600}


def test_write_atomic_mode_ignores_umask(tmp_path, umask_000):
    """--save, reports and plans: 0600 even with umask 000 and a looser existing file."""
    target = tmp_path / "facts.json"
    target.write_text("old")
    target.chmod(0o666)
    write_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_text() == "new"


def test_unencodable_text_leaves_no_temporary_file(tmp_path):
    """A lone surrogate used to fail inside the write and leave a 0-byte .tmp behind."""
    with pytest.raises(OutputFileError, match="not encodable"):
        write_atomic(tmp_path / "out.json", "bad \udc80 text")
    assert list(tmp_path.iterdir()) == []


def one_error_line(stderr: str) -> bool:
    """The plan is shown first (stderr); the failure is the last line, one line, no traceback."""
    lines = stderr.strip().splitlines()
    return lines[-1].startswith("tfdoctor: error: ") and "Traceback" not in stderr and sum(
        ln.startswith("tfdoctor: error") for ln in lines) == 1


def fix_apply(tmp_path: Path, state: Path, prefix: Path):
    """`tfdoctor fix --apply --yes --plan FILE` through the real CLI group, state in `state`."""
    from tfdoctor.cli import cli

    plan_file = tmp_path / "plan.json"
    save_plan(plan_fixes(judge(broken_env_facts(prefix))), plan_file)
    return CliRunner().invoke(cli, ["fix", "--apply", "--yes", "--plan", str(plan_file)],
                              env={"XDG_STATE_HOME": str(state)})


def test_read_only_state_directory_is_exit_2(tmp_path, tiny_mount):
    """A read-only state directory (a root-owned home, a read-only image) ended in exit 70."""
    state = tiny_mount("state", "ro")
    prefix = venv(tmp_path / "env")
    activate = (prefix / "bin" / "activate").read_bytes()
    result = fix_apply(tmp_path, state, prefix)
    assert result.exit_code == 2, result.output
    assert one_error_line(result.stderr) and "Read-only file system" in result.stderr
    assert (prefix / "bin" / "activate").read_bytes() == activate


def test_full_state_directory_is_exit_2_and_nothing_half_written(tmp_path, tiny_mount):
    """A full disk while backing up used to leave a truncated backup and a journal stuck at
    "applying": now exit 2, the file untouched, no apply directory, no temporary file."""
    state = tiny_mount("state")
    prefix = venv(tmp_path / "env")
    activate = prefix / "bin" / "activate"
    with activate.open("a") as f:  # a backup that cannot fit in 64 KiB
        f.write("# padding\n" * 20000)
    before = activate.read_bytes()
    result = fix_apply(tmp_path, state, prefix)
    assert result.exit_code == 2, result.output
    assert "No space left on device" in result.stderr and "nothing was changed" in result.stderr
    assert one_error_line(result.stderr)
    assert activate.read_bytes() == before
    # The per-environment flock file (fixing/lock.py) stays by design: it holds no apply state,
    # only the last holder's name, and the kernel released the lock when the apply ended.
    locks = [p for p in state.rglob("lock") if p.is_file()]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in locks)
    left = [p for p in state.rglob("*") if p.is_file() and p not in locks]
    assert left == []
