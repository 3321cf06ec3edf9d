"""Toolkit, platform and distribution facts: nvcc, ldconfig, uname, os-release, from real text."""

from __future__ import annotations

from tfdoctor.triage.recognisers import ldconfig, nvcc, nvidia_smi, os_release, uname
from triage_fixtures import lines_of, observed


def test_ldconfig_cache_of_the_dev_machine():
    """Every cache entry is (soname, path); the "libs found in cache" header is not one."""
    obs = observed(ldconfig, "ldconfig/dev_machine.txt")
    assert len(obs) == 541
    assert ("library.ldconfig", ("libcudart.so.13", "/usr/local/cuda-13.0/lib/libcudart.so.13")) in obs
    assert {path for path, _ in obs} == {"library.ldconfig"}


def test_nvcc_version_and_toolkit_dirs():
    """nvcc's release line gives its version; `ls -d` names the versioned toolkit, not the symlink."""
    assert observed(nvcc, "nvcc/dev_machine_session.txt") == [
        ("toolkit.nvcc_version", "13.0.88"),
        ("toolkit.dir", "/usr/local/cuda-13.0"),
    ]
    smi = observed(nvidia_smi, "nvcc/dev_machine_session.txt")
    assert smi == [("driver.nvidia_smi_error", "bash: line 1: nvidia-smi: command not found")]


def test_ls_of_usr_local():
    """`ls -l /usr/local` names cuda-13.0; the cuda symlink's target is the same directory once."""
    assert observed(nvcc, "nvcc/dev_machine_ls_local.txt") == [("toolkit.dir", "/usr/local/cuda-13.0")]
    assert lines_of(nvcc, "nvcc/dev_machine_ls_local.txt") == [(5, "toolkit.dir")]


def test_nvcc_v_from_a_ticket():
    """An older nvcc's output in a ticket."""
    assert observed(nvcc, "nvcc/qixuema4_nvcc_v.txt") == [("toolkit.nvcc_version", "10.0.130")]


def test_uname_of_the_dev_machine():
    """`uname -a` gives system, release and machine; a non-Microsoft kernel says nothing about WSL."""
    assert observed(uname, "uname/dev_machine.txt") == [
        ("platform.system", "Linux"),
        ("platform.release", "6.18.44-fc-v769"),
        ("platform.machine", "x86_64"),
    ]


def test_uname_r_of_wsl1():
    """`uname -r` printing "-Microsoft" is WSL 1."""
    assert observed(uname, "uname/gitopen158_uname_r_wsl1.txt") == [
        ("platform.release", "4.4.0-18362-Microsoft"),
        ("platform.is_wsl", True),
        ("platform.wsl_version", 1),
    ]


def test_first_wsl1_builds_are_not_called_not_wsl():
    """The 2016 WSL 1 reported "3.4.0+": so no kernel release may claim a machine is not WSL."""
    obs = observed(uname, "uname/wsl1090_old_wsl1.txt")
    assert ("platform.release", "3.4.0+") in obs
    assert not [path for path, _ in obs if path.startswith("platform.is_wsl")]


def test_os_release_and_lsb_release():
    """PRETTY_NAME of /etc/os-release and lsb_release's Description are the distribution."""
    assert observed(os_release, "os_release/debian12_os_release.txt") == [
        ("platform.distro", "Debian GNU/Linux 12 (bookworm)"),
    ]
    assert observed(os_release, "os_release/debian12_lsb_release.txt") == [
        ("platform.distro", "Debian GNU/Linux 12 (bookworm)"),
    ]


def test_prose_reads_the_users_words_not_program_output():
    """TensorFlow's log says "GPU" on machines without one and tracebacks name paths: neither is a
    claim. The keras version a user names (github.com/intel/ipex-llm/pull/7106) is one."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = [
        "2022-12-27 16:55:16.791900: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above "
        "cudart dlerror if you do not have a GPU set up on your machine.",
        '  File "/home/user/envs/tf/lib/python3.7/site-packages/keras/__init__.py", line 21, in <module>',
        "After pip install tensorflow==2.6.0 (which brought in keras 2.11.0), importing keras fails:",
        "Keras 3 is what I want eventually; tf-keras 2.16.0 is also there",
    ]
    assert [(o.line, o.path, o.value) for o in observe_all(prose, lines)] == [
        (3, "tensorflow.version", "2.6.0"),
        (3, "python.package", ("keras", "2.11.0")),
        (3, "intent.pip_install", ("tensorflow==2.6.0",)),  # in a sentence: the first requirement only
    ]


def test_prose_reads_pip_install_commands_as_requirements():
    """A pip install command line gives all its requirements (options and quotes dropped)."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = ["$ python -m pip install -U 'tensorflow-gpu>=2.12' numpy==1.26.4 --no-cache-dir",
             "I also tried pip install tensorflow[and-cuda] and it did not help"]
    got = [o.value for o in observe_all(prose, lines) if o.path == "intent.pip_install"]
    assert got == [("tensorflow-gpu>=2.12", "numpy==1.26.4"), ("tensorflow[and-cuda]",)]


def test_prose_package_versions_and_the_and_cuda_install():
    """Each named package once (github.com/tensorflow/tensorflow/issues/47878: numpy 1.20.1 under
    TF 2.4.1), and `pip install tensorflow[and-cuda]` as the install the ticket used."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = [
        "pip install reports that tensorflow 2.4.1 is incompatible with numpy 1.20.1 as it requires 1.19.x",
        "Later numpy 1.19.5 worked, with protobuf 3.20.3.",
        "Installed with: pip install tensorflow[and-cuda] (in a venv, in a container)",
    ]
    got = [(o.line, o.path, o.value) for o in observe_all(prose, lines)]
    assert (1, "python.package", ("numpy", "1.20.1")) in got
    assert (2, "python.package", ("protobuf", "3.20.3")) in got
    assert (3, "intent.and_cuda", True) in got
    assert not [g for g in got if g[1] == "python.package" and g[2] == ("numpy", "1.19.5")]


def test_prose_names_tensorflow_gpu_with_a_space():
    """"TF GPU 2.4.0" (github.com/tensorflow/tensorflow/issues/46471) and "tensorflow gpu 2.4" name
    TensorFlow's version, as "tensorflow-gpu==2.4.0" does; "TF GPU" alone names none."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = {"Using tf nightly, CUDA 11.1, CUDNN 8, python 8.5, TF GPU 2.4.0.": ["2.4.0"],
             "I installed tensorflow gpu 2.4 from conda": ["2.4"], "tensorflow-gpu==2.3.1 worked": ["2.3.1"],
             "TF GPU is slow": [],
             # an issue template's list (github.com/frankkramer-lab/MIScnn/issues/146); not an env's name
             "**Tensorflow  - 2.7.0": ["2.7.0"], "`$ conda create -n tf-2.16 python==3.12`": []}
    for line, want in lines.items():
        assert [o.value for o in observe_all(prose, [line]) if o.path == "tensorflow.version"] == want, line


def test_traceback_frames_name_keras2_packages():
    """A frame inside site-packages/deepface (github.com/serengil/deepface/issues/1272) says deepface
    is installed; other packages' frames say nothing."""
    from tfdoctor.triage.recognisers import tf_log
    from triage_fixtures import observe_all

    lines = [
        r"File d:\conda\envs\comp3420\Lib\site-packages\deepface\DeepFace.py:247, in analyze(img_path)",
        '  File "/usr/lib/python3/site-packages/requests/api.py", line 59, in request',
    ]
    got = [(o.path, o.value) for o in observe_all(tf_log, lines) if o.path == "python.package"]
    assert got == [("python.package", ("deepface", "unknown"))]


def test_import_lines_name_keras2_packages():
    """The user's own `>> import gpflow` (github.com/GPflow/GPflow/issues/2106) says GPflow is
    installed; an import of another package, or gpflow mentioned in prose, says nothing."""
    from tfdoctor.triage.recognisers import tf_log
    from triage_fixtures import observe_all

    lines = [">> import gpflow", "In [3]: from tensorflow_hub import KerasLayer", "import requests",
             "I read the gpflow docs before I import anything"]
    got = [(o.line, o.value) for o in observe_all(tf_log, lines) if o.path == "python.package"]
    assert got == [(1, ("gpflow", "unknown")), (2, ("tensorflow-hub", "unknown"))]


def test_gpu_model_claims():
    """A bare GeForce number on a line about the GPU is its model ("GPU model and memory: 5070TI",
    tensorflow/tensorflow#90291), and a model named later wins over an earlier bare "CUDA"/"GPU"."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = ["CUDA/cuDNN version: 12.8", "GPU model and memory: 5070TI", "It listens on port 5090"]
    got = [(o.line, o.value) for o in observe_all(prose, lines) if o.path == "intent.gpu"]
    assert got == [(2, "5070TI")]
    assert [o.value for o in observe_all(prose, ["my GPU is not used"]) if o.path == "intent.gpu"] == ["GPU"]
    assert [o for o in observe_all(prose, ["It listens on port 5090"]) if o.path == "intent.gpu"] == []
    named = [o.value for o in observe_all(prose, ["8x NVIDIA B200 nodes", "an RTX PRO 6000 Blackwell"])
             if o.path == "intent.gpu"]
    assert named == ["NVIDIA B200"]  # the first model named


def test_jetson_words_mean_arm_with_a_gpu():
    """'jtop reports no gpu usage' (serengil/deepface#1159): jtop runs only on Jetson, an aarch64
    board with an integrated GPU."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    got = {(o.path, o.value) for o in observe_all(prose, ["jtop reports no gpu usage."])}
    assert {("platform.machine", "aarch64"), ("intent.gpu", "Jetson")} <= got
    assert not [o for o in observe_all(prose, ["my laptop has a GPU"]) if o.path == "platform.machine"]


def test_wsl_wherever_said_wins_over_windows_and_claimed_cuda():
    """"I'm using wsl2 in windows 11." (tensorflow/tensorflow#68335) is Linux under WSL 2, not native
    Windows; "my CUDA 10.2 is not compatible" (DeepLabCut#1568) claims a toolkit, a sentence quoting
    what a release requires does not."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = ["Windows 11 laptop.", "I'm using wsl2 in windows 11."]
    got = [(o.path, o.value) for o in observe_all(prose, lines)]
    assert ("platform.system", "Windows") not in got and ("platform.is_wsl", True) in got
    claims = [o.value for o in observe_all(prose, ["it is too new: my CUDA 10.2 is not compatible with that"])
              if o.path == "toolkit.claimed_version"]
    assert claims == ["10.2"]
    quoted = observe_all(prose, ["TF 2.13 requires CUDA 11.8"])
    assert not [o for o in quoted if o.path == "toolkit.claimed_version"]


def test_conda_cudatoolkit_and_now_with_cuda_are_claims():
    """'anaconda installs cudatoolkit==11.8.0' (KosinskiLab/AlphaPulldown#296) and 'now with cuda
    12.2' (googlecolab/colabtools#4227) say which CUDA the machine has, whatever else the line says."""
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = ["clusters do not have support for cuda12 and anaconda installs cudatoolkit==11.8.0 anyways"]
    assert [o.value for o in observe_all(prose, lines) if o.path == "toolkit.claimed_version"] == ["11.8"]
    lines = ["but now with cuda 12.2 im forced to use tensorflow 2.15, instead of 2.13"]
    assert [o.value for o in observe_all(prose, lines) if o.path == "toolkit.claimed_version"] == ["12.2"]
    # a system-information list's "CUDA toolkit: 11.2.0" (tensorflow/tfjs#8509); nvidia-smi's
    # "CUDA Version: 12.2" is the driver's, never a toolkit
    for line, claimed in (("- CUDA toolkit: 11.2.0", ["11.2"]), ("- CUDA Toolkit version: 12.1", ["12.1"]),
                          ("CUDA Version: 12.2", [])):
        assert [o.value for o in observe_all(prose, [line]) if o.path == "toolkit.claimed_version"] == claimed


def test_issue_template_os_value_says_native_windows():
    """TensorFlow's issue template: "### OS platform and distribution", then the value
    (tensorflow/tensorflow#57951 "windows", #72097 "Window"); a WSL or Linux value is left to
    the recognisers that read those."""
    from tfdoctor.triage.recognisers import build_info
    from triage_fixtures import observe_all

    for value, want in (("windows", ["Windows"]), ("Window", ["Windows"]), ("Windows 11 Pro", ["Windows"]),
                        ("Win10", ["Windows"]), ("Windows 11, WSL2 Ubuntu 22.04", []), ("Ubuntu 22.04", [])):
        lines = ["### OS platform and distribution", "", value]
        got = [o.value for o in observe_all(build_info, lines) if o.path == "platform.system"]
        assert got == want, value


def test_an_empty_visibility_variable_in_words():
    """"On my system it is empty" of CUDA_VISIBLE_DEVICES (Gaius-Augustus/Tiberius#105) is the empty
    value, which hides every GPU; "is not empty" and a GPU list that is empty are not."""
    from tfdoctor.triage.recognisers import env_vars
    from triage_fixtures import observe_all

    for line, want in (
        ("The issue seems to be related to `CUDA_VISIBLE_DEVICES`. On my system it is empty:",
         [("CUDA_VISIBLE_DEVICES", "")]),
        ("CUDA_VISIBLE_DEVICES is set to an empty string by the scheduler", [("CUDA_VISIBLE_DEVICES", "")]),
        ("CUDA_VISIBLE_DEVICES is not empty", []),
        ("I set CUDA_VISIBLE_DEVICES but the GPU list is empty", []),
    ):
        assert [o.value for o in observe_all(env_vars, [line]) if o.path == "env"] == want, line


def test_what_python_printed_of_a_variable_is_its_value():
    """print("label", os.getenv("X")) prints "label value" (or "label None" when X is unset): the
    output line is the value the process had (PabloNSSZ/tfjs-to-tf#35: an import set it to -1)."""
    import json

    from click.testing import CliRunner
    from tfdoctor.cli import cli
    from tfdoctor.triage.recognisers import env_vars
    from triage_fixtures import observe_all

    ticket = [
        "import os",
        "import tensorflow as tf",
        "print(\"cuda devices before include\", os.getenv('CUDA_VISIBLE_DEVICES'))",
        "import tfjs_graph_converter.api as tfjs_api",
        "print('cuda devices after include', os.environ.get(\"CUDA_VISIBLE_DEVICES\"))",
        "print(\"path\", os.environ['LD_LIBRARY_PATH'])",
        "",
        "cuda devices before include None",
        "cuda devices after include -1",
        "Num GPUs: 0",
    ]
    assert [(o.line, o.value) for o in observe_all(env_vars, ticket) if o.path == "env"] == [
        (9, ("CUDA_VISIBLE_DEVICES", "-1"))]
    # a label nobody printed, or a value in words, is nothing
    assert [o for o in observe_all(env_vars, ["cuda devices after include -1"]) if o.path == "env"] == []
    report = json.loads(CliRunner().invoke(cli, ["triage", "--json", "-"], input="\n".join(ticket)).stdout)
    assert report["findings"][0]["id"] == "cuda-visible-devices-hides-all"


def test_prose_says_a_cpu_build_is_installed_as_a_fact():
    """What the user says is installed is a fact, not a cause (issue 20, item 3): "cpu build is
    installed" (aws/sagemaker-distribution#438) and "it was always the CPU version that is
    installed" (rstudio/keras3#1509) say tensorflow.is_cuda_build is false; a CPU fallback of a
    build system says nothing. Through triage, that fact alone makes tf-gpu-build find a CPU build
    on a ticket that wants the GPU, with no release named."""
    import json

    from click.testing import CliRunner
    from tfdoctor.cli import cli
    from tfdoctor.triage.recognisers import prose
    from triage_fixtures import observe_all

    lines = ["4. running `$conda list | grep tensorflow` will show cpu build is installed",
             "a cpu fallback was used by the build system",
             "from the installation messages, it was always the CPU version that is installed."]
    got = [(o.line, o.path, o.value) for o in observe_all(prose, lines)]
    assert [g for g in got if g[1] == "tensorflow.is_cuda_build"] == [(1, "tensorflow.is_cuda_build", False)]
    assert [(o.path, o.value) for o in observe_all(prose, lines[1:2])] == []
    ticket = "My GPU is never used.\n" + lines[0] + "\n"
    report = json.loads(CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket).stdout)
    assert report["verdict"]["root_cause"] == "tf-cpu-only-build"
    assert "tensorflow.version" in report["facts"]["unknown"]
    assert report["facts"]["tensorflow"]["is_cuda_build"] is False


def test_the_dlls_tensorflows_loader_opens_say_native_windows():
    """TensorFlow's DSO loader names DLLs only on Windows: "Could not load dynamic library
    'cudart64_110.dll'" and "Successfully opened dynamic library nvcuda.dll" (tensorflow/tensorflow
    #45028, TF 2.4 on an RTX 3070); a Linux soname or a DLL in the user's words is not that."""
    from tfdoctor.triage.recognisers import tf_log
    from triage_fixtures import observe_all

    def system(line: str) -> list[object]:
        return [o.value for o in observe_all(tf_log, [line]) if o.path == "platform.system"]

    prefix = "2020-11-20 11:38:38.097262: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] "
    assert system(prefix + "Successfully opened dynamic library cudart64_110.dll") == ["Windows"]
    assert system(prefix + "Successfully opened dynamic library nvcuda.dll") == ["Windows"]
    assert system(prefix.replace(":49] I", ":60] W") + "Could not load dynamic library 'cudnn64_8.dll'; "
                  "dlerror: cudnn64_8.dll not found") == ["Windows"]
    assert system(prefix + "Successfully opened dynamic library libcudart.so.11.0") == []
    assert system("I copied cudnn64_8.dll into the bin folder") == []


def test_a_nightly_is_read_but_its_build_is_not_assumed_from_the_tables():
    """"TF-Nightly 2.5.0.dev20201027" (tensorflow/tensorflow#44381) is the release in hand; its build
    is not 2.5.0's tested configuration (October 2020's nightlies were built for CUDA 11.0, 2.5.0
    for 11.2), so nothing of it is assumed, and no native-Windows warning about an unknown release."""
    import json

    from click.testing import CliRunner
    from tfdoctor.cli import cli
    from tfdoctor.triage.recognisers import prose

    for said, want in (("- TF-Nightly 2.5.0.dev20201027", "2.5.0.dev20201027"),
                       ("pip install tf-nightly-gpu==2.4.0.dev20200819", "2.4.0.dev20200819"),
                       ("tf_nightly 2.16.0-dev20231201", "2.16.0-dev20231201")):
        got = [o.value for o in prose.recognise([said]) if o.path == "tensorflow.version"]
        assert got == [want], said
    ticket = ("**System information**\n- Windows 10\n- TF-Nightly 2.5.0.dev20201027\n- Python version: 3.8\n"
              "- GPU model and memory: Quadro M2000M\n")
    report = json.loads(CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket).stdout)
    tf = report["facts"]["tensorflow"]
    assert tf["version"] == "2.5.0.dev20201027" and tf["cuda_version"] is None
    assert "tensorflow.cuda_version" not in report["facts"]["assumed"]
    assert not [f for f in report["findings"] if f["id"].startswith("tf-windows-native")]
