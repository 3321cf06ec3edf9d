"""What a ticket shows of its machine: the names triage's redaction hides (issue 21, item 5)."""

from __future__ import annotations

from tfdoctor.triage.identity import ticket_identity


def test_prompts_env_lines_and_tf_config():
    """A prompt names user and host, env lines name home, host and secrets, TF_CONFIG its workers;
    root and localhost name no one, and a mail address is no prompt."""
    ident = ticket_identity([
        "(venv) zoe@gpu-node-7:~/src$ env\n",
        "HOME=/scratch/zoe\nHOSTNAME=gpu-node-7.cluster\nWANDB_API_KEY=0123456789abcdef\n",
        'TF_CONFIG={"cluster": {"worker": ["w0.corp:2222", "localhost:2223"]}}\n',
        "root@localhost:/# ls\nwrite to ops@example.org: thanks\n",
    ])
    assert ident.users == ("zoe",)
    assert set(ident.hosts) == {"gpu-node-7", "gpu-node-7.cluster", "w0.corp", "w0"}
    assert ident.homes == ("/scratch/zoe",)
    assert "0123456789abcdef" in ident.secrets


def test_assignments_found_from_their_equals_sign_are_the_regexs():
    """identity._assignments finds each assignment from its "=" (a search from every capital
    letter of a log was slow, issue 21): the same matches as _ASSIGN.finditer, on every real
    ticket and on random text made of names, "=", spaces, quotes and what the look-behind tests."""
    import random
    from pathlib import Path

    from tfdoctor.triage import identity

    tests = Path(__file__).resolve().parents[1]
    texts = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted([*tests.glob("field/cases/*.txt"), *tests.glob("triage/data/*/*.txt")])]
    rnd = random.Random(21)
    alphabet = "AB_Z9= \t\n'\"$.-ax@:/"
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 120))) for _ in range(3000)]
    texts += ["".join(rnd.choice(["A" * rnd.randint(1, 70), "=", " ", "x", "\n", "'v a'", "B_1", "$"])
                      for _ in range(60)) + "x" * 2000 for _ in range(100)]

    def found(matches):
        return [(m.span(), m.groups()) for m in matches]

    for text in texts:
        assert found(identity._assignments(text)) == found(identity._ASSIGN.finditer(text)), text[:200]
