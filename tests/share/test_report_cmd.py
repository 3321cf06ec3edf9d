"""`tfdoctor report`: canary secrets never leave, files are owner-only, the JSON replays."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
from pathlib import Path

import jsonschema
import pytest
from share_helpers import change, healthy, invoke, report_doc, with_smoke, write_json

SCHEMA = json.loads((Path(__file__).parents[2] / "docs" / "report.schema.json").read_text())
CANARIES = {
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARY0001",
    "HF_TOKEN": "hf_CanaryHuggingFaceToken0123456789ab",
    "WANDB_API_KEY": "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee01",
    "GITHUB_TOKEN": "ghp_CanaryGitHubToken0123456789abcdefgh",
}
URL_PASSWORD = "Hunter2CanaryPassword"
LD_TOKEN = "ghs_CanaryLdLibraryPathToken0123456789"
FAKE_USER, FAKE_HOST = "zoe4711", "gpu-node-17.example.org"


def canary_env() -> dict[str, str]:
    """This process's environment plus every canary, a fake user/host, and tainted paths."""
    env = dict(
        CANARIES, USER=FAKE_USER, LOGNAME=FAKE_USER, HOSTNAME=FAKE_HOST, HOME=f"/home/{FAKE_USER}"
    )
    env["PATH"] = (
        f"/home/{FAKE_USER}/.local/bin:{os.environ['PATH']}:"
        f"https://deploy:{URL_PASSWORD}@artifacts.example.com/bin"
    )
    env["LD_LIBRARY_PATH"] = (
        f"/usr/local/cuda/lib64:/mnt/creds/{LD_TOKEN}/lib:/opt/token=Sup3rS3cretCanary/lib"
    )
    env["CUDA_HOME"] = f"https://ci:{URL_PASSWORD}@mirror.example.com/cuda"
    return env


def assert_clean(data: bytes) -> None:
    """None of the canaries, the fake user or host, or this machine's host name is in `data`."""
    for value in [
        *CANARIES.values(),
        URL_PASSWORD,
        LD_TOKEN,
        "Sup3rS3cretCanary",
        FAKE_USER,
        "gpu-node-17",
    ]:
        assert value.encode() not in data, value
    host = socket.gethostname()
    assert not re.search(
        rb"(?<![A-Za-z0-9_<-])" + re.escape(host.encode()) + rb"(?![A-Za-z0-9_>-])",
        data,
        re.IGNORECASE,
    ), host
    user = os.environ.get("USER") or ""
    if user and user not in ("root", "nobody"):  # root is no one in particular (docs)
        assert user.encode() not in data


def test_live_report_leaks_no_canary(tmp_path):
    """The real probes run with canary secrets in the environment; every byte written, and
    every byte of --preview, is free of them (the issue's test, end to end)."""
    env = canary_env()
    preview = invoke("report", "--quick", "--preview", "-o", f"{tmp_path}/out/", env=env)
    assert preview.exit_code == 0, preview.output
    assert not (tmp_path / "out").exists(), "--preview must write nothing"
    assert_clean(preview.stdout.encode())
    assert "<user-" in preview.stdout and "<redacted>" in preview.stdout
    result = invoke("report", "--quick", "-o", f"{tmp_path}/out/", env=env)
    assert result.exit_code == 0, result.output
    files = sorted((tmp_path / "out").iterdir())
    assert [f.suffix for f in files] == [".json", ".md"]
    for f in files:
        assert_clean(f.read_bytes())
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    doc = json.loads(files[0].read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["facts"]["env"]["LD_LIBRARY_PATH"].startswith("/usr/local/cuda/lib64:")


def test_redacted_report_replays_to_the_same_diagnosis(tmp_path):
    """Support replays what it received: the same verdict and findings as the report says."""
    facts = change(
        healthy(),
        env={"CUDA_VISIBLE_DEVICES": ""},
        python={"executable": f"/home/{FAKE_USER}/venv/bin/python"},
    )
    src = write_json(tmp_path / "facts.json", facts.to_dict())
    out = tmp_path / "ticket.md"
    result = invoke(
        "report",
        "--from",
        str(src),
        "--salt",
        "s",
        "--expect-gpus",
        "8",
        "-o",
        str(out),
        env=canary_env(),
    )
    assert result.exit_code == 0, result.output
    sent = json.loads((tmp_path / "ticket.json").read_text())
    assert sent["config"]["expect_gpus"] == 8
    replayed = invoke("replay", str(tmp_path / "ticket.json"), "--json")
    assert replayed.exit_code == 1
    again = json.loads(replayed.stdout)
    assert again["verdict"] == sent["verdict"]
    assert [f["id"] for f in again["findings"]] == [f["id"] for f in sent["findings"]]
    md = out.read_text()
    assert md.index("Verdict") < md.index("## Findings") < md.index("## Facts")
    assert "`cuda-visible-devices-hides-all` (root cause)" in md
    assert "/home/<user-" in sent["facts"]["python"]["executable"]


def test_salt_gives_the_same_pseudonyms_on_two_nodes(tmp_path):
    """Two nodes, one fleet salt: the shared user's pseudonym matches across their reports."""
    paths = []
    for node in ("a", "b"):
        facts = change(
            healthy(gpus=1),
            python={"executable": f"/home/{FAKE_USER}/venv/bin/python"},
            collected_at=f"2026-11-22T00:00:0{len(paths)}+00:00",
        )
        src = write_json(tmp_path / f"{node}.facts.json", facts.to_dict())
        assert (
            invoke(
                "report",
                "--from",
                str(src),
                "--salt",
                "fleet",
                "-o",
                str(tmp_path / f"{node}.json"),
            ).exit_code
            == 0
        )
        paths.append(json.loads((tmp_path / f"{node}.json").read_text()))
    a, b = (p["facts"]["python"]["executable"] for p in paths)
    assert a == b and FAKE_USER not in a


def test_existing_file_loses_its_loose_mode(tmp_path):
    """A report written over a world-readable file becomes owner-only, not 0644."""
    src = write_json(tmp_path / "facts.json", healthy(gpus=1).to_dict())
    target = tmp_path / "r.md"
    target.write_text("old")
    target.chmod(0o644)
    assert invoke("report", "--from", str(src), "-o", str(target)).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "temp file left"


def test_no_redact_must_be_explicit_and_says_so(tmp_path):
    """Only an explicit --no-redact leaves paths as collected, and the report then says so."""
    facts = change(healthy(gpus=1), python={"executable": f"/home/{FAKE_USER}/venv/bin/python"})
    src = write_json(tmp_path / "facts.json", facts.to_dict())
    plain = invoke("report", "--from", str(src), "--no-redact", "--preview")
    assert plain.exit_code == 0 and f"/home/{FAKE_USER}/venv" in plain.stdout
    assert "none (--no-redact)" in plain.stdout
    mixed = invoke("report", "--from", str(src), "--no-redact", "--salt", "s")
    assert mixed.exit_code == 2 and "cannot be combined" in mixed.stderr


def test_report_of_smoke_figures(tmp_path):
    """Smoke results reach the Markdown facts (measured throughput, bus bandwidth)."""
    src = write_json(tmp_path / "r.json", report_doc(with_smoke(healthy(gpus=2), busbw=321.0)))
    result = invoke("report", "--from", str(src), "--preview")
    assert result.exit_code == 0
    assert "### Smoke run: `completed`" in result.stdout and "busbw_gbs 321" in result.stdout


@pytest.mark.parametrize(
    "version, words",
    [
        ("0", ["version 0", "reads versions 1, 2"]),
        ("99", ["version 99", "upgrade tfdoctor"]),
    ],
)
def test_other_schema_versions_get_a_clear_error(tmp_path, version, words):
    """A report from an older or newer tfdoctor is refused with both versions named, exit 2."""
    doc = report_doc(healthy(gpus=1))
    doc["facts"]["schema_version"] = version
    src = write_json(tmp_path / "old.json", doc)
    for args in (["replay", str(src)], ["report", "--from", str(src), "--preview"]):
        result = invoke(*args)
        assert result.exit_code == 2
        assert all(w in result.stderr for w in words), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_from_and_python_conflict(tmp_path):
    """--from has nothing to probe: combining it with --python is a usage error."""
    src = write_json(tmp_path / "f.json", healthy(gpus=1).to_dict())
    result = invoke("report", "--from", str(src), "--python", "python3")
    assert result.exit_code == 2 and "--from" in result.stderr
