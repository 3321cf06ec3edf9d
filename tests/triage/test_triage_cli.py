"""`tfdoctor triage` through the real console script, and the unknown-is-never-absent contract
of partial documents (replay invents no diagnosis from what a ticket did not show)."""

# ruff: noqa: E501  (real log lines are long)
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
from tfdoctor.facts import Distribution, DriverFacts, Facts, PythonFacts, TensorFlowFacts
from tfdoctor.report import build_report

from tests.helpers import healthy, triage_json

ROOT = Path(__file__).resolve().parents[2]
TFDOCTOR = [str(Path(sys.executable).parent / "tfdoctor")]
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())

# Lines of a real report (tensorflow/tensorflow#45200, TF 2.4 nightly): cuDNN not on the path.
TICKET = """\
2020-11-26 10:23:19.183104: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] Successfully opened dynamic library libcudart.so.11.0
2020-11-26 10:23:22.894765: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1727] Found device 0 with properties:
pciBusID: 0000:0d:00.0 name: GeForce GTX 1080 Ti computeCapability: 6.1
2020-11-26 10:23:22.978050: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda-11.1/lib64
2020-11-26 10:23:22.978098: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1757] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.
"""


def make_facts(**overrides: Any) -> Facts:
    """A healthy one-GPU machine with these top-level fields replaced."""
    return replace(healthy(gpus=1), **overrides)


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*TFDOCTOR, *args], input=stdin, capture_output=True, timeout=60)


def test_ticket_through_the_console_script(tmp_path: Path) -> None:
    """A pasted log gives the named root cause, unknown facts, what to ask for, a schema-valid
    document and exit 1; the text form says where each fact was read."""
    path = tmp_path / "ticket.txt"
    path.write_text(TICKET)
    result = run("triage", "--json", str(path))
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    assert report["verdict"]["root_cause"] == "tf-log-library-not-loaded"
    assert "libcudnn.so.8" in report["findings"][0]["evidence"]["subject"]
    assert "tensorflow" in report["facts"]["unknown"] and "python.packages" in report["facts"]["unknown"]
    assert report["facts"]["env"]["LD_LIBRARY_PATH"] == "/usr/local/cuda-11.1/lib64"
    assert report["facts"]["driver"]["gpus"][0]["compute_capability"] == "6.1"
    assert report["ask_for"] and report["ask_for"][0]["command"]
    text = run("triage", str(path)).stdout.decode()
    assert text.startswith("Read from the ticket: tensorflow log (lines 1-5)")  # line 1: libcudart.so.11.0
    assert "To decide, ask for:" in text


def test_stdin_and_nothing_recognised() -> None:
    """Text that matches nothing says so on stderr; every check could not check (exit 3)."""
    result = run("triage", "-", stdin=b"my model is slow, please help\n")
    assert result.returncode == 3
    assert b"nothing in this text is output triage recognises" in result.stderr
    assert result.stdout.startswith(b"Read from the ticket: nothing recognised")


def test_binary_and_huge_input_are_one_line_errors(tmp_path: Path) -> None:
    """A binary file or a file over the size limit: one line on stderr, exit 2, no traceback."""
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    huge = tmp_path / "huge.log"
    huge.write_bytes(b"x" * (8 * 1024 * 1024 + 10))
    for path, words in ((binary, b"is binary"), (huge, b"larger than 8 MiB")):
        result = run("triage", str(path))
        assert result.returncode == 2
        assert words in result.stderr and result.stderr.count(b"\n") == 1, result.stderr
    missing = run("triage", str(tmp_path / "nope.txt"))
    assert missing.returncode == 2 and b"cannot read" in missing.stderr


def test_unknown_tensorflow_distributions_do_not_mean_not_installed() -> None:
    """TensorFlow's version is known but its distributions are not: no tf-not-installed, and no
    tf-multiple-distributions from a partial listing."""
    facts = make_facts(tensorflow=TensorFlowFacts(version="2.15.0"), unknown=("tensorflow.distributions",))
    ids = {f.id for f in build_report(facts).findings}
    assert "tf-not-installed" not in ids and "tf-multiple-distributions" not in ids
    absent = make_facts(tensorflow=None)
    assert "tf-not-installed" in {f.id for f in build_report(absent).findings}


def test_unprobed_driver_is_could_not_check_not_no_gpus() -> None:
    """NVML not probed (a ticket without nvidia-smi): no "the driver reports no GPUs", no
    driver advice; the driver checks could not check and nvidia-smi is asked for."""
    facts = make_facts(driver=DriverFacts(), unknown=("driver",),
                       tensorflow=TensorFlowFacts(version="2.21.0", is_cuda_build=True, cuda_version="12.5.1",
                                                  distributions=(Distribution("tensorflow", "2.21.0"),)))
    report = build_report(facts)
    ids = {f.id for f in report.findings}
    assert not ids & {"no-gpus", "driver-not-installed", "driver-too-old", "driver-minor-version-compat"}
    status = {o.check: o.status.value for o in report.outcomes}
    assert status["driver-present"] == status["gpus-present"] == "could-not-check"
    assert report.ask_for[0].command == "nvidia-smi"
    assert report.verdict == "incomplete"


def test_failed_target_probe_is_unknown_even_in_schema_1(tmp_path: Path) -> None:
    """A schema 1 document (no `unknown` list) whose target interpreter failed replays as
    "could not check" for TensorFlow, never as "not installed"."""
    facts = make_facts(python=PythonFacts(executable="/x/python", error="timed out after 10 s"), tensorflow=None)
    doc = facts.to_dict()
    doc["schema_version"] = "1"
    del doc["unknown"], doc["provenance"], doc["toolkits"], doc["host"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    result = run("replay", "--json", str(path))
    report = json.loads(result.stdout)
    assert "tf-not-installed" not in [f["id"] for f in report["findings"]]
    assert {o["check"]: o["status"] for o in report["outcomes"]}["tf-installed"] == "could-not-check"


def test_no_command_module_imports_the_cli() -> None:
    """cli.py assembles the group; command modules import cmdkit, never cli (no import cycle)."""
    offenders = [p for p in (ROOT / "doctor" / "tfdoctor").rglob("*.py")
                 if p.name not in ("cli.py", "__main__.py")
                 and ("from tfdoctor.cli import" in p.read_text() or "import tfdoctor.cli" in p.read_text())]
    assert offenders == []


def test_a_probe_that_crashed_leaves_its_area_unknown() -> None:
    """A probe function that raised left its default value (no libraries, no env): that is
    unknown, not absent, and an unreadable /proc/modules leaves the module state unknown."""
    from tfdoctor.facts import ProbeIssue
    from tfdoctor.probes import probe_unknowns

    class NoProc:
        def read_text(self, absolute: str) -> None:
            return None

    issues = [ProbeIssue("libraries", "crash", "KeyError: 'x' (probe_libraries:42)"),
              ProbeIssue("driver", "crash", "_nvml_child.py killed by SIGSEGV in nvmlInit")]
    unknown = probe_unknowns(NoProc(), issues, "Linux")  # type: ignore[arg-type]
    assert unknown == ("libraries", "driver.kernel_module")
    facts = make_facts(libraries=(), unknown=unknown)
    outcomes = {o.check: o.status.value for o in build_report(facts).outcomes}
    assert outcomes["cuda-libraries"] == "could-not-check"


def test_ranking_specific_before_generic_and_explains_most_first() -> None:
    """A generic finding registered earlier (no-gpus) never outranks a specific cause; the cause
    that explains the most others is the root, with its consequences linked to it."""
    from tfdoctor.findings import Finding, Severity
    from tfdoctor.report import rank_findings

    generic = Finding("no-gpus", Severity.ERROR, "m", check="gpus-present")
    specific = Finding("tf-log-numpy2-abi", Severity.ERROR, "m", check="smoke-log")
    assert [f.id for f in rank_findings([generic, specific])] == ["tf-log-numpy2-abi", "no-gpus"]
    driver = Finding("driver-not-installed", Severity.ERROR, "m", check="driver-present")
    libcuda = Finding("libcuda-missing", Severity.ERROR, "m", check="libcuda")
    no_gpu = Finding("smoke-no-gpu", Severity.ERROR, "m", check="smoke-gpus")
    ranked = rank_findings([no_gpu, libcuda, driver])
    assert ranked[0].id == "driver-not-installed" and ranked[0].caused_by is None
    assert {f.id: f.caused_by for f in ranked[1:]} == {"libcuda-missing": "driver-not-installed",
                                                      "smoke-no-gpu": "driver-not-installed"}


def test_the_error_the_log_shows_before_an_unrelated_static_one() -> None:
    """Two unexplained errors that explain nothing else: the failure the log shows comes first
    (github.com/tensorflow/tensorflow/issues/47242: Python 3.9 under TF 2.4.1 is true but the
    traceback is NumPy's); a static finding that explains the log line stays the root."""
    from tfdoctor.findings import Finding, Severity
    from tfdoctor.report import rank_findings

    static = Finding("tf-python-unsupported", Severity.ERROR, "m", check="tf-python-version")
    log = Finding("tf-log-numpy-symbolic-tensor", Severity.ERROR, "m", check="smoke-log")
    assert [f.id for f in rank_findings([static, log])] == ["tf-log-numpy-symbolic-tensor",
                                                            "tf-python-unsupported"]
    driver = Finding("driver-not-installed", Severity.ERROR, "m", check="driver-present")
    missing = Finding("tf-log-driver-library-missing", Severity.ERROR, "m", check="smoke-log")
    ranked = rank_findings([missing, driver])
    assert [(f.id, f.caused_by) for f in ranked] == [
        ("driver-not-installed", None), ("tf-log-driver-library-missing", "driver-not-installed")]


def test_missing_cudart_in_a_ticket_without_a_gpu_is_a_warning() -> None:
    """TensorFlow itself says to ignore a missing libcudart without a GPU; a ticket that shows no
    GPU anywhere keeps it as a warning, one that names a GPU as an error."""
    from tfdoctor.triage import triage_facts

    log = [
        "2022-12-27 16:55:16.791868: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could "
        "not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared "
        "object file: No such file or directory",
        "2022-12-27 16:55:16.791900: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above "
        "cudart dlerror if you do not have a GPU set up on your machine.",
    ]

    def severity(lines: list[str]) -> str:
        facts, _ = triage_facts(["\n".join(lines)])
        found = {f.id: f.severity.value for f in build_report(facts).findings}
        return found["tf-log-library-not-loaded"]

    assert severity(log) == "warning"
    assert severity(["My RTX 3080 is not used by TensorFlow 2.6.0.", *log]) == "error"


def test_tf_hub_layer_is_a_cause_only_under_keras_3() -> None:
    """hub.KerasLayer is a Keras 2 layer: a cause with TF >= 2.16 (tensorflow/hub#903), nothing with
    TF 2.15, an unknown TensorFlow, or TF_USE_LEGACY_KERAS=1 shown in the ticket."""
    from tfdoctor.triage import triage_facts

    code = "feature_extractor = hub.KerasLayer(MODULE_HANDLE, input_shape=(224, 224, 3))"

    def found(*lines: str) -> bool:
        facts, _ = triage_facts(["\n".join(lines)])
        return "tf-log-tf-hub-keras3" in {f.id for f in build_report(facts).findings}

    assert found("TensorFlow 2.17 on Ubuntu 22.04.", code)
    assert not found("TensorFlow 2.15 on Ubuntu 22.04.", code)
    assert not found(code)
    assert not found("TensorFlow 2.17 on Ubuntu 22.04.", "export TF_USE_LEGACY_KERAS=1", code)


def test_asks_confirm_the_pointed_finding_first() -> None:
    """NaN with several GPUs (github.com/tensorflow/tensorflow/issues/105552) points at P2P: the
    kernel log is asked for first, before nvidia-smi, which decides more checks."""
    from tfdoctor.triage import triage_facts

    facts, _ = triage_facts(["With MirroredStrategy the loss becomes NaN, but only for certain pairs of GPUs.\n"
                             "TensorFlow version: tf 2.19.0"])
    asks = [a.command for a in build_report(facts).ask_for]
    assert asks[0].startswith("sudo dmesg") and asks[1] == "nvidia-smi"


def test_the_cuda_parts_are_asked_where_the_release_gets_them() -> None:
    """ptxas too old for an sm_86 GPU (tensorflow/tensorflow#46933, TF 2.4.1): before 2.14 XLA's
    ptxas is the system toolkit's, so nvcc and the toolkit folder are asked before pip list; with
    [and-cuda] (tensorflow/tensorflow#68966) it is pip's nvidia-cuda-nvcc wheel, so pip list first."""
    from tfdoctor.triage import triage_facts

    line = ("2021-02-04 08:52:12.943009: W tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA "
            "software stack is old. We fallback to the NVIDIA driver for some compilation. Update your CUDA "
            "version to get the best performance. The ptxas error was: ptxas fatal   : Value 'sm_86' is not "
            "defined for option 'gpu-name'")
    facts, _ = triage_facts([f"tensorflow 2.4.1\n{line}\n"])
    assert [a.fact for a in build_report(facts).ask_for][:2] == ["toolkits", "python.packages"]
    facts, _ = triage_facts([f"pip install 'tensorflow[and-cuda]'\n{line}\n"])
    assert [a.fact for a in build_report(facts).ask_for][:2] == ["python.packages", "toolkits"]


def test_summary_line_says_unknown_not_absent() -> None:
    """A ticket that names no TensorFlow and shows no nvidia-smi: the summary line says the
    version and the GPUs are unknown (it said "TensorFlow not installed | ... | 0 GPU(s)")."""
    out = run("triage", "-", stdin=b"Windows 10, conda env, training runs on the CPU, not the GPU.\n")
    line = next(x for x in out.stdout.decode().splitlines() if "| Python" in x)
    assert line.startswith("TensorFlow version unknown |") and line.endswith("| GPUs unknown"), line
    out = run("triage", "-", stdin=b"TensorFlow 2.13.1 on Ubuntu 20.04, the GPU is not used.\n")
    line = next(x for x in out.stdout.decode().splitlines() if "| Python" in x)
    assert line.startswith("TensorFlow 2.13.1 |"), line  # no "()" for distributions not shown


# Lines of a real report (conda-forge/tensorflow-feedstock#257): the driver runs, nvidia-smi works,
# but shows no CUDA version, and TensorFlow cannot open libcuda.so.1.
NO_LIBCUDA = """\
2022-07-07 15:53:15.984325: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file: No such file or directory
2022-07-07 15:53:15.984343: W tensorflow/stream_executor/cuda/cuda_driver.cc:269] failed call to cuInit: UNKNOWN ERROR (303)
[]
$ sudo nvidia-smi
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 460.91.03    Driver Version: 460.91.03    CUDA Version: N/A      |
|-------------------------------+----------------------+----------------------+
|   0  GeForce GTX TIT...  Off  | 00000000:2D:00.0  On |                  N/A |
+-------------------------------+----------------------+----------------------+
"""


def test_a_log_line_that_explains_others_is_the_root(tmp_path: Path) -> None:
    """nvidia-smi's "CUDA Version: N/A" is the reason TensorFlow cannot open libcuda.so.1 and
    cuInit fails, though it comes later in the ticket: it is the root, they are its consequences,
    and the first thing to ask for is the libraries, not the kernel module."""
    path = tmp_path / "ticket.txt"
    path.write_text(NO_LIBCUDA)
    report = json.loads(run("triage", "--json", str(path)).stdout)
    findings = {f["id"]: f for f in report["findings"]}
    assert report["verdict"]["root_cause"] == "tf-log-nvidia-smi-no-libcuda"
    for consequence in ("tf-log-driver-library-missing", "tf-log-cuda-init-failed", "smoke-no-gpu"):
        assert findings[consequence]["caused_by"] == "tf-log-nvidia-smi-no-libcuda", consequence
    first = report["ask_for"][0]
    assert first["fact"] == "libraries" and "libcuda\\.so" in first["command"], first


# Lines of a real report (tensorflow/tensorflow#57951): TF 2.10 on native Windows, CUDA 11.6 beside it.
WINDOWS_DLL = """\
### OS Platform and Distribution

windows

2022-10-03 20:28:00.694845: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found
"""


def test_native_windows_is_asked_in_its_own_commands(tmp_path: Path) -> None:
    """The issue template's OS value and a CUDA DLL in the log say native Windows: the asks are
    commands that run there (no ldconfig, lsmod or /proc), the toolkit before the DLLs."""
    path = tmp_path / "ticket.txt"
    path.write_text(WINDOWS_DLL)
    report = json.loads(run("triage", "--json", str(path)).stdout)
    assert report["facts"]["platform"]["system"] == "Windows"
    commands = [a["command"] for a in report["ask_for"]]
    assert commands[0] == "nvcc --version & echo %CUDA_PATH%", commands
    assert any(c.startswith("where cudart64_*.dll") for c in commands), commands
    assert not [c for c in commands if "ldconfig" in c or "lsmod" in c or "/proc/" in c or "uname" in c]


TFJS = """**System information**
- OS Platform and Distribution: Windows 11
- TensorFlow.js version: tfjs-node-gpu 4.22.0, tfjs-node 4.22.0
- GPU: Nvidia RTX 4070

`tfjs-node-gpu` works 3 times slower than `tfjs-node`.
"""


def test_tensorflow_js_in_node_is_asked_in_what_node_shows() -> None:
    """tensorflow/tfjs#8509: TensorFlow.js in Node.js loads the libtensorflow its addon downloaded,
    so pip list and Python's prints show nothing of it: no Python command is asked, and the whole
    log is Node.js loading the addon. The same ticket about Python gets Python's commands."""
    report = triage_json(TFJS)
    assert report["facts"]["intent"]["binding"] == "tfjs-node"
    commands = [a["command"] for a in report["ask_for"]]
    assert not [c for c in commands if "python" in c or "pip " in c], commands
    assert 'node -e "require(\'@tensorflow/tfjs-node-gpu\')"' in " ".join(commands), commands
    python = triage_json(TFJS.replace("tfjs-node-gpu 4.22.0, tfjs-node 4.22.0", "2.10.1")
                         .replace("`tfjs-node-gpu`", "GPU").replace("`tfjs-node`", "CPU"))
    assert python["facts"]["intent"]["binding"] is None
    assert any("pip list" in a["command"] or "python" in a["command"] for a in python["ask_for"])


def test_a_build_taken_from_the_tables_is_marked_assumed_and_still_unknown_to_asks():
    """A ticket that names only TensorFlow 2.15 gets its CUDA, cuDNN and compute capabilities from
    that release's tested build configuration: the facts say so in `assumed` (typed; asks read it,
    not the provenance's words), and asks treat the build as not yet shown. A ticket with the build
    information assumes only what it leaves out (here its compute capabilities)."""
    from click.testing import CliRunner
    from tfdoctor import asks
    from tfdoctor.cli import cli

    def triaged(text: str) -> Facts:
        out = CliRunner().invoke(cli, ["triage", "--json", "-"], input=text).stdout
        return Facts.from_dict(json.loads(out)["facts"])

    said = "I use TensorFlow 2.15 on my RTX 3090 and the GPU is not found\n"
    facts = triaged(said)
    assert facts.assumed == ("tensorflow.cuda_version", "tensorflow.cudnn_version",
                             "tensorflow.compute_capabilities")
    assert facts.tensorflow is not None and facts.tensorflow.cuda_version == "12.2"
    assert not asks._known(build_report(facts), "tensorflow.build")
    shown = triaged(said + ">>> tf.sysconfig.get_build_info()\nOrderedDict([('cuda_version', '12.2'), "
                    "('cudnn_version', '8'), ('is_cuda_build', True)])\n")
    assert shown.assumed == ("tensorflow.compute_capabilities",)
    assert asks._known(build_report(shown), "tensorflow.build")
    # the provenance's words alone decide nothing
    worded = replace(shown, provenance={**shown.provenance, "tensorflow.cuda_version":
                                        "tested build configuration of TensorFlow 2.15.1"})
    assert asks._known(build_report(worded), "tensorflow.build")


def test_a_ticket_without_tensorflows_log_is_asked_for_it_before_nvidia_smi() -> None:
    """A GPU not found and no line of TensorFlow's log (the TF issue template's first request): the
    log of one import comes before nvidia-smi, whose facts that matter to TensorFlow it shows too.
    On several GPUs at once (a multi-GPU strategy, CUDA_VISIBLE_DEVICES naming two) and on WSL,
    nvidia-smi stays first; pip list keeps its own rank."""
    from tfdoctor.asks import TF_LOG
    from tfdoctor.triage import triage_facts

    def commands(text: str) -> list[str]:
        facts, _ = triage_facts([text])
        return [a.command for a in build_report(facts).ask_for]

    alone = "Ubuntu 22.04, RTX 3090: tf.config.list_physical_devices('GPU') returns an empty list\n"
    asked = commands(alone)
    assert asked[0] == TF_LOG and asked.index(TF_LOG) < asked.index("nvidia-smi")
    # an install in view: what pip installed is asked first, then the log, still before nvidia-smi
    asked = commands(alone + "pip install tensorflow\n")
    assert asked.index("pip list") < asked.index(TF_LOG) < asked.index("nvidia-smi"), asked
    for several in ("strategy = tf.distribute.MirroredStrategy()\n", "export CUDA_VISIBLE_DEVICES=5,6\n",
                    "Training on multiple GPUs hangs.\n"):
        facts, _ = triage_facts([alone + several])
        assert facts.intent.multi_gpu or facts.env.get("CUDA_VISIBLE_DEVICES") == "5,6", several
        asked = commands(alone + several)
        assert asked.index("nvidia-smi") < asked.index(TF_LOG), several
    asked = commands(alone.replace("Ubuntu 22.04", "Ubuntu 22.04 on WSL2"))
    assert asked.index("nvidia-smi") < asked.index(TF_LOG)
    # a log that shows something is not asked for again first
    asked = commands(alone + TICKET)
    assert asked[0] != TF_LOG
    # one GPU named after CUDA_VISIBLE_DEVICES is not several
    facts, _ = triage_facts([alone + "export CUDA_VISIBLE_DEVICES=1\n"])
    assert not facts.intent.multi_gpu
    asked = commands(alone + "export CUDA_VISIBLE_DEVICES=1\n")
    assert asked.index(TF_LOG) < asked.index("nvidia-smi")


def test_an_empty_gpu_list_whose_log_names_no_cause_asks_for_the_whole_log_first() -> None:
    """smoke-no-gpu ("its log names no cause"): the whole start-up log says why, then nvidia-smi;
    the catalogue's asks of smoke-no-gpu, not the count of checks nvidia-smi decides."""
    from tfdoctor.asks import TF_LOG
    from tfdoctor.triage import triage_facts

    facts, _ = triage_facts(["Ubuntu 22.04 with an RTX 3090, TensorFlow 2.15.0\n"
                             ">>> tf.config.list_physical_devices('GPU')\n[]\n"])
    report = build_report(facts)
    assert [f.id for f in report.findings] == ["smoke-no-gpu"]
    assert [a.command for a in report.ask_for][:2] == [TF_LOG, "nvidia-smi"]


def test_a_cudnn_failure_asks_for_the_whole_log_first() -> None:
    """'DNN library is not found' / 'Could not create cudnn handle' (spleeter#859, #716): the lines
    above them in TensorFlow's whole log (cuda_dnn.cc's loaded-against-built cuDNN versions, the
    CUDNN_STATUS) decide the cause, so that log is asked for first."""
    from tfdoctor.asks import TF_LOG
    from tfdoctor.triage import triage_facts

    for line, cause in (("tensorflow.python.framework.errors_impl.UnimplementedError: DNN library is not found.",
                         "tf-log-cudnn-failed"),
                        ("2021-11-03 10:01:02.123456: E tensorflow/stream_executor/cuda/cuda_dnn.cc:362] Loaded "
                         "runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.", None),
                        ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:374] Could not create cudnn handle: "
                         "CUDNN_STATUS_INTERNAL_ERROR", "tf-log-cudnn-handle-failed")):
        facts, _ = triage_facts([line + "\n"])
        report = build_report(facts)
        if cause is None:  # the log line that decides it is shown: it is not asked for again first
            assert report.ask_for[0].command != TF_LOG
            continue
        assert report.findings[0].id == cause, line
        assert report.ask_for[0].command == TF_LOG, (line, [a.command for a in report.ask_for])


def test_gpus_tensorflow_registered_still_ask_for_nvidia_smi() -> None:
    """kohya_ss#384 (an RTX 4090 on Windows): TensorFlow's log registers the GPU and then runs out
    of its memory. The log is not the driver's own report: nvidia-smi shows the memory other
    processes hold, so it is asked first; once it is shown, it is not asked again."""
    from tfdoctor.triage import triage_facts

    log = ("2023-03-15 06:09:56.874994: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1616] Created device "
           "/job:localhost/replica:0/task:0/device:GPU:0 with 21284 MB memory:  -> device: 0, name: NVIDIA "
           "GeForce RTX 4090, pci bus id: 0000:53:00.0, compute capability: 8.9\n"
           "2023-03-15 06:09:57.022658: I tensorflow/stream_executor/cuda/cuda_driver.cc:733] failed to allocate "
           "20.79G (22317891584 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n")
    report = build_report(triage_facts([log])[0])
    assert report.findings[0].id == "tf-log-gpu-out-of-memory"
    assert report.facts.driver.gpus and report.ask_for[0].command == "nvidia-smi"
    smi = (ROOT / "tests" / "triage" / "data" / "nvidia_smi" / "tf62328_driver535.txt").read_text()
    shown = build_report(triage_facts([smi + "\n" + log])[0])
    assert shown.facts.driver.driver_version and "nvidia-smi" not in [a.command for a in shown.ask_for]


def test_a_commented_out_install_is_not_an_install() -> None:
    """katib#1915's Dockerfile: '# RUN pip install tensorflow-gpu==2.8.0' is not run, so the
    tensorflow-text beside it brings no second TensorFlow."""
    report = triage_json("RUN pip install tensorflow_text==2.8.1\n# RUN pip install tensorflow-gpu==2.8.0\n"
                         "# pip install tensorflow==2.8.0\n")
    assert report["facts"]["intent"]["pip_install"] == ["tensorflow_text==2.8.1"]
    assert "companion-brings-tensorflow" not in [f["id"] for f in report["findings"]]
    uncommented = triage_json("RUN pip install tensorflow_text==2.8.1\nRUN pip install tensorflow-gpu==2.8.0\n")
    assert "companion-brings-tensorflow" in [f["id"] for f in uncommented["findings"]]


def test_cudnns_own_loader_is_read_in_its_own_words() -> None:
    """cuDNN loads its sub-libraries itself and says so in its own words (libcudnn.so.8's 'Could not
    load library %s. Error: %s'; cudnn64_8.dll's 'Error code 126' and 'Please make sure %s is in your
    library path!', tensorflow/tensorflow#53611); cuDNN 8.3+ on Windows stops at a missing zlib."""
    for ticket, finding, subject in (
        ("Could not load library cudnn_cnn_infer64_8.dll. Error code 126\n"
         "Please make sure cudnn_cnn_infer64_8.dll is in your library path!\n",
         "tf-log-library-not-loaded", "cudnn_cnn_infer64_8.dll"),
        ("Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: "
         "No such file or directory\n", "tf-log-library-not-loaded", "libcudnn_cnn_infer.so.8"),
        ("Could not load library cudnn_ops_infer64_8.dll. Error code 126\n"
         "Could not locate zlibwapi.dll. Please make sure it is in your library path!\n",
         "tf-log-cudnn-zlib-missing", "zlibwapi.dll"),
    ):
        top = triage_json(ticket)["findings"][0]
        assert (top["id"], top["evidence"].get("subject")) == (finding, subject), ticket
    # 193 (not a 64-bit DLL) is not a library that is missing
    ids = [f["id"] for f in triage_json("Could not load library cudnn_cnn_infer64_8.dll. Error code 193\n")["findings"]]
    assert "tf-log-library-not-loaded" not in ids
