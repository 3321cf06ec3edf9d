"""Each GPU: compute capability against the wheel, MIG, PCIe link, throttling, ECC."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import Version

from tfdoctor import compat, stack
from tfdoctor.checks.common import TF_SOURCE, matching_tf, pip_install
from tfdoctor.checks.mig import mig_finding
from tfdoctor.facts import Facts, GpuFacts, TensorFlowFacts
from tfdoctor.findings import Finding, Remediation, Severity
from tfdoctor.registry import CheckConfig, NotApplicable, check
from tfdoctor.smoke import peaks
from tfdoctor.stack import gpu_label, same_model

THROTTLE_BAD = {
    "hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown",
    "sw_power_cap",
}


def has_tensor_cores(name: str | None, cc: str) -> bool:
    """Tensor Cores by compute capability, except Turing's TU116/TU117 (GeForce GTX 16xx, also
    compute capability 7.5), which NVIDIA built without them."""
    return compat.has_tensor_cores(cc) and not re.search(r"GTX 16\d\d", name or "")


def _gpu(g: GpuFacts) -> dict[str, str]:
    return {"gpu.index": str(g.index), "gpu.name": g.name or "unknown"}


def _build(tf: TensorFlowFacts) -> dict[str, str]:
    """What the build is known by: its architectures, or only the CUDA it was built with."""
    if tf.compute_capabilities:
        return {"tensorflow.compute_capabilities": ", ".join(tf.compute_capabilities)}
    return {"tensorflow.cuda_version": tf.cuda_version or "?"}


def _ptx_only(tf: TensorFlowFacts, cc: str) -> str:
    """Why only PTX, where the build is known by its CUDA only (NVIDIA's compatibility guides)."""
    if tf.compute_capabilities or not tf.cuda_version:
        return ""
    first = compat.cuda_predates(tf.cuda_version, cc)
    if not first:
        return ""
    return (f" (it was built with CUDA {tf.cuda_version}, and no CUDA before {first} builds code a GPU of "
            f"compute capability {cc} runs; without PTX in the build, no kernel runs at all)")


@check("gpu-named-in-ticket", "The GPU a ticket names has kernels in this TensorFlow", "gpu",
       emits=("gpu-named-newer-than-tf", "gpu-too-old-for-tf", "gpu-ptx-jit-only"), needs="tensorflow",
       reads=("tensorflow", "tensorflow.build"))
def gpu_named_in_ticket(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Without a GPU list (a ticket with no nvidia-smi), the GPU model the user names, its compute
    capability from the model and series tables (stack.named_gpu), judged as gpu-compute-capability
    judges a listed GPU; warnings, since a name is weaker evidence than a log. Where the GPUs are
    known, gpu-compute-capability judges them instead."""
    fit = stack.named_gpu(facts)
    tf = facts.tensorflow
    if fit is None or tf is None or fit.kernels == "sass" or fit.compute_capability is None:
        raise NotApplicable
    named, cc = facts.intent.gpu or "GPU", fit.compute_capability
    ev = {"gpu": f"{named} ({fit.have_from})", "gpu.compute_capability": f"{cc} (from the model's name)",
          **_build(tf), "tensorflow.version": tf.version or "?"}
    if fit.kernels == "none":
        fits, fix = matching_tf(facts)
        yield Finding(
            "gpu-too-old-for-tf", Severity.WARNING,  # inferred from a name: a log outranks it
            f"The ticket names a {named} (compute capability {cc}), older than any architecture "
            f"TensorFlow {tf.version} was built for.",
            ev, hint=f"Use an older TensorFlow whose wheel still covers this GPU: {fits}.",
            remediation=fix, links=(TF_SOURCE,))
    elif fit.kernels == "ptx":
        yield Finding(
            "gpu-ptx-jit-only", Severity.WARNING,
            f"The ticket names a {named} (compute capability {cc}): TensorFlow {tf.version} runs its "
            f"kernels only by JIT-compiling PTX{_ptx_only(tf, cc)}, so every start can take minutes "
            "while the JIT cache is cold or too small.",
            ev, hint="Set CUDA_CACHE_MAXSIZE=4294967296 so the JIT cache survives, or use a TensorFlow "
            "built for this architecture.", links=(TF_SOURCE,))
    else:
        yield Finding(
            "gpu-named-newer-than-tf", Severity.WARNING,  # inferred from a name: a log outranks it
            f"The ticket names a {named} (compute capability {cc}): TensorFlow {tf.version} has no "
            "binaries for it, and its PTX does not compile for it: the first kernel fails "
            "(CUDA_ERROR_INVALID_PTX).",
            ev, hint=no_wheel_runs_on(cc, compat.best_tf_for(facts.python.version, None, (cc,), jit_ok=True)),
            links=(TF_SOURCE,))


@check("gpu-slow-start", "A start of GPU work that takes minutes is explained", "gpu",
       emits=("gpu-ptx-jit-only",))
def gpu_slow_start(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A start of GPU work that takes more than half a minute (the ticket's own timing, or a live
    run's device creation) is the CUDA driver JIT-compiling PTX for a GPU the build has no binaries
    for. Where the build's own architectures give each GPU SASS, the delay is something else and
    this says nothing; where they give PTX, gpu-compute-capability and gpu-named-in-ticket report
    it. This judges the rest: architectures that are not the build's own (the release table's, for
    the pip wheel; another build of that release may differ) or not known at all."""
    delay = stack.start_delay(facts)
    if delay is None or delay[0] < stack.SLOW_START_S:
        raise NotApplicable
    seconds, where = delay
    tf = facts.tensorflow
    fits = [stack.named_gpu(facts), *(stack.gpu(facts, g) for g in facts.driver.gpus)]
    gpus = [f for f in fits if f is not None and f.kernels is not None]
    own = bool(tf and tf.compute_capabilities) and "tensorflow.compute_capabilities" not in facts.assumed
    if any(f.kernels != "sass" for f in gpus) or own:
        raise NotApplicable("the build's own architectures decide it (gpu-compute-capability)")
    if facts.known("driver.gpus") and not facts.driver.gpus and not facts.intent.gpu:
        raise NotApplicable("no GPU here")
    took = f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"
    ev = {"start.seconds": f"{seconds:g} ({where})"}
    if gpus:
        f = gpus[0]
        ev |= {"gpu": f"{f.element}: compute capability {f.compute_capability} ({f.have_from})",
               "tensorflow.compute_capabilities": f"{', '.join(tf.compute_capabilities) if tf else '?'} "
                                                  f"({f.need_from})"}
        which = f"the release table gives TensorFlow {tf.version if tf else '?'}'s pip wheel binaries for " \
                f"compute capability {f.compute_capability}, but this build's own architectures are not known"
    else:
        which = "this build's architectures and the GPU's are not known"
    yield Finding(
        "gpu-ptx-jit-only", Severity.WARNING,
        f"Each start of GPU work takes {took}: the signature of the CUDA driver JIT-compiling "
        f"TensorFlow's PTX for a GPU the build has no binaries for; {which}.",
        ev, hint="Print the build's architectures: python -c \"import tensorflow as tf; "
        "print(tf.sysconfig.get_build_info()['cuda_compute_capabilities'])\". Use a TensorFlow built "
        "for this GPU's compute capability; meanwhile set CUDA_CACHE_MAXSIZE=4294967296 so the "
        "compiled kernels stay cached between runs.", links=(JIT_CACHE,))


JIT_CACHE = "https://developer.nvidia.com/blog/cuda-pro-tip-understand-fat-binaries-jit-caching/"
"""NVIDIA: PTX is JIT-compiled at load time and cached (CUDA_CACHE_MAXSIZE, CUDA_CACHE_PATH)."""


def no_wheel_runs_on(cc: str, runs: str | None) -> str:
    """What to do for a GPU this TensorFlow's kernels cannot run on; `runs`: a release that can."""
    build = (f"build TensorFlow from source with compute capability {cc} in "
             "TF_CUDA_COMPUTE_CAPABILITIES, or use NVIDIA's NGC TensorFlow container")
    if runs is None:
        return f"No TensorFlow wheel runs on it: {build}."
    return (f"TensorFlow {runs}'s PTX compiles for it (the first run JIT-compiles it; XLA may not "
            f"work): install it with [and-cuda], or {build}.")


@check("gpu-compute-capability", "TensorFlow has kernels for each GPU", "gpu",
       emits=("gpu-too-old-for-tf", "gpu-ptx-jit-only", "gpu-newer-than-tf", "gpu-xla-unsupported"),
       needs="tensorflow",
       reads=("driver.gpus", "tensorflow", "tensorflow.build"))
def gpu_compute_capability(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Each GPU's compute capability has SASS in the wheel, or at least PTX the driver can JIT.

    TF's rule (gpu_device.cc GetValidDeviceIds): kernels fit when the wheel has an entry of the
    same major and a minor <= the device's; otherwise PTX of an older major is JIT-compiled.
    """
    tf = stack.gpu_build(facts)
    if tf is None or not (tf.compute_capabilities or stack.shown_cuda(facts)) or not facts.driver.gpus:
        raise NotApplicable
    for gpus in same_model(facts.driver.gpus):
        g, which = gpus[0], gpu_label(gpus)
        fit = stack.gpu(facts, g)
        if fit is None or not g.compute_capability:
            continue
        kind = fit.kernels
        ev = {**_gpu(g), "gpu.index": ", ".join(str(x.index) for x in gpus),
              "gpu.compute_capability": g.compute_capability + (
                  " (from the model's name)" if "driver.gpus.compute_capability" in facts.assumed else ""),
              **_build(tf), "tensorflow.version": tf.version or "?"}
        if kind == "none":
            fits, fix = matching_tf(facts)
            yield Finding(
                "gpu-too-old-for-tf", Severity.ERROR,
                f"{which} ({g.name}, compute capability {g.compute_capability}) is older "
                f"than any architecture TensorFlow {tf.version} was built for.",
                ev, hint=f"Use an older TensorFlow whose wheel still covers this GPU: {fits}.",
                remediation=fix, links=(TF_SOURCE,))
        elif kind == "ptx-fails":
            yield _newer_than_tf(facts, g, which, ev)
        elif kind == "ptx":
            yield Finding(
                "gpu-ptx-jit-only", Severity.WARNING,
                f"{which} ({g.name}, compute capability {g.compute_capability}) runs "
                f"TensorFlow's kernels only by JIT-compiling PTX{_ptx_only(tf, g.compute_capability)}: "
                "the first run can take 30 minutes or longer.",
                ev, hint="Set CUDA_CACHE_MAXSIZE=4294967296 so the JIT cache survives, or use "
                "a TensorFlow built for this architecture.", links=(TF_SOURCE,))
            if g.compute_capability.startswith("12.") and _xla_targets_sm120(tf.version):
                yield Finding(
                    "gpu-xla-unsupported", Severity.WARNING,
                    f"XLA in TensorFlow {tf.version} is reported to abort when it compiles for {which} "
                    f"({g.name}, compute capability {g.compute_capability}): \"LLVM ERROR: PTX "
                    "version 8.5 does not support target 'sm_120'\". Keras 3 compiles model.fit "
                    "with XLA by default when it sees a GPU.",
                    ev, hint="Pass jit_compile=False to model.compile (and to tf.function), and leave "
                    "TF_XLA_FLAGS=--tf_xla_auto_jit unset.", links=(XLA_SM120,))


XLA_SM120 = "https://github.com/tensorflow/tensorflow/issues/111958"
"""XLA's LLVM emits PTX 8.5, which cannot target sm_120 (reported on 2.21 and 2.22 nightlies)."""


def _xla_targets_sm120(version: str | None) -> bool:
    """2.21 and newer: the releases #111958 covers (what older XLA does on sm_120 is not known)."""
    minor = compat.tf_release(version or "")
    return minor is not None and Version(minor.version) >= Version("2.21")


def _newer_than_tf(facts: Facts, g: GpuFacts, which: str, ev: dict[str, str]) -> Finding:
    """TensorFlow lists the GPU, but its PTX does not compile for it: the first kernel fails."""
    tf = facts.tensorflow
    assert tf is not None and g.compute_capability
    release = compat.tf_release(tf.version or "")
    specific = [t for t in (release.ptx_targets or ()) if t.endswith("a")] if release else []
    if specific and release and release.compute_capabilities == tf.compute_capabilities:
        # Measured in the wheel (benchmarks/wheel_ptx.py): ptxas refuses sm_90a for another arch.
        why = (f"part of its PTX targets {', '.join(specific)}, which CUDA cannot compile for any other "
               "architecture: TensorFlow lists the GPU, but its first kernel fails (CUDA_ERROR_INVALID_PTX).")
    else:
        # Field reports: RTX 50xx with 2.16.2 to 2.20 (tensorflow#99592, #101746, #97387).
        why = ("TensorFlow may list it, but on this generation the PTX fallback fails at the first "
               "kernel (CUDA_ERROR_INVALID_PTX or CUDA_ERROR_INVALID_HANDLE).")
    runs = compat.best_tf_for(facts.python.version, None, (g.compute_capability,), jit_ok=True)
    fix = None
    if runs and compat.tf_release(runs) != release:
        fix = Remediation("install-matching-tensorflow",
                          (pip_install(facts, f"tensorflow[and-cuda]=={runs}.*"),))
    return Finding(
        "gpu-newer-than-tf", Severity.ERROR,
        f"TensorFlow {tf.version} has no binaries for {which} ({g.name}, compute capability "
        f"{g.compute_capability}), and {why}",
        ev, hint=no_wheel_runs_on(g.compute_capability, runs), remediation=fix, links=(TF_SOURCE,))


@check("gpu-health", "GPU state: MIG, PCIe link, throttling, ECC", "gpu",
       emits=("gpu-lost", "gpu-mig-enabled", "gpu-pcie-degraded", "gpu-throttled",
              "gpu-ecc-uncorrectable", "gpu-no-tensor-cores"), reads=("driver.gpus",))
def gpu_health(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Per-GPU conditions that hide devices or cut throughput."""
    if not facts.driver.gpus:
        raise NotApplicable
    amp = facts.env.get("TF_ENABLE_AUTO_MIXED_PRECISION", "").lower() in ("1", "true")
    for g in facts.driver.gpus:
        ev = _gpu(g)
        lost = sorted(call for call, err in g.errors.items() if err == "NVML_ERROR_GPU_IS_LOST")
        if lost:
            yield Finding(
                "gpu-lost", Severity.ERROR,
                f"GPU {g.index} has fallen off the bus (NVML_ERROR_GPU_IS_LOST): nothing can use it.",
                {**ev, "gpu.errors": ", ".join(f"{c}: {g.errors[c]}" for c in lost)},
                hint="Drain the node; the kernel log shows Xid 79. Reset the GPU (nvidia-smi -r) or "
                "reboot; if it recurs, check power, cooling and the slot.",
                remediation=Remediation("reset-gpu", (f"sudo nvidia-smi -i {g.index} -r",),
                                        needs_root=True))
            continue
        if g.mig_mode:
            yield mig_finding(facts, g, ev)
        narrow = g.pcie_width_current and g.pcie_width_max and g.pcie_width_current < g.pcie_width_max
        slow = g.pcie_gen_current and g.pcie_gen_max and g.pcie_gen_current < g.pcie_gen_max
        if narrow or slow:
            # Idle GPUs drop the link generation to save power; the width does not change.
            yield Finding(
                "gpu-pcie-degraded", Severity.WARNING if narrow else Severity.INFO,
                f"GPU {g.index}'s PCIe link runs at gen {g.pcie_gen_current} x{g.pcie_width_current}"
                f", below its maximum gen {g.pcie_gen_max} x{g.pcie_width_max}.",
                {**ev, "gpu.pcie_current": f"gen{g.pcie_gen_current} x{g.pcie_width_current}",
                 "gpu.pcie_max": f"gen{g.pcie_gen_max} x{g.pcie_width_max}"},
                hint="A narrower link points to the slot, riser or BIOS settings; a lower "
                "generation at idle is normal power saving — recheck under load.")
        # A GPU busy with another job runs at its default power cap: NVML's sw_power_cap then is
        # normal (peaks.power_cap_is_default); a cap someone lowered, or of unknown default, is not.
        normal = {"sw_power_cap"} if peaks.power_cap_is_default(g.power_limit_w,
                                                                 g.power_default_limit_w) else set()
        bad = sorted(set(g.throttle_reasons or ()) & THROTTLE_BAD - normal)
        if bad:
            lowered = ("sw_power_cap" in bad and g.power_limit_w and g.power_default_limit_w)
            yield Finding(
                "gpu-throttled", Severity.WARNING,
                f"GPU {g.index} is slowing its clocks: {', '.join(bad)}"
                + (f" (power limit {g.power_limit_w:g} W, lowered from the board's default "
                   f"{g.power_default_limit_w:g} W)." if lowered else "."),
                {**ev, "gpu.throttle_reasons": ", ".join(bad),
                 "gpu.temperature_c": str(g.temperature_c), "gpu.power_limit_w": str(g.power_limit_w),
                 **({"gpu.power_default_limit_w": str(g.power_default_limit_w)} if lowered else {})},
                hint="Thermal reasons point to cooling or airflow; power reasons to the power "
                "cap (nvidia-smi -q -d POWER)"
                + ("; restore the default with sudo nvidia-smi -i "
                   f"{g.index} -pl {g.power_default_limit_w:g}." if lowered else "."))
        if g.ecc_uncorrected_volatile:
            yield Finding(
                "gpu-ecc-uncorrectable", Severity.ERROR,
                f"GPU {g.index} has {g.ecc_uncorrected_volatile} uncorrectable ECC errors since the "
                "last driver load.", {**ev, "gpu.ecc_uncorrected": str(g.ecc_uncorrected_volatile)},
                hint="Results on this GPU cannot be trusted: drain the node, reset the GPU "
                "(nvidia-smi -r) and check for retired pages; replace it if errors return.",
                remediation=Remediation("reset-gpu", (f"sudo nvidia-smi -i {g.index} -r",),
                                        needs_root=True))
        if amp and g.compute_capability and not has_tensor_cores(g.name, g.compute_capability):
            yield Finding(
                "gpu-no-tensor-cores", Severity.WARNING,
                f"Mixed precision is asked for, but GPU {g.index} ({g.name}, compute capability "
                f"{g.compute_capability}) has no Tensor Cores: expect no speed-up.",
                {**ev, "env.TF_ENABLE_AUTO_MIXED_PRECISION": facts.env["TF_ENABLE_AUTO_MIXED_PRECISION"]},
                hint="Keep float32 on this GPU; Tensor Cores start with Volta (7.0).")
