"""The compat lookups the checks call, on real cases from shared/research/compat.md."""

from __future__ import annotations

import datetime

import pytest
from tfdoctor import compat


def test_tf_221_tested_config_and_wheel_facts():
    """TF 2.21 on an H100 box: expect CUDA 12.5, cuDNN 9.3 and the 2.21 RUNPATH gap."""
    release = compat.tf_release("2.21.0")
    assert (release.version, release.cuda, release.cudnn) == ("2.21", "12.5", "9.3")
    assert (release.python_min, release.python_max, release.glibc_min) == ("3.10", "3.13", "2.27")
    assert release.compute_capabilities == ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90")
    assert "cusolver" not in release.runpath_nvidia and "cudnn" in release.runpath_nvidia
    assert release.sonames["cusolver"] == "libcusolver.so.11"
    assert release.sonames["cudnn"] == "libcudnn.so.9"
    assert release.and_cuda["nvidia-cudnn-cu12"] == "<10.0,>=9.3.0.75"
    assert release.requires["protobuf"] == "<8.0.0,>=6.31.1"
    assert release.windows_gpu is False and release.verified


def test_any_version_string_maps_to_its_minor_or_to_none():
    """Patch, rc and dev versions resolve by major.minor; a newer nightly is unknown."""
    assert compat.tf_release("2.16.1").cudnn == "8.9"
    assert compat.tf_release("2.22.0rc0").cudnn_compiled == "9.10.0"
    assert compat.tf_release("2.23.0.dev20261026") is None
    assert compat.tf_release("not-a-version") is None
    # 2.22 exists only as 2.22.0rc0: fixes must never install a pre-release.
    assert compat.tf_release("2.22").prerelease and not compat.tf_release("2.21").prerelease
    assert compat.newest_tf() == "2.21"
    versions = compat.known_tf_versions()
    assert versions[0] == "2.0" and "2.10" in versions and len(versions) == 23


def test_unverified_fields_are_named():
    """TF 2.17's CC list was derived from release notes, so checks must be able to soften on it."""
    release = compat.tf_release("2.17.0")
    assert not release.verified and "compute_capabilities" in release.unverified
    assert "RN-2.17.0" in release.reason


def test_numpy2_boundary_and_tf_keras_pins():
    """numpy 2 is first allowed by 2.18; tf-keras must match TF's minor from 2.16 on."""
    assert compat.tf_release("2.17").requires["numpy"].startswith("<2.0.0")
    assert compat.tf_release("2.18").requires["numpy"] == "<2.1.0,>=1.26.0"
    assert compat.tf_release("2.16").tf_keras == "~=2.16.0"
    assert compat.tf_release("2.15").tf_keras is None


def test_native_windows_gpu_ends_at_210():
    """DOCS-WIN: GPU on native Windows only up to 2.10."""
    assert compat.tf_release("2.10").windows_gpu is True
    assert compat.tf_release("2.11").windows_gpu is False


@pytest.mark.parametrize(
    ("cuda", "platform", "full", "floor"),
    [
        ("12.5", "linux", "555.42.02", "525.60.13"),
        ("12.5.1", "linux", "555.42.06", "525.60.13"),
        ("12.5", "windows", "555.85", "527.41"),
        ("11.8", "linux", "520.61.05", "450.80.02"),
        ("13.4", "linux", None, "580.65.06"),
        ("10.1.243", "linux", "418.39", None),
    ],
)
def test_min_driver_full_and_family_floor(cuda, platform, full, floor):
    """Table 3 gives the toolkit's own driver, Table 2 the family floor; both are reported."""
    requirement = compat.min_driver(cuda, platform)
    assert (requirement.full, requirement.minor_compat) == (full, floor)
    assert requirement.source.startswith("https://docs.nvidia.com/")


def test_min_driver_unknown():
    """A CUDA major the tables do not know gives None, not a guess."""
    assert compat.min_driver("14.0") is None
    assert compat.min_driver("13.0", "windows") is None
    assert compat.driver_cuda_ok("600.10", "14.0") is None


@pytest.mark.parametrize(
    ("driver", "cuda", "ok"),
    [
        ("470.82.01", "12.5", False),
        ("535.104.05", "12.5", True),
        ("525.60.13", "12.5.1", True),
        ("525.60.12", "12.5", False),
        ("580.65.06", "13.2", True),
        ("575.57.08", "13.0", False),
        ("450.51.06", "11.0", True),
        ("440.33", "10.2", True),
        ("418.39", "10.2", False),
        ("580.9", "11.8", True),
    ],
)
def test_driver_cuda_ok_counts_minor_version_compatibility(driver, cuda, ok):
    """535 runs CUDA 12.5 (floor 525.60.13), 470 does not; before 11 the toolkit driver counts."""
    assert compat.driver_cuda_ok(driver, cuda) is ok


def test_driver_versions_compare_per_component():
    """580.65.06 is newer than 580.9: a string comparison would get this wrong."""
    assert compat.driver_cuda_ok("580.65.06", "13.0") is True
    assert compat.driver_cuda_ok("580.9", "13.0") is False


def test_cudnn_release_rows():
    """cuDNN 9.17 dropped Maxwell/Pascal/Volta; 9.10.2 still has them and CUDA 11."""
    latest = compat.cudnn_release("9.17.0")
    assert (latest.min_cc, latest.max_cc, latest.cuda_majors) == ("7.5", "12.0", (13, 12))
    assert latest.driver_floor[13] == "580.65.06"
    assert compat.cudnn_release("9.10.2.21").min_cc == "5.0"
    assert compat.cudnn_release("9.10.2.21").verified is True
    assert compat.cudnn_release("8.9.6").version == "8.9.5"
    assert compat.cudnn_release("7.4.2") is None


def test_cudnn_release_in_an_undocumented_gap_is_unverified():
    """9.13 lies between documented rows (the CC drop is unconfirmed there): the answer says so."""
    gap = compat.cudnn_release("9.13.0")
    assert gap.version == "9.10.2" and gap.verified is False
    assert compat.cudnn_release("9.27.0.42").verified is False


@pytest.mark.parametrize(
    ("name", "key", "cc", "arch"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm5", "9.0", "Hopper"),
        ("NVIDIA H100 PCIe", "h100-pcie", "9.0", "Hopper"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090", "8.9", "Ada Lovelace"),
        ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb", "8.0", "Ampere"),
        ("Tesla T4", "t4", "7.5", "Turing"),
        ("Tesla K80", "k80", "3.7", "Kepler"),
        ("NVIDIA B200", "b200", "10.0", "Blackwell"),
    ],
)
def test_gpu_model_matches_nvml_names(name, key, cc, arch):
    """NVML names map to one model with its CC and architecture."""
    model = compat.gpu_model(name)
    assert (model.key, model.compute_capability, model.architecture) == (key, cc, arch)


def test_gpu_model_peaks_and_unknown_names():
    """Peaks feed '41 % of expected'; unknown or ambiguous names give None, not a neighbour."""
    h100 = compat.gpu_model("NVIDIA H100 80GB HBM3")
    assert (h100.bf16_tensor_tflops, h100.bandwidth_gbs, h100.tensor_cores) == (989.5, 3350.0, True)
    assert compat.gpu_model("Tesla V100-SXM2-16GB").bf16_tensor_tflops is None
    assert compat.gpu_model("Tesla P100-PCIE-16GB").tensor_cores is False
    assert compat.gpu_model("NVIDIA A10G") is None
    assert compat.gpu_model("NVIDIA GeForce RTX 3060 Ti") is None
    assert compat.gpu_model("NVIDIA A100") is None


def test_architecture_and_tensor_cores():
    """Tensor cores from Volta (7.0); unknown CCs are not guessed."""
    assert compat.architecture("12.0") == "Blackwell"
    assert compat.has_tensor_cores("7.0") and not compat.has_tensor_cores("6.1")
    assert compat.architecture("4.0") is None and not compat.has_tensor_cores("4.0")
    assert compat.architecture("garbage") is None


@pytest.mark.parametrize(
    ("tf", "cc", "verdict"),
    [
        ("2.18", "10.0", "ptx"),
        ("2.21", "12.0", "ptx"),
        ("2.21", "3.7", "none"),
        ("2.18", "5.2", "none"),
        ("2.21", "8.9", "sass"),
        ("2.21", "8.6", "sass"),
        ("2.18", "6.0", "sass"),
        ("2.21", "9.0", "sass"),
        ("2.14", "9.0", "ptx"),
        ("2.15", "3.5", "none"),
    ],
)
def test_has_kernels_for(tf, cc, verdict):
    """TF's GetValidDeviceIds rule: B200 on 2.18 JITs from compute_90, a K80 on 2.21 has nothing."""
    assert compat.has_kernels_for(compat.tf_release(tf).compute_capabilities, cc) == verdict


def test_has_kernels_for_arch_suffix_targets():
    """Targets like sm_90a parse; PTX newer than the device cannot be used."""
    assert compat.has_kernels_for(("sm_90a",), "9.0") == "sass"
    assert compat.has_kernels_for(("compute_100",), "9.0") == "none"
    assert compat.has_kernels_for(("sm_80", "compute_80"), "12.0") == "ptx"


def test_tables_checked_is_a_past_iso_date():
    """Reports show when the tables were last checked; it is the newest row date."""
    checked = datetime.date.fromisoformat(compat.tables_checked())
    assert checked == datetime.date(2026, 11, 27)
