"""Redaction of facts: allowlist, secret patterns, stable pseudonyms, replayable shape."""

from __future__ import annotations

import json

import pytest
from helpers import change, healthy, ids, judge
from tfdoctor.facts import Facts
from tfdoctor.share.redact import Identity, Policy, Redactor
from tfdoctor.share.secrets import scrub_secrets

ZOE = Identity(
    users=("zoe4711",), hosts=("gpu-node-17.example.org", "gpu-node-17"), homes=("/home/zoe4711",)
)


def redactor(
    salt: str | None = "fleet-salt", keep: tuple[str, ...] = (), identity: Identity = ZOE
) -> Redactor:
    return Redactor(Policy.make(salt, keep), identity)


def zoe_facts() -> Facts:
    return change(
        healthy(gpus=2),
        python={"executable": "/home/zoe4711/venv/bin/python", "prefix": "/home/zoe4711/venv"},
        env={"VIRTUAL_ENV": "/home/zoe4711/venv", "HF_TOKEN": "hf_" + "x" * 30},
    )


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_CanaryGitHubToken0123456789abcdefgh",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "hf_CanaryHuggingFaceToken0123456789ab",
        "AKIAIOSFODNN7CANARY1",
        "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee01",
        "xoxb-123456789012-abcdefghijkl",
        "sk-proj-CanaryOpenAIkey0123456789",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    ],
)
def test_secret_formats_are_removed_inside_paths(secret):
    """A token pasted into a path-like variable is removed whatever its vendor format."""
    text = f"/usr/local/cuda/lib64:/mnt/{secret}/lib:/opt/x"
    out = scrub_secrets(text)
    assert secret not in out and "/usr/local/cuda/lib64:" in out and out.endswith("/lib:/opt/x")


def test_aws_secret_key_as_a_whole_value():
    """AWS secret keys have "/" in them, so inside a path only the literal guard (the process's
    AWS_SECRET_ACCESS_KEY) finds them; as a value of their own the pattern does."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARY0001"
    assert scrub_secrets(secret) == "<redacted>"
    assert secret not in scrub_secrets(f"/mnt/{secret}/lib", literals=(secret,))


def test_passwords_in_urls_and_key_value_pairs_are_removed():
    """URL userinfo and name=value secrets go; the rest of the value stays readable."""
    out = scrub_secrets(
        "/bin:https://deploy:Hunter2Canary@pkgs.example.com/bin:/x/token=S3cretValue9/y"
    )
    assert "Hunter2Canary" not in out and "deploy" not in out and "S3cretValue9" not in out
    assert "https://<redacted>@pkgs.example.com/bin" in out and out.startswith("/bin:")


def test_ordinary_paths_and_versions_are_not_secrets():
    """No false alarms on what reports are made of: library paths, versions, GPU names."""
    for text in (
        "/usr/local/cuda-12.5/targets/x86_64-linux/lib/libcudnn_engines_precompiled.so.9",
        "NVIDIA H100 80GB HBM3",
        "580.65.06",
        "--xla_gpu_cuda_data_dir=/usr/local/cuda",
        "PWD=/home/x",
        "GPU-00000000-aaaa-bbbb-cccc-000000000000",
    ):
        assert scrub_secrets(text) == text


def test_env_is_cut_to_the_allowlist():
    """A variable outside the probe's allowlist never survives, even if a facts file has it."""
    out = redactor().facts(zoe_facts())
    assert "HF_TOKEN" not in out.env
    assert (
        out.env["VIRTUAL_ENV"].startswith("/home/<user-")
        and "zoe4711" not in out.env["VIRTUAL_ENV"]
    )


def test_pseudonyms_are_stable_for_a_salt_and_differ_between_salts():
    """The fleet promise: one salt, one pseudonym per user/GPU on every node; a random salt
    (no --salt) gives pseudonyms that cannot be matched across reports."""
    a, b = redactor().facts(zoe_facts()), redactor().facts(zoe_facts())
    assert a == b
    other = redactor("another-salt").facts(zoe_facts())
    assert other.python.executable != a.python.executable
    r1, r2 = redactor(None).facts(zoe_facts()), redactor(None).facts(zoe_facts())
    assert r1.driver.gpus[0].uuid != r2.driver.gpus[0].uuid


def test_paths_keep_their_shape_and_the_facts_replay():
    """Redacted facts are still Facts: the same findings come out of the checks."""
    facts = zoe_facts()
    out = redactor().facts(facts)
    assert out.python.executable.startswith("/home/<user-") and out.python.executable.endswith(
        "/venv/bin/python"
    )
    assert Facts.from_dict(json.loads(json.dumps(out.to_dict()))) == out
    assert ids(judge(out)) == ids(judge(facts))
    uuids = [g.uuid for g in out.driver.gpus]
    assert all(u.startswith("GPU-<") for u in uuids) and len(set(uuids)) == 2
    assert all(g.pci_bus_id.startswith("<pci-") for g in out.driver.gpus)


def test_uuid_prefix_in_cuda_visible_devices_follows_its_gpu():
    """CUDA accepts a UUID prefix; after redaction it must still pick the same GPU."""
    facts = healthy(gpus=2)
    prefix = facts.driver.gpus[1].uuid[:12]
    facts = change(facts, env={"CUDA_VISIBLE_DEVICES": prefix})
    out = redactor().facts(facts)
    assert out.env["CUDA_VISIBLE_DEVICES"] == out.driver.gpus[1].uuid
    assert ids(judge(out, expect_gpus=2)) == ids(judge(facts, expect_gpus=2))


def test_pci_ids_in_log_text_match_the_nvml_field():
    """TF logs "0000:0a:00.0", NVML says "00000000:0A:00.0": one pseudonym for both."""
    r = redactor()
    out = r.facts(healthy(gpus=1))
    line = r.text("Created device GPU:0 ... pci bus id: 0000:0a:00.0, compute capability: 9.0")
    assert out.driver.gpus[0].pci_bus_id in line


def test_tf_config_hosts_become_pseudonyms_everywhere():
    """Cluster addresses in TF_CONFIG are host names; so are their mentions in free text."""
    config = {
        "cluster": {"worker": ["trainer-a.corp.example:2222", "localhost:2223"]},
        "task": {"type": "worker", "index": 0},
    }
    facts = change(healthy(gpus=1), env={"TF_CONFIG": json.dumps(config)}, probe_issues=())
    r = redactor()
    out = r.facts(facts)
    assert "trainer-a" not in json.dumps(out.to_dict())
    worker = json.loads(out.env["TF_CONFIG"])["cluster"]["worker"]
    assert (
        worker[0].startswith("<host-")
        and worker[0].endswith(":2222")
        and worker[1] == "localhost:2223"
    )
    assert "trainer-a" not in r.text("connecting to trainer-a.corp.example:2222")


def test_user_and_host_names_in_free_text():
    """Log lines and messages can name the user and the host; both are replaced, and the
    pseudonyms themselves are never re-matched (a user called "user")."""
    r = redactor(identity=Identity(users=("user",), hosts=("gpu-node-17",), homes=("/home/user",)))
    text = r.text("user ran /home/user/x.py on gpu-node-17 (GPU-NODE-17 in caps); user-space ok")
    assert "gpu-node-17" not in text.lower() and text.count("<user-") == 2
    assert "user-space ok" in text


def test_keep_lets_a_category_through():
    """--keep is per category: keeping host names keeps user names redacted, and so on."""
    r = redactor(keep=("host", "pci-ids"))
    out = r.facts(zoe_facts())
    assert out.driver.gpus[0].pci_bus_id == healthy(gpus=2).driver.gpus[0].pci_bus_id
    assert "gpu-node-17" in r.text("on gpu-node-17") and "zoe4711" not in out.python.executable


def test_identity_of_this_process_reads_the_environment():
    """USER / HOSTNAME / HOME and secret-named variables are what the guard looks for."""
    env = {
        "USER": "zoe4711",
        "HOSTNAME": "gpu-node-17.example.org",
        "HOME": "/home/zoe4711",
        "WANDB_API_KEY": "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee01",
        "PWD": "/home/zoe4711/x",
    }
    me = Identity.of_this_process(env)
    assert "zoe4711" in me.users and "gpu-node-17" in me.hosts and "/home/zoe4711" in me.homes
    assert me.secrets == ("c0ffee00c0ffee00c0ffee00c0ffee00c0ffee01",)


def test_leftovers_guard_names_what_slipped_through():
    """The last check before writing finds a literal secret or name in rendered text."""
    r = Redactor(Policy.make("s"), Identity(users=("zoe4711",), secrets=("VerySecretValue1",)))
    assert r.leftovers("all clean <user-12345678>") == []
    assert len(r.leftovers("zoe4711 VerySecretValue1")) == 2
