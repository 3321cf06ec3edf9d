"""The pure parsers of TF's shipped build files, on recorded text (tests/probes_target/data)."""

from __future__ import annotations

import pytest
from target_fakes import data
from tfdoctor.probes import tfbuild

PY311 = {
    "implementation_name": "cpython",
    "implementation_version": "3.11.7",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_release": "6.1.0",
    "platform_system": "Linux",
    "platform_version": "#1 SMP",
    "python_full_version": "3.11.7",
    "platform_python_implementation": "CPython",
    "python_version": "3.11",
    "sys_platform": "linux",
}


def test_build_info_of_cpu_wheel_has_no_cuda_keys():
    """tensorflow-cpu 2.21's build_info.py says CPU and nothing about CUDA: no invented versions."""
    info = tfbuild.parse_build_info(data("build_info_2.21.0_cpu.py.txt"))
    assert info == {"is_cuda_build": False, "is_rocm_build": False, "is_tensorrt_build": False}


def test_build_info_of_cuda_wheel_read_without_executing():
    """The OrderedDict literal of a CUDA wheel is read with ast: CUDA, cuDNN and the exact caps."""
    info = tfbuild.parse_build_info(data("build_info_2.21.0_cuda.py.txt"))
    assert info is not None
    assert info["cuda_version"] == "12.5.1"
    assert info["cudnn_version"] == "9"
    assert info["is_cuda_build"] is True
    assert tfbuild.compute_capabilities(info["cuda_compute_capabilities"]) == (
        "sm_60",
        "sm_70",
        "sm_80",
        "sm_89",
        "compute_90",
    )


def test_build_info_of_2_22_has_only_flags():
    """TF 2.22 dropped cuda_version from build_info: the parser must not fail, just lack the key."""
    info = tfbuild.parse_build_info(data("build_info_2.22.0rc0.py.txt"))
    assert info == {"is_cuda_build": True, "is_rocm_build": False, "is_tensorrt_build": False}


def test_build_info_old_module_constants_renamed():
    """TF <= 2.3 wrote module-level constants; cuda_version_number maps to cuda_version."""
    info = tfbuild.parse_build_info(data("build_info_2.0_windows.py.txt"))
    assert info is not None
    assert info["cuda_version"] == "10.0"
    assert info["cudnn_version"] == "7"
    assert info["cudart_dll_name"] == "cudart64_100.dll"


@pytest.mark.parametrize("text", ["def broken(:\n", "x = 1\n", "build_info = make()\n", ""])
def test_build_info_garbage_is_none(text):
    """A corrupt or foreign build_info.py yields None or skips what it cannot read, never raises."""
    info = tfbuild.parse_build_info(text)
    assert info in (None, {"x": 1})


def test_build_info_code_is_never_run(tmp_path):
    """A build_info.py with side effects must not execute: ast only (a marker file proves it)."""
    marker = tmp_path / "ran"
    text = f"open({str(marker)!r}, 'w').close()\nbuild_info = {{'is_cuda_build': True}}\n"
    assert tfbuild.parse_build_info(text) == {"is_cuda_build": True}
    assert not marker.exists()


CUDA_CONFIGS = {
    "2.14.0": (
        "11.8",
        ("sm_35", "sm_50", "sm_60", "sm_70", "sm_75", "compute_80"),
        {
            "cudart": "libcudart.so.11.0",
            "cublas": "libcublas.so.11",
            "cublasLt": "libcublasLt.so.11",
            "cufft": "libcufft.so.10",
            "curand": "libcurand.so.10",
            "cusolver": "libcusolver.so.11",
            "cusparse": "libcusparse.so.11",
            "cupti": "libcupti.so.11.8",
            "cudnn": "libcudnn.so.8",
        },
    ),
    "2.15.0": (
        "12.2",
        ("sm_50", "sm_60", "sm_70", "sm_75", "compute_80"),
        {
            "cudart": "libcudart.so.12",
            "cublas": "libcublas.so.12",
            "cublasLt": "libcublasLt.so.12",
            "cufft": "libcufft.so.11",
            "curand": "libcurand.so.10",
            "cusolver": "libcusolver.so.11",
            "cusparse": "libcusparse.so.12",
            "cupti": "libcupti.so.12",
            "cudnn": "libcudnn.so.8",
        },
    ),
    "2.16.1": ("12.3", ("sm_50", "sm_60", "sm_70", "sm_80", "compute_90"), None),
    "2.21.0": (
        "12.5.1",
        ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90"),
        {
            "cudart": "libcudart.so.12",
            "cublas": "libcublas.so.12",
            "cublasLt": "libcublasLt.so.12",
            "cufft": "libcufft.so.11",
            "curand": "libcurand.so.10",
            "cusolver": "libcusolver.so.11",
            "cusparse": "libcusparse.so.12",
            "cupti": "libcupti.so.12",
            "cudnn": "libcudnn.so.9",
        },
    ),
    "2.22.0rc0": ("12.5.1", ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90"), None),
}


@pytest.mark.parametrize("release", sorted(CUDA_CONFIGS))
def test_cuda_config_versions_caps_and_sonames(release):
    """cuda_config.h gives the CUDA version, the caps and the sonames TF's DSO loader opens."""
    cuda, caps, expected_sonames = CUDA_CONFIGS[release]
    defines = tfbuild.parse_defines(data(f"cuda_config_{release}.h"))
    assert defines["TF_CUDA_VERSION"] == cuda
    assert tfbuild.compute_capabilities(defines["TF_CUDA_COMPUTE_CAPABILITIES"]) == caps
    if expected_sonames:
        assert tfbuild.sonames(defines) == expected_sonames


def test_cuda_config_of_cpu_wheel_has_no_sonames():
    """A CPU wheel ships cuda_config.h with empty strings: no sonames, no capabilities."""
    defines = tfbuild.parse_defines(data("cuda_config_2.21.0_cpu.h"))
    assert defines["TF_CUDA_VERSION"] == ""
    assert tfbuild.sonames(defines) == {}
    assert tfbuild.compute_capabilities(defines["TF_CUDA_COMPUTE_CAPABILITIES"]) == ()


def test_nccl_and_nvshmem_configs_complete_the_sonames():
    """NCCL and NVSHMEM sonames come from their own config headers (#define and constexpr forms)."""
    defines = tfbuild.parse_defines(data("cuda_config_2.21.0.h"))
    defines.update(tfbuild.parse_defines(data("nccl_config_2.21.0.h")))
    defines.update(tfbuild.parse_defines(data("nvshmem_config_2.21.0.h")))
    names = tfbuild.sonames(defines)
    assert names["nccl"] == "libnccl.so.2"
    assert names["nvshmem"] == "libnvshmem_host.so.3"


@pytest.mark.parametrize(
    "value, expected",
    [
        (["sm_35", "sm_50", "compute_80"], ("sm_35", "sm_50", "compute_80")),
        ("sm_60,compute_90", ("sm_60", "compute_90")),
        ('CudaVersion("3.5"),CudaVersion("5.2")', ("sm_35", "compute_52")),
        (["6.0", "7.0"], ("sm_60", "compute_70")),
        ("", ()),
        (None, ()),
        (3, ()),
    ],
)
def test_compute_capability_forms(value, expected):
    """Every form TF used (lists, strings, bare numbers, TF 1.x CudaVersion) normalises alike."""
    assert tfbuild.compute_capabilities(value) == expected


@pytest.mark.parametrize(
    "name, version",
    [
        ("cudnn_version_9.3.0.h", "9.3.0"),
        ("cudnn_version_8.9.6.h", "8.9.6"),
        ("nccl_2.27.7.h", None),
        ("cuda_config_2.21.0.h", None),
    ],
)
def test_cudnn_header_version(name, version):
    """The exact compile-time cuDNN (9.3.0, not just "9") from a bundled cudnn_version.h."""
    assert tfbuild.cudnn_header_version(data(name)) == version


def test_nccl_header_version():
    """The compile-time NCCL from the bundled nccl.h; a header without it gives None."""
    assert tfbuild.nccl_header_version(data("nccl_2.27.7.h")) == "2.27.7"
    assert tfbuild.nccl_header_version(data("cudnn_version_9.3.0.h")) is None


def test_requirements_and_and_cuda_pins_of_2_21():
    """Base requirements and [and-cuda] pins are separated; the gcs-filesystem extra is ignored."""
    lines = data("requires_dist_tensorflow_2.21.0.txt").splitlines()
    requirements, pins = tfbuild.parse_requirements(lines, PY311)
    assert requirements["numpy"] == ">=1.26.0"
    assert requirements["protobuf"] == "<8.0.0,>=6.31.1"
    assert requirements["keras"] == ">=3.12.0"
    assert requirements["ml-dtypes"] == "<1.0.0,>=0.5.1"
    assert requirements["h5py"] == "<3.15.0,>=3.11.0"
    assert requirements["typing-extensions"] == ">=3.6.6"
    assert "tensorflow-io-gcs-filesystem" not in requirements
    assert "tensorflow-io-gcs-filesystem" not in pins
    assert pins["nvidia-cudnn-cu12"] == "<10.0,>=9.3.0.75"
    assert len(pins) == 12 and all(name.startswith("nvidia-") for name in pins)


def test_requirement_markers_use_the_target_python():
    """TF 2.16.1 pins numpy by Python version: the TARGET interpreter's version picks the line."""
    lines = [
        'numpy<2.0.0,>=1.23.5; python_version <= "3.11"',
        'numpy<2.0.0,>=1.26.0; python_version >= "3.12"',
        'tensorflow-intel==2.16.1; platform_system == "Windows"',
        "not a requirement !!",
    ]
    assert tfbuild.parse_requirements(lines, PY311)[0] == {"numpy": "<2.0.0,>=1.23.5"}
    py312_windows = dict(PY311, python_version="3.12", platform_system="Windows")
    assert tfbuild.parse_requirements(lines, py312_windows)[0] == {
        "numpy": "<2.0.0,>=1.26.0",
        "tensorflow-intel": "==2.16.1",
    }


def test_requirements_with_uncomparable_marker_are_skipped():
    """A marker packaging cannot evaluate (`~=` on a non-version) is skipped, not an exception."""
    assert tfbuild.parse_requirements(['numpy; os_name ~= "posix"'], PY311) == ({}, {})
