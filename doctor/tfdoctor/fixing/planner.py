"""From a diagnosis to a fix plan: which script or recipe fixes each finding, with what arguments.

The checks already name the fix and the exact commands (Finding.remediation); the planner turns
pip commands into arguments of the fix script, turns every library TensorFlow's RUNPATH misses
into a start-up preload (a .pth file: it works however the interpreter starts, issue 13), folds
the environment-variable fixes that still need a shell into one activation hook, and prints the
rest (root, reboots) for a person.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from datetime import datetime, timezone

from tfdoctor.facts import Facts
from tfdoctor.findings import Command, Finding
from tfdoctor.fixing.model import FixPlan, FixStep, this_host
from tfdoctor.fixing.scripts import load_manual, script_for
from tfdoctor.report import Report

HOOK = "activation-hook-ld-library-path"
PRELOAD_FILE = "tfdoctor-preload.pth"
DEPENDENCY_ORDER = ("libnvJitLink", "libcublasLt", "libcublas.", "libcusparse", "libcufft",
                    "libcurand", "libcusolver")
"""Preload order: a library another one needs comes first (cuSOLVER needs cuBLAS(Lt), cuSPARSE
and nvJitLink; cuSPARSE needs nvJitLink: readelf -d of the CUDA 12 pip wheels)."""


def plan_fixes(report: Report) -> FixPlan:
    """The plan for this report's target interpreter; never touches the machine."""
    facts = report.facts
    steps: list[FixStep] = []
    hook: dict[str, list[str]] = {"prepend": [], "remove": [], "cvd": [], "preload": []}
    hook_findings: list[str] = []
    preload_findings: list[str] = []
    for f in report.findings:
        rem = f.remediation
        if rem is None:
            continue
        script = script_for(rem.fix_id)
        if script is not None and script.id == HOOK:
            if env_kind(facts) == "system":
                steps.append(_manual_step(f))  # no activation to hook: the user's profile
                continue
            _hook_options(f, facts, hook)
            if rem.fix_id == HOOK and preload_site(facts) is not None:
                preload_findings.append(f.id)
            else:
                hook_findings.append(f.id)
        elif script is not None and not script.needs_root and facts.python.prefix:
            steps.append(_pip_step(f, facts, script.summary, script.reversible))
        else:
            steps.append(_manual_step(f))
    if hook_findings:
        steps.append(_hook_step(facts, hook, tuple(hook_findings), report))
    if preload_findings and hook["preload"]:
        steps.append(_preload_step(facts, hook["preload"], tuple(preload_findings)))
    return FixPlan(python=facts.python.executable, prefix=facts.python.prefix or "",
                   env_kind=env_kind(facts), host=this_host(),
                   created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   findings=tuple(f.id for f in report.findings),
                   steps=_merge(steps, facts.python.executable))


def env_kind(facts: Facts) -> str:
    if facts.python.is_conda:
        return "conda"
    return "venv" if facts.python.is_venv else "system"


def pip_commands(python: str, args: tuple[str, ...]) -> tuple[str, ...]:
    """The pip commands a fix script with these arguments runs, as a person would type them."""
    removes = [args[i + 1] for i in range(0, len(args) - 1) if args[i] == "--remove"]
    rest = _install_args(args)
    out = [shlex.join([python, "-m", "pip", "uninstall", "-y", name]) for name in removes]
    if rest:
        out.append(shlex.join([python, "-m", "pip", "install", *rest]))
    return tuple(out)


def _pip_step(f: Finding, facts: Facts, summary: str, reversible: bool) -> FixStep:
    """Script arguments from the finding's pip commands; anything else stays manual."""
    assert f.remediation is not None
    if f.remediation.fix_id == "remove-conflicting-tf":
        args: tuple[str, ...] | None = _conflict_args(facts)
    else:
        args = _args_from_commands(f.remediation.commands, facts.python.executable)
    if args is None:
        return _manual_step(f)
    return FixStep(fix_id=f.remediation.fix_id, kind="pip", summary=summary, findings=(f.id,),
                   commands=shown_commands("pip", args, facts.python.executable), args=args,
                   removes=removed(args), reversible=reversible)


def _args_from_commands(commands: tuple[str, ...], python: str) -> tuple[str, ...] | None:
    """`"<python>" -m pip uninstall -y A` / `... install ARGS` -> `--remove A ARGS`, from each
    command's own argv (checks make them as `Command`s); a command without one stays manual."""
    removes: list[str] = []
    install: list[str] = []
    for command in commands:
        if not isinstance(command, Command):
            return None
        argv = list(command.argv)
        if argv[:3] != [python, "-m", "pip"] or len(argv) < 5:
            return None
        if argv[3] == "uninstall":
            for name in (a for a in argv[4:] if not a.startswith("-")):
                removes += ["--remove", name]
        elif argv[3] == "install" and not install:
            install = argv[4:]
        else:
            return None
    return tuple(removes + install)


def _conflict_args(facts: Facts) -> tuple[str, ...]:
    """Keep `tensorflow` on a GPU machine, else the distribution whose files are on disk.

    pip lets the distributions overwrite each other's files, so the kept one is reinstalled
    without dependencies (`--force-reinstall --no-deps`) to make its files whole again.
    """
    tf = facts.tensorflow
    dists = list(tf.distributions) if tf else []
    names = [d.name for d in dists]
    keep = ("tensorflow" if "tensorflow" in names and facts.driver.gpus else None) \
        or (tf.files_from if tf and tf.files_from in names else None) \
        or ("tensorflow" if "tensorflow" in names else names[0])
    version = next(d.version for d in dists if d.name == keep)
    removes = [a for n in names if n != keep for a in ("--remove", n)]
    return (*removes, "--force-reinstall", "--no-deps", f"{keep}=={version}")


def _hook_options(f: Finding, facts: Facts, hook: dict[str, list[str]]) -> None:
    """What the activation hook must change for this finding."""
    ev = f.evidence
    fix = f.remediation.fix_id if f.remediation else ""
    if fix == HOOK:
        # The library's own facts, not the evidence's "a, b" text (the check joined it for people).
        lib = next((x for x in facts.libraries if x.soname == ev.get("library.soname")), None)
        pip_copies = [p for p in (lib.other_copies if lib else ()) if "/nvidia/" in p]
        if preload_site(facts) is not None:
            hook["preload"] += pip_copies[:1]
        else:
            hook["prepend"] += [os.path.dirname(p) for p in pip_copies[:1]]
    elif fix == "remove-stub-libcuda-from-path" and facts.cuda_driver.library:
        hook["remove"].append(os.path.dirname(facts.cuda_driver.library))
    elif fix == "remove-from-ld-library-path" and ev.get("library.path", "/").startswith("/"):
        hook["remove"].append(os.path.dirname(ev["library.path"]))
    elif (fix == "unset-cuda-visible-devices" and "env.CUDA_VISIBLE_DEVICES" in ev
          and not hook["cvd"]):
        value = ev["env.CUDA_VISIBLE_DEVICES"]
        hook["cvd"] = [value, _valid_prefix(value) if f.id.endswith("malformed") else ""]


def _valid_prefix(value: str) -> str:
    """The entries CUDA did read: everything before the first malformed one."""
    good = []
    for entry in (e.strip() for e in value.split(",")):
        if not (entry.isdigit() or entry.startswith(("GPU-", "MIG-"))):
            break
        good.append(entry)
    return ",".join(good)


def hook_target(facts: Facts) -> tuple[str, tuple[str, ...]]:
    """The hook script's TARGET argument and the files it writes, for a venv or conda env."""
    prefix = facts.python.prefix or ""
    if env_kind(facts) == "conda":
        return prefix, hook_files("conda", prefix)
    activate = os.path.join(prefix, "bin", "activate")
    return activate, hook_files("venv", activate)


HOOK_MODES = ("venv", "conda", "preload")


def hook_files(mode: str, target: str) -> tuple[str, ...]:
    """The files the hook script writes in MODE for TARGET (its last two arguments)."""
    if mode == "conda":
        conda = os.path.join(target, "etc", "conda")
        return (os.path.join(conda, "activate.d", "tfdoctor.sh"),
                os.path.join(conda, "deactivate.d", "tfdoctor.sh"))
    if mode == "venv":
        # The script also hooks activate.fish and activate.csh when the venv has them (listed
        # always: a file that is not there stays absent, and the preview shows no change for it).
        return (target, target + ".fish", target + ".csh")
    # preload: the .pth file and the readable code it runs beside it
    return (target, target.removesuffix(".pth") + ".py")


def shown_commands(kind: str, args: tuple[str, ...], python: str) -> tuple[str, ...]:
    """What a person is shown for a script step: the pip commands the pip scripts run with
    these arguments, or the hook script's own command line. Derived from the arguments that
    run, so a plan cannot show one thing and do another."""
    if kind == "pip":
        return pip_commands(python, args)
    script = script_for(HOOK)
    assert script is not None
    return (shlex.join(["sh", str(script.path), *args]),)


def removed(args: tuple[str, ...]) -> tuple[str, ...]:
    """The distributions a pip step's `--remove NAME` arguments uninstall."""
    return tuple(args[i + 1] for i in range(len(args) - 1) if args[i] == "--remove")


def preload_site(facts: Facts) -> tuple[str, str] | None:
    """(site-packages dir of TensorFlow, its .dist-info) for a start-up preload; None when the
    target is not a venv or conda env, TensorFlow is not inside it, or its distribution is
    unknown (then the activation hook prepends the directories instead)."""
    tf = facts.tensorflow
    if env_kind(facts) == "system" or tf is None or not tf.package_dir:
        return None
    site = os.path.dirname(tf.package_dir.rstrip("/"))
    prefix = (facts.python.prefix or "").rstrip("/")
    if not prefix or not site.startswith(prefix + "/"):
        return None  # TensorFlow outside the env (--system-site-packages): only the env changes
    dist = next((d for d in tf.distributions if d.name == (tf.files_from or d.name)
                 and (d.location in (None, site))), None)
    if dist is None or dist.version == "unknown":
        return None
    return site, os.path.join(site, f"{dist.name.replace('-', '_')}-{dist.version}.dist-info")


def preload_path(facts: Facts) -> str | None:
    """Where the start-up preload goes: a .pth file beside TensorFlow."""
    where = preload_site(facts)
    return os.path.join(where[0], PRELOAD_FILE) if where else None


def _preload_step(facts: Facts, libs: list[str], findings: tuple[str, ...]) -> FixStep:
    """Preload, by absolute path and in dependency order, what TensorFlow's RUNPATH misses."""
    where = preload_site(facts)
    assert where is not None
    site, dist_info = where

    def rank(path: str) -> int:
        name = os.path.basename(path)
        return next((i for i, p in enumerate(DEPENDENCY_ORDER) if name.startswith(p)),
                    len(DEPENDENCY_ORDER))

    args: list[str] = []
    for lib in sorted(dict.fromkeys(libs), key=rank):
        args += ["--preload", lib]
    pth = os.path.join(site, PRELOAD_FILE)
    args += ["--only-for", dist_info, "preload", pth]
    script = script_for(HOOK)
    assert script is not None
    return FixStep(fix_id=HOOK, kind="hook",
                   summary="Preload the CUDA libraries TensorFlow's RUNPATH misses at interpreter "
                           "start-up (a .pth file: activated shells, bare python, Jupyter, IDEs)",
                   findings=findings, commands=shown_commands("hook", tuple(args), ""),
                   args=tuple(args), files=hook_files("preload", pth), reversible=script.reversible)


def _hook_step(facts: Facts, hook: dict[str, list[str]], findings: tuple[str, ...],
               report: Report) -> FixStep:
    args: list[str] = []
    for d in dict.fromkeys(hook["prepend"]):
        args += ["--prepend", d]
    for d in dict.fromkeys(hook["remove"]):
        args += ["--remove", d]
    if hook["cvd"]:
        args += ["--cvd-from", hook["cvd"][0], "--cvd-to", hook["cvd"][1]]
    target, files = hook_target(facts)
    args += [env_kind(facts), target]
    script = script_for(HOOK)
    assert script is not None
    # With a preload step beside it, this step takes the fix id of its own first finding (the
    # same script covers it), so that the two steps stay apart in the plan and the journal.
    fix_id = HOOK
    if hook["preload"]:
        fix_id = next((f.remediation.fix_id for f in report.findings if f.id in findings
                       and f.remediation is not None), HOOK)
    return FixStep(fix_id=fix_id, kind="hook", summary=script.summary, findings=findings,
                   commands=shown_commands("hook", tuple(args), ""), args=tuple(args),
                   files=files, reversible=script.reversible)


def _manual_step(f: Finding) -> FixStep:
    """A recipe for a person: the finding's own commands, else the generic ones."""
    assert f.remediation is not None
    rem = f.remediation
    recipe = load_manual().get(rem.fix_id)
    commands = rem.commands or (recipe.commands if recipe else ())
    return FixStep(fix_id=rem.fix_id, kind="manual",
                   summary=recipe.summary if recipe else (f.hint or f.message),
                   findings=(f.id,), commands=commands,
                   needs_root=rem.needs_root or bool(recipe and recipe.needs_root),
                   runnable=bool(recipe and recipe.runnable), reversible=False)


def _merge(steps: list[FixStep], python: str) -> tuple[FixStep, ...]:
    """One step per fix id and kind: pip resolves several pins better in one command.

    A pip step with `--no-deps` (tf-keras beside tensorflow-cpu) stays a step of its own: in a
    merged command the flag would keep pip from installing the other pins' dependencies.
    """
    merged: dict[tuple[str, str, bool], FixStep] = {}
    for s in steps:
        key = (s.fix_id, s.kind, s.kind == "pip" and "--no-deps" in s.args)
        old = merged.get(key)
        if old is None:
            merged[key] = s
        elif s.kind == "pip":
            removes = tuple(dict.fromkeys(old.removes + s.removes))
            rest = tuple(dict.fromkeys(_install_args(old.args) + _install_args(s.args)))
            args = tuple(a for n in removes for a in ("--remove", n)) + rest
            merged[key] = replace(old, findings=old.findings + s.findings, args=args,
                                  removes=removes, commands=shown_commands("pip", args, python))
        else:
            merged[key] = replace(old, findings=old.findings + s.findings,
                                  commands=tuple(dict.fromkeys(old.commands + s.commands)))
    return tuple(merged.values())


def _install_args(args: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for i, a in enumerate(args)
                 if a != "--remove" and (i == 0 or args[i - 1] != "--remove"))
