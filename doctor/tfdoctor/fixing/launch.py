"""How the user's interpreter will start after a fix, for judging the apply in that mode.

The start-up preload (tfdoctor-preload.pth) acts in every launch, so the strictest mode, the
bare interpreter with no activation, is the one to judge it in. A shell hook (venv
bin/activate, conda activate.d) acts only after activation, so when a plan has one the judge
runs with the environment that activation leaves. `fix --apply` calls `judge_env` for its
"after" diagnosis and `judge_report` for the diagnosis itself (fixing/commands.py).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from tfdoctor.fixing.model import FixPlan
from tfdoctor.fixing.planner import PRELOAD_FILE
from tfdoctor.host import run_command

if TYPE_CHECKING:
    from tfdoctor.report import Report


def shell_hook_file(plan: FixPlan) -> str | None:
    """The file a shell sources to get the plan's shell hook; None when the plan has none."""
    for step in plan.steps:
        if step.kind == "hook" and step.files and not step.files[0].endswith(PRELOAD_FILE):
            return step.files[0]
    return None


def judge_env(plan: FixPlan, base: dict[str, str] | None = None) -> dict[str, str] | None:
    """The environment to diagnose in after the apply: activation's when there is a shell
    hook, else None (this process's environment: the bare interpreter, as a kernel, an IDE or
    cron start it). None too when sourcing the hook fails (then the bare mode is judged)."""
    script = shell_hook_file(plan)
    if script is None:
        return None
    dump = "import json, os; print(json.dumps(dict(os.environ)))"
    result = run_command(["sh", "-c", '. "$1" >/dev/null 2>&1; exec "$2" -I -c "$3"', "sh",
                          script, plan.python, dump], timeout=60,
                         env=dict(os.environ) if base is None else base)
    try:
        return dict(json.loads(result.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return None


def judge_report(plan: FixPlan, base: dict[str, str] | None = None, *,
                 loader: bool = False) -> Report:
    """The static diagnosis after an apply, in the launch mode the fix must hold in
    (`judge_env`); it models the preload (python.preloads). `loader=True` also asks
    TensorFlow's own DSO loader (about half a second; tfloader.py), which can add a
    tf-loader-disagrees finding the before-diagnosis could not have: off for the judge of
    "no new finding", on for a caller that wants TensorFlow's word on the result."""
    from tfdoctor.host import Host
    from tfdoctor.probes import collect_facts
    from tfdoctor.registry import CheckConfig
    from tfdoctor.report import build_report

    env = judge_env(plan, base)
    host = Host(python=plan.python,
                env=env if env is not None else (dict(os.environ) if base is None else base))
    return build_report(collect_facts(host, tf_loader=loader), CheckConfig())
