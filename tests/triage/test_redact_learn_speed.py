"""Redactor._learn deduplicates the facts' strings only where one holds a mark a learner reads
("@", "/", "\\"): a pasted pip list's 464,000 strings hold none. It learns what it learned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfdoctor.share import redact
from tfdoctor.share.redact import Identity, Policy, Redactor
from tfdoctor.triage import triage_facts
from tfdoctor.triage.identity import ticket_identity


def learned(r: Redactor) -> tuple[Any, ...]:
    return (sorted(r._users), sorted(r._credentials), sorted(r._homes), sorted(r._hosts),
            sorted(r._serials), r._uuids)


def old_marks(r: Redactor, data: dict[str, Any]) -> None:
    """The former mark loop: every distinct string, then each mark."""
    texts = list(dict.fromkeys(redact._strings(data)))
    joined = "\n".join(texts)
    for mark, learn in (("@", r._learn_credentials), ("/", r._learn_home), ("\\", r._learn_win_home)):
        if mark in joined:
            for text in texts:
                if mark in text:
                    learn(text)


def both(text: str) -> None:
    facts, _ = triage_facts([text], collected_at="2025-01-01T00:00:00+00:00")
    identity = Identity.of_document(facts) | ticket_identity([text])
    policy = Policy.make(salt="s")
    new = Redactor(policy, identity)
    new._learn(facts.to_dict())
    old = Redactor(policy, identity)
    old._learn(facts.to_dict())  # the rest of _learn, which the change left alone (what its marks
    old_marks(old, facts.to_dict())  # loop learns, the former loop learns too: a union to compare)
    assert learned(new) == learned(old)


TICKETS = [
    "pip install https://deploy:Hunter2Canary@pkgs.example.com/simple tensorflow==2.15.0\n"
    "  File \"/home/zoe/venv/lib/python3.10/site-packages/tensorflow/__init__.py\", line 3\n"
    "C:\\Users\\ann\\AppData\\Local\\Programs\\Python\\Python39\\lib\\site-packages\\x.py\n"
    "HOME=/home/zoe\n",
    "Package    Version\n---------- -------\ntensorflow 2.15.0\nnumpy      1.26.4\n" * 50,
    "no marks at all: tensorflow 2.15 on CUDA 12.2\n",
]


def test_learns_as_before():
    for text in TICKETS:
        both(text)
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.glob("field/cases/*.txt"))[:80]:
        both(path.read_text(encoding="utf-8", errors="replace").split("+++\n", 2)[-1])
