"""Record this machine as a redacted fixture the tests replay: tests/recorded/NAME/.

    python benchmarks/record_machine.py NAME [--python PATH] [--quick] [--budget S] [--salt S]
        [--out DIR] [--note TEXT] [--force]

Runs tfdoctor's probes with TensorFlow's own loader (`tf-loader`), and the smoke work unless
--quick or the target has no TensorFlow (then the fixture holds the driver-side facts only),
redacts the facts (user, host, GPU UUIDs, serials and PCI ids become pseudonyms; paths keep their
shape) and writes:

    facts.json     the redacted facts (`tfdoctor replay tests/recorded/NAME/facts.json`)
    rules.json     the verdict, root cause, findings, and the GPUs TensorFlow lists and can use,
                   as the rules gave them when recorded (to read, never to test against)
    meta.json      what was recorded, when, with which tfdoctor, on what (GPU or not)

expected.json is then written by hand: the verdict, root cause, findings and GPU counts a person
judges right from what TensorFlow itself reported (smoke.devices, smoke.log_tail) and what the
machine is, with a "source" line saying so. tests/oracle/test_recorded.py replays every fixture
against it; a recorder that wrote it would only test the rules against themselves. Run it on every
machine with a real GPU you can reach, and commit the directory: those are the only recordings of
real hardware the tests have.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfdoctor.facts import Facts

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "recorded"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/record_machine.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="fixture name: a directory under --out (kebab-case)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter whose TensorFlow is recorded (default: this one)")
    parser.add_argument("--quick", action="store_true", help="no smoke work (no TensorFlow import)")
    parser.add_argument("--budget", type=float, default=300.0, help="smoke budget in seconds")
    parser.add_argument("--salt", default="tfdoctor-recorded",
                        help="redaction salt (stable pseudonyms; give a secret one for a fleet)")
    parser.add_argument("--out", type=Path, default=RECORDED, help=f"default {RECORDED}")
    parser.add_argument("--note", default="", help="one line for meta.json: the machine, what is odd")
    parser.add_argument("--force", action="store_true", help="overwrite an existing fixture")
    args = parser.parse_args(argv)
    if not args.name.replace("-", "").isalnum() or args.name != args.name.lower():
        parser.error("NAME must be kebab-case: lower-case letters, digits and dashes")
    return args


def expected_of(facts: Facts) -> dict[str, object]:
    """What today's rules say about the facts (rules.json; the replay test compares it with the
    hand-written expected.json)."""
    from tfdoctor.checks.usable import gpu_counts
    from tfdoctor.report import build_report

    report = build_report(facts)
    counts = gpu_counts(facts)
    return {
        "verdict": report.verdict,
        "root_cause": report.root_cause.id if report.root_cause else None,
        "findings": [f"{f.severity.value} {f.id}" for f in report.findings],
        "listed_gpus": counts.listed,
        "usable_gpus": counts.usable,
        "usable_gpus_why": counts.why,
    }


def record(args: argparse.Namespace) -> int:
    from tfdoctor.host import host_from_environment
    from tfdoctor.probes import collect_facts
    from tfdoctor.share.redact import Identity, Policy, Redactor

    target = args.out / args.name
    if target.exists() and not args.force:
        print(f"record_machine: {target} exists (--force overwrites)", file=sys.stderr)
        return 2
    host = host_from_environment(args.python)
    start = time.monotonic()
    facts = collect_facts(host, tf_loader=True)
    smoke_ran = False
    if facts.tensorflow is not None and not args.quick:
        from tfdoctor.smoke import run_smoke

        facts = replace(facts, smoke=run_smoke(host, budget=args.budget))
        smoke_ran = True
    seconds = time.monotonic() - start
    redactor = Redactor(Policy.make(args.salt, ()), Identity.of_this_process())
    redacted = redactor.facts(facts)
    text = json.dumps(redacted.to_dict(), indent=1, sort_keys=False) + "\n"
    leftovers = redactor.leftovers(text)
    if leftovers and not args.force:
        print("record_machine: not written, still identifying: " + "; ".join(leftovers), file=sys.stderr)
        return 1
    gpus = len(redacted.driver.gpus)
    meta = {
        "name": args.name,
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tool_version": redacted.tool_version,
        "gpus": gpus,
        "gpu_models": sorted({g.name or "?" for g in redacted.driver.gpus}),
        "driver_version": redacted.driver.driver_version,
        "tensorflow": redacted.tensorflow.version if redacted.tensorflow else None,
        "tf_loader": redacted.tf_loader.loader if redacted.tf_loader else None,
        "smoke": smoke_ran,
        "seconds": round(seconds, 1),
        "note": args.note,
    }
    target.mkdir(parents=True, exist_ok=True)
    (target / "facts.json").write_text(text)
    (target / "rules.json").write_text(json.dumps(expected_of(redacted), indent=1) + "\n")
    (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"record_machine: wrote {target} ({gpus} GPU(s), TensorFlow "
          f"{meta['tensorflow'] or 'absent'}, smoke {'ran' if smoke_ran else 'not run'}, "
          f"{seconds:.1f} s); now write expected.json by hand from what TensorFlow reported",
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return record(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
