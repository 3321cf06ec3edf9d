"""Whether a pasted listing's plain words name a name, asked of the words lowered (issue 21, item
4: triage is linear): the answer of the case-insensitive search of the names, on real-looking
listings and names written with the characters re folds to ASCII letters."""

from __future__ import annotations

import random

from tfdoctor.share.redact import Identity, Policy, Redactor

NAMES = ["zoe", "Root", "GPU-Node-7", "a.b+c", "\u017fam", "\u212aelvin", "\u0130lker", "\u0131i", "x\ny",
         "caf\u00e9", "hf_AbC123"]


def _words(rng: random.Random, names: list[str]) -> str:
    pieces = ["numpy", "1.26.4", "tensorflow-gpu", "package-0001", "SAM", "kelvin", "ilker", "ii",
              "ROOT", "gpu-node-7", "A.B+C", "HF_abc123", "x", "y", "cafe"]
    return "\n".join(rng.choice(pieces) + rng.choice(["", "", "-", "."]) for _ in range(rng.randint(1, 30)))


def test_nameless_plain_is_the_case_insensitive_search():
    rng = random.Random(12)
    found = 0
    for _ in range(400):
        names = rng.sample(NAMES, rng.randint(0, 3))
        redactor = Redactor(Policy.make(), Identity(users=tuple(names)))
        text = _words(rng, names)
        want = redactor._name_regex().search(text) is None
        assert redactor._nameless_plain(text) is want, (names, text)
        found += not want
    assert 50 < found < 350
