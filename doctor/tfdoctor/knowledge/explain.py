"""`tfdoctor explain ID` for a finding id: the cause itself, from the catalogue and the registry."""

from __future__ import annotations

from tfdoctor.knowledge import catalogue


def explain_finding(finding_id: str, tf_version: str | None = None, windows: bool = False) -> str | None:
    """What the finding means, how tfdoctor sees it, what to do (for this TensorFlow release and
    platform when given), what it explains and what explains it, and the sources of its patterns;
    None for an id the catalogue does not know."""
    from tfdoctor.checks import all_checks
    from tfdoctor.checks.advice import fill_hint
    from tfdoctor.triage import triage_facts

    known = catalogue()
    cause = known.causes.get(finding_id)
    if cause is None:
        return None
    spec = next((s for s in all_checks() if finding_id in s.finding_ids), None)
    how_bad = f", {cause.severity.value}" if cause.severity else ""
    lines = [f"{cause.id} (area: {cause.area}{how_bad})"]
    if cause.message:
        lines += ["", cause.message]
    if spec is not None:
        lines += ["", f"Found by the check {spec.id}: {spec.title}."]
        if spec.doc:
            lines.append(" ".join(spec.doc.split("\n\n")[0].split()))
    if cause.patterns:
        lines += ["", "Shown by these messages (pattern, where the message comes from, a real line):"]
        for p in cause.patterns:
            lines.append(f"  /{p.regex.pattern}/")
            if p.source:
                lines.append(f"    source: {p.source}")
            if p.samples:
                lines.append(f"    e.g. {p.samples[0][:200]}")
    if cause.min_tf:
        lines += ["", f"Only a cause from TensorFlow {cause.min_tf} on."]
    if cause.hint:
        # The release and platform read the way a ticket stating them is read.
        stated = [f"tensorflow=={tf_version}" if tf_version else "", "OS: Windows 10" if windows else ""]
        facts, _ = triage_facts(["\n".join(stated)])
        lines += ["", f"What to do{f' (TensorFlow {tf_version})' if tf_version else ''}: "
                      f"{fill_hint(cause.hint, facts)}"]
    if cause.link:
        lines.append(f"See: {cause.link}")
    by = known.explainers(cause.id, spec.id if spec else "")
    if by:
        lines += ["", "Explained by (when present, reported as their consequence): " + ", ".join(by)]
    if cause.explains or cause.explains_checks:
        lines += ["", "Explains: " + ", ".join((*cause.explains, *(f"every finding of {c}"
                                                                  for c in cause.explains_checks)))]
    if cause.asks:
        lines += ["", "To decide it from a ticket, ask for: " + ", ".join(cause.asks)]
    return "\n".join(lines) + "\n"
