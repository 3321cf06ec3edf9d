"""triage runs the cyclic garbage collector less often while it reads a ticket, and puts its
thresholds back afterwards, whatever the command's outcome (issue 21, item 4)."""

from __future__ import annotations

import gc
import json

from click.testing import CliRunner
from tfdoctor.cli import cli


def test_triage_restores_the_collector_thresholds(tmp_path):
    before = gc.get_threshold()
    out = CliRunner().invoke(cli, ["triage", "--json", "-"], input="GPU 0 CUDA\nnumpy 1.26.4\n")
    assert out.exit_code in (0, 1, 3)
    assert json.loads(out.stdout)["facts"]
    assert gc.get_threshold() == before
    missing = CliRunner().invoke(cli, ["triage", str(tmp_path / "none.txt")])
    assert missing.exit_code != 0
    assert gc.get_threshold() == before
