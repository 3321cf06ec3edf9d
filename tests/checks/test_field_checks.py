"""Checks added for the failures users report (issue 10): kernel-log faults, WSL 1, a CUDA
toolkit of the wrong version, Keras with TF <= 2.15, companion packages, GTX 16xx mixed precision."""

from __future__ import annotations

from dataclasses import replace

from tfdoctor.facts import Distribution, HostFacts, IntentFacts, TensorFlowFacts, ToolkitFacts
from tfdoctor.facts_smoke import LogCause, SmokeDevice, SmokeFacts

from tests.helpers import change, healthy, ids, judge, triage_json

# Real kernel-log lines (Xid 79: NVIDIA's Xid table example; DMAR: an Intel VT-d fault as dmesg prints it).
XID = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
DMAR = "DMAR: DRHD: handling fault status reg 2"


def old_tf(version: str = "2.4.0", cuda: str = "11.0") -> TensorFlowFacts:
    tf = healthy().tensorflow
    assert tf is not None
    return replace(tf, version=version, cuda_version=cuda, requirements={})


def test_kernel_log_faults() -> None:
    """Xid / fallen off the bus is a GPU fault; a DMAR fault breaks peer-to-peer: both errors."""
    facts = replace(healthy(gpus=2), host=HostFacts(kernel_log=(XID, DMAR)))
    assert {"host-gpu-fault", "host-iommu-faults"} <= set(ids(judge(facts)))
    assert "host-gpu-fault" not in ids(judge(healthy()))


def test_wsl1_has_no_gpu() -> None:
    """WSL 1 is named; WSL 2 is fine."""
    wsl1 = change(healthy(), platform={"is_wsl": True, "wsl_version": 1})
    assert "wsl1-no-gpu" in ids(judge(wsl1))
    wsl2 = change(healthy(), platform={"is_wsl": True, "wsl_version": 2})
    assert "wsl1-no-gpu" not in ids(judge(wsl2))


def test_toolkit_of_another_version_before_214() -> None:
    """TF 2.4 needs CUDA 11.0 from the system; a CUDA 10.1 toolkit is the cause. From 2.14 the pip
    wheels bring CUDA, so a toolkit only matters when it is on LD_LIBRARY_PATH."""
    kit = ToolkitFacts("/usr/local/cuda-10.1", "10.1.243")
    facts = replace(healthy(), tensorflow=old_tf(), toolkits=(kit,))
    report = judge(facts)
    assert "cuda-toolkit-wrong-version" in ids(report)
    fits = replace(facts, toolkits=(ToolkitFacts("/usr/local/cuda-11.0", "11.0.221"),))
    assert "cuda-toolkit-wrong-version" not in ids(judge(fits))
    shadow = change(healthy(), env={"LD_LIBRARY_PATH": "/usr/local/cuda-11.8/lib64"})
    assert "cuda-toolkit-on-library-path" in ids(judge(shadow))
    same = change(healthy(), env={"LD_LIBRARY_PATH": "/usr/local/cuda-12.4/lib64"})
    assert "cuda-toolkit-on-library-path" not in ids(judge(same))


def test_keras_with_tf_before_216() -> None:
    """Keras 3 with TF 2.13 and keras 2.7 with TF 2.6 are errors; keras 2.13 with TF 2.13 is fine."""
    def with_keras(tf: str, keras: str) -> list[str]:
        facts = replace(healthy(), tensorflow=old_tf(tf, "11.8"))
        return ids(judge(change(facts, python={"packages": {**facts.python.packages, "keras": keras}})))
    assert "keras-3-with-old-tf" in with_keras("2.13.0", "3.1.1")
    assert "keras-tf-mismatch" in with_keras("2.6.1", "2.7.0")
    assert not {"keras-3-with-old-tf", "keras-tf-mismatch"} & set(with_keras("2.13.0", "2.13.1"))
    # TF 2.4 and 2.5 carry their own Keras: a standalone Keras 2 beside them is not judged, Keras 3 is
    assert "keras-3-with-old-tf" in with_keras("2.4.1", "3.6.0")
    assert not {"keras-3-with-old-tf", "keras-tf-mismatch"} & set(with_keras("2.4.1", "2.4.3"))


def test_an_import_that_fails_on_keras_of_another_release_is_keras_s_consequence() -> None:
    """remigenet/TKAN#16: Keras 3.6 under TensorFlow 2.4.1 dies importing a TensorFlow module 2.4
    lacks. The import error is the Keras mismatch's consequence, so Keras is the root cause, not
    the Python version that the wheels' table would fault (conda builds 2.4.1 for Python 3.9)."""
    ticket = ('  File "/opt/conda/envs/tf-gpu/lib/python3.9/site-packages/keras/src/tree/optree_impl.py", '
              'line 17, in <module>\n'
              '    from tensorflow.python.trackable.data_structures import ListWrapper\n'
              "ModuleNotFoundError: No module named 'tensorflow.python.trackable'\n"
              "I have installed the tensorflow-gpu= 2.4.1 and keras=3.6.0.\n")
    report = triage_json(ticket)
    found = {f["id"]: f for f in report["findings"]}
    assert report["findings"][0]["id"] == "keras-3-with-old-tf", [f["id"] for f in report["findings"]]
    assert found["tf-log-python-exception"]["caused_by"] == "keras-3-with-old-tf"
    assert "pip uninstall -y keras" in " ".join(found["keras-3-with-old-tf"]["remediation"]["commands"])


def test_companion_packages() -> None:
    """tensorflow-estimator of another minor is an error, tensorboard a warning."""
    facts = replace(healthy(), tensorflow=old_tf("2.6.0", "11.2"))
    pk = {**facts.python.packages, "tensorflow-estimator": "2.7.0", "tensorboard": "2.6.0"}
    report = judge(change(facts, python={"packages": pk}))
    found = [f for f in report.findings if f.id == "tf-companion-mismatch"]
    assert [f.evidence["package"] for f in found] == ["tensorflow-estimator"]


def test_probability_of_another_release() -> None:
    """TensorFlow Probability 0.N is made for TF 2.(N-8) up to 2.16; outside that nothing is judged."""
    def found(tf: str, tfp: str) -> list[str]:
        facts = replace(healthy(), tensorflow=old_tf(tf, "12.3"))
        pk = {**facts.python.packages, "tensorflow-probability": tfp}
        report = judge(change(facts, python={"packages": pk}))
        return [f.hint or "" for f in report.findings if f.id == "tf-companion-mismatch"]

    assert found("2.16.1", "0.23.0") == ["Install tensorflow-probability[tf]~=0.24.0."]
    assert found("2.6.0", "0.15.0") == ["Install tensorflow-probability~=0.14.0."]
    assert found("2.16.1", "0.24.0") == found("2.14.0", "0.22.1") == []
    assert found("2.19.0", "0.23.0") == []  # past the table: not judged


def test_gtx16_has_no_tensor_cores() -> None:
    """A GTX 1660 says compute capability 7.5 but has no Tensor Cores: mixed precision gets the warning."""
    facts = change(healthy(gpus=1), env={"TF_ENABLE_AUTO_MIXED_PRECISION": "1"})
    facts = replace(facts, driver=replace(facts.driver, gpus=(replace(facts.driver.gpus[0],
                    name="NVIDIA GeForce GTX 1660 Ti", compute_capability="7.5"),)))
    assert "gpu-no-tensor-cores" in ids(judge(facts))
    rtx = replace(facts, driver=replace(facts.driver, gpus=(replace(facts.driver.gpus[0],
                  name="NVIDIA GeForce RTX 2080", compute_capability="7.5"),)))
    assert "gpu-no-tensor-cores" not in ids(judge(rtx))


def test_avx2_told_from_the_release() -> None:
    """TF 2.4.0's official wheels needed AVX2 (tensorflow/tensorflow#45744); 2.4.1 and others need AVX."""
    def cpu(tf: str, flags: tuple[str, ...], dists: tuple[str, ...] = ()) -> list[str]:
        facts = replace(healthy(), tensorflow=old_tf(tf, "11.0"))
        if dists:
            assert facts.tensorflow is not None
            facts = replace(facts, tensorflow=replace(
                facts.tensorflow, distributions=tuple(Distribution(d, tf) for d in dists)))
        facts = change(facts, platform={"machine": "x86_64", "cpu_flags": flags})
        return [f.message for f in judge(facts).findings if f.id == "cpu-missing-instructions"]

    avx_only = ("sse4_2", "avx", "fma")
    assert "AVX but not AVX2" in cpu("2.4.0", avx_only)[0]
    assert cpu("2.4.1", avx_only) == cpu("2.4.0", (*avx_only, "avx2")) == []
    assert cpu("2.4.0", avx_only, ("intel-tensorflow",)) == []  # not the official wheel
    assert "lacks AVX" in cpu("2.4.1", ("sse4_2",))[0]


def test_forward_compat_libcuda_refused() -> None:
    """A cuda-compat libcuda that cuInit refuses is named with its directory and a removal that
    the planner can apply; the same refusal from the driver's own libcuda stays libcuda-init-failed."""
    compat = "/usr/local/cuda-12.8/compat/libcuda.so.1"
    for result in ("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"):
        report = judge(change(healthy(), cuda_driver={"init_result": result, "library": compat}))
        f = report.findings[0]
        assert (f.id, f.evidence["library.path"]) == ("libcuda-compat-unusable", compat)
        assert f.remediation is not None and f.remediation.fix_id == "remove-from-ld-library-path"
        assert "/usr/local/cuda-12.8/compat" in f.remediation.commands[0]
    driver_own = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    report = judge(change(healthy(), cuda_driver={"init_result": "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
                                                  "library": driver_own}))
    assert "libcuda-init-failed" in ids(report) and "libcuda-compat-unusable" not in ids(report)


def test_prime_intel_profile_explains_the_missing_driver() -> None:
    """nvidia-prime's intel profile blacklists the NVIDIA modules (canonical/nvidia-prime): with the
    driver not loaded it is the root cause; with a GPU still visible, a warning; other profiles pass."""
    off = change(healthy(gpus=1), driver={"nvml_error": "NVML_ERROR_DRIVER_NOT_LOADED", "gpus": (),
                                          "nvidia_module_loaded": False})
    report = judge(replace(off, host=HostFacts(prime_profile="intel")))
    assert report.root_cause is not None and report.root_cause.id == "hybrid-graphics-gpu-off"
    assert {f.caused_by for f in report.findings if f.id != "hybrid-graphics-gpu-off"
            and f.severity.value == "error"} <= {"hybrid-graphics-gpu-off"}
    still_on = judge(replace(healthy(gpus=1), host=HostFacts(prime_profile="intel")))
    assert [f.severity.value for f in still_on.findings if f.id == "hybrid-graphics-gpu-off"] == ["warning"]
    for profile in ("nvidia", "on-demand"):
        other = replace(healthy(), host=HostFacts(prime_profile=profile))
        assert "hybrid-graphics-gpu-off" not in ids(judge(other))


def test_kernel_log_not_readable_is_not_a_clean_log() -> None:
    """A live run that may not read /dev/kmsg does not say 'no faults'."""
    outcome = {o.check: o for o in judge(replace(healthy(), host=HostFacts(kernel_log_read=False))).outcomes}
    assert outcome["host-kernel-log"].status.value == "not-applicable"
    assert "dmesg" in (outcome["host-kernel-log"].reason or "")
    clean = {o.check: o for o in judge(replace(healthy(), host=HostFacts(kernel_log_read=True))).outcomes}
    assert clean["host-kernel-log"].status.value == "passed"


def test_driver_mismatch_names_both_versions() -> None:
    """'Driver/library version mismatch' says which two versions differ (NVML's library, the module)."""
    facts = change(healthy(), driver={"nvml_error": "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "gpus": (),
                                      "kernel_module_version": "570.86.15",
                                      "nvml_library_version": "570.124.06"})
    f = next(f for f in judge(facts).findings if f.id == "driver-version-mismatch")
    assert "(libraries 570.124.06, kernel module 570.86.15)" in f.message
    assert f.evidence["driver.nvml_library_version"] == "570.124.06"


def test_wsl_container_without_the_555_library() -> None:
    """Under WSL 2 a container whose runtime did not map libnvdxgdmal.so.1 cannot cuInit with a
    555+ Windows driver (NVIDIA/nvidia-container-toolkit#520); cuInit's failure is its consequence."""
    def judged(driver: str, libs: tuple[str, ...], in_container: bool = True):
        facts = change(change(healthy(gpus=1), driver={"driver_version": driver},
                              cuda_driver={"init_result": "CUDA_ERROR_NOT_FOUND"}),
                       platform={"is_wsl": True, "wsl_version": 2, "in_container": in_container,
                                 "wsl_driver_libs": libs})
        return judge(facts)

    old_runtime = judged("555.85", ("libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1"))
    assert old_runtime.root_cause is not None
    assert old_runtime.root_cause.id == "wsl-container-runtime-too-old"
    assert {f.id: f.caused_by for f in old_runtime.findings}["libcuda-init-failed"] == \
        "wsl-container-runtime-too-old"
    mapped = judged("555.85", ("libcuda.so.1", "libnvdxgdmal.so.1", "libnvidia-ml.so.1"))
    assert "wsl-container-runtime-too-old" not in ids(mapped)
    assert "wsl-container-runtime-too-old" not in ids(judged("551.86", ("libcuda.so.1",)))
    assert "wsl-container-runtime-too-old" not in ids(judged("555.85", ("libcuda.so.1",), in_container=False))


def test_keras2_packages_need_tf_keras_from_216() -> None:
    """deepface, tensorflow-hub and gpflow run Keras 2 code: under TF >= 2.16 without tf-keras that is
    tf-keras-missing naming the package; with tf-keras, or under TF 2.15, nothing."""
    def found(tf: str, extra: dict[str, str]) -> list[str]:
        facts = replace(healthy(), tensorflow=old_tf(tf, "12.3"))
        facts = change(facts, python={"packages": {**facts.python.packages, **extra}})
        return [f.evidence.get("package", "") for f in judge(facts).findings if f.id == "tf-keras-missing"]

    assert found("2.16.2", {"deepface": "0.0.92"}) == ["deepface"]
    assert found("2.17.0", {"tensorflow-hub": "0.16.1"}) == ["tensorflow-hub"]
    assert found("2.16.2", {"deepface": "0.0.92", "tf-keras": "2.16.0"}) == []
    assert found("2.15.0", {"deepface": "0.0.92"}) == []


def test_release_that_misses_its_pip_libraries_only_where_libraries_were_not_probed() -> None:
    """TF 2.16.1 [and-cuda] (tensorflow/tensorflow#63362): a ticket gets the finding; a live run, which
    resolves every library itself, does not."""
    tf = old_tf("2.16.1", "12.3")
    wheels = {"nvidia-cublas-cu12": "12.3.4.1"}
    ticket = replace(healthy(), tensorflow=tf, libraries=(), unknown=("libraries",))
    ticket = change(ticket, python={"packages": {**ticket.python.packages, **wheels}})
    assert "tf-release-misses-pip-cuda-libs" in ids(judge(ticket))
    live = replace(healthy(), tensorflow=tf)
    live = change(live, python={"packages": {**live.python.packages, **wheels}})
    assert "tf-release-misses-pip-cuda-libs" not in ids(judge(live))
    other = replace(ticket, tensorflow=old_tf("2.17.0", "12.3"))
    assert "tf-release-misses-pip-cuda-libs" not in ids(judge(other))
    # No package list in the ticket, a GPU wanted: the documented install ([and-cuda]) is assumed.
    words = change(replace(healthy(), tensorflow=tf, libraries=(), unknown=("libraries", "python.packages"),
                           intent=IntentFacts(gpu="GPU"),
                           provenance={"intent.gpu": "ticket prose, line 1"}), python={"packages": {}})
    report = judge(words)
    assert "tf-release-misses-pip-cuda-libs" in ids(report)
    assert "assumed" in str(next(f for f in report.findings
                                 if f.id == "tf-release-misses-pip-cuda-libs").evidence)
    assert "tf-release-misses-pip-cuda-libs" not in ids(judge(replace(words, intent=IntentFacts())))
    listed = replace(words, unknown=("libraries",))  # a pip list without nvidia wheels: not this
    assert "tf-release-misses-pip-cuda-libs" not in ids(judge(listed))
    system = replace(words, toolkits=(ToolkitFacts(None, "12.3.107", via="ticket"),))  # nvcc shown
    assert "tf-release-misses-pip-cuda-libs" not in ids(judge(system))


def test_toolkit_sonames_not_minor_versions() -> None:
    """From CUDA 11 a toolkit of the same major has the sonames TensorFlow opens (TF 2.11 runs on an
    11.8 toolkit), except cuSOLVER across 11.0 / 11.1 (TF 2.4 on 11.1: tensorflow/tensorflow#43947)."""
    def wrong(tf_version: str, cuda: str, kit: str) -> list[str]:
        facts = replace(healthy(), tensorflow=old_tf(tf_version, cuda),
                        toolkits=(ToolkitFacts(f"/usr/local/cuda-{kit}", f"{kit}.1"),))
        return [f.message for f in judge(facts).findings if f.id == "cuda-toolkit-wrong-version"]

    assert wrong("2.11.0", "11.2", "11.8") == []
    assert wrong("2.12.0", "11.8", "11.2") == []
    assert "libcusolver.so.10" in wrong("2.4.0", "11.0", "11.1")[0]
    assert "libcudart.so.11.0" in wrong("2.11.0", "11.2", "12.0")[0]
    assert "libcudart.so.10.1" in wrong("2.3.0", "10.1", "10.2")[0]
    assert wrong("2.3.0", "10.1", "10.1") == []


def test_claimed_toolkit_gives_way_to_the_log() -> None:
    """A toolkit the ticket only claims ("CUDA/cuDNN version: 12.0") is the cause for TF 2.11, unless
    the ticket's TensorFlow log got past loading the libraries; native Windows has no GPU build."""
    claimed = replace(healthy(), tensorflow=old_tf("2.11.0", "11.2"),
                      toolkits=(ToolkitFacts(None, "12.0", via="claimed"),))
    report = judge(claimed)
    assert "cuda-toolkit-wrong-version" in ids(report)
    assert next(f for f in report.findings
                if f.id == "cuda-toolkit-wrong-version").evidence["toolkit"] == "12.0 (the ticket says)"
    log = SmokeFacts(python="(ticket)", outcome="ticket", devices=(SmokeDevice("GPU:0", "GPU", "T4", "7.5"),),
                     causes=(LogCause("cudnn-handle-failed", "Could not create cudnn handle"),))
    assert "cuda-toolkit-wrong-version" not in ids(judge(replace(claimed, smoke=log)))
    missing = replace(log, devices=(), causes=(LogCause("cudart-not-loaded", "Could not find cuda drivers"),))
    assert "cuda-toolkit-wrong-version" in ids(judge(replace(claimed, smoke=missing)))
    windows = change(replace(claimed, tensorflow=old_tf("2.12.0", "11.8")), platform={"system": "Windows"})
    assert "cuda-toolkit-wrong-version" not in ids(judge(windows))


def test_wsl_side_container_toolkit_version() -> None:
    """On WSL 2 itself, nvidia-ctk older than 1.14.4 with a 555+ Windows driver is the same failure
    waiting for every GPU container (NVIDIA/nvidia-container-toolkit#520)."""
    def judged(toolkit: str, driver: str = "555.85"):
        return ids(judge(change(change(healthy(gpus=1), driver={"driver_version": driver}),
                                platform={"is_wsl": True, "wsl_version": 2, "in_container": False,
                                          "container_toolkit": toolkit})))

    assert "wsl-container-runtime-too-old" in judged("1.14.3")
    assert "wsl-container-runtime-too-old" not in judged("1.14.4")
    assert "wsl-container-runtime-too-old" not in judged("1.13.5", driver="551.86")


def test_unread_inputs_are_never_passed() -> None:
    """A document without kernel-log reading (before tfdoctor read it) and a WSL container whose
    driver version is unknown: neither check says passed."""
    outcome = {o.check: o for o in judge(healthy()).outcomes}  # HostFacts() as an old document has it
    assert outcome["host-kernel-log"].status.value == "not-applicable"
    facts = change(change(healthy(gpus=1), driver={"driver_version": None}),
                   platform={"is_wsl": True, "wsl_version": 2, "in_container": True,
                             "wsl_driver_libs": ("libcuda.so.1",)})
    outcome = {o.check: o for o in judge(facts).outcomes}
    assert outcome["wsl-container-runtime"].status.value == "could-not-check"


def test_blackwell_named_in_a_ticket() -> None:
    """A ticket with no nvidia-smi that names an RTX 50xx (tensorflow/tensorflow#90291): compute
    capability 12.0, PTX only in the wheel; a warning, so a log's library failure still leads."""
    ticket = replace(healthy(), tensorflow=old_tf("2.18.0", "12.5"),
                     driver=replace(healthy().driver, gpus=()), unknown=("driver.gpus",),
                     intent=IntentFacts(gpu="5070TI"), provenance={"intent.gpu": "ticket prose, line 3"})
    ticket = replace(ticket, tensorflow=replace(ticket.tensorflow, compute_capabilities=(
        "sm_60", "sm_70", "sm_80", "sm_89", "compute_90")))
    assert "gpu-named-newer-than-tf" in ids(judge(ticket))
    for name in ("NVIDIA B200", "RTX PRO 6000 Blackwell"):
        assert "gpu-named-newer-than-tf" in ids(judge(replace(ticket, intent=IntentFacts(gpu=name))))
    older = replace(ticket, intent=IntentFacts(gpu="RTX 4090"),
                            provenance={"intent.gpu": "ticket prose, line 3"})
    assert "gpu-named-newer-than-tf" not in ids(judge(older))
    listed = replace(ticket, unknown=())  # nvidia-smi in the ticket: gpu-compute-capability decides
    assert "gpu-named-newer-than-tf" not in ids(judge(listed))


def test_windows_without_a_tensorflow_version() -> None:
    """Native Windows, a GPU wanted, no TensorFlow version shown (DeepLabCut/DeepLabCut#2081): the
    2.11+ loss of GPU support is named as unverified; WSL, or a known version, leave it to tf-gpu-build."""
    words = replace(change(healthy(), platform={"system": "Windows"}), tensorflow=None,
                    unknown=("tensorflow",), intent=IntentFacts(gpu="GPU"),
                                             provenance={"intent.gpu": "ticket prose, line 1"})
    assert "tf-windows-native-gpu-unverified" in ids(judge(words))
    assert "tf-windows-native-gpu-unverified" not in ids(judge(change(words, platform={"is_wsl": True})))
    known = change(healthy(), platform={"system": "Windows"})
    assert "tf-windows-native-gpu-unverified" not in ids(judge(known))


def test_pypi_tensorflow_on_arm() -> None:
    """A Jetson ticket with PyPI's TensorFlow 2.16.1 and its build not shown (serengil/deepface#1159):
    PyPI's aarch64 wheels have no CUDA (tensorflow/tensorflow#121157). NVIDIA's '+nv' builds, x86_64,
    or a build known either way (tf-gpu-build judges it) say nothing here."""
    arm = change(healthy(), platform={"machine": "aarch64"},
                 tensorflow=replace(old_tf("2.16.1", "12.3"), is_cuda_build=None))
    assert "tf-aarch64-pypi-no-cuda" in ids(judge(arm))
    nv = change(arm, tensorflow=replace(arm.tensorflow, version="2.16.0+nv24.08"))
    assert "tf-aarch64-pypi-no-cuda" not in ids(judge(nv))
    assert "tf-aarch64-pypi-no-cuda" not in ids(judge(change(arm, platform={"machine": "x86_64"})))
    known = change(arm, tensorflow=replace(arm.tensorflow, is_cuda_build=True))
    assert "tf-aarch64-pypi-no-cuda" not in ids(judge(known))


def test_toolkit_not_shown_is_could_not_check_not_passed() -> None:
    """A ticket with no nvcc and no toolkit directory (before 2.14), or no environment (from 2.14):
    cuda-toolkit could not check; it used to pass on nothing."""
    from tfdoctor.findings import CheckStatus

    def status(facts) -> CheckStatus:  # type: ignore[no-untyped-def]
        return next(o.status for o in judge(facts).outcomes if o.check == "cuda-toolkit")

    old = replace(healthy(), tensorflow=old_tf("2.11.0", "11.2"), toolkits=())
    assert status(old) is CheckStatus.PASSED  # probed: no toolkit at all
    assert status(replace(old, unknown=("toolkits",))) is CheckStatus.COULD_NOT_CHECK
    assert status(replace(healthy(), unknown=("env",))) is CheckStatus.COULD_NOT_CHECK
    assert status(healthy()) is CheckStatus.PASSED
