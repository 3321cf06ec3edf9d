"""node_exporter textfile metrics: check states, findings, GPU counts, smoke figures, versions.

The textfile collector reads every *.prom file in its directory at each scrape; the file is
written to a temporary name and renamed, so a scrape never sees half a file (node_exporter
README, "Textfile Collector"). Units are base units (bytes, FLOP/s, seconds), per Prometheus'
naming guidelines. No host names, user names or device ids go into labels: Prometheus adds the
instance label itself. Every series carries an `environment` label (by default the file's stem,
so two environments diagnosed on one node, written to two files, never collide). A run that
reaches no verdict is marked by `mark_run_failed` (tfdoctor_run_failed 1, the old verdict
removed, the last success time kept), and the alert rules in integrations/prometheus/ fire on it
and on a last success that is too old (docs/integrations.md, "Prometheus").
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from tfdoctor.files import write_atomic
from tfdoctor.findings import CheckStatus, Severity
from tfdoctor.report import Report

VERDICTS = ("healthy", "problems", "incomplete")
DTYPES = {"float32_tflops": "float32", "float16_tflops": "float16", "bfloat16_tflops": "bfloat16"}


def write_prometheus_textfile(
    report: Report, path: Path, exit_code: int | None = None, environment: str | None = None
) -> None:
    """Write the metrics for `report` to `path` atomically, readable by node_exporter (0644).

    `environment` (default: the file name without .prom) labels every series.
    """
    path = Path(path)
    text = render_prometheus(
        report,
        exit_code,
        environment=environment or environment_of(path),
        now=time.time(),
        duration=process_seconds(),
    )
    write_atomic(path, text, mode=0o644)


def render_prometheus(
    report: Report,
    exit_code: int | None = None,
    *,
    environment: str | None = None,
    now: float | None = None,
    duration: float | None = None,
) -> str:
    """The text exposition format (version 0.0.4) for one report."""
    extra = {"environment": environment} if environment is not None else {}
    families = list(_families(report, exit_code))
    families += list(_run_families(now, duration, failed=False))
    return "".join(_family(n, k, h, s, extra) for n, k, h, s in families)


def mark_run_failed(path: Path, exit_code: int, environment: str | None = None) -> None:
    """Replace the metrics at `path` after a run that reached no verdict (exit 2, a timeout,
    tfdoctor missing): the old verdict, checks and findings go, so no alert reads a stale
    "healthy"; the last success time (and the versions of that run) stay."""
    path = Path(path)
    try:
        previous = path.read_text()
    except (OSError, UnicodeDecodeError):
        previous = ""
    extra = {"environment": environment or environment_of(path)}
    families: list[tuple[str, str, str, list]] = [
        ("tfdoctor_exit_code", "gauge", EXIT_HELP, [({}, exit_code)])
    ]
    families += list(_run_families(time.time(), process_seconds(), failed=True))
    text = "".join(_family(n, k, h, s, extra) for n, k, h, s in families)
    kept = [line for line in previous.splitlines() if KEEP.match(line)]
    write_atomic(path, text + "".join(line + "\n" for line in kept), mode=0o644)


def environment_of(path: Path) -> str:
    """The default environment label: the textfile's name without its .prom suffix."""
    name = Path(path).name
    return name[: -len(".prom")] if name.endswith(".prom") else name


def process_seconds() -> float | None:
    """Wall-clock seconds since this process started (Linux /proc; None elsewhere)."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


EXIT_HELP = "Exit code of the last run (0 healthy, 1 problems, 3 could not check, others failed)."
SUCCESS = "tfdoctor_last_success_timestamp_seconds"
# What a failed run keeps from the file it replaces: the last success and its versions.
KEEP = re.compile(rf"^(# (HELP|TYPE) )?({SUCCESS}|tfdoctor_info)[ {{]")


def _run_families(
    now: float | None, duration: float | None, failed: bool
) -> Iterator[tuple[str, str, str, list]]:
    yield (
        "tfdoctor_run_failed",
        "gauge",
        "1 when the last run reached no verdict (bad arguments, timeout, tfdoctor missing).",
        [({}, int(failed))],
    )
    if now is not None:
        yield (
            "tfdoctor_last_run_end_timestamp_seconds",
            "gauge",
            "When the last run ended, failed or not (Unix time).",
            [({}, round(now, 3))],
        )
        if not failed:
            yield (SUCCESS, "gauge", "When a run last reached a verdict (Unix time).", [({}, round(now, 3))])
    if duration is not None:
        yield (
            "tfdoctor_run_duration_seconds",
            "gauge",
            "Wall-clock seconds the last run took (tfdoctor start to metrics written).",
            [({}, round(duration, 3))],
        )


Sample = tuple[dict[str, str], float]
"""One sample of a metric family: its labels and its value."""


def _families(report: Report, exit_code: int | None) -> Iterator[tuple[str, str, str, list]]:
    facts = report.facts
    yield (
        "tfdoctor_info",
        "gauge",
        "tfdoctor and stack versions of this node (always 1).",
        [(_versions(report), 1)],
    )
    yield (
        "tfdoctor_verdict",
        "gauge",
        "1 for the verdict of the last run, 0 for the others.",
        [({"status": s}, int(report.verdict == s)) for s in VERDICTS],
    )
    if exit_code is not None:
        yield (
            "tfdoctor_exit_code",
            "gauge",
            EXIT_HELP,
            [({}, exit_code)],
        )
    yield (
        "tfdoctor_check_status",
        "gauge",
        "1 for each check's status in the last run, 0 for its other states.",
        [
            ({"check": o.check, "status": s.value}, int(o.status is s))
            for o in report.outcomes
            for s in CheckStatus
        ],
    )
    yield (
        "tfdoctor_findings",
        "gauge",
        "Findings of the last run by severity.",
        [
            ({"severity": s.value}, n)
            for s, n in ((s, sum(f.severity is s for f in report.findings)) for s in Severity)
        ],
    )
    root = report.root_cause
    yield (
        "tfdoctor_root_cause_info",
        "gauge",
        "The root cause finding of the last run (1; absent when there is none).",
        [({"finding": root.id, "check": root.check}, 1)] if root else [],
    )
    counted: dict[tuple[str, str], int] = {}
    for f in report.findings:
        counted[(f.id, f.severity.value)] = counted.get((f.id, f.severity.value), 0) + 1
    yield (
        "tfdoctor_finding",
        "gauge",
        "Findings of the last run by id and severity (how many times each was reported).",
        [({"finding": i, "severity": s}, n) for (i, s), n in counted.items()],
    )
    yield (
        "tfdoctor_probe_issues",
        "gauge",
        "Probes that timed out, crashed or failed.",
        [({}, len(facts.probe_issues))],
    )
    yield (
        "tfdoctor_gpus_present",
        "gauge",
        "GPUs the NVIDIA driver (NVML) reports.",
        [({}, len(facts.driver.gpus))],
    )
    if report.config.expect_gpus is not None:
        yield (
            "tfdoctor_gpus_expected",
            "gauge",
            "GPUs this node should have (--expect-gpus).",
            [({}, report.config.expect_gpus)],
        )
    from tfdoctor.checks.usable import usable_gpu_count

    yield (
        "tfdoctor_gpus_usable",
        "gauge",
        "GPUs TensorFlow can use, judged from the facts.",
        [({}, usable_gpu_count(facts)[0])],
    )
    stamp = _timestamp(facts.collected_at)
    if stamp is not None:
        yield (
            "tfdoctor_last_run_timestamp_seconds",
            "gauge",
            "When the facts were collected (Unix time).",
            [({}, stamp)],
        )
    yield from _smoke(report)


def _smoke(report: Report) -> Iterator[tuple[str, str, str, list]]:
    smoke = report.facts.smoke
    if smoke is None:
        return
    flops: list[Sample] = []
    memory: list[Sample] = []
    busbw: list[Sample] = []
    algbw: list[Sample] = []
    passed: list[Sample] = []
    for r in smoke.recipes:
        device = r.device or ""
        passed.append(({"recipe": r.name, "device": device}, int(r.status == "passed")))
        if r.status != "passed":
            continue
        for key, dtype in DTYPES.items():
            if r.name == "throughput" and _finite(r.metrics.get(key)):
                flops.append(({"device": device, "dtype": dtype}, r.metrics[key] * 1e12))
        if r.name == "throughput" and _finite(r.metrics.get("bandwidth_gbs")):
            memory.append(({"device": device}, r.metrics["bandwidth_gbs"] * 1e9))
        if r.name == "multi-device":
            # CPU runs reduce on the host, not with NCCL: the labels say which one was measured.
            labels = _allreduce_labels(r.info, sum(d.device_type == "GPU" for d in smoke.devices))
            if _finite(r.metrics.get("busbw_gbs")):
                busbw.append((labels, r.metrics["busbw_gbs"] * 1e9))
            if _finite(r.metrics.get("algbw_gbs")):
                algbw.append((labels, r.metrics["algbw_gbs"] * 1e9))
    yield (
        "tfdoctor_smoke_recipe_passed",
        "gauge",
        "1 if the smoke recipe passed on the device.",
        passed,
    )
    if flops:
        yield (
            "tfdoctor_smoke_matmul_flops_per_second",
            "gauge",
            "Measured matmul throughput (fp32 with TF32 off).",
            flops,
        )
    if memory:
        yield (
            "tfdoctor_smoke_memory_bandwidth_bytes_per_second",
            "gauge",
            "Measured elementwise memory bandwidth.",
            memory,
        )
    if busbw:
        yield (
            "tfdoctor_smoke_allreduce_bus_bandwidth_bytes_per_second",
            "gauge",
            "All-reduce bus bandwidth (nccl-tests' busbw formula) over the devices of device_type, "
            "by cross_device_ops (nccl on GPUs).",
            busbw,
        )
    if algbw:
        yield (
            "tfdoctor_smoke_allreduce_algorithm_bandwidth_bytes_per_second",
            "gauge",
            "All-reduce algorithm bandwidth (bytes / seconds).",
            algbw,
        )


def _allreduce_labels(info: dict[str, str], gpus: int) -> dict[str, str]:
    """device_type and cross_device_ops of a multi-device result; older results lack the info,
    so fall back on the recipe's own rule (NCCL on two or more GPUs, else two CPUs)."""
    kinds = {d.split(":")[0] for d in info.get("devices", "").split(",") if d}
    ops = info.get("cross_device_ops") or ("nccl" if gpus >= 2 else "reduction-to-one-device")
    if not kinds:
        kinds = {"GPU" if ops == "nccl" else "CPU"}
    return {"device_type": "+".join(sorted(kinds)), "cross_device_ops": ops}


def _versions(report: Report) -> dict[str, str]:
    f = report.facts
    tf, cudnn, nccl = f.tensorflow, f.library("cudnn"), f.library("nccl")
    models = sorted({g.name for g in f.driver.gpus if g.name})
    return {
        "tool_version": f.tool_version,
        "driver_version": f.driver.driver_version or "",
        "cuda_driver_version": f.driver.cuda_driver_version or "",
        "tensorflow_version": (tf.version if tf else None) or "",
        "cudnn_version": (cudnn.version if cudnn else None) or "",
        "nccl_version": (nccl.version if nccl else None) or "",
        "python_version": f.python.version or "",
        "gpu_model": " + ".join(models),
    }


def _family(name: str, kind: str, help_: str, samples: list, extra: dict[str, str]) -> str:
    lines = [f"# HELP {name} {_escape_help(help_)}", f"# TYPE {name} {kind}"]
    for own, value in samples:
        labels = {**own, **extra}
        body = ",".join(f'{k}="{_escape_label(str(v))}"' for k, v in labels.items())
        lines.append(f"{name}{{{body}}} {_number(value)}" if body else f"{name} {_number(value)}")
    return "\n".join(lines) + "\n"


def _escape_label(value: str) -> str:
    # Exposition format: backslash, double quote and line feed are escaped in label values.
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return repr(float(value))


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _timestamp(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return None
