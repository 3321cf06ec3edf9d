"""probe_target on real temporary venvs holding fake TensorFlow installs (dist-info + files)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from helpers import need
from target_fakes import build_elf_with_runpath, data, make_venv
from tfdoctor.host import Host
from tfdoctor.probes.target import FRAMEWORK, probe_target

CPU_INFO = data("build_info_2.21.0_cpu.py.txt")
CUDA_INFO = data("build_info_2.21.0_cuda.py.txt")
BUILD_INFO_PATH = "tensorflow/python/platform/build_info.py"
TF215_REQUIRES = [
    "numpy<2.0.0,>=1.23.5",
    "protobuf!=4.21.0,<5.0.0dev,>=3.20.3",
    'nvidia-cudnn-cu12==8.9.4.25; extra == "and-cuda"',
]


def probe(python: str, **env: str):
    issues = []
    python_facts, tf = probe_target(Host(python=python, env={**os.environ, **env}), issues)
    assert issues == []
    assert python_facts.error is None
    return python_facts, tf


def test_tensorflow_and_tensorflow_cpu_together(fake_venv):
    """Both installed over one tensorflow/ dir: both listed; RECORD hashes name whose files won."""
    fake_venv.add_dist("tensorflow", "2.21.0", record={BUILD_INFO_PATH: CUDA_INFO.encode()})
    fake_venv.add_dist("tensorflow-cpu", "2.21.0", record={BUILD_INFO_PATH: CPU_INFO.encode()})
    fake_venv.add_tensorflow(build_info=CPU_INFO)  # tensorflow-cpu was installed last
    python, tf = probe(fake_venv.python)
    assert [d.name for d in tf.distributions] == ["tensorflow", "tensorflow-cpu"]
    assert tf.files_from == "tensorflow-cpu"
    assert tf.is_cuda_build is False
    assert python.packages["tensorflow"] == python.packages["tensorflow-cpu"] == "2.21.0"


def test_leftover_tensorflow_gpu(fake_venv):
    """A leftover tensorflow-gpu beside tensorflow: both listed; no RECORD match, no owner named."""
    fake_venv.add_dist("tensorflow", "2.15.0", requires=TF215_REQUIRES)
    fake_venv.add_dist("tensorflow-gpu", "2.12.0", requires=["numpy<1.24,>=1.22"])
    fake_venv.add_tensorflow(build_info=CUDA_INFO)
    _, tf = probe(fake_venv.python)
    assert [(d.name, d.version) for d in tf.distributions] == [
        ("tensorflow", "2.15.0"),
        ("tensorflow-gpu", "2.12.0"),
    ]
    assert tf.files_from is None
    assert tf.version == "2.15.0"
    assert tf.requirements["numpy"] == "<2.0.0,>=1.23.5"


def test_numpy_2_beside_tf_2_15(fake_venv):
    """numpy 2 installed next to TF 2.15 whose metadata caps numpy < 2: both facts are reported."""
    fake_venv.add_dist("tensorflow", "2.15.0", requires=TF215_REQUIRES)
    fake_venv.add_dist("numpy", "2.1.3")
    fake_venv.add_dist("nvidia-cudnn-cu12", "9.1.0.70")
    fake_venv.add_dist("requests", "2.32.0")  # not watched: must not appear
    fake_venv.add_tensorflow(build_info=CUDA_INFO)
    python, tf = probe(fake_venv.python)
    assert python.packages == {
        "numpy": "2.1.3",
        "nvidia-cudnn-cu12": "9.1.0.70",
        "tensorflow": "2.15.0",
    }
    assert tf.requirements["numpy"] == "<2.0.0,>=1.23.5"
    assert tf.and_cuda_pins == {"nvidia-cudnn-cu12": "==8.9.4.25"}


def test_metadata_without_package_dir(fake_venv):
    """A dist-info whose tensorflow/ directory is gone: distribution listed, build facts unknown."""
    fake_venv.add_dist("tensorflow", "2.21.0")
    _, tf = probe(fake_venv.python)
    assert tf.package_dir is None
    assert tf.version == "2.21.0"
    assert tf.is_cuda_build is None and tf.sonames == {} and tf.runpath == ()


def test_package_dir_without_metadata_reads_build_files(fake_venv):
    """A tensorflow/ without dist-info (copied, built from source): build facts from its files."""
    pkg = fake_venv.add_tensorflow(
        cuda_config=data("cuda_config_2.16.1.h"),
        extra={"include/third_party/gpus/cudnn/cudnn_version.h": data("cudnn_version_8.9.6.h")},
    )
    build_elf_with_runpath(pkg, FRAMEWORK, "$ORIGIN/../nvidia/cuda_runtime/lib:$ORIGIN/../tensorrt")
    _, tf = probe(fake_venv.python)
    assert tf.distributions == () and tf.version is None
    assert tf.package_dir == str(pkg)
    assert tf.is_cuda_build is True
    assert tf.cuda_version == "12.3"
    assert tf.cudnn_version == "8.9.6"
    assert tf.sonames["cudnn"] == "libcudnn.so.8"
    assert tf.compute_capabilities[-1] == "compute_90"
    assert tf.runpath == (
        str(fake_venv.site / "nvidia" / "cuda_runtime" / "lib"),
        str(fake_venv.site / "tensorrt"),
    )
    assert tf.build_info_source == "cuda_config.h, cudnn_version.h"


def test_tf_2_22_cuda_version_from_cuda_config(fake_venv):
    """TF 2.22 build_info has no cuda_version: it comes from the cuda_config.h it still ships."""
    fake_venv.add_dist("tensorflow", "2.22.0rc0")
    fake_venv.add_tensorflow(
        build_info=data("build_info_2.22.0rc0.py.txt"), cuda_config=data("cuda_config_2.22.0rc0.h")
    )
    _, tf = probe(fake_venv.python)
    assert tf.is_cuda_build is True
    assert tf.cuda_version == "12.5.1"
    assert tf.cudnn_version == "9"
    assert tf.compute_capabilities == ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90")


def test_no_tensorflow(fake_venv):
    """No TF at all is a fact (tensorflow None), not an error."""
    fake_venv.add_dist("numpy", "1.26.4")
    python, tf = probe(fake_venv.python)
    assert tf is None
    assert python.packages == {"numpy": "1.26.4"}
    assert python.site_packages == (str(fake_venv.site),)


def test_static_probe_never_imports_tensorflow(fake_venv, tmp_path):
    """The quick probe finds the package without importing it (an import would leave a marker)."""
    marker = tmp_path / "imported"
    fake_venv.add_dist("tensorflow", "2.21.0")
    fake_venv.add_tensorflow(extra={"__init__.py": f"open({str(marker)!r}, 'w').close()\n"})
    _, tf = probe(fake_venv.python)
    assert tf.package_dir is not None
    assert not marker.exists()


def test_pythonpath_is_honoured_despite_isolated_mode(fake_venv, tmp_path):
    """The child runs with -I, yet a TF only on PYTHONPATH is found, as a plain run finds it."""
    extra = tmp_path / "extra"
    fake_venv.add_dist("tf-nightly", "2.23.0.dev20261026", site=extra)
    fake_venv.add_tensorflow(site=extra, build_info=CPU_INFO)
    _, tf = probe(fake_venv.python, PYTHONPATH=str(extra))
    assert [d.name for d in tf.distributions] == ["tf-nightly"]
    assert tf.package_dir == str(extra / "tensorflow")


def test_user_site_of_a_plain_interpreter(tmp_path):
    """`pip install --user` TF is seen by a non-venv python and hidden again by PYTHONNOUSERSITE."""
    base = getattr(sys, "_base_executable", sys.executable)  # a base interpreter even in a venv
    userbase = tmp_path / "userbase"
    user_site = (
        userbase / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    )
    make_venv(tmp_path / "unused").add_dist("tensorflow", "2.15.0", site=user_site)
    _, tf = probe(base, PYTHONUSERBASE=str(userbase))
    assert tf is not None and tf.distributions[0].location == str(user_site)
    _, hidden = probe(base, PYTHONUSERBASE=str(userbase), PYTHONNOUSERSITE="1")
    assert hidden is None or all(d.location != str(user_site) for d in hidden.distributions)


def test_egg_info_and_unreadable_metadata(fake_venv):
    """egg-info (PKG-INFO) installs count; a dist-info without METADATA keeps its dir's version."""
    egg = fake_venv.site / "h5py-3.10.0-py3.11.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.2\nName: h5py\nVersion: 3.10.0\n")
    (fake_venv.site / "ml_dtypes-0.3.1.dist-info").mkdir()
    (fake_venv.site / "keras.egg-info").mkdir()  # a develop install with its PKG-INFO gone
    python, _ = probe(fake_venv.python)
    assert python.packages == {"h5py": "3.10.0", "keras": "unknown", "ml-dtypes": "0.3.1"}


def test_conda_prefix_detected(fake_venv):
    """A conda-meta directory in the prefix marks a conda environment."""
    (Path(fake_venv.python).parent.parent / "conda-meta").mkdir()
    python, _ = probe(fake_venv.python)
    assert python.is_conda is True and python.is_venv is True


def test_python_3_8_target(tmp_path):
    """The child is written for 3.8: an old target interpreter still reports its packages."""
    py38 = Path.home() / ".pyenv" / "versions" / "3.8.18" / "bin" / "python3.8"
    need(py38.exists(), "no Python 3.8 (pyenv) on this machine")
    venv = make_venv(tmp_path / "py38", python=str(py38))
    venv.add_dist(
        "tensorflow", "2.13.1", requires=['numpy<=1.24.3,>=1.22; python_version >= "3.8"']
    )
    venv.add_tensorflow(build_info=CPU_INFO)
    python, tf = probe(venv.python)
    assert python.version.startswith("3.8.")
    assert tf.requirements == {"numpy": "<=1.24.3,>=1.22"}


def test_tensorrt_wheels_reach_the_tf_trt_judgement(fake_venv):
    """A live run's installed TensorRT is pip's wheel, read by the real target probe: NVIDIA's
    per-CUDA libs wheel beside TensorFlow 2.10, whose wheel dlopens libnvinfer.so.7 (the release
    table), is another major, and the tensorrt check says so."""
    from dataclasses import replace

    from helpers import healthy, judge
    from tfdoctor import stack

    fake_venv.add_dist("tensorflow", "2.10.1", record={BUILD_INFO_PATH: CUDA_INFO.encode()})
    fake_venv.add_tensorflow(build_info=CUDA_INFO)
    fake_venv.add_dist("tensorrt-cu12-libs", "10.0.1")
    python, tf = probe(fake_venv.python)
    assert python.packages["tensorrt-cu12-libs"] == "10.0.1"
    facts = replace(healthy(), python=python, tensorflow=tf)
    fit = stack.tensorrt(facts)
    assert fit is not None and fit.fits is False and fit.have_from.startswith("tensorrt-cu12-libs")
    assert [f.id for f in judge(facts).findings if f.check == "tensorrt"] == ["tensorrt-wrong-version"]
