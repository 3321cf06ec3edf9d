"""Each finding fires on the machine state it describes, and the verdict names the right root cause."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import change, gpu, healthy, ids, judge, pip_lib
from tfdoctor.checks import all_checks
from tfdoctor.facts import (
    Distribution,
    HostFacts,
    IntentFacts,
    LoaderAnswer,
    ProbeIssue,
    TensorRtFacts,
    TfLoaderFacts,
    ToolkitFacts,
)
from tfdoctor.findings import CheckStatus, Severity

H = healthy()


def _tf(**kw):
    return replace(H.tensorflow, **kw)


def _lib(name, **kw):
    return tuple(replace(lib, **kw) if lib.name == name else lib for lib in H.libraries)


# finding id -> (facts, expected root cause or None). One machine per finding: the catalogue the
# contract test below checks against the registry, so a new finding cannot land without a case.
CASES = {
    "driver-not-installed": (change(H, driver={"nvml_error": "NVML_ERROR_LIBRARY_NOT_FOUND",
                                               "driver_version": None, "kernel_module_version": None,
                                               "nvidia_module_loaded": False,
                                               "gpus": (), "device_nodes": ()},
                                    cuda_driver={"load_error": "libcuda.so.1: cannot open shared object file",
                                                 "library": None, "init_result": None}),
                             "driver-not-installed"),
    "driver-libraries-not-found": (change(H, driver={
        "nvml_error": "NVML_ERROR_LIBRARY_NOT_FOUND", "driver_version": None, "gpus": ()},
        platform={"in_container": True}), "driver-libraries-not-found"),
    "driver-not-loaded": (change(H, driver={"nvml_error": "NVML_ERROR_DRIVER_NOT_LOADED", "gpus": (),
                                            "nouveau_loaded": True, "kernel_module_version": None,
                                            "driver_version": None}),
                          "driver-not-loaded"),
    "driver-version-mismatch": (change(H, driver={"nvml_error": "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
                                                  "gpus": (), "kernel_module_version": "570.86.15"}),
                                "driver-version-mismatch"),
    "driver-permission-denied": (change(H, driver={"nvml_error": "NVML_ERROR_NO_PERMISSION", "gpus": ()}),
                                 "driver-permission-denied"),
    "nvml-error": (change(H, driver={"nvml_error": "NVML_ERROR_UNKNOWN", "gpus": ()}), "nvml-error"),
    "no-gpus": (change(H, driver={"gpus": ()}), "no-gpus"),
    "driver-too-old": (change(H, driver={"driver_version": "470.256.02", "cuda_driver_version": "11.4",
                                         "kernel_module_version": "470.256.02"}), "driver-too-old"),
    "driver-minor-version-compat": (change(H, driver={"driver_version": "535.183.01",
                                                      "kernel_module_version": "535.183.01",
                                                      "cuda_driver_version": "12.2"}), None),
    "gpu-too-old-for-tf": (change(H, driver={"gpus": (gpu(0, "Tesla K80", "3.7"),)}), "gpu-too-old-for-tf"),
    "gpu-ptx-jit-only": (change(H, tensorflow=_tf(compute_capabilities=("sm_60", "sm_70", "compute_80")),
                                driver={"gpus": (gpu(0, "NVIDIA H100 80GB HBM3", "9.0"),)}), None),
    "gpu-newer-than-tf": (change(H, tensorflow=_tf(version="2.18.0"),
                                 driver={"gpus": (gpu(0, "NVIDIA GeForce RTX 5090", "12.0"),)}),
                          "gpu-newer-than-tf"),
    # 2.21's PTX compiles for sm_120, its XLA does not (tensorflow#111958)
    "gpu-xla-unsupported": (change(H, driver={"gpus": (gpu(0, "NVIDIA GeForce RTX 5090", "12.0"),)}), None),
    "gpu-mig-enabled": (change(H, driver={"gpus": (gpu(0, mig_mode=True),)}), None),
    "gpu-pcie-degraded": (change(H, driver={"gpus": (gpu(0, pcie_width_current=8),)}), None),
    "gpu-throttled": (change(H, driver={"gpus": (gpu(0, throttle_reasons=("hw_thermal_slowdown",)),)}),
                      None),
    "gpu-ecc-uncorrectable": (change(H, driver={"gpus": (gpu(0, ecc_uncorrected_volatile=3),)}),
                              "gpu-ecc-uncorrectable"),
    "gpu-no-tensor-cores": (change(H, env={"TF_ENABLE_AUTO_MIXED_PRECISION": "1"},
                                   driver={"gpus": (gpu(0, "Tesla P100-PCIE-16GB", "6.0"),)}), None),
    "libcuda-missing": (change(H, cuda_driver={"library": None, "load_error": "cannot open shared object"}),
                        "libcuda-missing"),
    "libcuda-stub": (change(H, cuda_driver={"library": "/usr/local/cuda-12.5/lib64/stubs/libcuda.so.1",
                                            "is_stub": True, "init_result": "CUDA_ERROR_STUB_LIBRARY"}),
                     "libcuda-stub"),
    "libcuda-crashed": (change(H, cuda_driver={"crash": "SIGSEGV"}), "libcuda-crashed"),
    "libcuda-init-failed": (change(H, cuda_driver={"init_result": "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"}),
                            "libcuda-init-failed"),
    "libcuda-copied": (change(H, cuda_driver={"library": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                              "copied_over": "libcuda.so.580.65.06"}), None),
    "libcuda-compat-unusable": (change(H, cuda_driver={
        "init_result": "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        "library": "/usr/local/cuda-12.8/compat/libcuda.so.1"}), "libcuda-compat-unusable"),
    "cuda-library-missing": (change(H, libraries=_lib("cusolver", path=None, found_via=None, origin=None,
                                                      version=None, other_copies=(
                                                          "/venv/lib/python3.11/site-packages/nvidia/cusolver/lib/libcusolver.so.11",))),
                             "cuda-library-missing"),
    "cuda-library-too-old": (change(H, libraries=_lib("cudnn", version="9.1.0")), "cuda-library-too-old"),
    # TensorFlow's loader opened a cuDNN where the model saw none: its answer replaced the model's.
    "tf-loader-disagrees": (change(H, tf_loader=TfLoaderFacts(
        loader="tsl::internal::DsoLoader",
        answers=(LoaderAnswer("cudnn", "GetCudnnDsoHandle", path="/opt/x/libcudnn.so.9"),)),
        libraries=_lib("cudnn", path="/opt/x/libcudnn.so.9", found_via="tensorflow",
                       model_path=None, model_disagrees=True)), None),
    # A release whose framework exports no DsoLoader the oracle knows.
    "tf-loader-unavailable": (change(H, tf_loader=TfLoaderFacts(
        error="TensorFlow's loader not asked: no DsoLoader symbols")), None),
    "cuda-library-shadowed": (change(H, libraries=_lib(
        "cudnn", path="/usr/lib/x86_64-linux-gnu/libcudnn.so.9", found_via="ld_library_path",
        origin="system", version="9.3.0",
        other_copies=("/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",))), None),
    "cuda-library-version-unknown": (change(H, libraries=_lib("cufft", version=None,
                                                              error="SIGSEGV in cufftGetVersion")), None),
    "cuda-library-unloadable": (change(H, libraries=_lib(
        "cudnn", version=None, error="dlopen failed: libcudnn.so.9: file too short")),
        "cuda-library-unloadable"),
    "cudnn-gpu-unsupported": (change(H, libraries=_lib("cudnn", version="9.17.0"),
                                     driver={"gpus": (gpu(0, "Tesla V100-SXM2-32GB", "7.0"),)}),
                              "cudnn-gpu-unsupported"),
    "gpu-lost": (change(H, driver={"gpus": (gpu(0), gpu(1, name=None, errors={
        "handle": "NVML_ERROR_GPU_IS_LOST"}))}), "gpu-lost"),
    "nvidia-wheel-off-pin": (change(H, python={"packages": {**H.python.packages,
                                                            "nvidia-cudnn-cu12": "9.1.0.70"}}), None),
    "xla-flags-bad-dir": (change(H, env={"XLA_FLAGS": "--xla_gpu_cuda_data_dir=/nope"},
                                 xla={"xla_flags_data_dir": "/nope", "xla_flags_data_dir_exists": False}),
                          "xla-flags-bad-dir"),
    "xla-ptxas-missing": (change(H, xla={"ptxas": None}), None),
    "xla-ptxas-other-cuda": (change(H, xla={"ptxas": "/usr/local/cuda-13.0/bin/ptxas",
                                            "ptxas_version": "13.0.88"}), None),
    "xla-libdevice-missing": (change(H, xla={"libdevice": None}), None),
    # XLA's ptxas 12.5 under a driver for CUDA 12.4: no parallel compilation (nvptx_compiler.cc)
    "tf-log-driver-older-than-ptxas": (change(H, driver={"cuda_driver_version": "12.4"}), None),
    "tf-not-installed": (change(H, tensorflow=None, libraries=(), xla=None), "tf-not-installed"),
    "tf-multiple-distributions": (change(H, tensorflow=_tf(distributions=(
        Distribution("tensorflow", "2.21.0"), Distribution("tensorflow-cpu", "2.21.0")))),
        "tf-multiple-distributions"),
    "tf-unknown-version": (change(H, tensorflow=_tf(version="2.23.0.dev20261026")), None),
    "tf-cpu-only-build": (change(H, tensorflow=_tf(is_cuda_build=False, distributions=(
        Distribution("tensorflow-cpu", "2.21.0"),)), libraries=()), "tf-cpu-only-build"),
    "tf-windows-native-gpu": (change(H, platform={"system": "Windows"}), "tf-windows-native-gpu"),
    "tf-python-unsupported": (change(H, python={"version": "3.9.18"}), "tf-python-unsupported"),
    "cpu-missing-instructions": (change(H, platform={"cpu_flags": ("sse4_2",)}), "cpu-missing-instructions"),
    "glibc-too-old": (change(H, platform={"glibc": "2.17"}), "glibc-too-old"),
    "python-unusable": (change(H, python={"error": "No such file or directory"}, tensorflow=None),
                        "python-unusable"),
    "package-out-of-range": (change(H, tensorflow=_tf(version="2.15.0",
                                                      requirements={"numpy": "<2.0.0,>=1.23.5"}),
                                    python={"packages": {**H.python.packages, "numpy": "2.1.3"}}),
                             "package-out-of-range"),
    "keras-2-with-tf216": (change(H, python={"packages": {**H.python.packages, "keras": "2.15.0"}}),
                           "keras-2-with-tf216"),
    "tf-keras-missing": (change(H, env={"TF_USE_LEGACY_KERAS": "1"}), "tf-keras-missing"),
    # a ticket: libraries not probed, TF 2.16.1 with the pip CUDA wheels (tensorflow/tensorflow#63362)
    "tf-release-misses-pip-cuda-libs": (replace(
        H, tensorflow=_tf(version="2.16.1"), libraries=(), unknown=("libraries",),
        python=replace(H.python, packages={**H.python.packages, "nvidia-cudnn-cu12": "8.9.7.29"})),
        "tf-release-misses-pip-cuda-libs"),
    "tf-keras-mismatch": (change(H, python={"packages": {**H.python.packages, "tf-keras": "2.15.1"}}), None),
    "cuda-visible-devices-hides-all": (change(H, env={"CUDA_VISIBLE_DEVICES": "-1"}),
                                       "cuda-visible-devices-hides-all"),
    "cuda-visible-devices-hides-some": (change(H, env={"CUDA_VISIBLE_DEVICES": "0,1"}), None),
    "cuda-visible-devices-malformed": (change(H, env={"CUDA_VISIBLE_DEVICES": "0,gpu1"}),
                                       "cuda-visible-devices-malformed"),
    "probe-failed": (replace(H, probe_issues=(ProbeIssue("driver", "timeout", "timed out after 10 s"),)),
                     None),
    "gpus-fewer-than-expected": (change(H, env={"CUDA_VISIBLE_DEVICES": "0,1"}), None),
    # issue 10: the failures users report
    # a ticket naming an RTX 5090 (no nvidia-smi): compute capability 12.0 from the model's name
    "gpu-named-newer-than-tf": (replace(H, driver=replace(H.driver, gpus=()), unknown=("driver.gpus",),
                                        tensorflow=_tf(version="2.20.0"),
                                        intent=IntentFacts(gpu="RTX 5090"),
                                        provenance={"intent.gpu": "ticket prose, line 1"}),
                                None),
    # a ticket from a Jetson (aarch64) with PyPI's TensorFlow, its build not shown
    "tf-aarch64-pypi-no-cuda": (change(H, platform={"machine": "aarch64"},
                                       tensorflow=_tf(version="2.16.1", is_cuda_build=None)), None),
    # a ticket from native Windows wanting the GPU, with no TensorFlow version in it
    # a ticket from native Windows claiming CUDA 12.1, no TensorFlow version (tensorflow/tensorflow#60206)
    "tf-windows-native-cuda-too-new": (replace(change(H, platform={"system": "Windows"}), tensorflow=None,
                                               toolkits=(ToolkitFacts(version="12.1", via="claimed"),),
                                               unknown=("tensorflow",),
                                               intent=IntentFacts(gpu="GPU"),
                                               provenance={"intent.gpu": "ticket prose, line 1"}),
                                       None),
    "tf-windows-native-gpu-unverified": (replace(change(H, platform={"system": "Windows"}), tensorflow=None,
                                                 unknown=("tensorflow",),
                                                 intent=IntentFacts(gpu="GPU"),
                                                 provenance={"intent.gpu": "ticket prose, line 1"}),
                                         None),
    "host-gpu-fault": (replace(H, host=HostFacts(kernel_log=(
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",))), "host-gpu-fault"),
    "host-iommu-faults": (replace(H, host=HostFacts(kernel_log=("DMAR: DRHD: handling fault status reg 2",))),
                          "host-iommu-faults"),
    # the GPU is still on here: a warning, no root cause
    "hybrid-graphics-gpu-off": (replace(H, host=HostFacts(prime_profile="intel")), None),
    "wsl1-no-gpu": (change(H, platform={"is_wsl": True, "wsl_version": 1}), "wsl1-no-gpu"),
    "wsl-container-runtime-too-old": (change(
        change(H, driver={"driver_version": "555.85"}),
        platform={"is_wsl": True, "wsl_version": 2, "in_container": True,
                  "wsl_driver_libs": ("libcuda.so.1", "libnvidia-ml.so.1")}),
        "wsl-container-runtime-too-old"),
    "cuda-toolkit-wrong-version": (replace(
        H, tensorflow=_tf(version="2.4.0", cuda_version="11.0", requirements={}),
        toolkits=(ToolkitFacts("/usr/local/cuda-10.1", "10.1.243"),)), "cuda-toolkit-wrong-version"),
    "cuda-toolkit-on-library-path": (change(H, env={"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64"}), None),
    # TF 2.1 is built with cuDNN 7.6; a 7.4 beside it fails cuda_dnn.cc's load-time check
    "cudnn-wrong-version": (replace(
        H, tensorflow=_tf(version="2.1.0", cuda_version="10.1", cudnn_version="7.6", requirements={}),
        toolkits=(ToolkitFacts("/usr/local/cuda-10.1", "10.1.243", cudnn_version="7.4.1"),)),
        "cudnn-wrong-version"),
    "gpu-inforom-corrupted": (change(H, driver={"nvml_error": "NVML_ERROR_CORRUPTED_INFOROM", "gpus": ()}),
                              "gpu-inforom-corrupted"),
    "keras-3-with-old-tf": (change(H, tensorflow=_tf(version="2.13.0", requirements={}), python={
        "packages": {**H.python.packages, "keras": "3.1.1", "numpy": "1.24.3", "protobuf": "4.25.3"}}),
        "keras-3-with-old-tf"),
    "keras-tf-mismatch": (change(H, tensorflow=_tf(version="2.6.0", requirements={}), python={
        "packages": {**H.python.packages, "keras": "2.7.0", "numpy": "1.19.5", "protobuf": "3.19.6"}}), None),
    "tf-companion-mismatch": (change(H, python={
        "packages": {**H.python.packages, "tensorflow-text": "2.20.0"}}), "tf-companion-mismatch"),
    # a ticket whose user ran pip install tensorflow-gpu==2.12.0rc0 (a release it never had)
    "tf-log-tensorflow-gpu-removed": (
        replace(H, intent=IntentFacts(pip_install=("tensorflow-gpu==2.12.0rc0",))),
        "tf-log-tensorflow-gpu-removed"),
    # a ticket whose user says pip has no wheel of tensorflow-text (keras-team/keras-hub#1649)
    "tf-log-allocator-stats-missing": (change(H, env={"TF_GPU_ALLOCATOR": "cuda_malloc_async"},
                                              tensorflow={"version": "2.5.0"}), None),
    # TF-TRT's soname (TensorFlow 2.15-2.16: the whole version) against pip's TensorRT 10
    "tensorrt-wrong-version": (replace(
        change(H, python={"packages": {**H.python.packages, "tensorrt": "10.0.1"}}),
        tensorrt=TensorRtFacts(wanted="libnvinfer.so.8.6.1")), None),
    "tf-log-companion-no-wheel": (replace(H, intent=IntentFacts(no_wheel=("tensorflow-text",))),
                                  "tf-log-companion-no-wheel"),
    # a ticket on Colab that installs a TensorFlow of its own
    "hosted-runtime-tf-replaced": (change(H, platform={"hosted": "Google Colab"}, intent={
        "pip_install": ("tensorflow==2.12.0",)}), None),
    # a ticket whose pip commands put tensorflow-text beside tensorflow-cpu; its pip list not shown
    "companion-brings-tensorflow": (replace(
        H, unknown=(*H.unknown, "tensorflow.distributions"),
        intent=IntentFacts(pip_install=("tensorflow-cpu==2.21.0", "tensorflow-text==2.21.0"))), None),
    # a ticket whose user ran pip install tensorflow==2.21.0 (no [and-cuda]); libraries not shown
    "tf-installed-without-cuda": (replace(H, libraries=(), unknown=(*H.unknown, "libraries"),
                                          intent=IntentFacts(pip_install=("tensorflow==2.21.0",))), None),
    # a ticket: "works in tensorflow 2.15 ... fails in 2.16", Keras 3 and no tf-keras installed
    "tf-log-keras3-incompatible": (replace(
        change(H, tensorflow=_tf(version="2.16.1", requirements={}), python={"packages": {
            **H.python.packages, "keras": "3.3.3", "numpy": "1.26.4", "protobuf": "4.25.3"}}),
        intent=IntentFacts(worked_with="2.15")), "tf-log-keras3-incompatible"),
}
EXPECT = {"gpus-fewer-than-expected": 8}


def test_healthy_machine_has_no_problem():
    """The baseline every case changes must itself be clean, or every case proves nothing."""
    report = judge(H, expect_gpus=8)
    assert report.verdict == "healthy"
    assert [f for f in report.findings if f.severity is not Severity.INFO] == []
    assert all(o.status in (CheckStatus.PASSED, CheckStatus.NOT_APPLICABLE) for o in report.outcomes)


@pytest.mark.parametrize("finding_id", sorted(CASES))
def test_finding_fires(finding_id):
    """Every finding fires on its machine, with evidence, and leads when it is the root cause."""
    facts, root = CASES[finding_id]
    report = judge(facts, expect_gpus=EXPECT.get(finding_id))
    found = [f for f in report.findings if f.id == finding_id]
    assert found, f"{finding_id} did not fire; got {ids(report)}"
    assert found[0].message and found[0].evidence
    if root is not None:
        assert report.root_cause is not None and report.root_cause.id == root, ids(report)


def test_every_finding_has_a_case():
    """A finding without a machine where it fires is an untested rule."""
    emitted = {fid for spec in all_checks() if spec.area != "smoke" for fid in spec.finding_ids}
    assert emitted - set(CASES) == set()


def test_consequences_point_at_root_cause():
    """With no driver, missing GPUs are a consequence, not a second root cause."""
    facts, _ = CASES["driver-not-installed"]
    report = judge(facts, expect_gpus=8)
    fewer = next(f for f in report.findings if f.id == "gpus-fewer-than-expected")
    assert fewer.caused_by == "driver-not-installed"
    assert report.findings[0].id == "driver-not-installed"


def test_minor_version_compat_is_no_false_alarm():
    """Driver 535 (CUDA 12.2) runs TF's CUDA 12.5 runtime: minor-version compatibility, not an error."""
    facts, _ = CASES["driver-minor-version-compat"]
    report = judge(facts)
    assert report.verdict == "healthy"
    assert "driver-too-old" not in ids(report)


def test_cpu_only_tf_without_gpu_is_not_an_error():
    """tensorflow-cpu on a machine with no NVIDIA hardware is a fine CPU setup."""
    facts = change(H, tensorflow=_tf(is_cuda_build=False, distributions=(
        Distribution("tensorflow-cpu", "2.21.0"),)), libraries=(), xla=None,
        driver={"nvml_error": "NVML_ERROR_LIBRARY_NOT_FOUND", "gpus": (), "device_nodes": (),
                "driver_version": None, "kernel_module_version": None,
                "nvidia_module_loaded": False},
        cuda_driver={"load_error": "not found", "library": None, "init_result": None})
    assert judge(facts).verdict == "healthy"


def test_crashing_check_becomes_a_row(monkeypatch):
    """A broken rule is contained: a CRASHED row, a check-crashed finding, the others still run."""
    spec = next(s for s in all_checks() if s.id == "gpu-health")

    def boom(facts, config):
        raise ZeroDivisionError("bad rule")

    from tfdoctor import registry

    monkeypatch.setitem(registry._REGISTRY, spec.id, replace(spec, func=boom))
    report = judge(H)
    row = next(o for o in report.outcomes if o.check == "gpu-health")
    assert row.status is CheckStatus.CRASHED
    assert row.findings[0].id == "check-crashed"
    assert "ZeroDivisionError" in row.findings[0].evidence["exception"]
    assert report.incomplete and report.verdict == "incomplete"
    assert len(report.outcomes) == len(all_checks())


def test_old_cudart_is_too_old():
    """A CUDA 12.2 runtime under a TF built with 12.5 lacks symbols TF uses."""
    facts = change(H, libraries=_lib("cudart", version="12.2.140"))
    finding = next(f for f in judge(facts).findings if f.id == "cuda-library-too-old")
    assert "libcudart.so.12 is version 12.2.140" in finding.message
    assert finding.evidence["tensorflow.built_with.cudart"] == "12.5.1"


def test_only_other_major_present_is_named():
    """Only libcudnn.so.8 for a TF that needs .so.9: the hint names the wrong-major copy."""
    facts = change(H, libraries=_lib("cudnn", path=None, found_via=None, version=None,
                                     other_versions=("/usr/lib/x86_64-linux-gnu/libcudnn.so.8",)))
    finding = next(f for f in judge(facts).findings if f.id == "cuda-library-missing")
    assert "libcudnn.so.8" in finding.hint and finding.severity is Severity.ERROR


def test_conflict_keeps_the_right_distribution():
    """On a CPU machine with tensorflow-cpu's files on disk, the fix keeps tensorflow-cpu."""
    facts = change(H, driver={"gpus": (), "device_nodes": ()}, tensorflow=_tf(
        distributions=(Distribution("tensorflow-cpu", "2.21.0"), Distribution("tensorflow-gpu", "2.12.0")),
        files_from="tensorflow-cpu"))
    finding = next(f for f in judge(facts).findings if f.id == "tf-multiple-distributions")
    assert finding.evidence["keep"] == "tensorflow-cpu"
    uninstall, reinstall = finding.remediation.commands
    assert uninstall.endswith("uninstall -y tensorflow-gpu")
    assert "tensorflow-cpu==2.21.0" in reinstall and "--force-reinstall" in reinstall


def test_windows_shim_is_not_a_conflict():
    """`tensorflow` on Windows 2.12-2.19 requires tensorflow-intel: two dists, one TensorFlow."""
    facts = change(H, tensorflow=_tf(
        distributions=(Distribution("tensorflow", "2.19.0"), Distribution("tensorflow-intel", "2.19.0")),
        requirements={**H.tensorflow.requirements, "tensorflow-intel": "==2.19.0"}))
    assert "tf-multiple-distributions" not in ids(judge(facts))


def test_unknown_tf_gives_info_not_verdict():
    """A TF newer than the tables is an info finding, never a wrong error."""
    facts, _ = CASES["tf-unknown-version"]
    report = judge(facts)
    assert report.verdict == "healthy"
    assert next(f for f in report.findings if f.id == "tf-unknown-version").severity is Severity.INFO


def test_pip_commands_use_target_interpreter():
    """Fix commands name the target interpreter, quoted, never a bare pip."""
    facts = change(H, python={"executable": "/home/u/my env/bin/python"},
                   libraries=_lib("cudnn", version="9.1.0"))
    finding = next(f for f in judge(facts).findings if f.id == "cuda-library-too-old")
    assert finding.remediation.commands[0].startswith("'/home/u/my env/bin/python' -m pip install")


def test_pip_lib_helper_matches_layout():
    """The helper's pip paths follow the real wheel layout (nvidia/<pkg>/lib)."""
    assert pip_lib("cudart", "libcudart.so.12").path.endswith("nvidia/cuda_runtime/lib/libcudart.so.12")


def test_matching_tf_is_chosen_from_the_tables():
    """A K80 on driver 470: the newest release with sm_35 kernels whose CUDA 11.8 the driver runs
    under minor-version compatibility is TF 2.14 (without [and-cuda]: its tensorrt pin has no
    Python 3.11 wheel); a Blackwell GPU on 2.18, whose sm_90a PTX cannot be compiled for it, is
    offered 2.21, the newest release whose PTX can (compat_tables ptx_targets), not a CPU build."""
    k80 = change(H, driver={"driver_version": "470.256.02", "kernel_module_version": "470.256.02",
                            "gpus": (gpu(0, "Tesla K80", "3.7"),)})
    fix = next(f for f in judge(k80).findings if f.id == "gpu-too-old-for-tf").remediation
    assert fix.fix_id == "install-matching-tensorflow"
    assert fix.commands[-1].endswith("install 'tensorflow==2.14.*'")
    blackwell, _ = CASES["gpu-newer-than-tf"]
    finding = next(f for f in judge(blackwell).findings if f.id == "gpu-newer-than-tf")
    assert finding.remediation.commands[-1].endswith("install 'tensorflow[and-cuda]==2.21.*'")
    assert "sm_90a" in finding.message and "TensorFlow 2.21's PTX compiles for it" in finding.hint


def test_registration_order_is_the_stack():
    """Root cause is the first unexplained error in registration order: driver before CUDA
    before TensorFlow before Python packages before the environment, smoke work last. (An
    import sorter once alphabetised the list; this pins it.)"""
    areas = [spec.area for spec in all_checks()]
    firsts = {area: areas.index(area) for area in dict.fromkeys(areas)}
    assert list(firsts) == ["driver", "gpu", "host", "cuda", "tensorflow", "platform", "python",
                            "environment", "tfdoctor", "smoke"]


@pytest.mark.parametrize("platform, fix, words", [
    ({"is_wsl": True}, "wsl-libcuda-path", "/usr/lib/wsl/lib"),
    ({"in_container": True}, "install-nvidia-container-toolkit", "--gpus all"),
    ({}, "install-nvidia-driver", "libnvidia-compute-580"),
])
def test_driver_present_but_libraries_not_on_path(platform, fix, words):
    """A running driver whose libnvidia-ml is not loadable here is never 'install a driver':
    on WSL2 the loader path, in a container the toolkit, else the matching user-space libs."""
    facts = change(H, driver={"nvml_error": "NVML_ERROR_LIBRARY_NOT_FOUND", "gpus": ()},
                   platform=platform)
    report = judge(facts)
    root = report.root_cause
    assert root.id == "driver-libraries-not-found" and root.remediation.fix_id == fix
    assert words in " ".join(root.remediation.commands) + root.hint
    assert "driver-not-installed" not in ids(report)


def test_hung_nvml_is_could_not_check_not_broken():
    """NVML that never answered is 'could not check' (probe-failed, exit 3), not a driver error."""
    from tfdoctor.exit_codes import ExitCode, exit_code_for

    facts = replace(change(H, driver={"nvml_error": "timed out", "gpus": ()}),
                    probe_issues=(ProbeIssue("driver", "timeout", "_nvml_child.py timed out"),))
    report = judge(facts)
    assert "nvml-error" not in ids(report) and "probe-failed" in ids(report)
    assert exit_code_for(report) == ExitCode.INCOMPLETE


def test_cudnn_repin_is_capped_for_old_gpus():
    """An open cuDNN range resolves to the newest wheel, which dropped Volta: on a V100 the
    re-pin stays below 9.11 (9.10.2 is the last release whose support matrix lists 7.0)."""
    facts, _ = CASES["cudnn-gpu-unsupported"]
    fix = next(f for f in judge(facts).findings if f.id == "cudnn-gpu-unsupported").remediation
    assert fix.commands[0].endswith("'nvidia-cudnn-cu12<10.0,>=9.3.0.75,<9.11'")
    too_old = change(H, libraries=_lib("cudnn", version="9.1.0"))
    fix = next(f for f in judge(too_old).findings if f.id == "cuda-library-too-old").remediation
    assert fix.commands[0].endswith("'nvidia-cudnn-cu12>=9.3.0,<10'")  # H100: no cap


def test_identical_gpus_make_one_finding():
    """Eight K80 dies: one gpu-too-old-for-tf naming GPUs 0-7, not eight identical blocks."""
    facts = change(H, driver={"gpus": tuple(gpu(i, "Tesla K80", "3.7") for i in range(8))})
    found = [f for f in judge(facts).findings if f.id == "gpu-too-old-for-tf"]
    assert len(found) == 1
    assert found[0].message.startswith("GPUs 0-7 (Tesla K80")
    assert found[0].evidence["gpu.index"] == "0, 1, 2, 3, 4, 5, 6, 7"
