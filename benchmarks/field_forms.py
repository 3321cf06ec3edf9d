"""Field forms: whether `tfdoctor triage` keeps its diagnosis when a ticket arrives re-formatted.

    python benchmarks/field_forms.py [--forms NAME,...] [--cases FILE]

Takes every resolved field case that triage gets right (top-1) and hands triage the same ticket
as it reaches support by other ways than a GitHub issue: CRLF line ends, quoted as a mail reply,
indented as Markdown code, HTML-escaped (a web page's source, an export), with typographic quotes,
no-break spaces or tabs (a word processor, a chat client, a browser), and wrapped at 72, 80 and 120
columns by a mail client (at spaces) or a terminal (cut inside words). Prints, per form, how many
of those cases keep their right root cause, and the first ones that do not.
"""

from __future__ import annotations

import argparse
import html
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "field"))
sys.path.insert(0, str(ROOT / "doctor"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import load_cases, load_causes, score  # noqa: E402
from field_accuracy import run_case  # noqa: E402


def _mail(width: int) -> Callable[[str], str]:
    def wrap(text: str) -> str:
        out: list[str] = []
        for line in text.splitlines():
            out.extend(textwrap.wrap(line, width, break_long_words=True, break_on_hyphens=False) or [""])
        return "\n".join(out)
    return wrap


def _terminal(width: int) -> Callable[[str], str]:
    def cut(text: str) -> str:
        return "\n".join(line[i : i + width] for line in text.splitlines()
                         for i in range(0, max(len(line), 1), width))
    return cut


FORMS: dict[str, Callable[[str], str]] = {
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "mail-quote": lambda t: "\n".join("> " + line for line in t.splitlines()),
    "indented": lambda t: "\n".join("    " + line for line in t.splitlines()),
    "html-escaped": html.escape,
    "typographic-quotes": lambda t: t.replace("'", "\u2019").replace('"', "\u201d"),
    "no-break-spaces": lambda t: t.replace(" ", "\u00a0"),
    "tabs": lambda t: t.replace("    ", "\t"),
    "mail-72": _mail(72), "mail-80": _mail(80), "mail-120": _mail(120),
    "terminal-80": _terminal(80), "terminal-120": _terminal(120),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forms", help="Comma-separated forms (default: all): " + ", ".join(FORMS))
    parser.add_argument("--cases", type=Path, metavar="FILE", help="Only the cases named in FILE.")
    args = parser.parse_args()
    forms = args.forms.split(",") if args.forms else list(FORMS)
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        parser.error(f"unknown form(s): {', '.join(unknown)}")
    causes = load_causes()
    cases = [c for c in load_cases() if c.resolved]
    if args.cases:
        wanted = set(args.cases.read_text().split())
        cases = [c for c in cases if c.name in wanted]
    right = [c for c in cases if score(c, run_case(c.ticket), causes).top1]
    print(f"{len(right)} of {len(cases)} resolved cases right as posted")
    print(f"{'form':<20} {'kept':>9}  first cases lost (what triage said instead)")
    for name in forms:
        lost = [(c.name, score(c, run_case(FORMS[name](c.ticket)), causes)) for c in right]
        lost = [(n, s) for n, s in lost if not s.top1]
        shown = ", ".join(f"{n} ({s.got[0] if s.got else 'nothing'})" for n, s in lost[:4])
        print(f"{name:<20} {len(right) - len(lost):>4}/{len(right):<4}  {shown}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
