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
