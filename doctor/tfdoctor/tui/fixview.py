"""How the fix screen words a plan: steps numbered in the order shown, each cause once, and what a
pip step changes (from-version -> to-version). Plain functions over the plan and the report."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.content import Content

if TYPE_CHECKING:
    from tfdoctor.fixing.model import FixPlan, FixStep


OUTPUT_LINES = 8
"""The applier's last lines of output shown while it runs."""


def tags(step: FixStep) -> str:
    """Who applies it and how: the CLI's tags, plus "applied by tfdoctor" or "manual"."""
    out = ["applied by tfdoctor" if step.automatic else "manual: for you to run", step.kind]
    if step.needs_root:
        out.append("needs root")
    out.append("reversible" if step.reversible else "not reversible")
    return ", ".join(out)


def shown_order(plan: FixPlan) -> list[int]:
    """Plan indexes in the order the screen lists them: the steps tfdoctor applies, then the
    manual ones, each group in plan order. The numbers the screen prints follow this order
    ("2." never above "1.")."""
    auto = [i for i, s in enumerate(plan.steps) if s.automatic]
    return auto + [i for i, s in enumerate(plan.steps) if not s.automatic]


def numbers(plan: FixPlan) -> dict[int, int]:
    """Plan index -> the step's number on screen (and in the confirmation)."""
    return {index: n for n, index in enumerate(shown_order(plan), 1)}


def causes(step: FixStep) -> tuple[str, ...]:
    """The finding ids a step fixes, each once (a step fixing three missing libraries of one
    cause listed the cause three times)."""
    return tuple(dict.fromkeys(step.findings))


def once(step: FixStep) -> FixStep:
    """The step with each cause once, for rendering."""
    return replace(step, findings=causes(step))


def normalise(name: str) -> str:
    """PEP 503: the key PythonFacts.packages uses."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_changes(step: FixStep, installed: dict[str, str]) -> list[str]:
    """What a pip step changes, one line a package: "numpy 1.21.0 -> >=1.26.0" (the version
    installed now, the requirement pip will satisfy), "tf-keras 2.15.0 -> removed"."""
    if step.kind != "pip":
        return []
    out, args = [], step.args
    for i, arg in enumerate(args):
        if arg == "--remove" or arg.startswith("-"):
            continue
        if i and args[i - 1] == "--remove":
            out.append(f"{arg} {installed.get(normalise(arg), 'not installed')} -> removed")
            continue
        name = re.split(r"[<>=!~\[;@ ]", arg, maxsplit=1)[0]
        wanted = arg[len(name):].strip() or "the newest release"
        out.append(f"{name} {installed.get(normalise(name), 'not installed')} -> {wanted}")
    return out


DIFF_STYLE = (("   +++ ", "bold"), ("   --- ", "bold"), ("   @@", "$text-accent"),
              ("   +", "$text-success"), ("   -", "$text-error"))
"""A step's diff lines (render_step indents them by 3) and their style; commands stay plain."""


def styled_step(text: str) -> Content:
    """A rendered step with its diff coloured: added lines green, removed red, hunks accented
    (theme variables, so 16 colours, light themes and NO_COLOR follow; +/- still say it)."""
    lines = []
    for line in text.split("\n"):
        style = next((s for prefix, s in DIFF_STYLE if line.startswith(prefix)), "")
        lines.append(Content.styled(line, style) if style else Content(line))
    return Content("\n").join(lines)


def installed_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The packages whose version differs between two reports: "numpy 1.21.0 -> 2.1.3"."""
    names = sorted(set(before) | set(after))
    return [f"{n} {before.get(n, 'not installed')} -> {after.get(n, 'removed')}"
            for n in names if before.get(n) != after.get(n)]


def progress_lines(status: str, live: list[str]) -> list[Content]:
    """What a running apply shows under its clock: the applier's status line (the step running
    now), then the commands' output framed as pip frames a child's, the last OUTPUT_LINES of it:
    the lines as they are written when there are any, else the finished commands' logs."""
    head, _, logs = status.partition("\n")
    if head.startswith("$ "):  # an applier whose output() is all log, no status line
        head, logs = "", status
    lines = live or logs.splitlines()
    parts = [Content.styled(head, "bold")] if head else []
    if lines:
        parts.append(Content.styled("\n".join([f"[{len(lines)} lines of output]",
                                               *lines[-OUTPUT_LINES:], "[end of output]"]),
                                    "$text-muted"))
    return parts
