"""Checks over the smoke run: how the child ended, the GPUs TF saw, its log, recipe results.

Performance (Tensor Cores, throughput, multi-GPU) is in smoke_perf.py.
"""

from __future__ import annotations

from collections.abc import Iterator

from tfdoctor.checks.advice import cuda_libraries, fill_hint
from tfdoctor.checks.smoke_inputs import DONE, RUN_ENDS, no_result_cause, recipe_results
from tfdoctor.checks.smoke_kernels import kernels_could_not_run, kernels_failed
from tfdoctor.checks.tensorflow import wants_gpu_signs
from tfdoctor.facts import Facts, LogCause, RecipeResult, SmokeFacts
from tfdoctor.findings import Finding, Severity
from tfdoctor.knowledge import Cause, catalogue, sources
from tfdoctor.registry import CheckConfig, NotApplicable, NotRun, check
from tfdoctor.smoke import logmap
from tfdoctor.smoke.causes import CAUSES, FINDING_IDS, finding_id

SHOWN_STATIC = tuple(c.id for c in catalogue().causes.values() if not c.log_id and c.message)
"""Static findings a log line can show too (their record has the words a log finding needs)."""
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


def smoke_facts(facts: Facts) -> SmokeFacts:
    """The smoke facts of a check registered with needs="smoke"."""
    assert facts.smoke is not None  # guaranteed by needs="smoke"
    return facts.smoke


def cause_hint(info: Cause, facts: Facts) -> str:
    """A log cause's hint, filled in for the TensorFlow release and platform of these facts."""
    return fill_hint(info.hint or "", facts)


def _applies(info: Cause, facts: Facts) -> bool:
    """A cause with min_tf only with a known TensorFlow of that release or newer, and (for Keras 3
    causes) without TF_USE_LEGACY_KERAS=1 in a known environment."""
    if info.min_tf is None:
        return True
    from packaging.version import InvalidVersion, Version

    tf = facts.tensorflow.version if facts.tensorflow else None
    try:
        newer = tf is not None and Version(tf).release[:2] >= Version(info.min_tf).release[:2]
    except InvalidVersion:
        return False
    return newer and facts.env.get("TF_USE_LEGACY_KERAS") not in ("1", "true", "True")


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
        "smoke-output-capped",
        "smoke-gpu-kernels-failed",
    ))
def check_smoke_run(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """The child that imports TensorFlow must finish without a hang, a signal or a bad stream."""
    s = smoke_facts(facts)
    stuck = next((r for r in s.recipes if r.status in ("timeout", "crashed")), None)
    evidence = {
        "python": s.python,
        **({"exit": s.exit} if s.exit else {}),
        **_log_evidence(
            stuck.log_tail if stuck and stuck.log_tail else s.log_tail,
            stuck.log_lines if stuck and stuck.log_tail else s.log_lines,
        ),
    }
    if s.output_dropped:
        yield Finding(
            "smoke-output-capped",
            Severity.WARNING,
            f"The smoke child printed more than tfdoctor keeps: {s.output_dropped} characters were "
            "read and dropped.",
            {"dropped_characters": str(s.output_dropped)},
            "Something in the target interpreter writes without end (a debug flag such as "
            "TF_CPP_MAX_VLOG_LEVEL, a print loop in sitecustomize); the kept part is in the log evidence.",
        )
    if s.survivors:
        yield Finding(
            "smoke-orphan-process",
            Severity.WARNING,
            "Processes started by the smoke child survived it.",
            {"pids": ", ".join(map(str, s.survivors))},
            "Kill them; please report this.",
        )
    if s.outcome == "cancelled" and not s.survivors:
        raise NotRun(RUN_ENDS["cancelled"] + " before it finished")
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
    # Here, not in smoke-gpus: that check's causes (a missing library, no driver) explain a GPU
    # TensorFlow does not list, not one it lists and cannot run on.
    no_kernels = kernels_could_not_run(s)
    if no_kernels is not None:
        yield kernels_failed(facts, s, *no_kernels)


def _lower_first(text: str) -> str:
    """"The driver ..." -> "the driver ..."; names keep their case (TensorFlow, NVIDIA, cuInit)."""
    word = text.split(" ", 1)[0]
    return text if any(c.isupper() for c in word[1:]) else text[:1].lower() + text[1:]


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
    emits=("smoke-no-gpu", "smoke-fewer-gpus"))
def check_smoke_gpus(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """A CUDA build of TensorFlow must register the GPUs NVML sees; the log tells why not."""
    s = smoke_facts(facts)
    # A devices recipe that listed GPUs it could not run on (smoke-run's finding) has a full list.
    if kernels_could_not_run(s) is None and \
            not [r for r in recipe_results(s, "devices") if r.status in ("passed", "failed")]:
        raise NotRun("the devices recipe raised an error, so TensorFlow's device list is unknown")
    seen = [d for d in s.devices if d.device_type == "GPU"]
    present = len(facts.driver.gpus)
    expected = config.expect_gpus if config.expect_gpus is not None else present
    # A ticket without a GPU list that shows a GPU or a driver somewhere, or whose user names the
    # GPU they mean to use, wants it used.
    wanted = bool(expected) or (not facts.known("driver.gpus") and wants_gpu_signs(facts))
    if not seen and not wanted and not s.is_cuda_build:
        # Nothing here says "sees the GPUs": no GPU, none expected, a CPU-only build. [ok]
        # would claim what was never shown.
        raise NotApplicable("no GPU here and none expected, and this TensorFlow is CPU-only")
    reasons = [c for c in s.causes if c.id in CAUSES and CAUSES[c.id].explains_no_gpu]
    evidence = {"tensorflow_gpus": str(len(seen)),
                "nvml_gpus": str(present) if facts.known("driver.gpus") else "unknown"}
    for i, cause in enumerate(reasons[:4]):
        evidence[f"cause{'' if i == 0 else i + 1}"] = f"{CAUSES[cause.id].message} [{cause.line}]"
    if not seen and (s.is_cuda_build or wanted):
        first = CAUSES[reasons[0].id] if reasons else None
        yield Finding(
            "smoke-no-gpu",
            Severity.ERROR if expected else Severity.WARNING,
            "TensorFlow registered no GPU"
            + (
                f": {_lower_first(first.message or '')}"
                if first
                else "; its log names no cause."
            ),
            evidence,
            cause_hint(first, facts) if first else
            "Its start-up log (TF_CPP_MIN_LOG_LEVEL=0, and TF_CPP_MAX_VLOG_LEVEL=3 for the libraries it "
            f"tries) says why; the CUDA libraries are the usual reason: {cuda_libraries(facts)}.",
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
    emits=FINDING_IDS + SHOWN_STATIC)
def check_smoke_log(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """Every recognised failure line becomes a finding, even when the child later crashed or
    listed no GPU (smoke-no-gpu then names it as its cause)."""
    s = smoke_facts(facts)
    # A child that ended by itself (even by a crash) left its whole log; one we stopped did not.
    if s.outcome in ("cancelled", "budget", "timeout", "could-not-start", "internal-error") \
            and not s.causes:
        raise NotRun(f"{RUN_ENDS.get(s.outcome, 'the smoke run did not finish')}: the log is partial")
    imported = s.recipe("import")
    # Documents from before the import recipe have none: there, a run that did any recipe imported.
    never_imported = (imported.status == "not-run") if imported is not None else not s.recipes
    if s.outcome != "ticket" and not s.causes and never_imported:
        # A --python that is not Python (a script that exits 0, a wrapper that prints): no
        # TensorFlow ran, so an empty log proves nothing.
        raise NotRun(f"{RUN_ENDS.get(s.outcome, 'the smoke child stopped')} before importing TensorFlow: "
                     "there is no TensorFlow log")
    done: set[str] = set()
    # On a machine known to have no GPU, with none expected, "no GPU" is not an error; nor in a
    # ticket with no sign of a GPU (TensorFlow itself says to ignore a missing libcudart there).
    gpu_unknown = not facts.known("driver.gpus")
    gpu_expected = bool(facts.driver.gpus) or config.expect_gpus or (
        gpu_unknown and (s.outcome != "ticket" or wants_gpu_signs(facts)))
    seen = {c.id for c in s.causes if c.id in CAUSES}
    # A line whose cause the catalogue does not hold (a vocabulary classified it into an id with no
    # record) is reported as it is, never dropped.
    unknown = [c for c in s.causes if c.id == logmap.UNRECOGNISED or shown_by_log(c.id) is None]
    if unknown:
        yield _unrecognised(unknown)
    harmless = [c for c in s.causes if c.id == logmap.HARMLESS]
    if harmless:
        yield _harmless(harmless)
    for cause in s.causes:
        shown = shown_by_log(cause.id)
        if shown is None or cause.id in done or cause.id == logmap.HARMLESS:
            continue
        fid, info = shown
        if not _applies(info, facts):
            continue
        severity = info.severity or Severity.ERROR
        if info.explains_no_gpu and not gpu_expected and severity is Severity.ERROR:
            severity = Severity.WARNING
        done.add(cause.id)
        evidence = {
            "log_line": cause.line,
            **({"subject": cause.subject} if cause.subject else {}),
            **({"recipe": cause.recipe} if cause.recipe else {}),
        }
        # Another line of the same log that is the reason for this one (the catalogue's explains).
        reason = next((r for r in sorted(seen) if finding_id(cause.id) in CAUSES[r].explains), None)
        yield Finding(
            fid,
            severity,
            info.message or "",
            evidence,
            cause_hint(info, facts),
            links=(info.link,) if info.link else (),
            caused_by=finding_id(reason) if reason else None,
        )


def shown_by_log(log_id: str) -> tuple[str, Cause] | None:
    """The finding a log cause id becomes and its record: "tf-log-<id>" for a cause only a log
    shows; the static finding's own id for a cause a check also finds (one cause, one id); None
    for an id the catalogue does not hold."""
    if log_id in CAUSES and log_id != logmap.UNRECOGNISED:
        return finding_id(log_id), CAUSES[log_id]
    static = catalogue().causes.get(log_id)
    return (log_id, static) if static is not None and static.message else None


def _printed_by(source: str | None) -> str | None:
    """The releases whose wheels name this source file ("TF 2.15-2.20"), from the mined map; for a
    C++ file none names, that fact (a plugin's, another library's); None for Python's log."""
    if not source or not source.endswith((".cc", ".cpp", ".h", ".cu")):
        return None
    families = sources.releases(source)
    if not families:
        return f"a file no TensorFlow {sources.covered()} Linux x86-64 wheel names"
    return sources.describe(families)


def _harmless(causes: list[LogCause]) -> Finding:
    """One info finding for the warnings a ticket pasted that TensorFlow prints on healthy machines:
    each with why it is harmless (the benign entry's or the vocabulary's reason)."""
    info = CAUSES[logmap.HARMLESS]
    first = causes[0]
    evidence = {"log_line": first.line, "why": first.subject or ""}
    for i, other in enumerate(causes[1:4], start=2):
        evidence[f"log_line{i}"] = other.line
        evidence[f"why{i}"] = other.subject or ""
    if len(causes) > 4:
        evidence["more_lines"] = str(len(causes) - 4)
    more = f" ({len(causes) - 1} more such line(s) in the evidence)" if len(causes) > 1 else ""
    return Finding(finding_id(logmap.HARMLESS), info.severity or Severity.INFO,
                   f"TensorFlow's warning is harmless: {first.line} ({first.subject}){more}.",
                   evidence, info.hint, links=(info.link,) if info.link else ())


def _unrecognised(causes: list[LogCause]) -> Finding:
    """One finding for the error and warning lines no catalogue record knows: the most severe one
    first, the others as evidence (never silent about what TensorFlow said)."""
    info = CAUSES[logmap.UNRECOGNISED]
    ranked = sorted(causes, key=lambda c: (logmap.log_level(c.line) or ("warning", ""))[0] != "error")
    first = ranked[0]
    where = _printed_by(first.subject)
    evidence = {"log_line": first.line, "source_file": first.subject or "unknown",
                **({"releases": where} if where else {})}
    for i, other in enumerate(ranked[1:4], start=2):
        evidence[f"log_line{i}"] = other.line
    if len(ranked) > 4:
        evidence["more_lines"] = str(len(ranked) - 4)
    return Finding(
        finding_id(logmap.UNRECOGNISED),
        info.severity or Severity.WARNING,
        f"TensorFlow reported: {first.line} ({first.subject or 'its log'}{f', {where}' if where else ''}).",
        evidence,
        info.hint,
        links=(info.link,) if info.link else (),
    )


@check(
    id="smoke-recipes",
    title="Smoke recipes give correct results",
    area="smoke",
    needs="smoke",
    emits=tuple(RECIPE_IDS.values()))
def check_smoke_recipes(facts: Facts, config: CheckConfig) -> Iterator[Finding]:
    """matmul, conv2d, mixed precision, XLA, placement and all-reduce must match references."""
    s = smoke_facts(facts)
    # A GPU that cannot run kernels is smoke-gpus' finding, not a placement failure.
    kernels = kernels_could_not_run(s) is not None
    # Wrong all-reduce sums are smoke-multi-gpu's finding (broken P2P), not a second one.
    failed = [r for r in s.recipes if r.status in ("failed", "error") and r.name in RECIPE_IDS
              and not (kernels and r.name == "devices") and not r.info.get("wrong_results")]
    missing = [r for r in s.recipes if r.status not in DONE and r.name in RECIPE_IDS]
    if not failed and (missing or (s.outcome != "ticket" and not s.recipes)):
        names = ", ".join(dict.fromkeys(r.name for r in missing)) or "the recipes"
        raise NotRun(f"{names} gave no result: " + no_result_cause(s, missing[0].name if missing else ""))
    if not failed and s.outcome == "ticket":
        raise NotApplicable
    for r in failed:
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
            cause_hint(cause, facts) if cause else "The evidence shows the error TensorFlow raised.",
            links=(cause.link,) if cause and cause.link else (),
        )
