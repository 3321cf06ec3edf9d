"""Redaction that sees every place a secret hides, in linear time (issue 16, point 2)."""

from __future__ import annotations

import time

import pytest
from helpers import change, healthy
from tfdoctor.share.redact import Identity, Policy, Redactor
from tfdoctor.share.secrets import scrub_secrets, scrub_split, secret_env_values

URL = "https://deploy:Hunter2Canary@pkgs.example.com/lib"


def test_url_credentials_survive_no_split():
    """LD_LIBRARY_PATH split at ":" cut the URL apart: the password reached the report twelve
    times. Split lists are scrubbed joined, and the parts matched literally everywhere else."""
    assert scrub_split(["/opt/a", "https", "//deploy", "Hunter2Canary@pkgs.example.com/lib"]) == [
        "/opt/a", "https", "//<redacted>", "<redacted>@pkgs.example.com/lib"]
    facts = change(healthy(gpus=1), env={"LD_LIBRARY_PATH": f"/opt/a:{URL}"})
    data = facts.to_dict()
    data["libraries"][0]["search_path"] = f"/opt/a:{URL}".split(":")
    data["probe_issues"] = [{"probe": "xla", "kind": "error",
                             "message": "cannot open Hunter2Canary@pkgs.example.com/lib/x.so"}]
    r = Redactor(Policy.make("s"), Identity())
    out = str(r.facts(type(facts).from_dict(data)).to_dict())
    assert "Hunter2Canary" not in out and "deploy" not in out


def test_tokens_in_custom_variable_names_and_values():
    """A token in any variable, whatever its name (or in the name), is a literal to hide."""
    found = secret_env_values({"ACME_PASS": "correct-horse", "MY_THING": "ghp_" + "a" * 30,
                               "X_ghp_" + "b" * 30: "1", "PATH": f"/bin:{URL}"})
    assert {"correct-horse", "ghp_" + "a" * 30, "ghp_" + "b" * 30, "Hunter2Canary"} <= set(found)


@pytest.mark.parametrize("path", ["/gpfs/home/zoe4711/venv", "/mnt/c/Users/zoe4711/venv",
                                  "/export/home/zoe4711/x"])
def test_user_names_in_cluster_and_wsl_paths(path):
    """Home directories below a mount or a cluster file system name their user too."""
    assert "zoe4711" not in Redactor(Policy.make("s"), Identity()).text(path)


@pytest.mark.parametrize("shape", ["token_", "a=", "x:", "a://b:", "eyJaaaaaaaaa_", " ", "0a",
                                   "/home/", "bearer "])
def test_scrubber_is_linear_on_one_megabyte(shape):
    """'token_' * 700 (4 KB) took 10.5 s in the old key=value pattern: 1 MB now well under 1 s."""
    value = shape * (1_000_000 // len(shape))
    started = time.thread_time()  # CPU time of this thread: a loaded CI machine does not count
    scrub_secrets(value)
    assert time.thread_time() - started < 1.0
