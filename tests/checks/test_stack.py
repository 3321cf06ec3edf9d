"""The one compatibility evaluator (issue 20, item 4): TensorFlow's needs against whatever evidence
the machine or the ticket gives, each element judged on its own, through `tfdoctor triage` and on
typed facts."""

from __future__ import annotations

from click.testing import CliRunner
from helpers import triage_json
from tfdoctor import stack
from tfdoctor.cli import cli
from tfdoctor.facts import DriverFacts, Facts, GpuFacts, PlatformFacts, PythonFacts, TensorFlowFacts
from tfdoctor.report import build_report
from tfdoctor.share.markdown import render_markdown
from tfdoctor.triage import triage_facts

HEADER_ONLY = """\
tensorflow 2.4.1
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 418.87.01    Driver Version: 418.87.01    CUDA Version: 10.1     |
|-------------------------------+----------------------+----------------------+
"""


def _facts(**fields: object) -> Facts:
    return Facts(schema_version="2", tool_version="test", collected_at="2026-01-01T00:00:00+00:00",
                 python=PythonFacts(executable="python"), **fields)  # type: ignore[arg-type]


def test_a_driver_is_judged_though_the_package_and_the_gpus_are_unknown() -> None:
    """"tensorflow 2.4.1" and nvidia-smi's header cut before the GPU rows: the package (CPU or CUDA
    build) and the GPUs are unknown, yet driver 418 cannot run the CUDA 11.0 runtime of 2.4's
    build, and the advice is the newest release this driver runs (2.3, CUDA 10.1), not a CPU build.
    A header without GPU rows is not "0 GPUs"."""
    report = triage_json(HEADER_ONLY)
    found = {f["id"]: f for f in report["findings"]}
    assert report["verdict"]["root_cause"] == "driver-too-old"
    assert found["driver-too-old"]["evidence"]["minimum_driver_minor_compat"] == "450.80.02"
    assert "tensorflow==2.3.*" in found["driver-too-old"]["hint"], found["driver-too-old"]["hint"]
    assert report["facts"]["driver"]["device_count"] is None
    assert "driver.gpus" in report["facts"]["unknown"]
    assert report["compatibility"] == [{
        "element": "driver", "need": "CUDA 11.0 runtime: driver >= 450.80.02",
        "need_from": "tested build configuration of TensorFlow 2.4", "have": "418.87.01",
        "have_from": "nvidia-smi, line 3", "fits": False}]


def test_the_driver_s_cuda_version_alone_is_judged_under_minor_version_compatibility() -> None:
    """No driver version, only the CUDA version the driver reports: a CUDA 11.4 driver cannot run
    TensorFlow 2.15's CUDA 12.2 runtime; a CUDA 12.0 driver can (same major, NVIDIA's minor-version
    compatibility); before CUDA 11 the minor must be reached too."""
    def fit(driver_cuda: str, tf: str, cuda: str) -> bool | None:
        facts = _facts(driver=DriverFacts(cuda_driver_version=driver_cuda),
                      tensorflow=TensorFlowFacts(version=tf, is_cuda_build=True, cuda_version=cuda))
        judged = stack.driver(facts)
        assert judged is not None and judged.have == f"CUDA {driver_cuda}"
        return judged.fits
    assert fit("11.4", "2.15.0", "12.2") is False
    assert fit("12.0", "2.15.0", "12.2") is True
    assert fit("10.0", "2.1.0", "10.1") is False
    assert fit("10.2", "2.1.0", "10.1") is True


def test_no_driver_judgement_for_a_cpu_build_or_a_release_with_no_windows_gpu_build() -> None:
    """A CPU build needs no driver; TensorFlow 2.12 on native Windows has no GPU build to judge
    the driver against (tf-windows-native says so); under WSL the Linux build is judged."""
    driver = DriverFacts(driver_version="418.87.01")
    cpu = _facts(driver=driver, tensorflow=TensorFlowFacts(version="2.15.0", is_cuda_build=False))
    assert stack.driver(cpu) is None and stack.evaluate(cpu) == ()
    tf = TensorFlowFacts(version="2.12.0", cuda_version="11.8")
    windows = _facts(driver=driver, tensorflow=tf, platform=PlatformFacts(system="Windows"))
    assert stack.driver(windows) is None
    wsl = _facts(driver=driver, tensorflow=tf, platform=PlatformFacts(system="Linux", is_wsl=True))
    judged = stack.driver(wsl)
    assert judged is not None and judged.fits is False and judged.minimum == "450.80.02"


def test_each_element_names_where_both_sides_come_from() -> None:
    """The stated toolkit fits TensorFlow 2.1's CUDA 10.1, the stated cuDNN does not: two rows, each
    with the ticket as its source and the release table as TensorFlow's."""
    facts, _ = triage_facts(["tensorflow-gpu 2.1.0\ncuDNN 7.4.1\nCUDA 10.1\n"])
    fits = {f.element: f for f in stack.evaluate(facts)}
    assert fits["CUDA toolkit"].fits is True and fits["cuDNN"].fits is False
    assert fits["cuDNN"].have == "7.4.1" and fits["cuDNN"].have_from == "the ticket says"
    assert fits["cuDNN"].need == "cuDNN 7.6 or a later 7.x"
    assert fits["cuDNN"].need_from == "tested build configuration of TensorFlow 2.1"


def test_the_reports_show_every_fit() -> None:
    """The text report and the Markdown support report carry the table, the failing row marked."""
    ticket = "tensorflow-gpu 2.1.0\ncuDNN 7.4.1\nCUDA 10.1\n"
    text = CliRunner().invoke(cli, ["triage", "-"], input=ticket).stdout
    lines = text.splitlines()
    start = lines.index("Compatibility (has / needs):")
    assert lines[start + 1].startswith("  [ok] CUDA toolkit 10.1 (the ticket says); needs CUDA 10.1")
    assert lines[start + 2].startswith("  [XX] cuDNN        7.4.1 (the ticket says); needs cuDNN 7.6")
    facts, _ = triage_facts([HEADER_ONLY])
    markdown = render_markdown(build_report(facts), 1, "none", "2026-11-27")
    assert "## Compatibility" in markdown
    row = next(x for x in markdown.splitlines() if x.startswith("| driver |"))
    assert "418.87.01 (nvidia-smi, line 3)" in row and row.endswith("| **does not fit** |"), row


def test_kernels_per_gpu_and_a_source_build_is_not_judged_on_the_table() -> None:
    """A Pascal GPU under TensorFlow 2.15's table has SASS; a Kepler one has none. A 2.20 dev build
    (self-built: its architectures are not the release table's) is not judged on the table's."""
    def gpu_fit(version: str, cc: str, assumed: bool = False) -> stack.Fit | None:
        tf = TensorFlowFacts(version=version, is_cuda_build=True, cuda_version="12.2",
                             compute_capabilities=("sm_60", "sm_70", "sm_80", "sm_89", "compute_90"))
        facts = _facts(tensorflow=tf, driver=DriverFacts(gpus=(GpuFacts(index=0, compute_capability=cc),)),
                      assumed=("tensorflow.compute_capabilities",) if assumed else ())
        return stack.gpu(facts, facts.driver.gpus[0])
    pascal, kepler = gpu_fit("2.15.0", "6.1"), gpu_fit("2.15.0", "3.5")
    assert pascal is not None and pascal.kernels == "sass" and pascal.fits is True
    assert kepler is not None and kepler.kernels == "none" and kepler.fits is False
    assert gpu_fit("2.20.0-dev", "12.0", assumed=True) is None
    assert gpu_fit("2.20.0-dev", "6.1", assumed=False) is not None


def test_a_gpu_named_without_nvidia_smi_is_judged_by_its_series() -> None:
    """A ticket that names the GPU but shows no nvidia-smi: its compute capability comes from the
    model and series tables (NVIDIA's CUDA GPUs list), judged against the build's architectures.
    A Kepler GTX 780 Ti (3.5) has no kernels in TensorFlow 2.15; an RTX 5080 (12.0) only PTX under 2.21,
    which compiles for it; an RTX 3090 (8.6) has SASS under 2.15, so nothing is said of it."""
    def found(ticket: str) -> dict[str, dict]:
        return {f["id"]: f for f in triage_json(ticket)["findings"]}
    kepler = found("tensorflow 2.15.0\nMy GPU is a GeForce GTX 780 Ti\n")["gpu-too-old-for-tf"]
    assert kepler["severity"] == "warning"
    assert kepler["evidence"]["gpu.compute_capability"] == "3.5 (from the model's name)"
    blackwell = found("tensorflow 2.21.0\nGPU: RTX 5080\n")["gpu-ptx-jit-only"]
    assert "compute capability 12.0" in blackwell["message"]
    assert not [k for k in found("tensorflow 2.15.0\nGPU: RTX 3090\n") if k.startswith("gpu-")]
    facts, _ = triage_facts(["tensorflow 2.15.0\nMy GPU is a GeForce GTX 780 Ti\n"])
    named = stack.named_gpu(facts)
    assert named is not None and named.fits is False and named.kernels == "none"
    assert named.have.startswith("3.5, GeForce GTX 780 Ti")


def test_nvidia_smi_s_gpu_name_gives_its_compute_capability() -> None:
    """nvidia-smi's table shows the model, not the compute capability: the series table gives it
    (marked assumed), so a GTX 780 under TensorFlow 2.15 (built from sm_50) is judged too old."""
    smi = ("tensorflow 2.15.0\n"
           "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
           "|-------------------------------+----------------------+----------------------+\n"
           "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
           "|   0  NVIDIA GeForce GTX 780  Off | 00000000:01:00.0 Off |                  N/A |\n"
           "+-------------------------------+----------------------+----------------------+\n")
    report = triage_json(smi)
    assert report["verdict"]["root_cause"] == "gpu-too-old-for-tf"
    hit = next(f for f in report["findings"] if f["id"] == "gpu-too-old-for-tf")
    assert hit["evidence"]["gpu.compute_capability"] == "3.5 (from the model's name)"
    assert "driver.gpus.compute_capability" in report["facts"]["assumed"]


def test_a_compute_capability_that_is_not_one_is_not_judged() -> None:
    """A replayed document's compute capability is text ("8.²" from a fuzzed file): the evaluator
    (which the report's JSON calls outside any check) says unknown instead of raising."""
    tf = TensorFlowFacts(version="2.15.0", is_cuda_build=True, cuda_version="12.2",
                         compute_capabilities=("sm_60", "sm_70", "compute_90"))
    facts = _facts(tensorflow=tf, driver=DriverFacts(gpus=(GpuFacts(index=0, compute_capability="8.²"),)))
    fit = next(f for f in stack.evaluate(facts) if f.element == "GPU 0")
    assert fit.fits is None and fit.kernels is None
    assert stack.kernels(tf, "²") == "sass"  # a GPU that does not say counts as having kernels
