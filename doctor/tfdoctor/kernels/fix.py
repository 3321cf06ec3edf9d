"""The fix for a kernel: its kernelspec's env block, where a value there is what breaks it.

A kernel runs no activation script, so the activation hook cannot reach what kernel.json's env
sets (CUDA_VISIBLE_DEVICES=-1, a stub libcuda directory on LD_LIBRARY_PATH, a directory whose
copy of a CUDA library shadows pip's or cannot be loaded at all). The plan edits
that block with fixes/kernelspec-env.sh, through the same applier as `tfdoctor fix`: a diff
first, a confirmation, a journal keyed by the kernelspec's directory, and `--undo`.
"""

from __future__ import annotations

import os
import shlex
from datetime import datetime, timezone

from tfdoctor.findings import Finding
from tfdoctor.fixing.model import FixPlan, FixStep, this_host
from tfdoctor.fixing.planner import _valid_prefix
from tfdoctor.fixing.scripts import load_scripts
from tfdoctor.kernels.specs import KernelSpec
from tfdoctor.report import Report

FIX_ID = "kernelspec-env"


def plan_kernel_fix(spec: KernelSpec, report: Report) -> FixPlan:
    """The kernelspec step for findings whose cause is a value in kernel.json's env block."""
    edits: dict[str, str | None] = {}
    findings: list[str] = []
    for f in report.findings:
        fix = f.remediation.fix_id if f.remediation else ""
        if fix == "unset-cuda-visible-devices" and "CUDA_VISIBLE_DEVICES" in spec.env:
            keep = _valid_prefix(spec.env["CUDA_VISIBLE_DEVICES"]) if f.id.endswith(
                "malformed") else ""
            edits["CUDA_VISIBLE_DEVICES"] = keep or None
            findings.append(f.id)
        elif "LD_LIBRARY_PATH" in spec.env and (bad := _bad_library_dir(f, fix, report)):
            current = edits.get("LD_LIBRARY_PATH", spec.env["LD_LIBRARY_PATH"]) or ""
            kept = [d for d in current.split(":") if d and d.rstrip("/") != bad.rstrip("/")]
            if kept != [d for d in current.split(":") if d]:
                edits["LD_LIBRARY_PATH"] = ":".join(kept) or None
                findings.append(f.id)
    steps: tuple[FixStep, ...] = ()
    if edits:
        args: list[str] = []
        for var, value in sorted(edits.items()):
            args += ["--unset", var] if value is None else ["--set", var, value]
        args.append(spec.kernel_json)
        script = load_scripts()[FIX_ID]
        steps = (FixStep(fix_id=FIX_ID, kind="hook", summary=script.summary,
                         findings=tuple(dict.fromkeys(findings)),
                         commands=(shlex.join(["sh", str(script.path), *args]),),
                         args=tuple(args), files=(spec.kernel_json,),
                         reversible=script.reversible),)
    return FixPlan(python=report.facts.python.executable, prefix=spec.resource_dir,
                   env_kind="kernelspec", host=this_host(),
                   created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   findings=tuple(f.id for f in report.findings), steps=steps)


def _bad_library_dir(finding: Finding, fix: str, report: Report) -> str:
    """The LD_LIBRARY_PATH directory behind `finding`, or "" when it names none: a stub libcuda's,
    a copy shadowing pip's, or a copy the loader cannot open (damaged, a git-lfs pointer) that is
    found on LD_LIBRARY_PATH ahead of a pip copy TensorFlow's RUNPATH would reach."""
    if fix == "remove-stub-libcuda-from-path":
        return os.path.dirname(report.facts.cuda_driver.library or "")
    if fix == "remove-from-ld-library-path":
        return os.path.dirname(finding.evidence.get("library.path", ""))
    if finding.id == "cuda-library-unloadable":
        path = finding.evidence.get("library.path", "")
        for lib in report.facts.libraries:
            if lib.path == path and lib.found_via == "ld_library_path" \
                    and any("/site-packages/nvidia/" in c for c in lib.other_copies):
                return os.path.dirname(path)
    return ""
