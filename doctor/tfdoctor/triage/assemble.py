"""Observations -> a partial Facts document: what the ticket shows, and unknown everywhere else.

The first observation of a fact wins, in recogniser order (tool output before the user's
prose). Every fact no observation names is listed in `Facts.unknown`; where the ticket shows
a whole listing (`pip list`, an `nvidia-smi` table) absence inside it is real absence.
Build facts the ticket lacks are taken from the tested build configuration of the TensorFlow
release it names, and `provenance` says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from tfdoctor import __version__, compat
from tfdoctor.facts import (
    SCHEMA_VERSION,
    DriverFacts,
    Facts,
    GpuFacts,
    HostFacts,
    IntentFacts,
    LibraryFacts,
    LogCause,
    PlatformFacts,
    PythonFacts,
    RecipeResult,
    SmokeDevice,
    SmokeFacts,
    TensorFlowFacts,
    TensorRtFacts,
    ToolkitFacts,
    XlaFacts,
)
from tfdoctor.facts import Distribution as Dist
from tfdoctor.stack import LOADED_BY_TF
from tfdoctor.triage.observe import Observation

CPU_ONLY = {"tensorflow-cpu", "tensorflow-cpu-aws", "tf-nightly-cpu", "tensorflow-intel", "intel-tensorflow",
            "tensorflow-macos"}
GPU_FIELDS = {f for f in GpuFacts.__dataclass_fields__ if f not in ("index", "errors")}


class _Seen:
    """First value per path, with where it came from."""

    def __init__(self, observations: Iterable[Observation]) -> None:
        self.all = list(observations)
        self.first: dict[str, Observation] = {}
        # each path's observations in order, gathered once (each() walked them all per path asked:
        # a dozen walks of a pip list's 232,000)
        self._by_path: dict[str, list[Observation]] = {}
        for ob in self.all:
            same = self._by_path.get(ob.path)
            if same is None:
                self.first[ob.path] = ob
                self._by_path[ob.path] = [ob]
            else:
                same.append(ob)

    def get(self, path: str) -> Any:
        ob = self.first.get(path)
        return ob.value if ob else None

    def has(self, *paths: str) -> bool:
        return any(p in self.first for p in paths)

    def each(self, path: str) -> list[Observation]:
        return list(self._by_path.get(path, ()))

    def where(self, path: str) -> str | None:
        ob = self.first.get(path)
        return f"{ob.source}, line {ob.line}" if ob else None


def assemble(observations: Iterable[Observation], collected_at: str) -> Facts:
    """The partial facts of one ticket."""
    seen = _Seen(observations)
    unknown: list[str] = []
    provenance: dict[str, str] = {}
    assumed: list[str] = []

    def note(fact: str, path: str) -> None:
        where = seen.where(path)
        if where:
            provenance.setdefault(fact, where)

    python = _python(seen, unknown, note)
    platform = _platform(seen, unknown, note, provenance)
    driver = _driver(seen, unknown, note, assumed)
    tensorflow = _tensorflow(seen, python, platform, unknown, note, provenance, assumed)
    toolkits = _toolkits(seen, unknown, note)
    env: dict[str, str] = {}
    for ob in seen.each("env"):
        name, value = ob.value
        env.setdefault(name, value)
        provenance.setdefault(f"env.{name}", f"{ob.source}, line {ob.line}")
    unknown.append("env")
    host = HostFacts(kernel_log=tuple(str(ob.value) for ob in seen.each("host.kernel_log"))[:20],
                     kernel_log_read=True if seen.has("host.kernel_log") else None)
    if not seen.has("host.kernel_log"):
        unknown.append("host")
    pip_install = tuple(dict.fromkeys(r for ob in seen.each("intent.pip_install") for r in ob.value))
    intent = IntentFacts(gpu=seen.get("intent.gpu") or None, and_cuda=bool(seen.get("intent.and_cuda")),
                         worked_with=seen.get("intent.worked_with") or None, pip_install=pip_install,
                         no_wheel=tuple(dict.fromkeys(str(ob.value) for ob in seen.each("intent.no_wheel"))),
                         start_seconds=seen.get("intent.start_seconds"),
                         multi_gpu=bool(seen.get("intent.multi_gpu")),
                         binding=seen.get("intent.binding") or None)
    for path in ("intent.gpu", "intent.and_cuda", "intent.worked_with", "intent.pip_install",
                 "intent.no_wheel", "intent.start_seconds", "intent.multi_gpu", "intent.binding"):
        if seen.get(path):
            provenance[path] = seen.where(path) or ""
    # The libraries a ticket shows are those the user says are not found: the list stays unknown
    # (a library nobody named may be missing too), each named one is judged on its own.
    libraries: list[LibraryFacts] = []
    for ob in seen.each("library.missing"):
        name, soname = ob.value
        if all(lib.soname != soname for lib in libraries):
            libraries.append(LibraryFacts(name=name, soname=soname))
            provenance.setdefault(f"libraries.{soname}", f"{ob.source}, line {ob.line}")
    unknown += ["cuda_driver", "libraries", "xla", "driver.device_nodes"]
    # XLA's log names the ptxas it ran, not where: judged by stack.ptxas, the rest stays unknown
    ptxas = seen.get("xla.ptxas_version")
    xla = XlaFacts(ptxas_version=str(ptxas)) if ptxas else None
    if ptxas:
        provenance["xla.ptxas_version"] = seen.where("xla.ptxas_version") or ""
    smoke = _smoke(seen, tensorflow)
    tensorrt = _tensorrt(seen, provenance)
    return Facts(
        schema_version=SCHEMA_VERSION, tool_version=__version__, collected_at=collected_at,
        python=python, platform=platform, env=env, driver=driver, tensorflow=tensorflow,
        smoke=smoke, toolkits=toolkits, host=host, intent=intent, libraries=tuple(libraries), xla=xla,
        unknown=tuple(dict.fromkeys(unknown)), provenance=provenance, assumed=tuple(dict.fromkeys(assumed)),
        tensorrt=tensorrt,
    )


def _tensorrt(seen: _Seen, provenance: dict[str, str]) -> TensorRtFacts | None:
    """TF-TRT's TensorRT: the first wanted one, and the installed one (TensorRT's own packages and
    API before a file the loader's cache lists, before a file the user names)."""
    wanted = seen.get("tensorrt.wanted")
    installed_ob = next(iter(seen.each("tensorrt.installed")), None)
    if installed_ob is None:
        installed_ob = next((ob for ob in seen.each("library.ldconfig")
                             if str(ob.value[0]).startswith("libnvinfer.so.")), None)
    if installed_ob is None:
        installed_ob = next(iter(seen.each("tensorrt.stated")), None)
    if wanted is None and installed_ob is None:
        return None
    if wanted is not None:
        provenance["tensorrt.wanted"] = seen.where("tensorrt.wanted") or ""
    installed = None
    if installed_ob is not None:
        installed = installed_ob.value[0] if installed_ob.path == "library.ldconfig" else installed_ob.value
        provenance["tensorrt.installed"] = f"{installed_ob.source}, line {installed_ob.line}"
    return TensorRtFacts(wanted=wanted, installed=installed)


def _python(seen: _Seen, unknown: list[str], note: Any) -> PythonFacts:
    packages: dict[str, str] = {}
    for ob in seen.each("python.package"):
        name, version = ob.value
        packages.setdefault(name, version)
    for ob in seen.each("tensorflow.distribution"):
        name, version = ob.value
        packages.setdefault(name, version)
    if not seen.has("python.package_list"):
        unknown.append("python.packages")
    else:
        note("python.packages", "python.package_list")
    version = seen.get("python.version")
    if version is None:
        unknown.append("python.version")
    note("python.version", "python.version")
    return PythonFacts(executable=seen.get("python.executable") or "python (from the ticket)",
                       version=version, packages=packages, is_conda=seen.get("python.conda"))


def _platform(seen: _Seen, unknown: list[str], note: Any, provenance: dict[str, str]) -> PlatformFacts:
    fields = {}
    for name in ("system", "release", "machine", "distro", "glibc", "cpu_flags", "in_container", "is_wsl"):
        value = seen.get(f"platform.{name}")
        if value is None and name == "is_wsl" and seen.get("platform.system") == "Windows":
            value = False
        if isinstance(value, list):
            value = tuple(value)
        fields[name] = value
        path = f"platform.{name}"
        note(path, path)
        if value is None and path in ("platform.system", "platform.machine", "platform.distro",
                                      "platform.glibc", "platform.cpu_flags", "platform.in_container",
                                      "platform.is_wsl"):
            unknown.append(path)
    if seen.get("platform.hosted"):
        fields["hosted"] = seen.get("platform.hosted")
        note("platform.hosted", "platform.hosted")
    if seen.get("platform.wsl_version") in (1, 2):
        fields["is_wsl"] = True
        fields["wsl_version"] = seen.get("platform.wsl_version")
    if fields["in_container"] and fields["system"] == "Windows":
        # A container on a Windows host (Docker Desktop) runs Linux on WSL 2's kernel, and so does
        # the TensorFlow in it: Windows is the host, not where TensorFlow runs.
        host = provenance.get("platform.system", "")
        fields.update(system="Linux", is_wsl=True, wsl_version=2)
        provenance["platform.system"] = provenance["platform.is_wsl"] = (
            f"a container ({seen.where('platform.in_container')}) on a Windows host ({host})")
        unknown[:] = [u for u in unknown if u not in ("platform.is_wsl", "platform.system")]
    return PlatformFacts(**fields)


def _driver(seen: _Seen, unknown: list[str], note: Any, assumed: list[str]) -> DriverFacts:
    gpus: list[GpuFacts] = []
    for ob in seen.each("driver.gpu"):
        value = dict(ob.value)
        index = value.pop("index", len(gpus))
        if any(g.index == index for g in gpus):
            continue
        gpus.append(GpuFacts(index=int(index), **{k: v for k, v in value.items() if k in GPU_FIELDS}))
    if not gpus and not seen.has("driver.gpu", "driver.device_count", "driver.nvml_error"):
        # TensorFlow registered these GPUs, so a driver runs them.
        for ob in seen.each("log.gpu_device"):
            value = ob.value
            if "name" in value and all(g.index != value["index"] for g in gpus):
                gpus.append(GpuFacts(index=value["index"], name=value["name"],
                                     compute_capability=value.get("compute_capability"),
                                     pci_bus_id=value.get("pci_bus_id")))
    # nvidia-smi's table names each GPU but not its compute capability: NVIDIA's list by model
    # and series knows it (compat.compute_capability_of), marked assumed like the build's tables
    for i, g in enumerate(gpus):
        hit = compat.compute_capability_of(g.name) if g.name and not g.compute_capability else None
        if hit is not None:
            gpus[i] = replace(g, compute_capability=hit[0])
            assumed.append("driver.gpus.compute_capability")
    nvml_error = seen.get("driver.nvml_error")
    count = seen.get("driver.device_count")
    if count is None and gpus:
        count = len(gpus)
    listed = seen.has("driver.gpu", "driver.device_count", "driver.nvml_error") or bool(gpus)
    if not listed and not seen.has("driver.driver_version", "driver.nvidia_smi_error"):
        unknown.append("driver")
    elif not listed:
        unknown.append("driver.gpus")
    module = seen.has("driver.kernel_module_version", "driver.nvidia_module_loaded", "driver.nouveau_loaded",
                      "driver.nvidia_modules")
    if not module:
        unknown.append("driver.kernel_module")
    for path in ("driver.driver_version", "driver.cuda_driver_version", "driver.nvml_error",
                 "driver.kernel_module_version"):
        note(path, path)
    note("driver.gpus", "driver.gpu")
    loaded = seen.get("driver.nvidia_module_loaded")
    return DriverFacts(
        nvml_error=nvml_error, driver_version=seen.get("driver.driver_version"),
        cuda_driver_version=seen.get("driver.cuda_driver_version"),
        kernel_module_version=seen.get("driver.kernel_module_version"),
        kernel_module_open=seen.get("driver.kernel_module_open"),
        nvml_library_version=seen.get("driver.nvml_library_version"),
        nouveau_loaded=bool(seen.get("driver.nouveau_loaded")),
        nvidia_module_loaded=bool(loaded) or bool(seen.get("driver.kernel_module_version")),
        nvidia_modules=tuple(seen.get("driver.nvidia_modules") or ()),
        secure_boot=seen.get("driver.secure_boot"),
        nvidia_smi_error=seen.get("driver.nvidia_smi_error"),
        gpus=tuple(sorted(gpus, key=lambda g: g.index)), device_count=count,
    )


def _tensorflow(seen: _Seen, python: PythonFacts, platform: PlatformFacts, unknown: list[str],
                note: Any, provenance: dict[str, str], assumed: list[str]) -> TensorFlowFacts | None:
    dists: list[Dist] = []
    for ob in seen.each("tensorflow.distribution"):
        name, version = ob.value
        if all(d.name != name for d in dists):
            dists.append(Dist(name=name, version=version))
    listing = seen.has("python.package_list")
    conda = seen.get("python.conda") or python.packages.get("tensorflow-base") is not None
    if conda and any(d.name == "tensorflow" for d in dists):
        # conda-forge splits one TensorFlow into metapackages (tensorflow-base, -gpu, -estimator).
        dists = [d for d in dists if d.name == "tensorflow"]
    version = next((d.version for d in dists if d.name not in CPU_ONLY), None) or (
        dists[0].version if dists else None) or seen.get("tensorflow.version")
    if not dists and not listing:
        unknown.append("tensorflow.distributions")
    if version is None:
        if listing and not dists:
            return None  # a whole package listing without TensorFlow: it is not installed
        if seen.get("tensorflow.is_cuda_build") is False:
            # A CPU build, shown or said, of a release nobody named: judged as a CPU build
            unknown += ["tensorflow.version", "tensorflow.build"]
            note("tensorflow.is_cuda_build", "tensorflow.is_cuda_build")
            return TensorFlowFacts(distributions=(), version=None, is_cuda_build=False)
        unknown.append("tensorflow")
        return None
    provenance["tensorflow.version"] = seen.where("tensorflow.distribution") or seen.where(
        "tensorflow.version") or ""
    is_cuda = seen.get("tensorflow.is_cuda_build")
    note("tensorflow.is_cuda_build", "tensorflow.is_cuda_build")
    if is_cuda is None and dists and all(d.name in CPU_ONLY for d in dists):
        is_cuda = False
        provenance["tensorflow.is_cuda_build"] = "a CPU-only distribution (" + dists[0].name + ")"
    cuda, cudnn = seen.get("tensorflow.cuda_version"), seen.get("tensorflow.cudnn_version")
    for path in ("tensorflow.cuda_version", "tensorflow.cudnn_version"):
        if seen.get(path):
            provenance[path] = seen.where(path) or ""
    ccs = seen.get("tensorflow.compute_capabilities")
    release = compat.tf_release(version)
    # A nightly ("2.5.0.dev20201027", "2.5.0-dev20201027") comes before its release's tested build
    # configuration was settled (2.5's October 2020 nightlies were built for CUDA 11.0, 2.5.0 for
    # 11.2): its build is not assumed from the tables.
    nightly = version is not None and "dev" in version
    # Nor is the build of a TensorFlow shown to use another CUDA than the release's wheels (conda's
    # tensorflow-gpu 2.4.1 asking for libcudart.so.10.1; pip's 2.4.1 asks for libcudart.so.11.0).
    cudart = seen.get("tensorflow.cudart")
    loaded = compat.cuda_of_cudart(str(cudart)) if cudart else None
    table = release.wheel_cuda if release is not None else None
    wheel = table is None or all(compat.same_cuda_build(shown, table) for shown in (cuda, loaded) if shown)
    if cuda is None and loaded and not (wheel and table):
        cuda = loaded
        provenance["tensorflow.cuda_version"] = (
            f"the CUDA runtime TensorFlow's loader asks for ({cudart}, {seen.where('tensorflow.cudart')})")
    if release is not None and is_cuda is not False and not nightly and wheel:
        if cuda is None and release.cuda:
            cuda = release.wheel_cuda
            provenance["tensorflow.cuda_version"] = (
                f"tested build configuration of TensorFlow {release.version}")
            assumed.append("tensorflow.cuda_version")
        if cudnn is None and release.cudnn:
            cudnn = release.cudnn_compiled or release.cudnn
            provenance["tensorflow.cudnn_version"] = (
                f"tested build configuration of TensorFlow {release.version}")
            assumed.append("tensorflow.cudnn_version")
        if ccs is None and release.compute_capabilities:
            ccs = release.compute_capabilities
            assumed.append("tensorflow.compute_capabilities")
    if is_cuda is None and cuda is None:
        unknown.append("tensorflow.build")
    return TensorFlowFacts(
        distributions=tuple(dists), version=version, is_cuda_build=is_cuda, cuda_version=cuda,
        cudnn_version=cudnn, compute_capabilities=tuple(ccs or ()),
        requirements=dict(release.requires) if release else {},
    )


def _toolkits(seen: _Seen, unknown: list[str], note: Any) -> tuple[ToolkitFacts, ...]:
    out = []
    nvcc = seen.get("toolkit.nvcc_version")
    if nvcc:
        out.append(ToolkitFacts(path=None, version=str(nvcc), via="ticket"))
        note("toolkits", "toolkit.nvcc_version")
    for ob in seen.each("toolkit.dir"):
        out.append(ToolkitFacts(path=str(ob.value), version=None, via="ticket"))
    conda = seen.get("toolkit.conda_version")
    if conda:
        out.append(ToolkitFacts(path=None, version=str(conda), via="conda",
                                cudnn_version=str(seen.get("toolkit.conda_cudnn") or "") or None))
        note("toolkits", "toolkit.conda_version")
    if not out:
        unknown.append("toolkits")  # a claim alone leaves nvcc worth asking for
        claimed = seen.get("toolkit.claimed_version")
        if claimed:
            out.append(ToolkitFacts(path=None, version=str(claimed), via="claimed"))
            note("toolkits", "toolkit.claimed_version")
    # a listed cuDNN outweighs the one its header shows, which outweighs a stated one
    for path, via in (("toolkit.header_cudnn", "ticket"), ("toolkit.claimed_cudnn", "claimed")):
        cudnn = seen.get(path)
        if cudnn and not (out and out[0].cudnn_version):
            first = out[0] if out else ToolkitFacts(path=None, version=None, via=via)
            out[:1] = [replace(first, cudnn_version=str(cudnn))]
            note("toolkits", path)
    loaded = seen.get("toolkit.loaded_cudnn")
    if loaded:  # what TensorFlow's log says it loaded outweighs what the user says is installed
        out.insert(0, ToolkitFacts(path=None, version=None, via=LOADED_BY_TF, cudnn_version=str(loaded)))
        note("toolkits", "toolkit.loaded_cudnn")
        note("toolkits.loaded_cudnn", "toolkit.loaded_cudnn")
    return tuple(out)


def _smoke(seen: _Seen, tf: TensorFlowFacts | None) -> SmokeFacts | None:
    """TensorFlow's own output in the ticket, as a smoke run that was not ours (outcome "ticket")."""
    causes = tuple(ob.value for ob in seen.each("log.cause") if isinstance(ob.value, LogCause))
    devices: list[SmokeDevice] = []
    for ob in seen.each("log.gpu_device"):
        value = ob.value
        name = f"GPU:{value.get('index', len(devices))}"
        if any(d.name == name for d in devices):
            continue
        devices.append(SmokeDevice(name=name, device_type="GPU", model=value.get("name"),
                                   compute_capability=value.get("compute_capability")))
    listed = bool(devices) or seen.has("log.gpu_list")
    wrong = seen.get("run.multi_gpu_wrong")
    if not causes and not listed and not wrong:
        return None
    recipes: tuple[RecipeResult, ...] = (RecipeResult(name="devices", status="passed"),) if listed else ()
    if wrong:
        # the user's own multi-GPU run, judged as tfdoctor's multi-device recipe would be
        said = f"the ticket says ({seen.where('run.multi_gpu_wrong')})"
        recipes += (RecipeResult(name="multi-device", status="failed", info={"wrong_results": said},
                                 detail="NaN or wrong numbers with several GPUs (the ticket says)"),)
    return SmokeFacts(python="(ticket)", outcome="ticket", tf_version=tf.version if tf else None,
                      is_cuda_build=tf.is_cuda_build if tf else None, devices=tuple(devices),
                      recipes=recipes, causes=causes)
