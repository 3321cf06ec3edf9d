"""A fix plan and an apply as text for people: every command, every diff, before and after."""

from __future__ import annotations

import shlex
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from tfdoctor.findings import Finding, Severity
from tfdoctor.fixing.model import FixPlan, FixStep

if TYPE_CHECKING:  # apply.py imports this module: the words of an apply stay here, one way
    from tfdoctor.fixing.apply import ApplyResult
    from tfdoctor.fixing.preview import FileChange


def render_step(number: int, step: FixStep, changes: list[FileChange] | None = None) -> str:
    """One step: what it fixes, how (kind, root, reversible), its commands and diffs."""
    tags = [step.kind]
    if step.needs_root:
        tags.append("needs root")
    tags.append("reversible" if step.reversible else "not reversible")
    lines = [f"{number}. {step.fix_id}  [{', '.join(tags)}]  fixes: {', '.join(step.findings)}",
             f"   {step.summary}"]
    if step.kind == "manual":
        who = ("runs only with --apply --allow-root, after you confirm" if step.runnable
               and step.needs_root else "for you to run; tfdoctor does not")
        lines.append(f"   Commands ({who}):")
    for command in step.commands:
        lines.append(f"   $ {command}")
    for change in changes or ():
        if not change.changed:
            lines.append(f"   {change.path}: already as wanted (no change)")
            continue
        lines.append(f"   {'creates' if change.before is None else 'edits'} {change.path}:")
        lines += ["   " + line for line in change.diff().splitlines()]
    return "\n".join(lines) + "\n"


def render_plan(plan: FixPlan, previews: dict[int, list[FileChange]], *, dry_run: bool) -> str:
    if not plan.steps:
        return f"Nothing to fix for {plan.python}.\n"
    auto = sum(s.automatic for s in plan.steps)
    head = (f"Fix plan for {plan.python} ({plan.env_kind}): {len(plan.steps)} step(s), "
            f"{auto} tfdoctor can apply, {len(plan.steps) - auto} for a person.\n\n")
    body = "\n".join(render_step(i + 1, s, previews.get(i)) for i, s in enumerate(plan.steps))
    if not dry_run:
        return head + body
    tail = ("\nDry run: nothing was changed. Apply with:\n  "
            + shlex.join(["tfdoctor", "fix", "--python", plan.python, "--apply"]) + "\n")
    return head + body + tail


def undo_command(python: str) -> str:
    """The exact command that undoes an apply on this target: --python unless it is tfdoctor's own."""
    same = python == sys.executable
    return "tfdoctor fix --undo" + ("" if same else f" --python {shlex.quote(python)}")


def problem_counts(findings: Iterable[Finding]) -> Counter[str]:
    """What is wrong: warnings and errors, counted by id (an info finding notes, it is not wrong)."""
    return Counter(f.id for f in findings if f.severity is not Severity.INFO)


def outcome(before: Sequence[Finding], after: Sequence[Finding]
            ) -> tuple[list[str], list[str], list[str]]:
    """(fixed, still there, new): ids of problems, compared by what is wrong, not by name.

    An id that is a problem before and only an info finding after (cuda-library-missing for
    NVSHMEM, which only XLA's collectives use) is fixed; one with more problems after than before
    (a second library missing) is new as well as still there.
    """
    was, now = problem_counts(before), problem_counts(after)
    return ([i for i in was if not now[i]], [i for i in now if was[i]],
            [i for i in now if now[i] > was[i]])


def _listed(findings: Sequence[Finding]) -> str:
    """Ids in order, once each; an id seen only as info says so (it is not a problem)."""
    problems = {f.id for f in findings if f.severity is not Severity.INFO}
    ids = dict.fromkeys(f.id for f in findings)
    return ", ".join(i if i in problems else f"{i} (info)" for i in ids) or "no findings"


def render_apply(result: ApplyResult, before: Sequence[Finding], after: Sequence[Finding],
                 python: str | None = None) -> str:
    """Each step's outcome, then the findings before and after, and what the apply fixed."""
    lines = ["Applied:" if result.changed else "Nothing changed."]
    for r in result.steps:
        lines.append(f"  {r.fix_id}: {r.status}" + (f" ({r.detail})" if r.detail else ""))
    fixed, left, new = outcome(before, after)
    lines.append(f"Before: {_listed(before)}")
    lines.append(f"After:  {_listed(after)}")
    lines.append(f"Fixed: {', '.join(fixed) or 'none'}; still there: {', '.join(left) or 'none'}"
                 + (f"; new: {', '.join(new)}" if new else ""))
    if result.journal:
        undo = undo_command(python) if python else "tfdoctor fix --undo"
        lines.append(f"Journal and backups: {result.journal} (undo: {undo})")
    return "\n".join(lines) + "\n"
