"""tfdoctor against real TensorFlow 2.21 on the same fake machine (issue 11, point 4).

For each machine of cases.py, real TensorFlow (tf_probe.py) and `tfdoctor --quick --json` run
under tests/fakegpu/run.py. TensorFlow's count of the GPUs it keeps is pinned (what it really
did on the stub driver) and must equal both the count tfdoctor says TensorFlow lists and its
usable-GPU count. Every warning or error TensorFlow logs about the setup must map to the
tfdoctor finding for it. The stub runs no kernel: where TensorFlow lists a GPU its kernels
cannot run on (TF 2.17 on an RTX 5090), CUDA's ptxas is the judge (test_wheel_ptx.py).
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

from oracle.cases import CASES, Case
from oracle.differential import TfOutcome, finding_ids, run_tensorflow, run_tfdoctor


def venv_without(tf_python: str, base: Path, removed: str) -> tuple[str, Path]:
    """A venv that sees the tf-cuda venv's packages through links, less one nvidia wheel.

    The tensorflow tree and nvidia/ are real directories of links: $ORIGIN of a library opened
    through a linked directory is resolved back in the original venv, where the removed wheel
    still is.
    """
    site = next((Path(tf_python).parent.parent / "lib").glob("python3*/site-packages"))
    subprocess.run([tf_python, "-m", "venv", "--without-pip", str(base)], check=True)
    copy = next((base / "lib").glob("python3*/site-packages"))

    def mirror(source: Path, target: Path) -> None:
        for entry in source.iterdir():
            relative = entry.relative_to(site).as_posix()
            # TF's objects reach the wheels by $ORIGIN/../.. paths from anywhere in its tree.
            if entry.is_dir() and not entry.is_symlink() and (
                    relative in ("tensorflow", "nvidia") or relative.startswith("tensorflow/")):
                (target / entry.name).mkdir()
                mirror(entry, target / entry.name)
            elif relative != f"nvidia/{removed}":
                (target / entry.name).symlink_to(entry)

    mirror(site, copy)
    return str(base / "bin" / "python"), copy


@pytest.fixture(scope="module")
def outcomes(tf_cuda_python, tmp_path_factory):
    """Run both sides once per case (each TF start costs seconds), on first use."""
    site = next((Path(tf_cuda_python).parent.parent / "lib").glob("python3*/site-packages"))
    venvs = {"stock": (tf_cuda_python, site)}
    scratch = tmp_path_factory.mktemp("scenarios")

    @functools.cache
    def outcome(name: str) -> tuple[TfOutcome, dict, int, str]:
        case = CASES[name]
        if case.venv not in venvs:
            venvs[case.venv] = venv_without(tf_cuda_python, tmp_path_factory.mktemp(case.venv), "cudnn")
        python, where = venvs[case.venv]
        tf = run_tensorflow(case.machine, python, where, scratch)
        report, counts = run_tfdoctor(case.machine, python, where, scratch)
        return tf, report, counts

    return outcome


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensorflow_did_what_we_recorded(name, outcomes):
    """Pins real TensorFlow's behaviour on the fake machine: a stub change that alters it shows."""
    tf, _, _ = outcomes(name)
    case: Case = CASES[name]
    assert tf.kept == case.tf_kept, tf.log
    if case.tf_kept:
        assert len(tf.answer["details"]) >= case.tf_kept
        assert all(d["name"] and d["cc"] for d in tf.answer["details"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_setup_line_maps_to_a_finding(name, outcomes):
    """TensorFlow's warnings and errors about the setup each have a tfdoctor finding."""
    tf, report, _ = outcomes(name)
    case = CASES[name]
    ids = finding_ids(report)
    for needle, finding in case.log.items():
        assert any(needle in line for line in tf.log), f"TF never said {needle!r}: {tf.log}"
        assert finding in ids, f"{needle!r} -> {finding}, but tfdoctor said {ids}"
    unexplained = [line for line in tf.log if line[0] in "WEF"
                   and not any(needle in line for needle in case.log)]
    assert unexplained == []


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.says))
def test_findings_name_the_cause(name, outcomes):
    """Where the case says what tfdoctor must tell the user, its finding says it."""
    _, report, _ = outcomes(name)
    for finding, words in CASES[name].says.items():
        texts = [f"{f['message']} {f.get('hint') or ''}" for f in report["findings"] if f["id"] == finding]
        assert any(words in t for t in texts), texts


@pytest.mark.parametrize("name", sorted(CASES))
def test_listed_gpu_counts_agree(name, outcomes):
    """The GPUs TensorFlow keeps equal the GPUs tfdoctor says it lists."""
    tf, _, counts = outcomes(name)
    assert counts.listed == tf.kept, f"tfdoctor: {counts}; TensorFlow: {tf.kept}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_usable_gpu_counts_agree(name, outcomes):
    """The GPUs TensorFlow keeps equal tfdoctor's usable-GPU count."""
    tf, _, counts = outcomes(name)
    assert counts.usable == tf.kept, f"tfdoctor: {counts}; TensorFlow: {tf.kept}"


def test_older_tensorflow_lists_a_gpu_its_kernels_cannot_run_on(tf_cuda_217_python, tmp_path):
    """TF 2.17 on a fake RTX 5090 lists it and says it will JIT-compile PTX; part of that PTX is
    sm_90a, which ptxas refuses for sm_120 (test_wheel_ptx.py). tfdoctor counts it listed, not
    usable, says why, and maps TensorFlow's line to gpu-newer-than-tf with the 2.21 fix."""
    from oracle.differential import Machine

    site = next((Path(tf_cuda_217_python).parent.parent / "lib").glob("python3*/site-packages"))
    machine = Machine(("--gpus", "1", "--model", "NVIDIA GeForce RTX 5090"))
    tf = run_tensorflow(machine, tf_cuda_217_python, site, tmp_path)
    assert tf.kept == 1 and tf.answer["details"] == [{"name": "NVIDIA GeForce RTX 5090", "cc": "12.0"}]
    assert any("not built with CUDA kernel binaries compatible with compute capability 12.0" in line
               for line in tf.log), tf.log
    report, counts = run_tfdoctor(machine, tf_cuda_217_python, site, tmp_path)
    assert (counts.listed, counts.usable) == (1, 0), counts
    assert "1 listed by TensorFlow" in counts.why and "first kernel fails" in counts.why
    finding = next(f for f in report["findings"] if f["id"] == "gpu-newer-than-tf")
    assert "sm_90a" in finding["message"]
    assert finding["remediation"]["commands"][-1].endswith("'tensorflow[and-cuda]==2.21.*'")


def test_older_tensorflow_lists_the_fake_gpus(tf_cuda_217_python, tmp_path):
    """TF 2.17 on the stub driver: lists both GPUs with name and CC, keeps both (its RUNPATH
    reaches cuSOLVER, so the stock install works)."""
    from oracle.differential import Machine

    site = next((Path(tf_cuda_217_python).parent.parent / "lib").glob("python3*/site-packages"))
    machine = Machine(("--gpus", "2", "--model", "NVIDIA A100-SXM4-80GB"))
    tf = run_tensorflow(machine, tf_cuda_217_python, site, tmp_path)
    assert tf.kept == 2
    assert tf.answer["details"] == [{"name": "NVIDIA A100-SXM4-80GB", "cc": "8.0"}] * 2
    _, counts = run_tfdoctor(machine, tf_cuda_217_python, site, tmp_path)
    assert counts.listed == counts.usable == 2, counts


def test_tensorflow_lists_the_mig_device_not_the_gpu(outcomes):
    """On a GPU in MIG mode real TensorFlow lists one GPU: the MIG device (its name carries the
    profile), the one CUDA_VISIBLE_DEVICES names, else the first; tfdoctor names that same one."""
    for name in ("mig-instances", "mig-selected"):
        tf, report, _ = outcomes(name)
        assert tf.answer["details"] == [{"name": "NVIDIA A100-SXM4-80GB MIG 2g.20gb", "cc": "8.0"}]
        gpu = report["facts"]["driver"]["gpus"][0]
        assert gpu["mig_mode"] is True and len(gpu["mig_devices"]) == 3
        assert report["facts"]["cuda_driver"]["device_names"] == ["NVIDIA A100-SXM4-80GB MIG 2g.20gb"]
