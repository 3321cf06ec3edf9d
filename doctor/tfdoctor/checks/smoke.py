"""Checks over the smoke run: how the child ended, the GPUs TF saw, recipe results, performance."""

from __future__ import annotations

from collections.abc import Iterator

from tfdoctor.facts import Facts, RecipeResult, SmokeFacts
from tfdoctor.findings import Finding, Severity
from tfdoctor.registry import CheckConfig, check
from tfdoctor.smoke import logmap, peaks
from tfdoctor.smoke.causes import CAUSES, FINDING_IDS, finding_id

CRASH_IDS = {"SIGILL": "smoke-illegal-instruction", "SIGKILL": "smoke-killed"}
RECIPE_IDS = {
    "devices": "smoke-placement-failed",
    "matmul": "smoke-matmul-failed",
    "conv2d": "smoke-conv2d-failed",
    "mixed-precision": "smoke-mixed-precision-failed",
    "xla": "smoke-xla-failed",
    "throughput": "smoke-throughput-failed",
    "tensor-cores": "smoke-tensor-cores-failed",
    "multi-device": "smoke-multi-device-failed",
}
LOW_PEAK_PCT = 50.0
"""Below this share of the spec peak a result is low (cuBLAS large GEMMs reach 70-90 %)."""


def _smoke(facts: Facts) -> SmokeFacts:
    assert facts.smoke is not None  # guaranteed by needs="smoke"
    return facts.smoke


def _log_evidence(tail: tuple[str, ...], total: int) -> dict[str, str]:
    return {"log": logmap.frame(tail, total)} if tail else {}


def _where(r: RecipeResult | None) -> str:
    if r is None:
        return "while starting"
    return f"in the {r.name} recipe" + (f" on {r.device}" if r.device else "")


@check(
    id="smoke-run",
    title="Smoke child ran to the end",
    area="smoke",
    needs="smoke",
    emits=(
        "smoke-could-not-start",
        "smoke-timeout",
        "smoke-budget-exhausted",
        "smoke-crashed",
        "smoke-illegal-instruction",
        "smoke-killed",
        "smoke-exited",
        "smoke-garbage-output",
        "smoke-import-failed",
        "smoke-orphan-process",
        "smoke-internal-error",
    ),
)
def check_smoke_run(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """The child that imports TensorFlow must finish without a hang, a signal or a bad stream."""
    s = _smoke(facts)
    stuck = next((r for r in s.recipes if r.status in ("timeout", "crashed")), None)
    evidence = {
        "python": s.python,
        **({"exit": s.exit} if s.exit else {}),
        **_log_evidence(
            stuck.log_tail if stuck and stuck.log_tail else s.log_tail,
            stuck.log_lines if stuck and stuck.log_tail else s.log_lines,
        ),
    }
    if s.survivors:
        yield Finding(
            "smoke-orphan-process",
            Severity.WARNING,
            "Processes started by the smoke child survived it.",
            {"pids": ", ".join(map(str, s.survivors))},
            "Kill them; please report this.",
        )
    if s.outcome == "could-not-start":
        yield Finding(
            "smoke-could-not-start",
            Severity.ERROR,
            f"The target interpreter {s.python} could not be started.",
            evidence,
            "Check the --python path.",
        )
    elif s.outcome == "timeout":
        yield Finding(
            "smoke-timeout",
            Severity.ERROR,
            f"TensorFlow hung {_where(stuck)}: no result within {s.limit_seconds:g} s.",
            evidence,
            "A hang at the first GPU use often means PTX JIT compilation or a "
            "stuck driver; the log lines show the last thing TensorFlow did.",
        )
    elif s.outcome == "budget":
        yield Finding(
            "smoke-budget-exhausted",
            Severity.WARNING,
            f"The smoke budget of {s.limit_seconds:g} s ran out {_where(stuck)}; "
            "later recipes did not run.",
            evidence,
            "Raise the smoke time budget.",
        )
    elif s.outcome == "crashed" and s.exit in CRASH_IDS:
        yield _signal_finding(s, stuck, evidence)
    elif s.outcome == "crashed":
        yield Finding(
            "smoke-crashed",
            Severity.ERROR,
            f"TensorFlow crashed with {s.exit} {_where(stuck)}.",
            evidence,
            "The log lines before the crash usually name the library involved.",
        )
    elif s.outcome == "garbage":
        yield Finding(
            "smoke-garbage-output",
            Severity.ERROR,
            "The target interpreter printed output that is not the smoke protocol.",
            {**evidence, "output": logmap.frame(s.garbage)},
            "Check that --python is a Python interpreter and that nothing "
            "(sitecustomize, a shell wrapper) writes to its stdout.",
        )
    elif s.outcome == "exited":
        yield Finding(
            "smoke-exited",
            Severity.ERROR,
            f"The smoke child stopped early ({s.exit or 'no result'}) {_where(stuck)}.",
            evidence,
            "Run the target Python by hand and look at its error.",
        )
    elif s.outcome == "internal-error":
        yield Finding(
            "smoke-internal-error",
            Severity.WARNING,
            "tfdoctor's smoke runner failed; the smoke results are incomplete.",
            evidence,
            "Please report this with the saved facts.",
        )
    imported = s.recipe("import")
    if imported is not None and imported.status == "error":
        yield Finding(
            "smoke-import-failed",
            Severity.ERROR,
            "import tensorflow failed in the target interpreter.",
            {
                "error": imported.detail or "?",
                **_log_evidence(imported.log_tail, imported.log_lines),
            },
            "The last line of the error names the missing or incompatible piece.",
        )


def _signal_finding(s: SmokeFacts, stuck: RecipeResult | None, evidence: dict[str, str]) -> Finding:
    if s.exit == "SIGILL":
        return Finding(
            "smoke-illegal-instruction",
            Severity.ERROR,
            f"TensorFlow died of an illegal instruction {_where(stuck)}: this CPU lacks "
            "instructions (e.g. AVX) the wheel was compiled for.",
            evidence,
            "Install a TensorFlow build for this CPU; compare the CPU flags with the "
            "wheel's requirements.",
        )
    return Finding(
        "smoke-killed",
        Severity.ERROR,
        f"TensorFlow was killed by SIGKILL {_where(stuck)}, most likely by the "
        "out-of-memory killer.",
        evidence,
        "Check `dmesg | grep -i oom` and the memory limit of this job or container.",
    )


@check(
    id="smoke-gpus",
    title="TensorFlow sees the GPUs",
    area="smoke",
    needs="smoke",
    emits=("smoke-no-gpu", "smoke-fewer-gpus"),
    consequence_of=(
        "driver-not-installed",
        "driver-not-loaded",
        "driver-too-old",
        "libcuda-missing",
        "libcuda-stub",
        "libcuda-init-failed",
        "cuda-library-missing",
        "cuda-visible-devices-hides-all",
    ),
)
def check_smoke_gpus(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A CUDA build of TensorFlow must register the GPUs NVML sees; the log tells why not."""
    s = _smoke(facts)
    if s.recipe("devices") is None or s.recipe("devices").status == "not-run":
        return
    seen = [d for d in s.devices if d.device_type == "GPU"]
    present = len(facts.driver.gpus)
    expected = config.expect_gpus if config.expect_gpus is not None else present
    reasons = [c for c in s.causes if c.id in CAUSES and CAUSES[c.id].explains_no_gpu]
    evidence = {"tensorflow_gpus": str(len(seen)), "nvml_gpus": str(present)}
    for i, cause in enumerate(reasons[:4]):
        evidence[f"cause{'' if i == 0 else i + 1}"] = f"{CAUSES[cause.id].message} [{cause.line}]"
    if not seen and (s.is_cuda_build or expected):
        first = CAUSES[reasons[0].id] if reasons else None
        yield Finding(
            "smoke-no-gpu",
            Severity.ERROR if expected else Severity.WARNING,
            "TensorFlow registered no GPU"
            + (
                f": {first.message[0].lower()}{first.message[1:]}"
                if first
                else "; its log names no cause."
            ),
            evidence,
            first.hint if first else "Run with TF_CPP_MAX_VLOG_LEVEL=3 to see more.",
            links=(first.link,) if first and first.link else (),
        )
    elif seen and expected and len(seen) < expected:
        yield Finding(
            "smoke-fewer-gpus",
            Severity.WARNING,
            f"TensorFlow registered {len(seen)} of {expected} GPUs.",
            evidence,
            "Check CUDA_VISIBLE_DEVICES and the log for ignored devices.",
        )


@check(
    id="smoke-log",
    title="TensorFlow's log shows no known failure",
    area="smoke",
    needs="smoke",
    emits=FINDING_IDS,
    consequence_of=("smoke-no-gpu",),
)
def check_smoke_log(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Every recognised failure line becomes a finding, unless it only explains a missing GPU."""
    s = _smoke(facts)
    no_gpu = not any(d.device_type == "GPU" for d in s.devices)
    done: set[str] = set()
    for cause in s.causes:
        info = CAUSES.get(cause.id)
        if info is None or cause.id in done or (info.explains_no_gpu and no_gpu):
            continue
        done.add(cause.id)
        evidence = {
            "log_line": cause.line,
            **({"subject": cause.subject} if cause.subject else {}),
            **({"recipe": cause.recipe} if cause.recipe else {}),
        }
        yield Finding(
            finding_id(cause.id),
            info.severity,
            info.message,
            evidence,
            info.hint,
            links=(info.link,) if info.link else (),
        )


@check(
    id="smoke-recipes",
    title="Smoke recipes give correct results",
    area="smoke",
    needs="smoke",
    emits=tuple(RECIPE_IDS.values()),
    consequence_of=("smoke-import-failed", *FINDING_IDS),
)
def check_smoke_recipes(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """matmul, conv2d, mixed precision, XLA, placement and all-reduce must match references."""
    for r in _smoke(facts).recipes:
        if r.status not in ("failed", "error") or r.name not in RECIPE_IDS:
            continue
        evidence = {
            "recipe": r.name,
            **({"device": r.device} if r.device else {}),
            "result": r.detail or r.status,
            **{k: f"{v:.3g}" for k, v in r.metrics.items()},
            **_log_evidence(r.log_tail, r.log_lines),
        }
        cause = next((CAUSES[c.id] for c in r.causes if c.id in CAUSES), None)
        what = "gave wrong results" if r.status == "failed" else "raised an error"
        yield Finding(
            RECIPE_IDS[r.name],
            Severity.ERROR,
            f"The {r.name} smoke recipe {what}" + (f" on {r.device}." if r.device else "."),
            evidence,
            cause.hint if cause else "The evidence shows the error TensorFlow raised.",
            links=(cause.link,) if cause and cause.link else (),
        )


def _gpu_results(s: SmokeFacts, name: str) -> Iterator[tuple[RecipeResult, str | None, str | None]]:
    """(result, GPU model, compute capability) for a recipe's passed GPU runs."""
    for r in s.recipes:
        if r.name == name and r.status == "passed" and (r.device or "").startswith("GPU"):
            dev = next((d for d in s.devices if d.name == r.device), None)
            yield r, dev.model if dev else None, dev.compute_capability if dev else None


@check(
    id="smoke-tensor-cores",
    title="Tensor Cores are used",
    area="smoke",
    needs="smoke",
    emits=("tensor-cores-used", "tensor-cores-not-used", "tensor-cores-unknown"),
)
def check_tensor_cores(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """fp16/bf16 matmuls on a Volta-or-newer GPU should run on Tensor Cores: judge the evidence."""
    for r, model, cc in _gpu_results(_smoke(facts), "tensor-cores"):
        kernels = tuple(k for k in r.info.get("kernels", "").split("\n") if k)
        v = peaks.tensor_core_verdict(
            cc, r.metrics.get("fp16_vs_fp32"), kernels, "profiler_error" not in r.info
        )
        if v.verdict == "not-available":
            continue
        evidence = {
            "device": r.device or "?",
            "model": model or "?",
            "compute_capability": cc or "?",
            "confidence": v.confidence,
            "reason": v.reason,
            **{
                k: f"{r.metrics[k]:.2f}" for k in ("fp16_vs_fp32", "bf16_vs_fp32") if k in r.metrics
            },
            **({"kernels": "\n".join(kernels[:8])} if kernels else {}),
            **({"profiler": r.info["profiler_error"]} if "profiler_error" in r.info else {}),
        }
        fid, sev, text = {
            "used": ("tensor-cores-used", Severity.INFO, "Tensor Cores are used"),
            "not-used": (
                "tensor-cores-not-used",
                Severity.WARNING,
                "Tensor Cores do not appear to be used",
            ),
        }.get(
            v.verdict, ("tensor-cores-unknown", Severity.INFO, "Tensor Core use could not be shown")
        )
        yield Finding(
            fid,
            sev,
            f"{text} on {r.device} ({v.confidence} confidence).",
            evidence,
            None
            if fid == "tensor-cores-used"
            else "Use mixed precision (mixed_float16 / mixed_bfloat16) and dimensions that are "
            "multiples of 8.",
        )


@check(
    id="smoke-throughput",
    title="GPU throughput is near its spec",
    area="smoke",
    needs="smoke",
    emits=("gpu-throughput-low",),
)
def check_throughput(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Measured matmul TFLOPS and memory bandwidth against the GPU model's spec peak."""
    from tfdoctor import compat  # the GPU spec table; imported here so a replay needs no GPU

    for r, model, _cc in _gpu_results(_smoke(facts), "throughput"):
        spec = compat.gpu_model(model) if model else None
        if spec is None:
            continue
        pairs = (
            ("fp32 matmul", "float32_tflops", spec.fp32_tflops, "TFLOPS"),
            ("fp16 matmul", "float16_tflops", spec.fp16_tensor_tflops, "TFLOPS"),
            ("bf16 matmul", "bfloat16_tflops", spec.bf16_tensor_tflops, "TFLOPS"),
            ("memory bandwidth", "bandwidth_gbs", spec.bandwidth_gbs, "GB/s"),
        )
        low = []
        evidence = {"device": r.device or "?", "model": model or "?"}
        for label, key, peak, unit in pairs:
            pct = peaks.percent_of_peak(r.metrics.get(key), peak)
            if pct is None:
                continue
            evidence[label] = f"{r.metrics[key]:.1f} {unit} = {pct:.0f} % of {peak:g}"
            if pct < LOW_PEAK_PCT:
                low.append(f"{pct:.0f} % of expected {label}")
        if not low:
            continue
        causes = peaks.likely_causes(r.nvml)
        if causes:
            evidence["likely_causes"] = "; ".join(causes)
        yield Finding(
            "gpu-throughput-low",
            Severity.WARNING,
            f"{r.device} ({model}) reached only " + ", ".join(low) + ".",
            evidence,
            "; ".join(causes)
            if causes
            else "Check clocks, power cap and other processes on the GPU (nvidia-smi -q -d "
            "PERFORMANCE,POWER).",
        )


@check(
    id="smoke-multi-gpu",
    title="Multi-GPU all-reduce and scaling",
    area="smoke",
    needs="smoke",
    emits=("nccl-not-run", "nccl-allreduce-measured", "multi-gpu-scaling-low"),
)
def check_multi_gpu(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """NCCL all-reduce bus bandwidth (nccl-tests formula) and 1 -> N GPU step scaling."""
    r = _smoke(facts).recipe("multi-device")
    if r is None or r.status != "passed":
        return
    kind = r.info.get("cross_device_ops", "?")
    if kind != "nccl":
        yield Finding(
            "nccl-not-run",
            Severity.INFO,
            "NCCL was not exercised: fewer than two GPUs; the strategy path ran with "
            f"{kind} over {r.info.get('devices', '?')}.",
            {"cross_device_ops": kind},
        )
        return
    n = int(r.metrics.get("replicas", 0))
    evidence = {
        "gpus": str(n),
        **{
            k: f"{r.metrics[k]:.2f}"
            for k in ("algbw_gbs", "busbw_gbs", "scaling_efficiency")
            if k in r.metrics
        },
    }
    yield Finding(
        "nccl-allreduce-measured",
        Severity.INFO,
        f"NCCL all-reduce over {n} GPUs is correct; bus bandwidth "
        f"{r.metrics.get('busbw_gbs', 0):.1f} GB/s.",
        evidence,
    )
    eff = r.metrics.get("scaling_efficiency")
    if eff is not None and eff < 0.7:
        yield Finding(
            "multi-gpu-scaling-low",
            Severity.WARNING,
            f"A data-parallel step on {n} GPUs ran at {eff:.0%} of the one-GPU speed.",
            evidence,
            "Check the GPU interconnect (nvidia-smi topo -m) and PCIe links.",
        )
