"""Environment reports (torch collect_env, tf_env_collect.sh) and environment variables, from real text."""

from __future__ import annotations

from tfdoctor.triage.recognisers import collect_env, env_vars, tf_env_collect
from triage_fixtures import observe_all, observed


def test_collect_env_on_wsl2():
    """Its platform line reveals WSL 2 and glibc; "CUDA runtime" is nvcc's; the GPU line is nvidia-smi -L."""
    assert observed(collect_env, "collect_env/vllm9293_wsl2.txt") == [
        ("platform.machine", "x86_64"),
        ("platform.distro", "Ubuntu 22.04.2 LTS"),
        ("platform.glibc", "2.35"),
        ("python.version", "3.12.3"),
        ("platform.system", "Linux"),
        ("platform.release", "5.15.153.1-microsoft-standard-WSL2"),
        ("platform.machine", "x86_64"),
        ("platform.glibc", "2.35"),
        ("platform.is_wsl", True),
        ("platform.wsl_version", 2),
        ("toolkit.nvcc_version", "12.4.131"),
        ("driver.gpu", {"index": 0, "name": "NVIDIA GeForce RTX 4070 Laptop GPU"}),
        ("driver.device_count", 1),
        ("driver.driver_version", "551.88"),
        ("platform.cpu_model", "13th Gen Intel(R) Core(TM) i9-13950HX"),
    ]


def test_collect_env_on_windows_with_conda_rows():
    """[pip3] and [conda] rows are packages; a [conda] row marks conda; "Could not collect" is nothing."""
    obs = observed(collect_env, "collect_env/pytorch85773_windows_conda.txt")
    assert obs[:6] == [
        ("platform.system", "Windows"),
        ("python.version", "3.10.4"),
        ("platform.system", "Windows"),
        ("toolkit.nvcc_version", "11.7.99"),
        ("driver.gpu", {"index": 0, "name": "NVIDIA GeForce RTX 3090"}),
        ("driver.device_count", 1),
    ]
    assert ("python.package", ("cudatoolkit", "11.3.1")) in obs
    assert ("python.package", ("torch", "1.12.1")) in obs
    assert ("python.conda", True) in obs
    assert not [path for path, _ in obs if path == "library.file"]


def test_collect_env_cudnn_files():
    """The "Probably one of the following" list is cuDNN files on disk."""
    obs = observed(collect_env, "collect_env/doctr81_cudnn_files.txt")
    assert [value for path, value in obs if path == "library.file"] == [
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.0.5",
        "/usr/lib/x86_64-linux-gnu/libcudnn_adv_infer.so.8.0.5",
        "/usr/lib/x86_64-linux-gnu/libcudnn_adv_train.so.8.0.5",
    ]
    assert ("driver.driver_version", "450.102.04") in obs


def test_lscpu_flags_kept_to_those_tensorflow_checks():
    """Of lscpu's hundred flags only the ones TF's CPU feature guard cares about are kept."""
    assert observed(collect_env, "collect_env/fastdeploy4044_flags.txt") == [
        (
            "platform.cpu_flags",
            (
                "fma",
                "sse4_1",
                "sse4_2",
                "avx",
                "f16c",
                "avx2",
                "avx512f",
                "avx512dq",
                "avx512cd",
                "avx512bw",
                "avx512vl",
                "avx512_vnni",
            ),
        ),  # fmt: skip
        ("python.package", ("aiozmq", "1.0.0")),
        ("python.package", ("flake8", "7.2.0")),
        ("python.package", ("numpy", "1.26.4")),
        ("python.package", ("nvidia-cublas-cu11", "11.11.3.6")),
    ]


def test_tf_env_collect_reads_only_what_others_miss():
    """The grep'd pips, env lines, CUDA files and version tuple; "is unset" and LD_DEBUG noise say nothing."""
    assert observed(tf_env_collect, "tf_env_collect/dev_machine_tf_cuda.txt") == [
        ("python.package", ("numpy", "2.4.6")),
        ("python.package", ("protobuf", "7.36.2")),
        ("python.package", ("tensorflow", "2.21.0")),
        ("tensorflow.distribution", ("tensorflow", "2.21.0")),
        ("tensorflow.version", "2.21.0"),
        ("env", ("LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib64")),
        ("library.file", "/usr/local/cuda-13.0/lib/libcudart_static.a"),
        ("library.file", "/usr/local/cuda-13.0/lib/libcudart.so.13"),
        ("python.version", "3.11.7"),
    ]


def test_shell_session_exports_echo_and_env_dump():
    """export, echo's printed value, and an env dump (where PATH is the real value); empty echo is nothing."""
    assert observed(env_vars, "env_vars/dev_machine_session.txt") == [
        ("env", ("CUDA_VISIBLE_DEVICES", "-1")),
        ("env", ("CUDA_VISIBLE_DEVICES", "-1")),
        ("env", ("CUDA_VISIBLE_DEVICES", "-1")),
        (
            "env",
            (
                "PATH",
                "/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:"
                "/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            ),
        ),
        ("env", ("TF_CPP_MIN_LOG_LEVEL", "2")),
    ]


def test_exports_that_refer_to_other_variables_are_skipped():
    """`export X=$Y...` is not the value the process saw; a PATH export is no env dump."""
    assert observed(env_vars, "env_vars/tf5141_exports.txt") == [("env", ("CUDA_HOME", "/usr/local/cuda"))]
    assert observed(env_vars, "env_vars/tf7602_prose.txt") == []


def test_command_prefix_python_and_windows_forms():
    """`X=1 python ...`, os.environ[...] = ..., setx and PowerShell's $env: all set a variable; a
    visibility variable stated in a sentence is a fact the user gives (issue 20: judged per element)."""
    lines = [
        "CUDA_VISIBLE_DEVICES=1 python train.py",
        "os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'",
        'setx CUDA_PATH "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.2"',
        '$env:TF_ENABLE_ONEDNN_OPTS="0"',
        "I set CUDA_VISIBLE_DEVICES=0 before running",
        "HOME=/root",
    ]
    assert [(o.line, o.value) for o in observe_all(env_vars, lines)] == [
        (1, ("CUDA_VISIBLE_DEVICES", "1")),
        (2, ("TF_CPP_MIN_LOG_LEVEL", "3")),
        (3, ("CUDA_PATH", "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.2")),
        (4, ("TF_ENABLE_ONEDNN_OPTS", "0")),
        (5, ("CUDA_VISIBLE_DEVICES", "0")),
    ]
