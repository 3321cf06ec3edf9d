"""node_exporter textfile metrics: check states, findings, GPU counts, smoke figures, versions.

The textfile collector reads every *.prom file in its directory at each scrape; the file is
written to a temporary name and renamed, so a scrape never sees half a file (node_exporter
README, "Textfile Collector"). Units are base units (bytes, FLOP/s, seconds), per Prometheus'
naming guidelines. No host names, user names or device ids go into labels: Prometheus adds the
instance label itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from tfdoctor.files import write_atomic
from tfdoctor.findings import CheckStatus, Severity
from tfdoctor.report import Report

VERDICTS = ("healthy", "problems", "incomplete")
DTYPES = {"float32_tflops": "float32", "float16_tflops": "float16", "bfloat16_tflops": "bfloat16"}


def write_prometheus_textfile(report: Report, path: Path, exit_code: int | None = None) -> None:
    """Write the metrics for `report` to `path` atomically, readable by node_exporter (0644)."""
    write_atomic(Path(path), render_prometheus(report, exit_code), mode=0o644)


def render_prometheus(report: Report, exit_code: int | None = None) -> str:
    """The text exposition format (version 0.0.4) for one report."""
    return "".join(
        _family(name, kind, help_, samples)
        for name, kind, help_, samples in _families(report, exit_code)
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
            "Exit code of the last run (0 healthy, 1 problems, 3 could not check).",
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
        if r.name == "multi-device" and _finite(r.metrics.get("busbw_gbs")):
            busbw.append(({}, r.metrics["busbw_gbs"] * 1e9))
        if r.name == "multi-device" and _finite(r.metrics.get("algbw_gbs")):
            algbw.append(({}, r.metrics["algbw_gbs"] * 1e9))
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
            "NCCL all-reduce bus bandwidth (nccl-tests busbw).",
            busbw,
        )
    if algbw:
        yield (
            "tfdoctor_smoke_allreduce_algorithm_bandwidth_bytes_per_second",
            "gauge",
            "All-reduce algorithm bandwidth (bytes / seconds).",
            algbw,
        )


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


def _family(name: str, kind: str, help_: str, samples: list) -> str:
    lines = [f"# HELP {name} {_escape_help(help_)}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
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
