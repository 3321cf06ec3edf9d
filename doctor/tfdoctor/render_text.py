"""The plain-text report: verdict first, the root cause named, findings, then check rows."""

from __future__ import annotations

from dataclasses import replace

import click

from tfdoctor.docload import printable
from tfdoctor.facts import RecipeResult, SmokeFacts
from tfdoctor.findings import CheckStatus, Finding, Severity
from tfdoctor.report import Report

BADGE = {
    CheckStatus.PASSED: ("[ok]", "green"), CheckStatus.WARNED: ("[!!]", "yellow"),
    CheckStatus.FAILED: ("[XX]", "red"), CheckStatus.NOT_APPLICABLE: ("[--]", None),
    CheckStatus.CRASHED: ("[??]", "magenta"), CheckStatus.COULD_NOT_CHECK: ("[??]", "magenta"),
    CheckStatus.NOT_RUN: ("[..]", None),
}
SEVERITY_COLOR = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def headline(report: Report) -> str:
    """One line: the verdict and the root cause."""
    counts = report.counts()
    # The ranked findings' first warning: the verdict names it, never "no problem" above it.
    first = next((f.id for f in report.findings if f.severity is Severity.WARNING), None)
    warned = f"{counts['warning']} warning(s), first: {first}" if first else ""
    if report.verdict == "healthy":
        return f"Verdict: healthy ({warned})" if warned else "Verdict: healthy"
    if report.verdict == "incomplete":
        unjudged = sum(o.status in (CheckStatus.COULD_NOT_CHECK, CheckStatus.NOT_RUN)
                       for o in report.outcomes)
        found = f"{warned}, but" if warned else "no problem found, but"
        if unjudged:
            return (f"Verdict: incomplete: {found} {unjudged} check(s) could not "
                    "check or did not run")
        return "Verdict: could not check everything (see probe-failed / check-crashed)"
    root = report.root_cause
    cause = f"; root cause: {root.id}" if root else ""
    return f"Verdict: {counts['error']} problem(s){cause}"


def target_line(report: Report) -> str:
    """The report's first line: the interpreter diagnosed and why it was chosen."""
    py = report.facts.python
    return printable(f"Diagnosing {py.executable}" + (f" ({py.chosen_by})" if py.chosen_by else ""))


def summary_line(report: Report) -> str:
    f = report.facts
    tf = f.tensorflow
    dists = ", ".join(d.name for d in tf.distributions) if tf else ""
    if tf and tf.version:
        tf_text = f"TensorFlow {tf.version}" + (f" ({dists})" if dists else "")
    elif tf or not f.known("tensorflow"):  # a ticket that does not say: unknown is not absent
        tf_text = "TensorFlow version unknown"
    else:
        tf_text = "TensorFlow not installed"
    drv = f"driver {f.driver.driver_version}" if f.driver.driver_version else (
        f"NVIDIA driver not reachable ({f.driver.nvml_error})" if f.driver.nvml_error
        else "NVIDIA driver unknown")
    gpus = f"{len(f.driver.gpus)} GPU(s)" if f.known("driver.gpus") or f.driver.gpus else "GPUs unknown"
    return printable(f"{tf_text} | Python {f.python.version or '?'} | {drv} | {gpus}")


def render_finding(f: Finding, color: bool) -> list[str]:
    """A finding's lines; text from the facts (a replayed file may hold escape sequences) is
    made printable, and only the severity tag is coloured."""
    tag = click.style(f"{f.severity.value:<7}", fg=SEVERITY_COLOR[f.severity]) if color else \
        f"{f.severity.value:<7}"
    because = f" (because of {f.caused_by})" if f.caused_by else ""
    lines = [f"{f.id}{because}", f"        {f.message}"]
    for key, value in f.evidence.items():
        lines.append(f"        - {key}: {value}")
    if f.hint:
        lines.append(f"        hint: {f.hint}")
    if f.remediation and f.remediation.commands:
        root = " (needs root)" if f.remediation.needs_root else ""
        lines.append(f"        fix [{f.remediation.fix_id}]{root}:")
        lines.extend(f"          $ {c}" for c in f.remediation.commands)
    lines.extend(f"        see: {link}" for link in f.links)
    lines = [printable(line) for line in lines]
    lines[0] = f"{tag} {lines[0]}"
    return lines


def group_findings(findings: tuple[Finding, ...]) -> list[list[Finding]]:
    """Findings that differ only in their subject (several libraries, one hint, one fix) as one
    group, placed where its first member ranks."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for f in findings:
        fix = f.remediation.fix_id if f.remediation else None
        groups.setdefault((f.id, f.severity, f.caused_by, f.hint, fix), []).append(f)
    return list(groups.values())


def render_group(group: list[Finding], color: bool) -> list[str]:
    """One finding as render_finding does; several as one block: each message with its
    evidence, then the shared hint, the fix's commands once each, and the links once each."""
    if len(group) == 1:
        return render_finding(group[0], color)
    first = group[0]
    lines = render_finding(replace(first, message="", evidence={}, remediation=None, links=(),
                                   hint=None), color)[:1]
    lines[0] += f" ({len(group)} alike)"
    for n, f in enumerate(group, 1):
        lines.append(printable(f"        {n}. {f.message}"))
        lines.extend(printable(f"           - {k}: {v}") for k, v in f.evidence.items())
    if first.hint:
        lines.append(printable(f"        hint: {first.hint}"))
    commands = list(dict.fromkeys(c for f in group if f.remediation for c in f.remediation.commands))
    if first.remediation and commands:
        root = " (needs root)" if first.remediation.needs_root else ""
        lines.append(f"        fix [{first.remediation.fix_id}]{root}:")
        lines.extend(printable(f"          $ {c}") for c in commands)
    lines.extend(printable(f"        see: {link}")
                 for link in dict.fromkeys(link for f in group for link in f.links))
    return lines


RECIPE_BADGE = {"passed": "[ok]", "failed": "[XX]", "error": "[XX]", "timeout": "[??]",
                "crashed": "[??]", "skipped": "[--]", "not-run": "[--]", "not-applicable": "[--]"}

GPU_ONLY_RECIPES = {"tensor-cores": "no GPU: Tensor Cores are a GPU feature"}
"""Recipes that measure a GPU feature: run on a CPU they show nothing about it."""


def recipe_status(r: RecipeResult) -> tuple[str, str | None]:
    """The status a recipe is shown with, and why when it differs from the recorded one: a
    GPU-only measure that ran on a CPU is not-applicable, never "[ok]" (the text and Markdown
    reports share this)."""
    device = r.device or ""
    if r.status == "passed" and r.name in GPU_ONLY_RECIPES and device and \
            not device.upper().startswith("GPU"):
        return "not-applicable", GPU_ONLY_RECIPES[r.name]
    return r.status, None


def smoke_outcome(s: SmokeFacts) -> str:
    """How the smoke run ended, in words that agree with its recipes: a child that ran to its
    end after `import tensorflow` failed did not complete the smoke work."""
    imported = s.recipe("import")
    if imported is not None and imported.status == "error":
        return "import tensorflow failed"
    return s.outcome


def render_smoke(report: Report) -> list[str]:
    """The smoke recipes that ran: device, status, time and the headline numbers."""
    smoke = report.facts.smoke
    if smoke is None:
        return []
    tf = f"TensorFlow {smoke.tf_version}" if smoke.tf_version else "TensorFlow"
    lines = [printable(f"Smoke work ({tf} in {smoke.python}, {smoke.seconds:.1f} s, "
                       f"{smoke_outcome(smoke)}):")]
    for r in smoke.recipes:
        status, why = recipe_status(r)
        numbers = ", ".join(f"{k}={v:.3g}" for k, v in list(r.metrics.items())[:3])
        took = f"{r.seconds:.2f} s" if r.seconds is not None else ""
        lines.append(printable(f"  {RECIPE_BADGE.get(status, '[??]')} {r.name:<22} "
                               f"{r.device or '':<8} {took:>8}  {why or numbers or (r.detail or '')}"
                               .rstrip()))
    return lines + [""]


FIT_BADGE = {True: ("[ok]", "green"), False: ("[XX]", "red"), None: ("[??]", "yellow")}


def render_fits(report: Report, color: bool = False) -> list[str]:
    """What this TensorFlow needs against what the machine has, one element a line (stack.evaluate),
    each with where both sides come from."""
    fits = report.compatibility
    if not fits:
        return []
    lines = ["Compatibility (has / needs):"]
    for fit in fits:
        badge, fg = FIT_BADGE[fit.fits]
        badge = click.style(badge, fg=fg) if color else badge
        lines.append(f"  {badge} " + printable(
            f"{fit.element:<12} {fit.have} ({fit.have_from}); needs {fit.need} ({fit.need_from})"))
    return lines + [""]


def render_asks(report: Report) -> list[str]:
    """"To decide, ask for": the commands whose output would judge what could not be checked."""
    asks = report.ask_for
    if not asks:
        return []
    lines = ["To decide, ask for:"]
    for ask in asks:
        lines.append(printable(f"  $ {ask.command}"))
        lines.append(printable(f"      decides: {', '.join(ask.decides)}"))
    return lines + [""]


def render_text(report: Report, *, verbose: bool = False, color: bool = False,
                unicode: bool = True) -> str:
    """The whole text report; info findings and passing rows only with verbose; the GPU
    table's bars in Unicode, or ASCII when `unicode` is false (an output that cannot carry it)."""
    from tfdoctor.pictures import gpu_table
    from tfdoctor.pictures.text import render_gpu_table

    lines = [target_line(report), headline(report), summary_line(report), ""]
    shown = [f for f in report.findings if verbose or f.severity is not Severity.INFO]
    for group in group_findings(tuple(shown)):
        lines.extend(render_group(group, color))
        lines.append("")
    hidden = len(report.findings) - len(shown)
    if hidden:
        lines.append(f"({hidden} info finding(s) hidden; -v shows them)")
        lines.append("")
    lines.extend(render_gpu_table(gpu_table(report.facts), unicode, color))
    lines.extend(render_fits(report, color))
    lines.extend(render_smoke(report))
    lines.extend(render_asks(report))
    lines.append("Checks:")
    for o in report.outcomes:
        if not verbose and o.status in (CheckStatus.PASSED, CheckStatus.NOT_APPLICABLE):
            continue
        badge, fg = BADGE[o.status]
        badge = click.style(badge, fg=fg) if (color and fg) else badge
        why = f" ({o.reason})" if o.reason else ""
        lines.append(f"  {badge} " + printable(f"{o.check:<24} {o.title}{why}"))
    tally = {status: sum(o.status is status for o in report.outcomes) for status in CheckStatus}
    lines.append("  " + ", ".join(f"{n} {status.value}" for status, n in tally.items() if n)
                 + ("" if verbose else " (-v lists every check)"))
    return "\n".join(lines) + "\n"
