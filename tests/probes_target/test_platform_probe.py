"""probe_platform over fake roots and recorded /proc text; probe_env's allowlist."""

from __future__ import annotations

import platform
import re
from pathlib import Path

import pytest
from target_fakes import data
from tfdoctor.host import Host
from tfdoctor.probes.platform import (
    ENV_ALLOWLIST,
    glibc_version,
    parse_cpu_flags,
    parse_os_release,
    probe_env,
    probe_platform,
)

linux_only = pytest.mark.skipif(
    platform.system() != "Linux", reason="container/WSL probes run on Linux"
)


def fake_root(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "root"
    for rel, text in files.items():
        path = root / rel.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root.mkdir(exist_ok=True)
    return root


def test_cpu_flags_of_an_avx512_machine():
    """The recorded EPYC: AVX/AVX2/FMA/AVX-512 (VNNI, BF16) found; SSE3 from the kernel's "pni"."""
    flags = parse_cpu_flags(data("cpuinfo_x86_avx512.txt"))
    assert {
        "sse3",
        "sse4_1",
        "sse4_2",
        "avx",
        "avx2",
        "fma",
        "avx512f",
        "avx512_vnni",
        "avx512_bf16",
    } <= set(flags)
    assert "amx_tile" not in flags and "pni" not in flags and "ht" not in flags


def test_cpu_flags_of_a_cpu_without_avx():
    """A Core 2: no AVX, which official TF wheels need; the list says so by omission."""
    flags = parse_cpu_flags(data("cpuinfo_x86_no_avx.txt"))
    assert flags == ("sse3", "ssse3")


def test_cpu_features_of_aarch64():
    """aarch64 lists "Features", not "flags"."""
    assert parse_cpu_flags(data("cpuinfo_aarch64_graviton2.txt")) == ("asimd",)
    assert parse_cpu_flags("processor : 0\n") == ()


@pytest.mark.parametrize(
    "text, distro",
    [
        (
            'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\n',
            "Debian GNU/Linux 12 (bookworm)",
        ),
        ("NAME='Rocky Linux'\nVERSION_ID=9.3\n", "Rocky Linux 9.3"),
        ("# nothing useful\n", None),
    ],
)
def test_os_release(text, distro):
    """PRETTY_NAME first, else NAME and VERSION_ID; quotes stripped."""
    assert parse_os_release(text) == distro


@linux_only
def test_probe_platform_on_a_fake_wsl_container(tmp_path):
    """A fake root with os-release, cpuinfo, /.dockerenv and a WSL2 kernel string."""
    root = fake_root(
        tmp_path,
        {
            "/etc/os-release": 'PRETTY_NAME="Ubuntu 22.04.4 LTS"\n',
            "/proc/cpuinfo": data("cpuinfo_x86_no_avx.txt"),
            "/proc/sys/kernel/osrelease": "5.15.153.1-microsoft-standard-WSL2\n",
            "/.dockerenv": "",
        },
    )
    issues = []
    facts = probe_platform(Host(root=root, env={}), issues)
    assert issues == []
    assert facts.distro == "Ubuntu 22.04.4 LTS"
    assert facts.cpu_flags == ("sse3", "ssse3")
    assert facts.in_container is True and facts.is_wsl is True
    assert facts.system == "Linux" and facts.machine == platform.machine()


@linux_only
@pytest.mark.parametrize(
    "files, env, expected",
    [
        ({"/proc/1/cgroup": "12:pids:/kubepods/burstable/pod1/abc\n"}, {}, True),
        ({"/run/.containerenv": ""}, {}, True),
        ({}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, True),
        ({"/proc/1/cgroup": "0::/init.scope\n", "/usr/lib/os-release": "NAME=Arch\n"}, {}, False),
    ],
)
def test_container_detection(tmp_path, files, env, expected):
    """Docker/Podman marker files, Kubernetes cgroups or env; a plain host is not a container."""
    facts = probe_platform(Host(root=fake_root(tmp_path, files), env=env), [])
    assert facts.in_container is expected
    assert facts.is_wsl is False


@linux_only
def test_unreadable_cpuinfo_is_an_issue(tmp_path):
    """No /proc/cpuinfo on Linux: cpu_flags None (not collected) and an error issue."""
    issues = []
    facts = probe_platform(Host(root=fake_root(tmp_path, {}), env={}), issues)
    assert facts.cpu_flags is None and facts.distro is None
    assert [(i.probe, i.kind) for i in issues] == [("platform", "error")]


def test_real_machine_platform():
    """On this machine: the real /proc and glibc (Debian-based, glibc 2.x, x86 or arm flags)."""
    facts = probe_platform(Host(), [])
    assert facts.system == platform.system()
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert re.fullmatch(r"2\.\d+", facts.glibc or "")
        assert glibc_version() == platform.libc_ver()[1]
        assert facts.cpu_flags is not None


def test_env_allowlist_keeps_secrets_out():
    """Canary secrets never enter the facts; only allowlisted variables that are set do."""
    env = {
        "AWS_SECRET_ACCESS_KEY": "canary-aws-9f3b",
        "HF_TOKEN": "hf_canary_token",
        "GITHUB_TOKEN": "ghp_canary",
        "HOME": "/home/alice",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "TF_USE_LEGACY_KERAS": "1",
        "XLA_FLAGS": "--xla_gpu_cuda_data_dir=/x",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
    }
    facts = probe_env(Host(env=env))
    assert facts == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "TF_USE_LEGACY_KERAS": "1",
        "XLA_FLAGS": "--xla_gpu_cuda_data_dir=/x",
        "LD_LIBRARY_PATH": "/usr/local/cuda/lib64",
    }
    assert "canary" not in repr(facts)
    assert set(facts) <= set(ENV_ALLOWLIST)
