"""Environment variables that hide GPUs, and probes that could not finish."""

from __future__ import annotations

from collections.abc import Iterator

from tfdoctor.checks.common import CUDA_ENV, parse_visible_devices
from tfdoctor.facts import Facts
from tfdoctor.findings import Finding, Remediation, Severity
from tfdoctor.knowledge import catalogue
from tfdoctor.registry import CheckConfig, CouldNotCheck, NotApplicable, check


@check("cuda-visible-devices", "CUDA_VISIBLE_DEVICES leaves the GPUs visible", "environment",
       emits=("cuda-visible-devices-hides-all", "cuda-visible-devices-hides-some",
              "cuda-visible-devices-malformed"))
def cuda_visible_devices(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """An empty, "-1" or wrong CUDA_VISIBLE_DEVICES silently hides GPUs from TensorFlow."""
    value = facts.env.get("CUDA_VISIBLE_DEVICES")
    gpus = facts.driver.gpus
    if value is None and not facts.known("env.CUDA_VISIBLE_DEVICES"):
        raise CouldNotCheck("env")
    if not gpus and value is not None and value.strip() in ("", "-1") and not facts.known("driver.gpus"):
        yield Finding("cuda-visible-devices-hides-all", Severity.ERROR,
                      f"CUDA_VISIBLE_DEVICES={value!r} hides every GPU from TensorFlow.",
                      {"env.CUDA_VISIBLE_DEVICES": value},
                      hint="Unset it, or list the GPUs this job should use.",
                      remediation=Remediation("unset-cuda-visible-devices", ("unset CUDA_VISIBLE_DEVICES",)),
                      links=(CUDA_ENV,))
        return
    if not gpus and value is not None and not facts.known("driver.gpus"):
        # Judged per element: the stated value says something whatever the unknown GPU list holds.
        yield from _judged_without_gpus(value)
        return
    if not gpus:
        raise NotApplicable
    if value is None:
        return
    chosen, bad = parse_visible_devices(value, gpus)
    ev = {"env.CUDA_VISIBLE_DEVICES": value, "driver.gpu_count": str(len(gpus))}
    unset = Remediation("unset-cuda-visible-devices", ("unset CUDA_VISIBLE_DEVICES",))
    if bad is not None:
        yield Finding("cuda-visible-devices-malformed", Severity.ERROR,
                      f"CUDA_VISIBLE_DEVICES has an entry CUDA cannot read ({bad!r}); it and "
                      "everything after it are ignored.", ev,
                      hint="Use comma-separated indices (0,1) or GPU-/MIG- UUIDs from nvidia-smi -L.",
                      remediation=unset, links=(CUDA_ENV,))
    if not chosen:
        yield Finding("cuda-visible-devices-hides-all", Severity.ERROR,
                      f"CUDA_VISIBLE_DEVICES={value!r} hides all {len(gpus)} GPU(s) from TensorFlow.",
                      ev, hint="Unset it, or list the GPUs this job should use.",
                      remediation=unset, links=(CUDA_ENV,))
    elif bad is None and len(chosen) < len(gpus):
        yield Finding("cuda-visible-devices-hides-some", Severity.INFO,
                      f"CUDA_VISIBLE_DEVICES={value!r} exposes {len(chosen)} of {len(gpus)} GPUs.",
                      ev, hint="Fine when a scheduler set it for this job.", links=(CUDA_ENV,))


def _judged_without_gpus(value: str) -> Iterator[Finding]:
    """A stated CUDA_VISIBLE_DEVICES with the GPU list unknown: a malformed entry, or indices that
    leave GPU 0 out (which hides the only GPU of a one-GPU machine)."""
    entries = [e.strip() for e in value.split(",")]
    ev = {"env.CUDA_VISIBLE_DEVICES": value, "driver.gpu_count": "unknown"}
    bad = next((e or "(empty)" for e in entries
                if not (e.isdigit() or e.startswith(("GPU-", "MIG-")))), None)
    if bad is not None:
        yield Finding("cuda-visible-devices-malformed", Severity.ERROR,
                      f"CUDA_VISIBLE_DEVICES has an entry CUDA cannot read ({bad!r}); it and "
                      "everything after it are ignored.", ev,
                      hint="Use comma-separated indices (0,1) or GPU-/MIG- UUIDs from nvidia-smi -L.",
                      remediation=Remediation("unset-cuda-visible-devices", ("unset CUDA_VISIBLE_DEVICES",)),
                      links=(CUDA_ENV,))
    elif all(e.isdigit() for e in entries) and "0" not in {str(int(e)) for e in entries}:
        lowest = min(int(e) for e in entries)
        yield Finding("cuda-visible-devices-hides-some", Severity.WARNING,
                      f"CUDA_VISIBLE_DEVICES={value!r} hides GPU 0: on a machine with {lowest} GPU(s) or "
                      "fewer TensorFlow sees none; on a larger one it sees the listed GPUs, renumbered "
                      "from GPU:0.",
                      ev, hint="Compare with the GPU indices nvidia-smi lists; unset it, or list those GPUs.",
                      links=(CUDA_ENV,))


ASYNC_ALLOCATOR_BROKEN = ("2.5",)
"""Releases whose TF_GPU_ALLOCATOR=cuda_malloc_async allocator keeps no statistics, so device
creation and training fail (it came in 2.5; 2.6 fixed it: tensorflow/tensorflow#48545, #50669's fix
PR #50961)."""


@check("gpu-allocator", "TF_GPU_ALLOCATOR names an allocator this TensorFlow can run", "environment",
       emits=("tf-log-allocator-stats-missing",))
def gpu_allocator(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """TF_GPU_ALLOCATOR=cuda_malloc_async on a release whose asynchronous allocator is broken is
    the cause TensorFlow's own "No allocator statistics" names; judged from the variable and the
    release (a ticket that states both), and not reported twice beside that line."""
    value = facts.env.get("TF_GPU_ALLOCATOR")
    if value is None:
        raise NotApplicable("TF_GPU_ALLOCATOR is not set" if facts.known("env") else
                            "TF_GPU_ALLOCATOR is not shown")
    release = facts.tensorflow.version if facts.tensorflow else None
    if value.strip() != "cuda_malloc_async" or not release:
        raise NotApplicable
    family = ".".join(release.split(".")[:2])
    if family not in ASYNC_ALLOCATOR_BROKEN or \
            (facts.smoke and any(c.id == "allocator-stats-missing" for c in facts.smoke.causes)):
        return
    record = catalogue().causes["tf-log-allocator-stats-missing"]  # (its hint and link, one place)
    yield Finding(
        "tf-log-allocator-stats-missing", Severity.ERROR,
        f"TF_GPU_ALLOCATOR=cuda_malloc_async is set, and TensorFlow {release}'s asynchronous "
        "allocator keeps no statistics: device creation, training and model loading fail "
        "(\"No allocator statistics\").",
        {"env.TF_GPU_ALLOCATOR": value, "tensorflow.version": release},
        hint=record.hint, links=(record.link,) if record.link else ())


@check("probes-complete", "Every probe finished", "tfdoctor", emits=("probe-failed",))
def probes_complete(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A probe that timed out or crashed leaves its area unjudged (exit code 3 when nothing failed)."""
    for issue in facts.probe_issues:
        yield Finding("probe-failed", Severity.WARNING,
                      f"The {issue.probe} probe did not finish ({issue.kind}): {issue.message}",
                      {"probe": issue.probe, "kind": issue.kind},
                      hint="Its area could not be checked; rerun with -v, or report it with "
                      "tfdoctor --save facts.json.")
