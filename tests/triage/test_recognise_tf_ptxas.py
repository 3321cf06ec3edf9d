"""The ptxas version XLA's own log prints, in each release's wording, from real text, and the
ptxas row of the compatibility evaluator it feeds."""

from __future__ import annotations

import pytest
from tfdoctor.report import build_report
from tfdoctor.triage import triage_facts
from tfdoctor.triage.recognisers import tf_ptxas
from triage_fixtures import observed, ticket


@pytest.mark.parametrize(("name", "expected"), [
    ("tf_ptxas/jax19821_ptxas.txt",
     [("driver.cuda_driver_version", "12.2"), ("xla.ptxas_version", "12.3.107")]),
    ("tf_ptxas/feedstock417_ptx_compiler.txt",  # "PTX compiler version", no parentheses (TF 2.18)
     [("driver.cuda_driver_version", "12.4"), ("xla.ptxas_version", "12.5.82")]),
    ("tf_ptxas/tf62064_old_ptxas.txt", [("xla.ptxas_version", "10.1.243")]),
    ("tf_ptxas/tf68966_bug.txt", [("xla.ptxas_version", "12.3.103")]),
])
def test_ptxas_versions(name, expected):
    assert observed(tf_ptxas, name) == expected


def test_the_ptxas_row_of_a_ticket():
    """conda-forge/tensorflow-feedstock#417: tensorflow[and-cuda] 2.18 (CUDA 12.5) under a driver
    for CUDA 12.4: the ptxas row does not fit, and XLA's own line is the one finding about it (the
    xla-toolchain check cannot judge a ptxas whose path the ticket does not show)."""
    lines = ticket("tf_ptxas/feedstock417_ptx_compiler.txt")
    facts, _ = triage_facts(["tensorflow 2.18.0\n" + "\n".join(lines)])
    report = build_report(facts)
    [row] = [f for f in report.compatibility if f.element == "ptxas"]
    assert (row.have, row.fits) == ("12.5.82", False)
    assert row.need == "ptxas of CUDA 12.x, no newer than the driver's CUDA 12.4"
    assert "XLA log (ptxas)" in row.have_from
    ids = [f.id for f in report.findings]
    assert ids.count("tf-log-driver-older-than-ptxas") == 1, ids
    assert next(o for o in report.outcomes if o.check == "xla-toolchain").status.value == "could-not-check"
