"""The support report and the text report say what the smoke run did (issue 22): "Smoke run:
completed" after `import tensorflow` failed, and "[ok] tensor-cores CPU:0" on a machine with no
GPU, contradicted the findings beside them. Through the CLI, on saved facts."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from early_stops import EARLY_STOPS, make_facts
from share_helpers import invoke
from tfdoctor.facts import RecipeResult, SmokeDevice, SmokeFacts


def _save(facts: object, path: Path) -> Path:
    path.write_text(json.dumps(facts.to_dict()))  # type: ignore[attr-defined]
    return path


def cpu_only() -> object:
    """tensorflow-cpu, no GPU: tensor-cores ran on CPU:0 and 'passed' (what the child says)."""
    recipes = (RecipeResult("import", status="passed"), RecipeResult("devices", status="passed"),
               RecipeResult("tensor-cores", device="CPU:0", status="passed", seconds=0.02,
                            metrics={"fp16_vs_fp32": 0.874}))
    return make_facts(SmokeFacts(python="/venv/bin/python", outcome="completed",
                                 tf_version="2.21.0", is_cuda_build=False,
                                 devices=(SmokeDevice("CPU:0", "CPU"),), recipes=recipes))


def test_support_report_after_a_failed_import(tmp_path: Path) -> None:
    """`tfdoctor report --from`: the smoke heading says the import failed, not 'completed'."""
    facts = _save(make_facts(EARLY_STOPS["import-failed"]), tmp_path / "facts.json")
    result = invoke("report", "--from", str(facts), "-o", f"{tmp_path}/out/")
    assert result.exit_code in (0, 1, 3), result.output
    markdown = next((tmp_path / "out").glob("*.md")).read_text()
    assert "### Smoke run: `import tensorflow failed`" in markdown, markdown
    assert "Smoke run: `completed`" not in markdown


def test_tensor_cores_on_a_cpu_are_not_ok(tmp_path: Path) -> None:
    """`tfdoctor replay -v` and the support report: the tensor-cores recipe that ran on CPU:0
    is [--] / not-applicable with the reason, never [ok] / passed."""
    from tfdoctor.cli import cli

    facts = _save(cpu_only(), tmp_path / "facts.json")
    text = CliRunner().invoke(cli, ["replay", str(facts), "-v"]).stdout
    line = next(ln for ln in text.splitlines() if " tensor-cores " in ln and "CPU:0" in ln)
    assert line.lstrip().startswith("[--]") and "no GPU: Tensor Cores are a GPU feature" in line
    result = invoke("report", "--from", str(facts), "-o", f"{tmp_path}/out/")
    assert result.exit_code in (0, 1, 3), result.output
    markdown = next((tmp_path / "out").glob("*.md")).read_text()
    assert "| `tensor-cores` | `CPU:0` | not-applicable (no GPU: Tensor Cores are a GPU " \
        "feature) |" in markdown, markdown
