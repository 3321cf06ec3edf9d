"""Ranking follows the catalogue's links (issue 20, item 6): the root is what no other change can
do without, and a failure a static finding explains is reported as its consequence."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from tfdoctor.cli import cli

RECORDED = Path(__file__).resolve().parents[1] / "recorded" / "no-gpu-tf-cuda-2-21" / "facts.json"


def _cpu_build_without_driver(tmp_path: Path) -> Path:
    """The recorded machine without an NVIDIA driver, its TensorFlow replaced by tensorflow-cpu."""
    facts = json.loads(RECORDED.read_text())
    tf = facts["tensorflow"]
    tf["distributions"] = [{**tf["distributions"][0], "name": "tensorflow-cpu"}]
    tf.update(is_cuda_build=False, cuda_version=None, cudnn_version=None)
    facts["smoke"] = None
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    return path


def test_expected_gpus_without_a_driver_root_is_the_driver(tmp_path: Path) -> None:
    """--expect-gpus 1, tensorflow-cpu and no driver: replacing TensorFlow gives no GPU without a
    driver, so the missing driver is the root and the CPU build its consequence."""
    path = _cpu_build_without_driver(tmp_path)
    result = CliRunner().invoke(cli, ["replay", str(path), "--expect-gpus", "1", "--json"])
    report = json.loads(result.stdout)
    assert report["verdict"]["root_cause"] == "driver-not-installed"
    cpu = next(f for f in report["findings"] if f["id"] == "tf-cpu-only-build")
    assert cpu["caused_by"] == "driver-not-installed"


def test_without_expected_gpus_a_cpu_machine_is_healthy(tmp_path: Path) -> None:
    """The same machine, nobody expecting a GPU: a CPU build on a machine without a driver is fine."""
    path = _cpu_build_without_driver(tmp_path)
    result = CliRunner().invoke(cli, ["replay", str(path), "--json"])
    assert json.loads(result.stdout)["verdict"]["status"] == "healthy"


def test_import_failure_of_an_out_of_range_package_is_its_consequence() -> None:
    """NumPy 2 under TF 2.17: the static finding names the package and the range; NumPy's own
    import error is reported because of it, never as a second root."""
    ticket = ("tensorflow==2.17.0\nnumpy==2.1.0\n"
              "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.1.0 as it may crash.\n")
    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket)
    report = json.loads(result.stdout)
    assert report["verdict"]["root_cause"] == "package-out-of-range"
    log = next(f for f in report["findings"] if f["id"] == "tf-log-numpy2-abi")
    assert log["caused_by"] == "package-out-of-range"
