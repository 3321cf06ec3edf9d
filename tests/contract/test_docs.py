"""Docs that users and scripts rely on stay true to the code."""

from __future__ import annotations

import re

from checks_doc import DOC, render
from tfdoctor.checks import all_checks

ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def test_checks_doc_is_current():
    """docs/checks.md lists every check and finding id as the registry has them."""
    assert DOC.read_text() == render(), "run: python tests/contract/checks_doc.py"


def test_ids_are_kebab_case_and_unique():
    """Ids are a public contract (pip's rule): kebab-case, one meaning each."""
    specs = all_checks()
    assert len({s.id for s in specs}) == len(specs)
    for s in specs:
        assert ID.match(s.id), s.id
        assert s.doc, f"{s.id} has no docstring"
        for f in s.finding_ids:
            assert ID.match(f), f
