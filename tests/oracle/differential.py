"""Run real TensorFlow and tfdoctor on the same fake machine (tests/fakegpu/run.py).

`run_tensorflow` runs tf_probe.py in the target interpreter: its JSON answer, TensorFlow's log,
and the GPUs TensorFlow kept when it created its devices ("Adding visible gpu devices: 0, 1", or
none after "Ignoring visible gpu device" / "Cannot dlopen some GPU libraries"). `run_tfdoctor`
runs `tfdoctor --quick --json` there and gives the report with tfdoctor's usable-GPU count.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfdoctor.checks.usable import GpuCounts, gpu_counts
from tfdoctor.facts import Facts
from tfdoctor.smoke.runner import VMODULE

HERE = Path(__file__).resolve().parent
RUN = HERE.parent / "fakegpu" / "run.py"
PROBE = HERE / "tf_probe.py"
SCENARIOS = HERE.parent / "probes_driver" / "scenarios"
TFDOCTOR = [sys.executable, "-m", "tfdoctor"]
# absl's format (TF >= 2.18: "W0000 00:00:1795464.4 2249 gpu_device.cc:2459] ...") and TSL's older
# one (TF 2.17: "2026-11-23 20:20:09.021215: I tensorflow/core/.../gpu_device.cc:2446] ...").
LOG_LINE = re.compile(r"^(?:([IWEF])\d{4} [\d:.]+\s+\d+ |\d{4}-\d\d-\d\d [\d:.]+: ([IWEF]) )"
                      r"(?:\S*/)?(\S+:\d+)\] (.*)$")
ADDING = re.compile(r"Adding visible gpu devices: ?([\d, ]*)")
NOISE = ("oneDNN custom operations", "cpu_feature_guard", "rebuild TensorFlow with the appropriate")


@dataclass(frozen=True)
class Machine:
    """A fake machine and how the target is started on it."""

    run_args: tuple[str, ...] = ("--gpus", "1")
    """Arguments of tests/fakegpu/run.py (before `--`)."""
    ld_library_path: tuple[str, ...] = ()
    """Directories added after the stub driver's (site-packages relative paths start with {site})."""
    env: dict[str, str] = field(default_factory=dict)
    scenario: tuple[str, dict[str, Any]] | None = None
    """A driver scenario of tests/probes_driver/scenarios and a patch merged into it (--scenario)."""

    def argv(self, scratch: Path) -> list[str]:
        """run.py's arguments, the patched scenario written under `scratch`."""
        if self.scenario is None:
            return list(self.run_args)
        name, patch = self.scenario
        doc = json.loads((SCENARIOS / name).read_text())
        for key, value in patch.items():
            doc[key] = {**doc.get(key, {}), **value} if isinstance(value, dict) else value
        path = scratch / f"patched-{name}"
        path.write_text(json.dumps(doc))
        return [*self.run_args, "--scenario", str(path)]


@dataclass(frozen=True)
class TfOutcome:
    answer: dict[str, Any]
    kept: int
    """GPUs TensorFlow kept for its devices ("Adding visible gpu devices"), 0 when it logged none."""
    log: tuple[str, ...]
    """TensorFlow's own log lines ("W file.cc:N] message", severity first), start-up noise left out."""
    raw: tuple[str, ...] = ()
    """The same lines as TensorFlow printed them (tests/recorded/tf-logs keeps them)."""


ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS", Path.home() / ".cache" / "tfdoctor" / "test-envs"))
_OTHER_SITE = re.compile(r"\{site:([\w.-]+)\}")


def _expand(path: str, site: Path) -> str:
    """{site}: the target's site-packages; {site:NAME}: that of test venv NAME (tests/envs)."""
    def other(match: re.Match[str]) -> str:
        return str(next((ENVS / match.group(1) / "lib").glob("python3*/site-packages")))

    return _OTHER_SITE.sub(other, path.replace("{site}", str(site)))


def _env(machine: Machine, site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")}
    extra = [_expand(p, site) for p in machine.ld_library_path]
    if extra:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(extra)
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"
    env["TF_CPP_VMODULE"] = VMODULE  # as the smoke child runs it: names what TF kept and why
    env.update(machine.env)
    return env


def run_tensorflow(machine: Machine, python: str, site: Path, scratch: Path,
                   timeout: float = 180) -> TfOutcome:
    proc = subprocess.run([sys.executable, str(RUN), *machine.argv(scratch), "--", python, str(PROBE)],
                          capture_output=True, text=True, env=_env(machine, site), timeout=timeout)
    answer = next((json.loads(line[8:]) for line in proc.stdout.splitlines()
                   if line.startswith("TFPROBE ")), None)
    assert answer is not None, f"tf_probe.py gave no answer (exit {proc.returncode}): {proc.stderr[-2000:]}"
    log = tuple(f"{m.group(1) or m.group(2)} {m.group(3)}] {m.group(4)}"
                for line in proc.stderr.splitlines()
                if (m := LOG_LINE.match(line)) and not any(n in line for n in NOISE))
    raw = tuple(line for line in proc.stderr.splitlines()
                if LOG_LINE.match(line) and not any(n in line for n in NOISE))
    kept = 0
    for line in log:
        if (m := ADDING.search(line)):
            kept = len([d for d in m.group(1).split(",") if d.strip()])
    return TfOutcome(answer, kept, log, raw)


def run_tfdoctor(machine: Machine, python: str, site: Path, scratch: Path, timeout: float = 120
                 ) -> tuple[dict[str, Any], GpuCounts]:
    """The --quick report, and the GPUs tfdoctor says TensorFlow lists and can use."""
    proc = subprocess.run([sys.executable, str(RUN), *machine.argv(scratch), "--", *TFDOCTOR, "--quick",
                           "--json", "--python", python],
                          capture_output=True, text=True, env=_env(machine, site), timeout=timeout)
    assert proc.stdout.strip(), f"tfdoctor printed nothing (exit {proc.returncode}): {proc.stderr[-2000:]}"
    report = json.loads(proc.stdout)
    return report, gpu_counts(Facts.from_dict(report["facts"]))


def finding_ids(report: dict[str, Any]) -> list[str]:
    return [f["id"] for f in report["findings"]]
