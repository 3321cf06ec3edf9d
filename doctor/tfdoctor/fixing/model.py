"""A fix plan: the steps `tfdoctor fix` shows and applies, saved and loaded as JSON."""

from __future__ import annotations

import dataclasses
import json
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfdoctor.errors import FixError
from tfdoctor.files import write_atomic

PLAN_VERSION = 1
KINDS = ("pip", "hook", "manual")


@dataclass(frozen=True, slots=True)
class FixStep:
    """One fix: a script tfdoctor runs (pip, hook) or commands printed for a person (manual)."""

    fix_id: str
    kind: str
    """pip (runs fixes/<id>.sh with pip of the target), hook (writes activation files), manual."""
    summary: str
    findings: tuple[str, ...]
    """Ids of the findings this step fixes."""
    commands: tuple[str, ...]
    """What a person would type for the same change, quoted for a POSIX shell."""
    args: tuple[str, ...] = ()
    """Arguments of the fix script (kind pip and hook)."""
    files: tuple[str, ...] = ()
    """Files the step writes (backed up before, diffed in the dry run)."""
    removes: tuple[str, ...] = ()
    """Distributions the step uninstalls (backed up before)."""
    needs_root: bool = False
    runnable: bool = True
    """False for manual recipes tfdoctor only prints (reboots, driver installs)."""
    reversible: bool = True

    @property
    def automatic(self) -> bool:
        """Applied by `--apply` without root."""
        return self.kind != "manual"


@dataclass(frozen=True, slots=True)
class FixPlan:
    """Every step for one target interpreter, in the order they are applied."""

    python: str
    prefix: str
    env_kind: str
    """venv, conda or system (a Python that is neither: no activation hook possible)."""
    host: str
    """Node name the plan was made on; a plan applies only there."""
    created_at: str
    findings: tuple[str, ...]
    """Finding ids of the diagnosis the plan was made from."""
    steps: tuple[FixStep, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["plan_version"] = PLAN_VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FixPlan:
        """A plan from `to_dict` output; FixError when it is not one."""
        if not isinstance(data, dict) or data.get("plan_version") != PLAN_VERSION:
            raise FixError(f"not a tfdoctor fix plan (plan_version {PLAN_VERSION} expected)")
        try:
            steps = tuple(_step(s) for s in data["steps"])
            return cls(python=str(data["python"]), prefix=str(data["prefix"]),
                       env_kind=str(data["env_kind"]), host=str(data["host"]),
                       created_at=str(data["created_at"]),
                       findings=tuple(map(str, data["findings"])), steps=steps)
        except (KeyError, TypeError, ValueError) as exc:
            raise FixError(f"damaged fix plan: {exc}") from None


def _step(data: dict[str, Any]) -> FixStep:
    fields = {f.name: data[f.name] for f in dataclasses.fields(FixStep) if f.name in data}
    for name in ("findings", "commands", "args", "files", "removes"):
        if name in fields:
            fields[name] = tuple(str(v) for v in fields[name])
    step = FixStep(**fields)
    if step.kind not in KINDS:
        raise ValueError(f"unknown step kind {step.kind!r}")
    return step


def this_host() -> str:
    return socket.gethostname()


def save_plan(plan: FixPlan, path: Path) -> None:
    """Write the plan atomically, readable by its owner only (it names the host and paths).
    planfile.load_plan reads it back."""
    write_atomic(path, json.dumps(plan.to_dict(), indent=2) + "\n")
