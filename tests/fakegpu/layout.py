"""CUDA user-space library trees laid out like the real installs, under a fake machine root.

`Layout(root)` places stub libraries (tests/stubs/cudalib.c, real sonames and version entry
points) where pip, a CUDA toolkit, conda, WSL2 or the distribution put them, a stub
libtensorflow_framework.so.2 whose DT_RUNPATH is the real TF 2.21 wheel's, and an ldconfig cache
for the root. Paths inside the tree that the target process would report (site-packages, TF's
package dir, LD_LIBRARY_PATH entries) are real paths; machine locations sit under `root`.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

from stubs.build import build_stub, install_stub
from tfdoctor.facts import PythonFacts, TensorFlowFacts
from tfdoctor.probes.elf import read_dynamic

KIND = {
    "cudart": "KIND_CUDART",
    "cublas": "KIND_CUBLAS",
    "cublasLt": "KIND_CUBLASLT",
    "cufft": "KIND_CUFFT",
    "curand": "KIND_CURAND",
    "cusolver": "KIND_CUSOLVER",
    "cusparse": "KIND_CUSPARSE",
    "cupti": "KIND_CUPTI",
    "cudnn": "KIND_CUDNN",
    "nccl": "KIND_NCCL",
    "nvjitlink": "KIND_NVJITLINK",
}
STEM = {"cublasLt": "libcublasLt", "nvjitlink": "libnvJitLink"}
PIP_DIR = {"cudart": "cuda_runtime", "cublasLt": "cublas", "cupti": "cuda_cupti"}
PIP_PROJECT = {
    "cudart": "nvidia-cuda-runtime",
    "cublasLt": "nvidia-cublas",
    "cupti": "nvidia-cuda-cupti",
}

# libtensorflow_framework.so.2 of tensorflow 2.21.0 (readelf -d, duplicates removed, first-seen
# order): no nvidia/cusolver/lib and no nvidia/curand/lib (research/compat.md section 8c).
TF_2_21_RUNPATH = ":".join(
    f"$ORIGIN/{up}/{d}"
    for d in (
        "nvidia/nccl/lib",
        "nvidia/cuda_cupti/lib",
        "nvidia/cublas/lib",
        "nvidia/cudnn/lib",
        "nvidia/cufft/lib",
        "nvidia/cusparse/lib",
        "tensorrt",
        "nvidia/cuda_runtime/lib",
        "nvidia/nvshmem/lib",
    )
    for up in ("../..", "..")
)

TF_2_21_SONAMES = {
    "cudart": "libcudart.so.12",
    "cublas": "libcublas.so.12",
    "cublasLt": "libcublasLt.so.12",
    "cufft": "libcufft.so.11",
    "curand": "libcurand.so.10",
    "cusolver": "libcusolver.so.11",
    "cusparse": "libcusparse.so.12",
    "cupti": "libcupti.so.12",
    "cudnn": "libcudnn.so.9",
}


def soname_for(name: str, major: int | str) -> str:
    return f"{STEM.get(name, 'lib' + name)}.so.{major}"


# The pip wheels' own DT_RUNPATHs (readelf -d on the CUDA 12.9 wheels): cuSOLVER, cuSPARSE and
# cuFFT find libnvJitLink.so.12 in the sibling nvjitlink wheel.
PIP_RUNPATH = {
    "cusolver": "$ORIGIN:$ORIGIN/../../cublas/lib:$ORIGIN/../../nvjitlink/lib"
    ":$ORIGIN/../../cusparse/lib",
    "cusparse": "$ORIGIN/../../nvjitlink/lib:$ORIGIN",
    "cufft": "$ORIGIN/../../nvjitlink/lib:$ORIGIN",
}


def stub_library(
    name: str, soname: str, version: str, runpath: str | None = None, **variant: int
) -> Path:
    """The cached stub for library `name` answering `version` ("9.1.0"); `variant` adds defines
    such as CRASH=1, CRASH_ON_LOAD=1, HANG=1, FAIL_STATUS=35, OMIT_VERSION=1, BANNER=1."""
    parts = [int(p) for p in version.split(".")] + [0, 0]
    defines: dict[str, str | int] = {
        KIND[name]: 1,
        "VMAJOR": parts[0],
        "VMINOR": parts[1],
        "VPATCH": parts[2],
        **variant,
    }
    libs = (f"-Wl,--enable-new-dtags,-rpath,{runpath}",) if runpath else ()
    return build_stub("cudalib.c", soname, defines, libs=libs)


def framework_stub(runpath: str = TF_2_21_RUNPATH) -> Path:
    """libtensorflow_framework.so.2 with a DT_RUNPATH (new dtags), like the real wheels."""
    return build_stub(
        "cudalib.c",
        "libtensorflow_framework.so.2",
        {"TF_FRAMEWORK": 1},
        libs=(f"-Wl,--enable-new-dtags,-rpath,{runpath}",),
    )


class Layout:
    """Library trees under one fake machine root."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.site = root / "venv/lib/python3.11/site-packages"
        self.site.mkdir(parents=True, exist_ok=True)

    def machine(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def tensorflow(self, runpath: str = TF_2_21_RUNPATH) -> Path:
        """site-packages/tensorflow with its framework library; returns the package dir."""
        package = self.site / "tensorflow"
        install_stub(framework_stub(runpath), package)
        return package

    def pip(
        self,
        name: str,
        version: str,
        *,
        major: int | None = None,
        pip_version: str | None = None,
        cuda: int = 12,
        header: bool = False,
        **variant: int,
    ) -> Path:
        """site-packages/nvidia/<pkg>/lib/<soname> plus the wheel's dist-info; returns the file."""
        major = major if major is not None else int(version.split(".")[0])
        lib_dir = self.site / "nvidia" / PIP_DIR.get(name, name) / "lib"
        built = stub_library(
            name, soname_for(name, major), version, PIP_RUNPATH.get(name), **variant
        )
        path = install_stub(built, lib_dir)
        project = f"{PIP_PROJECT.get(name, 'nvidia-' + name)}-cu{cuda}"
        dist = self.site / f"{project.replace('-', '_')}-{pip_version or version}.dist-info"
        dist.mkdir(exist_ok=True)
        (dist / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {project}\nVersion: {pip_version or version}\n"
        )
        if header:
            write_header(lib_dir.parent / "include", name, version)
        return path

    def toolkit(self, cuda: str, libs: dict[str, str], *, link: bool = True) -> Path:
        """/usr/local/cuda-X.Y as the runfile installs it: targets/<arch>-linux/lib holds
        lib<name>.so.<full version> and the soname symlink, lib64 links there; returns lib64."""
        top = self.machine(f"/usr/local/cuda-{cuda}")
        target = top / f"targets/{platform.machine()}-linux"
        lib = target / "lib"
        for name, version in libs.items():
            major = (
                version.split(".")[0]
                if name != "cudart" or int(version.split(".")[0]) >= 12
                else ".".join(version.split(".")[:2])
            )
            soname = soname_for(name, major)
            real = install_stub(
                stub_library(name, soname, version), lib, f"{soname.split('.so.')[0]}.so.{version}"
            )
            (lib / soname).unlink(missing_ok=True)
            (lib / soname).symlink_to(real.name)
        (target / "include").mkdir(parents=True, exist_ok=True)
        for name in ("lib64", "include"):
            if not (top / name).exists():
                (top / name).symlink_to(
                    f"targets/{platform.machine()}-linux/{'lib' if name == 'lib64' else name}"
                )
        if link and not self.machine("/usr/local/cuda").exists():
            self.machine("/usr/local/cuda").symlink_to(f"cuda-{cuda}")
        return top / "lib64"

    def directory(self, machine_dir: str, libs: dict[str, str], **variant: int) -> Path:
        """Libraries dropped into any machine directory (system, conda lib/, /usr/lib/wsl/lib)."""
        directory = self.machine(machine_dir)
        for name, version in libs.items():
            install_stub(
                stub_library(name, soname_for(name, version.split(".")[0]), version, **variant),
                directory,
            )
        return directory

    def conda(self, env_name: str, libs: dict[str, str]) -> Path:
        """A conda environment prefix (with conda-meta/) with `libs` in lib/; returns the prefix."""
        prefix = self.machine(f"/opt/conda/envs/{env_name}")
        (prefix / "conda-meta").mkdir(parents=True, exist_ok=True)
        self.directory(f"/opt/conda/envs/{env_name}/lib", libs)
        return prefix

    def ldcache(self, machine_dirs: list[str]) -> Path:
        """The root's ld.so.cache over `machine_dirs`, built by the real ldconfig (-r root, as
        root) or, where that is not allowed, recorded as ld.so.cache.txt in `ldconfig -p` form."""
        conf = self.machine("/etc/ld.so.conf")
        conf.parent.mkdir(parents=True, exist_ok=True)
        conf.write_text("".join(d + "\n" for d in machine_dirs))
        proc = subprocess.run(
            ["ldconfig", "-r", str(self.root), "-X"], capture_output=True, text=True
        )
        cache = self.machine("/etc/ld.so.cache")
        if proc.returncode == 0 and cache.exists():
            return cache
        lines = [f"{len(machine_dirs)} libs found in cache `/etc/ld.so.cache'"]
        for d in machine_dirs:
            for entry in sorted(self.machine(d).iterdir()):
                info = read_dynamic(entry) if entry.is_file() else None
                if info and info.soname == entry.name:
                    lines.append(f"\t{entry.name} (libc6,x86-64) => {d}/{entry.name}")
        text = self.machine("/etc/ld.so.cache.txt")
        text.write_text("\n".join(lines) + "\n")
        return text

    def python_facts(self, packages: dict[str, str] | None = None, **kw: object) -> PythonFacts:
        return PythonFacts(
            executable=str(self.root / "venv/bin/python"),
            site_packages=(str(self.site),),
            packages=packages or {},
            **kw,
        )  # type: ignore[arg-type]

    def tf_facts(
        self,
        sonames: dict[str, str] | None = None,
        cuda_version: str = "12.5.1",
        version: str = "2.21.0",
    ) -> TensorFlowFacts:
        return TensorFlowFacts(
            version=version,
            package_dir=str(self.site / "tensorflow"),
            is_cuda_build=True,
            cuda_version=cuda_version,
            sonames=dict(TF_2_21_SONAMES if sonames is None else sonames),
        )


def write_header(include: Path, name: str, version: str) -> Path | None:
    """The version header a real package ships next to its lib dir (cudnn_version.h, ...)."""
    major, minor, patch = ([int(p) for p in version.split(".")] + [0, 0])[:3]
    headers = {
        "cudnn": (
            "cudnn_version.h",
            f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n"
            f"#define CUDNN_PATCHLEVEL {patch}\n",
        ),
        "cudart": ("cuda_runtime_api.h", f"#define CUDART_VERSION {major * 1000 + minor * 10}\n"),
        "nccl": (
            "nccl.h",
            f"#define NCCL_MAJOR {major}\n#define NCCL_MINOR {minor}\n#define NCCL_PATCH {patch}\n",
        ),
    }
    if name not in headers:
        return None
    file, text = headers[name]
    include.mkdir(parents=True, exist_ok=True)
    (include / file).write_text(text)
    return include / file


def ld_path(*dirs: Path | str) -> str:
    return os.pathsep.join(str(d) for d in dirs)
