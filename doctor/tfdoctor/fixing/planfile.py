"""A saved fix plan read back (`fix --plan FILE`): refused unless it runs exactly what it shows.

A plan file is input from outside: it may be damaged, hand-edited or hostile. Every field must
have the type `--plan-out` writes; every script step's displayed commands, removed
distributions and written files must be the ones derived from the arguments that will run
(planner.shown_commands); anything else is one line and exit code 2 (FixError), never a
traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path
from typing import Any

from tfdoctor.errors import FixError
from tfdoctor.fixing.model import KINDS, PLAN_VERSION, FixPlan, FixStep, this_host
from tfdoctor.fixing.planner import HOOK, HOOK_MODES, hook_files, removed, shown_commands
from tfdoctor.fixing.scripts import load_scripts, script_for

MAX_PLAN_BYTES = 1 << 20
"""A real plan is a few kilobytes; anything near this is not one."""
ENV_KINDS = ("venv", "conda", "system")


class _Bad(Exception):
    """Why a plan is not one, in words (becomes a FixError naming the file)."""


def load_plan(path: Path) -> FixPlan:
    """A saved plan, refused when it is not exactly one this tfdoctor would make and run here."""
    data = _read_json(path)
    try:
        plan = _plan(data)
        for number, step in enumerate(plan.steps, 1):
            _runs_what_it_shows(step, plan.python, f"step {number} ({step.fix_id})")
    except _Bad as exc:
        raise FixError(f"{path} is not a usable fix plan: {exc}") from None
    if plan.host != this_host():
        raise FixError(f"{path} was made on {plan.host}; a fix plan applies only where it was made")
    if not Path(plan.python).exists():
        raise FixError(f"{path}: its interpreter {plan.python} no longer exists")
    return plan


def _read_json(path: Path) -> Any:
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise FixError(f"{path} is not a regular file")
            raw = f.read(MAX_PLAN_BYTES + 1)
    except OSError as exc:
        raise FixError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_PLAN_BYTES:
        raise FixError(f"{path} is over {MAX_PLAN_BYTES >> 20} MiB: not a fix plan")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise FixError(f"{path} is not a fix plan: JSON nested too deep") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise FixError(f"{path} is not JSON: {exc}") from None


def _plan(data: Any) -> FixPlan:
    if not isinstance(data, dict):
        raise _Bad("not a JSON object")
    if data.get("plan_version") != PLAN_VERSION or isinstance(data.get("plan_version"), bool):
        raise _Bad(f"plan_version {PLAN_VERSION} expected")
    steps = _field(data, "steps", list)
    plan = FixPlan(python=_text(data, "python"), prefix=_text(data, "prefix"),
                   env_kind=_text(data, "env_kind"), host=_text(data, "host"),
                   created_at=_text(data, "created_at"), findings=_texts(data, "findings"),
                   steps=tuple(_step(s, f"steps[{i}]") for i, s in enumerate(steps)))
    if plan.env_kind not in ENV_KINDS:
        raise _Bad(f"env_kind {plan.env_kind!r} is not one of {', '.join(ENV_KINDS)}")
    if not os.path.isabs(plan.python) or (plan.prefix and not os.path.isabs(plan.prefix)):
        raise _Bad("python and prefix must be absolute paths")
    return plan


def _step(data: Any, where: str) -> FixStep:
    if not isinstance(data, dict):
        raise _Bad(f"{where} is not a JSON object")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(FixStep):
        if f.name not in data and f.default is not dataclasses.MISSING:
            continue
        name = f"{where}.{f.name}"
        if f.type in ("bool", bool):
            values[f.name] = _field(data, f.name, bool, name)
        elif f.name in ("findings", "commands", "args", "files", "removes"):
            values[f.name] = _texts(data, f.name, name)
        else:
            values[f.name] = _text(data, f.name, name)
    step = FixStep(**values)
    if step.kind not in KINDS:
        raise _Bad(f"{where}.kind {step.kind!r} is not one of {', '.join(KINDS)}")
    return step


def _runs_what_it_shows(step: FixStep, python: str, where: str) -> None:
    """_Bad unless the step's commands, removes and files are those its arguments give."""
    if step.kind == "manual":
        if step.args or step.files or step.removes:
            raise _Bad(f"{where}: a manual step runs only its commands, it has no "
                       "args, files or removes")
        return  # what runs (under --allow-root, confirmed) is exactly its commands
    scripts = load_scripts()
    if step.kind == "pip":
        script = scripts.get(step.fix_id)
        if script is None or script.id == HOOK or script.needs_root:
            raise _Bad(f"{where}: no pip fix script {step.fix_id}.sh in this tfdoctor")
        files: tuple[str, ...] = ()
        removes = removed(step.args)
    else:
        script = scripts.get(step.fix_id) or script_for(step.fix_id)
        if script is None or script.id != HOOK:
            raise _Bad(f"{where}: {step.fix_id} is not applied by the activation hook")
        if len(step.args) < 2 or step.args[-2] not in HOOK_MODES:
            raise _Bad(f"{where}: the hook's arguments must end with MODE TARGET "
                       f"(MODE one of {', '.join(HOOK_MODES)})")
        files, removes = hook_files(step.args[-2], step.args[-1]), ()
    shown = shown_commands(step.kind, step.args, python)
    if step.commands != shown:
        raise _Bad(f"{where} shows {' && '.join(step.commands) or 'no command'} but would run "
                   f"{' && '.join(shown)}")
    if step.removes != removes:
        raise _Bad(f"{where} says it removes {', '.join(step.removes) or 'nothing'} but would "
                   f"remove {', '.join(removes) or 'nothing'}")
    if step.kind == "hook" and step.files != files:
        raise _Bad(f"{where} lists {', '.join(step.files) or 'no file'} but would write "
                   f"{', '.join(files)}")


def _field(data: dict[str, Any], key: str, kind: type, name: str | None = None) -> Any:
    if key not in data:
        raise _Bad(f"{name or key} is missing")
    value = data[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise _Bad(f"{name or key} must be a JSON {_JSON_NAMES[kind]}")
    return value


def _text(data: dict[str, Any], key: str, name: str | None = None) -> str:
    value = _field(data, key, str, name)
    if "\0" in value:
        raise _Bad(f"{name or key} contains a NUL character")
    return str(value)


def _texts(data: dict[str, Any], key: str, name: str | None = None) -> tuple[str, ...]:
    values = _field(data, key, list, name)
    if not all(isinstance(v, str) and "\0" not in v for v in values):
        raise _Bad(f"{name or key} must be a list of strings")
    return tuple(values)


_JSON_NAMES = {str: "string", list: "list", bool: "true or false", dict: "object"}
