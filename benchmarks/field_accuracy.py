"""Field accuracy: `tfdoctor triage` over every case of tests/field, scored by category.

    python benchmarks/field_accuracy.py [--misses] [--json] [--pin] [--cases FILE]

Prints root-cause top-1 and top-3 accuracy (resolved cases), the ask-for hit rate (unresolved
cases: the first ask / the first three asks name an area the case says support needed), false
"healthy" verdicts and crashes, by category and in total. Each case runs through the real
command (`tfdoctor triage --json`, in-process through click) on the ticket text alone; the
case's header never reaches tfdoctor.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "field"))
sys.path.insert(0, str(ROOT / "doctor"))

from corpus import Score, load_cases, load_causes, pin, score  # noqa: E402


def run_case(ticket: str) -> dict | None:
    """The --json report of `tfdoctor triage -` on this text; None when tfdoctor crashed."""
    from click.testing import CliRunner
    from tfdoctor.cli import cli

    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket)
    if result.exit_code not in (0, 1, 3) or result.exception and not isinstance(result.exception, SystemExit):
        return None
    try:
        return json.loads(result.stdout)
    except ValueError:
        return None


def table(scores: list[Score]) -> str:
    rows = defaultdict(list)
    for s in scores:
        rows[s.category].append(s)
    lines = [f"{'category':<14} {'cases':>5} {'resolved':>8} {'top-1':>7} {'top-3':>7} "
             f"{'asks-1':>7} {'asks-3':>7} {'false-healthy':>13} {'crashes':>7}"]

    def line(name: str, group: list[Score]) -> str:
        res = [s for s in group if s.resolved]
        unres = [s for s in group if not s.resolved]

        def pct(xs: list[Score], attr: str) -> str:
            return f"{100 * sum(getattr(s, attr) for s in xs) / len(xs):.0f} %" if xs else "-"

        return (f"{name:<14} {len(group):>5} {len(res):>8} {pct(res, 'top1'):>7} {pct(res, 'top3'):>7} "
                f"{pct(unres, 'top1'):>7} {pct(unres, 'top3'):>7} "
                f"{sum(s.false_healthy for s in group):>13} {sum(s.crashed for s in group):>7}")

    for name in sorted(rows):
        lines.append(line(name, rows[name]))
    lines.append(line("all", scores))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="List the cases top-1 gets wrong.")
    parser.add_argument("--json", action="store_true", help="Per-case scores as JSON.")
    parser.add_argument("--cases", type=Path, metavar="FILE",
                        help="Score only the cases named in FILE (one per line), e.g. a held-out batch.")
    parser.add_argument("--pin", action="store_true",
                        help="Add the cases right today to tests/field/pinned.txt; refuses (exit 1, "
                             "nothing written) when a pinned case is no longer right.")
    args = parser.parse_args()
    causes = load_causes()
    cases = load_cases()
    if args.cases:
        wanted = set(args.cases.read_text().split())
        cases = [c for c in cases if c.name in wanted]
    scores = [score(c, run_case(c.ticket), causes) for c in cases]
    if args.json:
        print(json.dumps([s.__dict__ for s in scores], indent=2))
        return 0
    print(table(scores))
    if args.pin:
        added, lost = pin({s.case for s in scores if s.top1}, {s.case for s in scores})
        if lost:
            print(f"\nnot pinned: {len(lost)} pinned case(s) no longer right (a regression to fix; "
                  f"pinned.txt is never cut): {', '.join(lost)}", file=sys.stderr)
            return 1
        print(f"\npinned {len(added)} more case(s) in tests/field/pinned.txt")
    if args.misses:
        print("\nmisses (case, expected, got):")
        for case, s in zip(cases, scores, strict=True):
            if not s.top1:
                want = case.header.get("cause") or "ask " + ",".join(case.header.get("ask_for") or [])
                print(f"  {s.case:<40} {want:<28} {', '.join(s.got) or '(nothing)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
