"""probe_libraries on stub CUDA libraries laid out like pip, toolkit, conda and system installs.

Every library here is a real shared object (tests/stubs/cudalib.c) that the real probe resolves
through the real ELF RUNPATH and ldconfig cache, and that the real child process loads and asks.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fakegpu.layout import Layout, install_stub, ld_path, stub_library
from tfdoctor.facts import LibraryFacts, ProbeIssue, PythonFacts, TensorFlowFacts
from tfdoctor.host import Host
from tfdoctor.probes.libraries import probe_libraries

PIP_12 = {
    "cudart": "12.5.82",
    "cublas": "12.5.3",
    "cublasLt": "12.5.3",
    "cufft": "11.2.3",
    "curand": "10.3.6",
    "cusolver": "11.6.3",
    "cusparse": "12.5.1",
    "cupti": "12.5.82",
    "cudnn": "9.3.0",
    "nccl": "2.21.5",
    "nvjitlink": "12.5.82",
}


def host(layout: Layout, timeout: float = 20.0, **env: str) -> Host:
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/root"),
    }
    return Host(
        env=base | env,
        root=layout.root,
        python=sys.executable,
        own_python=sys.executable,
        timeout=timeout,
    )


def by_name(libs: tuple[LibraryFacts, ...]) -> dict[str, LibraryFacts]:
    return {lib.name: lib for lib in libs}


def pip_tf(tmp_path: Path, versions: dict[str, str] = PIP_12, **variants: dict[str, int]) -> Layout:
    """TF 2.21 with every [and-cuda] wheel installed in its venv (stub versions `versions`)."""
    layout = Layout(tmp_path / "root")
    layout.tensorflow()
    for name, version in versions.items():
        layout.pip(name, version, **variants.get(name, {}))
    return layout


def test_pip_wheels_found_through_tf_runpath_and_asked_their_version(tmp_path: Path) -> None:
    """The healthy pip case: each library TF's RUNPATH reaches loads from pip, version from itself;
    cusolver and curand are not on TF 2.21's RUNPATH, so without LD_LIBRARY_PATH they do
    not load."""
    layout = pip_tf(tmp_path)
    issues: list[ProbeIssue] = []
    libs = by_name(probe_libraries(host(layout), issues, layout.python_facts(), layout.tf_facts()))
    assert issues == []
    assert list(libs) == [
        "cudart",
        "cublas",
        "cublasLt",
        "cufft",
        "curand",
        "cusolver",
        "cusparse",
        "cupti",
        "cudnn",
        "nccl",
        "nvjitlink",
    ]
    expected = {
        "cudart": "12.5",
        "cublas": "12.5.3",
        "cublasLt": "12.5.3",
        "cufft": "11.2.3",
        "cusparse": "12.5.1",
        "cudnn": "9.3.0",
        "nccl": "2.21.5",
        "nvjitlink": "12.5",
    }
    for name, version in expected.items():
        lib = libs[name]
        assert (lib.found_via, lib.origin, lib.version, lib.version_source) == (
            "runpath",
            "pip",
            version,
            "library",
        ), lib
        assert lib.path == str(
            layout.site / "nvidia" / Path(lib.path).parent.parent.name / "lib" / lib.soname
        )
    # CUPTI 12 answers with an API level, so the wheel's metadata gives the release.
    assert (libs["cupti"].version, libs["cupti"].version_source) == ("12.5.82", "metadata")
    cusolver = libs["cusolver"]
    assert cusolver.path is None and cusolver.found_via is None and cusolver.version is None
    assert cusolver.other_copies == (str(layout.site / "nvidia/cusolver/lib/libcusolver.so.11"),)
    assert str(layout.site / "nvidia/cudnn/lib") in cusolver.search_path
    assert str(layout.site / "nvidia/cusolver/lib") not in cusolver.search_path
    assert libs["curand"].path is None
    # nvJitLink is a DT_NEEDED of cuSPARSE: found through cuSPARSE's own RUNPATH, not TF's.
    assert libs["nvjitlink"].search_path[:2] == (
        str(layout.site / "nvidia/nvjitlink/lib"),
        str(layout.site / "nvidia/cusparse/lib"),
    )


def test_ld_library_path_makes_cusolver_load(tmp_path: Path) -> None:
    """The documented workaround (LD_LIBRARY_PATH to nvidia/cusolver/lib) works, and says so."""
    layout = pip_tf(tmp_path, {"cusolver": "11.6.3", "cusparse": "12.5.1", "nvjitlink": "12.5.82"})
    env = {"LD_LIBRARY_PATH": ld_path(layout.site / "nvidia/cusolver/lib")}
    libs = by_name(
        probe_libraries(host(layout, **env), [], layout.python_facts(), layout.tf_facts())
    )
    assert (libs["cusolver"].found_via, libs["cusolver"].version) == ("ld_library_path", "11.6.3")
    # Now cuSOLVER loads first, so its RUNPATH is the one that finds nvJitLink.
    assert libs["nvjitlink"].search_path[1] == str(layout.site / "nvidia/cusolver/lib")


def test_cudnn_9_1_loaded_while_9_3_exists_elsewhere(tmp_path: Path) -> None:
    """The pip wheel pins the loaded cuDNN; a newer system copy is reported as another copy."""
    layout = pip_tf(tmp_path, {"cudnn": "9.1.0"})
    layout.directory("/usr/lib/x86_64-linux-gnu", {"cudnn": "9.3.0"})
    layout.ldcache(["/usr/lib/x86_64-linux-gnu"])
    libs = by_name(probe_libraries(host(layout), [], layout.python_facts(), layout.tf_facts()))
    cudnn = libs["cudnn"]
    assert (cudnn.found_via, cudnn.origin, cudnn.version) == ("runpath", "pip", "9.1.0")
    assert cudnn.other_copies == (str(layout.machine("/usr/lib/x86_64-linux-gnu/libcudnn.so.9")),)


def test_only_cudnn_8_for_a_tf_that_needs_9(tmp_path: Path) -> None:
    """libcudnn.so.8 cannot satisfy a dlopen of libcudnn.so.9: not found, the 8 is recorded."""
    layout = pip_tf(tmp_path, {"cudart": "12.5.82"})
    layout.pip("cudnn", "8.9.7")
    libs = by_name(probe_libraries(host(layout), [], layout.python_facts(), layout.tf_facts()))
    assert libs["cudnn"].path is None and libs["cudnn"].other_copies == ()
    assert libs["cudnn"].other_versions == (str(layout.site / "nvidia/cudnn/lib/libcudnn.so.8"),)


def test_older_system_cudnn_in_ld_library_path_shadows_pip(tmp_path: Path) -> None:
    """LD_LIBRARY_PATH comes before TF's RUNPATH: the old system cuDNN wins over the pip wheel."""
    layout = pip_tf(tmp_path, {"cudnn": "9.3.0"})
    system = layout.directory("/usr/lib/x86_64-linux-gnu", {"cudnn": "9.0.0"})
    libs = by_name(
        probe_libraries(
            host(layout, LD_LIBRARY_PATH=str(system)), [], layout.python_facts(), layout.tf_facts()
        )
    )
    cudnn = libs["cudnn"]
    assert (cudnn.path, cudnn.found_via, cudnn.origin, cudnn.version, cudnn.version_source) == (
        str(system / "libcudnn.so.9"),
        "ld_library_path",
        "system",
        "9.0.0",
        "library",
    )
    assert cudnn.other_copies == (str(layout.site / "nvidia/cudnn/lib/libcudnn.so.9"),)


def test_library_that_crashes_is_named_and_the_rest_still_answer(tmp_path: Path) -> None:
    """A segfault in cudnnGetVersion and one while loading cuBLAS: the doctor survives, names
    both, falls back to the wheel metadata, and every other library still gets its version."""
    layout = pip_tf(tmp_path, cudnn={"CRASH": 1}, cublas={"CRASH_ON_LOAD": 1}, nccl={"BANNER": 1})
    issues: list[ProbeIssue] = []
    python = layout.python_facts({"nvidia-cudnn-cu12": "9.3.0.75"})
    libs = by_name(probe_libraries(host(layout), issues, python, layout.tf_facts()))
    assert libs["cudnn"].error == "SIGSEGV in cudnnGetVersion"
    assert (libs["cudnn"].version, libs["cudnn"].version_source) == ("9.3.0.75", "metadata")
    assert libs["cublas"].error == "SIGSEGV while loading cublas"
    for name in ("cudart", "cublasLt", "cufft", "cusparse", "nccl", "nvjitlink"):
        assert libs[name].version_source == "library" and libs[name].error is None, libs[name]
    assert issues == []


def test_hanging_library_times_out_and_is_named(tmp_path: Path) -> None:
    """A version call that never returns costs the time limit, not the doctor: a timeout issue,
    the library named, the rest reported as not asked."""
    layout = pip_tf(
        tmp_path, {"cudart": "12.5.82", "cudnn": "9.3.0", "nccl": "2.21.5"}, cudnn={"HANG": 1}
    )
    issues: list[ProbeIssue] = []
    libs = by_name(
        probe_libraries(host(layout, timeout=1.5), issues, layout.python_facts(), layout.tf_facts())
    )
    assert libs["cudart"].version == "12.5"
    assert libs["cudnn"].error == "timed out in cudnnGetVersion"
    assert libs["nccl"].error == "not asked: the version probe ran out of time"
    assert (libs["nccl"].version, libs["nccl"].version_source) == ("2.21.5", "metadata")
    assert [(i.probe, i.kind) for i in issues] == [("libraries", "timeout")]


def test_conda_and_toolkit_origins(tmp_path: Path) -> None:
    """A conda env on LD_LIBRARY_PATH and a /usr/local/cuda-12.5 toolkit in the ldconfig cache."""
    layout = Layout(tmp_path / "root")
    layout.tensorflow(runpath="$ORIGIN")
    prefix = layout.conda("tf", {"cudnn": "9.3.0"})
    lib64 = layout.toolkit("12.5", {"cudart": "12.5.82", "cublas": "12.5.3"})
    layout.ldcache(["/usr/local/cuda-12.5/lib64"])
    env = {"LD_LIBRARY_PATH": str(prefix / "lib"), "CONDA_PREFIX": str(prefix)}
    libs = by_name(
        probe_libraries(host(layout, **env), [], layout.python_facts(), layout.tf_facts())
    )
    assert (libs["cudnn"].found_via, libs["cudnn"].origin, libs["cudnn"].version) == (
        "ld_library_path",
        "conda",
        "9.3.0",
    )
    cudart = libs["cudart"]
    assert (cudart.path, cudart.found_via, cudart.origin, cudart.version) == (
        str(lib64 / "libcudart.so.12"),
        "ldconfig",
        "cuda-toolkit",
        "12.5",
    )
    assert libs["cublas"].origin == "cuda-toolkit"


def test_fallbacks_when_the_library_cannot_say(tmp_path: Path) -> None:
    """A bad status falls back to the toolkit file name; a missing entry point (older nvJitLink)
    to the header, else the wheel metadata; each says which source it used."""
    layout = Layout(tmp_path / "root")
    layout.tensorflow()
    layout.toolkit("12.5", {"cudart": "12.5.82"})
    lib = layout.machine("/usr/local/cuda-12.5/lib64")
    (lib / "libcudart.so.12").unlink()
    (lib / "libcudart.so.12").symlink_to("libcudart.so.12.5.82")

    install_stub(
        stub_library("cudart", "libcudart.so.12", "12.5.82", FAIL_STATUS=35),
        lib,
        "libcudart.so.12.5.82",
    )
    layout.pip("nvjitlink", "12.2.140", OMIT_VERSION=1)
    layout.pip("cusparse", "12.2.0")
    layout.pip("nccl", "2.21.5", FAIL_STATUS=1, header=True)
    layout.ldcache(["/usr/local/cuda-12.5/lib64"])
    libs = by_name(
        probe_libraries(
            host(layout),
            [],
            layout.python_facts(),
            layout.tf_facts({"cudart": "libcudart.so.12", "cusparse": "libcusparse.so.12"}),
        )
    )
    cudart = libs["cudart"]
    assert cudart.error == "cudaRuntimeGetVersion returned status 35"
    assert (cudart.version, cudart.version_source) == ("12.5.82", "filename")
    assert libs["nvjitlink"].error == "no symbol nvJitLinkVersion"
    assert (libs["nvjitlink"].version, libs["nvjitlink"].version_source) == ("12.2.140", "metadata")
    assert (libs["nccl"].version, libs["nccl"].version_source) == ("2.21.5", "header")


def test_wrong_elf_class_is_skipped_and_garbage_is_taken(tmp_path: Path) -> None:
    """ld.so skips a 32-bit file but stops at a non-ELF one ("invalid ELF header"): so do we."""
    layout = pip_tf(tmp_path, {"cudart": "12.5.82", "nccl": "2.21.5"})
    first, second = layout.machine("/opt/a"), layout.machine("/opt/b")
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    elf32 = bytearray((layout.site / "nvidia/cuda_runtime/lib/libcudart.so.12").read_bytes())
    elf32[4] = 1  # ELFCLASS32
    (first / "libcudart.so.12").write_bytes(bytes(elf32))
    (second / "libnccl.so.2").write_text("/* GNU ld script */\n" + "INPUT(libnccl_static.a)\n" * 8)
    env = {"LD_LIBRARY_PATH": ld_path(first, second)}
    libs = by_name(
        probe_libraries(host(layout, **env), [], layout.python_facts(), layout.tf_facts())
    )
    assert libs["cudart"].found_via == "runpath" and libs["cudart"].version == "12.5"
    nccl = libs["nccl"]
    assert (nccl.path, nccl.found_via) == (str(second / "libnccl.so.2"), "ld_library_path")
    assert nccl.error is not None and "invalid ELF header" in nccl.error


def test_text_cache_and_a_child_that_cannot_start(tmp_path: Path) -> None:
    """A recorded ld.so.cache.txt serves a fake root; an interpreter that is not there becomes a
    probe issue and "not asked" on each library, never an exception."""
    layout = Layout(tmp_path / "root")
    layout.tensorflow()
    layout.directory("/usr/lib/x86_64-linux-gnu", {"cudnn": "9.3.0"})
    layout.machine("/etc").mkdir(parents=True)
    layout.machine("/etc/ld.so.cache.txt").write_text(
        "1 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9\n"
    )
    broken = Host(
        env={"PATH": "/usr/bin:/bin"}, root=layout.root, own_python=str(tmp_path / "no-python")
    )
    issues: list[ProbeIssue] = []
    libs = by_name(
        probe_libraries(
            broken, issues, layout.python_facts(), layout.tf_facts({"cudnn": "libcudnn.so.9"})
        )
    )
    assert (libs["cudnn"].found_via, libs["cudnn"].origin) == ("ldconfig", "system")
    assert libs["cudnn"].error is not None and libs["cudnn"].error.startswith(
        "not asked: could not start"
    )
    assert [(i.probe, i.kind) for i in issues] == [("libraries", "error")]


def test_no_cuda_tensorflow_means_no_libraries(tmp_path: Path) -> None:
    """A CPU build, or no TensorFlow, has no CUDA libraries to resolve."""
    h = Host(env={}, root=tmp_path)
    python = PythonFacts(executable="python")
    assert probe_libraries(h, [], python, None) == ()
    assert (
        probe_libraries(h, [], python, TensorFlowFacts(version="2.21.0", is_cuda_build=False)) == ()
    )
    assert probe_libraries(h, [], python, TensorFlowFacts(version="2.21.0")) == ()
