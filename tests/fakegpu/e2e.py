"""End-to-end scenarios: a whole fake machine, and the real `tfdoctor` console script run on it.

`build(base, doc, template)` turns one end-to-end scenario document (docs/scenarios.md,
"End-to-end scenarios") into a machine: the driver side through `machine.from_scenario`, then a
real venv (a copy of `template`, made once by `make_template_venv`) whose site-packages holds a
fake TensorFlow wheel (its real METADATA, build files and a framework stub with the real
DT_RUNPATH, from a profile directory such as tests/scenarios/tf/2.21.0) and the nvidia-* wheels
of its [and-cuda] extra as stub libraries. `run_tfdoctor` runs the installed console script on
it with `--quick --python <venv python>`, pointed at the fake root by TFDOCTOR_FS_ROOT.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stubs.build import build_stub, install_stub

from fakegpu.layout import Layout, framework_stub
from fakegpu.machine import FakeMachine, from_scenario, load_scenario

TESTS = Path(__file__).resolve().parents[1]
DRIVER_SCENARIOS = TESTS / "probes_driver" / "scenarios"
TFDOCTOR = Path(sys.executable).parent / "tfdoctor"
FRAMEWORK = "libtensorflow_framework.so.2"
PY_DIR = f"python{sys.version_info.major}.{sys.version_info.minor}"

# A /proc/cpuinfo flags line of an AVX-512 server (the development machine's, shortened).
CPUINFO = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: fpu sse sse2 pni ssse3 fma sse4_1 sse4_2 popcnt avx f16c avx2 avx512f avx512dq "
    "avx512cd avx512bw avx512vl avx512_vnni avx512_bf16 amx_tile amx_bf16 amx_int8\n"
)
OS_RELEASE = 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\n'
PTXAS = (
    "#!/bin/sh\necho 'ptxas: NVIDIA (R) Ptx optimizing assembler'\n"
    "echo 'Cuda compilation tools, release {mm}, V{v}'\n"
)

NVCC = "cuda_nvcc"
"""The profile's name for the nvidia-cuda-nvcc wheel: ptxas and libdevice, not a library."""


@dataclass
class E2EMachine:
    """A built scenario: the fake machine, its library layout, and how to run tfdoctor on it."""

    machine: FakeMachine
    layout: Layout
    python: Path
    """The fake venv's interpreter: what `--python` names."""
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)


# --- the venv --------------------------------------------------------------------------------


def make_template_venv(directory: Path) -> Path:
    """A real venv without pip (about 0.4 s), made once per session and copied per scenario.

    Under coverage measurement it gets a .pth that starts coverage in the target child too (the
    venv has no coverage of its own): a directory holding only a link to the coverage package is
    appended to sys.path, so the child sees no extra distribution.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    site = directory / "lib" / PY_DIR / "site-packages"
    assert site.is_dir(), f"venv layout changed: {site} missing"
    if os.environ.get("COVERAGE_PROCESS_CONFIG") or os.environ.get("COVERAGE_PROCESS_START"):
        import coverage

        only = directory / "coverage-only"
        only.mkdir()
        (only / "coverage").symlink_to(Path(coverage.__file__).parent)
        (site / "zz_tfdoctor_coverage.pth").write_text(
            f"import sys; sys.path.append({str(only)!r}); import coverage; "
            'coverage.process_startup(slug="pth")\n'
        )
    return directory


def clone_venv(template: Path, destination: Path) -> Path:
    """A copy of the template venv (symlinks kept: bin/python stays a link to the base Python);
    a venv is relocatable this way because pyvenv.cfg names only the base interpreter's home."""
    shutil.copytree(template, destination, symlinks=True)
    return destination / "bin" / "python"


# --- the TensorFlow wheel and its [and-cuda] wheels ---------------------------------------------


def load_profile(directory: Path) -> dict[str, Any]:
    """profile.json of a TF profile directory (the RUNPATH and the [and-cuda] wheel versions)."""
    return json.loads((directory / "profile.json").read_text())


def record_hash(content: bytes) -> str:
    """The `sha256=...` field pip writes into RECORD."""
    digest = hashlib.sha256(content).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def install_tensorflow(layout: Layout, profile_dir: Path) -> dict[str, Any]:
    """One TensorFlow wheel as pip installs it: its tensorflow/ files (build files, the framework
    stub with the profile's RUNPATH, an __init__.py that fails if imported) over whatever is
    there, and its dist-info (METADATA, RECORD hashing the files it wrote)."""
    profile = load_profile(profile_dir)
    package = layout.site / "tensorflow"
    package.mkdir(parents=True, exist_ok=True)
    runpath = ":".join(f"$ORIGIN/{up}/{d}" for d in profile["runpath"] for up in ("../..", ".."))
    framework = (
        framework_stub(runpath) if runpath else build_stub("cudalib.c", FRAMEWORK, {"TF_FRAMEWORK": 1})
    )
    install_stub(framework, package)
    (package / "__init__.py").write_text(
        "raise ImportError('tfdoctor --quick must never import TensorFlow')\n"
    )
    record = []
    for source in sorted((profile_dir / "tensorflow").rglob("*")):
        if source.is_file():
            relative = source.relative_to(profile_dir)
            target = layout.site / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            content = source.read_bytes()
            target.write_bytes(content)
            record.append(f"{relative.as_posix()},{record_hash(content)},{len(content)}")
    metadata = (profile_dir / "METADATA").read_text()
    headers = dict(ln.split(": ", 1) for ln in metadata.splitlines() if ": " in ln)
    dist = layout.site / f"{headers['Name'].replace('-', '_')}-{headers['Version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(metadata)
    (dist / "INSTALLER").write_text("pip\n")
    record += [f"{dist.name}/{n},," for n in ("METADATA", "INSTALLER", "RECORD")]
    (dist / "RECORD").write_text("\n".join(record) + "\n")
    return profile


def install_wheels(
    layout: Layout,
    wheels: dict[str, str | None],
    variants: dict[str, dict[str, int]],
    cuda: int = 12,
) -> None:
    """nvidia/<pkg>/lib stubs (with their headers) and dist-infos; None leaves a wheel out.

    The stub answers the first three components of the pip version ("9.3.0.75" -> 9.3.0), as
    the real library does; cuda_nvcc is ptxas plus libdevice, not a library.
    """
    for name, pip_version in wheels.items():
        if pip_version is None:
            continue
        if name == NVCC:
            install_nvcc(layout, pip_version, cuda)
            continue
        stub_version = ".".join(pip_version.split(".")[:3])
        layout.pip(
            name, stub_version, pip_version=pip_version, cuda=cuda, header=True, **variants.get(name, {})
        )


def install_nvcc(layout: Layout, pip_version: str, cuda: int = 12) -> Path:
    """nvidia-cuda-nvcc-cuXX: bin/ptxas (a script answering --version) and libdevice.10.bc."""
    top = layout.site / "nvidia" / NVCC
    ptxas = top / "bin" / "ptxas"
    ptxas.parent.mkdir(parents=True, exist_ok=True)
    mm = ".".join(pip_version.split(".")[:2])
    ptxas.write_text(PTXAS.format(mm=mm, v=pip_version))
    ptxas.chmod(ptxas.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    libdevice = top / "nvvm" / "libdevice" / "libdevice.10.bc"
    libdevice.parent.mkdir(parents=True, exist_ok=True)
    libdevice.write_bytes(b"BC\xc0\xde")  # LLVM bitcode magic; XLA only needs the file
    dist = layout.site / f"nvidia_cuda_nvcc_cu{cuda}-{pip_version}.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: nvidia-cuda-nvcc-cu{cuda}\nVersion: {pip_version}\n"
    )
    return ptxas


# --- the scenario document -----------------------------------------------------------------------


def merge(base: Any, patch: Any) -> Any:
    """`patch` deep-merged into a copy of `base`: objects merge key by key, anything else
    (lists, numbers, null) replaces."""
    if not (isinstance(base, dict) and isinstance(patch, dict)):
        return copy.deepcopy(patch)
    merged = copy.deepcopy(base)
    for key, value in patch.items():
        merged[key] = merge(merged[key], value) if key in merged else copy.deepcopy(value)
    return merged


def machine_document(doc: dict[str, Any]) -> dict[str, Any]:
    """The driver-side document: a probes_driver scenario by name (its `expect` dropped) or
    inline, with `patch` merged in."""
    spec = doc.get("machine", {})
    if isinstance(spec, str):
        spec = load_scenario(DRIVER_SCENARIOS / f"{spec}.json")
    spec = {k: v for k, v in spec.items() if k not in ("expect", "description", "source")}
    return merge(spec, doc.get("patch", {}))


def expand(text: str, e2e: E2EMachine) -> str:
    """{site}, {venv} and {root} in a scenario value: the venv's site-packages, the venv, the
    fake root."""
    venv = e2e.python.parent.parent
    return (
        text.replace("{site}", str(e2e.layout.site))
        .replace("{venv}", str(venv))
        .replace("{root}", str(e2e.machine.root))
    )


def expand_path(entry: str, e2e: E2EMachine) -> list[str]:
    """One `ld_library_path` entry: "{driver}" (the machine's driver library dirs), a path with
    {site} / {venv} / {root}, or a machine path (under the fake root)."""
    if entry == "{driver}":
        return [str(d) for d in e2e.machine.library_dirs]
    if entry.startswith("{"):
        return [expand(entry, e2e)]
    return [str(e2e.layout.machine(entry))]


def install_stack(e2e: E2EMachine, doc: dict[str, Any], profiles: Path) -> None:
    """The user-space side: TensorFlow wheel(s) in install order, their [and-cuda] wheels,
    toolkits and loose library dirs."""
    layout = e2e.layout
    names = doc.get("tensorflow") or []
    wheels: dict[str, str | None] = {}
    for name in [names] if isinstance(names, str) else names:
        profile = install_tensorflow(layout, profiles / name)
        wheels = wheels or dict(profile["and_cuda"])
    if not doc.get("and_cuda", True):
        wheels = {}
    if not doc.get("cuda_nvcc", True):
        wheels.pop(NVCC, None)
    wheels.update(doc.get("wheels", {}))
    install_wheels(layout, wheels, doc.get("wheel_variants", {}))
    for version, libs in doc.get("toolkits", {}).items():
        layout.toolkit(version, libs)
    for directory, libs in doc.get("dirs", {}).items():
        layout.directory(directory, libs)


def write_files(e2e: E2EMachine, files: dict[str, str]) -> None:
    """`files`: path (machine path, or with {site} / {venv} / {root}) -> text, written last, so
    they can also replace a file the stack installed (a truncated library, say); a text that
    starts with "#!" is made executable (a ptxas that answers --version)."""
    for key, text in files.items():
        path = Path(expand_path(key, e2e)[0])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        path.write_text(text)
        if text.startswith("#!"):
            path.chmod(0o755)


def replace_python(python: Path, script: str) -> None:
    """The venv's interpreter replaced by a script (a broken Python, for the target probe)."""
    python.unlink()
    python.write_text(script)
    python.chmod(0o755)


def build(base: Path, doc: dict[str, Any], template: Path, profiles: Path) -> E2EMachine:
    """The machine an end-to-end scenario document describes."""
    machine = from_scenario(base, machine_document(doc))
    machine.write("/proc/cpuinfo", CPUINFO)
    machine.write("/etc/os-release", OS_RELEASE)
    python = clone_venv(template, machine.root / "venv")
    if doc.get("conda"):
        (machine.root / "venv" / "conda-meta").mkdir()
    e2e = E2EMachine(machine, Layout(machine.root), python, args=list(doc.get("args", [])))
    install_stack(e2e, doc, profiles)
    if doc.get("libcuda_dir"):
        move_libcuda(machine, e2e.layout.machine(doc["libcuda_dir"]))
    if doc.get("ld_cache"):
        e2e.layout.ldcache(doc["ld_cache"])
    write_files(e2e, doc.get("files", {}))
    if doc.get("python_script"):
        replace_python(python, doc["python_script"])
    path: list[str] = []
    for entry in doc.get("ld_library_path", ["{driver}"]):
        path += expand_path(entry, e2e)
    env = machine.host().env | {
        "PATH": f"{machine.bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "LD_LIBRARY_PATH": os.pathsep.join(path),
        "TFDOCTOR_FS_ROOT": str(machine.root),
        "NO_COLOR": "1",
    }
    e2e.env = env | {key: expand(value, e2e) for key, value in doc.get("env", {}).items()}
    return e2e


def move_libcuda(machine: FakeMachine, directory: Path) -> Path:
    """Put the scenario's libcuda.so.1 in `directory` instead of the driver lib dir (a toolkit's
    stubs dir, say); only the first libcuda on the path is ever loaded, so one copy is enough."""
    directory.mkdir(parents=True, exist_ok=True)
    source = next(d / "libcuda.so.1" for d in machine.library_dirs if (d / "libcuda.so.1").exists())
    target = directory / "libcuda.so.1"
    shutil.move(source, target)
    return target


# --- running the CLI ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One run of the console script."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def report(self) -> dict[str, Any]:
        """The --json document; fails the test with stderr when stdout is not one JSON object."""
        try:
            data = json.loads(self.stdout)
        except ValueError as exc:
            raise AssertionError(f"{self.argv}: stdout is not JSON ({exc})\n{self.stderr}") from None
        assert isinstance(data, dict), self.stdout
        return data


def run_tfdoctor(e2e: E2EMachine, *extra: str, timeout: float = 60.0) -> Run:
    """`tfdoctor --quick --python <fake venv> [scenario args] [extra]` on the fake machine."""
    argv = (str(TFDOCTOR), "--quick", "--python", str(e2e.python), *e2e.args, *extra)
    proc = subprocess.run(argv, capture_output=True, text=True, env=e2e.env, timeout=timeout)
    return Run(argv, proc.returncode, proc.stdout, proc.stderr)


def load_document(path: Path) -> dict[str, Any]:
    """An end-to-end scenario document (docs/scenarios.md, "End-to-end scenarios")."""
    return json.loads(path.read_text())
