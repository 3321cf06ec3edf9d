"""The Kubernetes manifests against kubernetes-validate (the API's OpenAPI schemas, strict), and
the DaemonSet's loop and NPD's plugin run for real against the tfdoctor CLI on this machine."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from helpers import change, healthy
from programs import INTEGRATIONS, tfdoctor_wrapper, venv_program, version, write_facts

K8S = INTEGRATIONS / "kubernetes"
MANIFESTS = ["daemonset.yaml", "job.yaml", "npd-config.yaml", "npd-daemonset.yaml"]
CAUSE = "cuda-visible-devices-hides-all"


def validate(*paths) -> subprocess.CompletedProcess:
    return subprocess.run(
        [venv_program("kubernetes-validate"), "--strict", "-k", "1.30.0", *map(str, paths)],
        capture_output=True,
        text=True,
    )


def test_manifests_pass_kubernetes_validate_and_a_damaged_one_does_not(tmp_path):
    """Every shipped manifest is a valid 1.30 object with no unknown field; a typo fails."""
    print(version([venv_program("kubernetes-validate"), "--version"]))
    run = validate(*(K8S / m for m in MANIFESTS))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("passed") == len(MANIFESTS)
    ds = yaml.safe_load((K8S / "daemonset.yaml").read_text())
    ds["spec"]["template"]["spec"]["containers"][0]["volumeMount"] = []
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(ds))
    assert validate(bad).returncode != 0


def test_npd_configmap_ships_the_plugin_files():
    """The ConfigMap holds tfdoctor-monitor.json and tfdoctor-npd.sh byte for byte."""
    data = yaml.safe_load((K8S / "npd-config.yaml").read_text())["data"]
    assert data["tfdoctor-monitor.json"] == (K8S / "tfdoctor-monitor.json").read_text()
    assert data["tfdoctor-npd.sh"] == (K8S / "tfdoctor-npd.sh").read_text()
    json.loads(data["tfdoctor-monitor.json"])


def node_once(tmp_path, args: str) -> tuple[int, dict[str, str]]:
    """One round of the DaemonSet's loop; returns its exit code and the NFD labels."""
    env = {
        "PATH": os.environ["PATH"],
        "TFDOCTOR": tfdoctor_wrapper(tmp_path),
        "TFDOCTOR_ARGS": args,
        "TFDOCTOR_ONCE": "1",
        "TFDOCTOR_STATE_DIR": str(tmp_path / "state"),
        "TFDOCTOR_TEXTFILE": str(tmp_path / "textfile" / "tfdoctor.prom"),
        "TFDOCTOR_FEATURES": str(tmp_path / "features.d" / "tfdoctor"),
    }
    (tmp_path / "textfile").mkdir(exist_ok=True)
    run = subprocess.run(
        ["sh", str(K8S / "tfdoctor-node.sh")], env=env, capture_output=True, text=True, timeout=120
    )
    lines = (tmp_path / "features.d" / "tfdoctor").read_text().split()
    return run.returncode, dict(line.split("=", 1) for line in lines)


def npd(tmp_path, **env: str) -> tuple[int, str]:
    run = subprocess.run(
        ["sh", str(K8S / "tfdoctor-npd.sh")],
        env={"PATH": os.environ["PATH"], "TFDOCTOR_STATE_DIR": str(tmp_path / "state"), **env},
        capture_output=True,
        text=True,
    )
    return run.returncode, run.stdout.strip()


def test_daemonset_loop_labels_the_node_and_npd_reads_its_report(tmp_path):
    """Broken -> NFD labels verdict=problems, usable-gpus=0, the root cause; NPD NonOK with the
    cause. Healthy -> 8 usable GPUs, NPD OK. tfdoctor failing -> verdict=failed, NPD Unknown."""
    facts = tmp_path / "facts.json"
    write_facts(facts, change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    code, labels = node_once(tmp_path, f"replay {facts}")
    assert code == 1
    assert labels == {
        "tfdoctor.verdict": "problems",
        "tfdoctor.usable-gpus": "0",
        "tfdoctor.root-cause": CAUSE,
    }
    assert npd(tmp_path) == (1, f"tfdoctor: {CAUSE}")
    write_facts(facts, healthy())
    code, labels = node_once(tmp_path, f"replay {facts}")
    assert (code, labels) == (0, {"tfdoctor.verdict": "healthy", "tfdoctor.usable-gpus": "8"})
    assert npd(tmp_path) == (0, "tfdoctor: healthy")
    code, labels = node_once(tmp_path, f"replay {tmp_path / 'missing.json'}")
    assert (code, labels) == (2, {"tfdoctor.verdict": "failed"})
    assert npd(tmp_path) == (2, "tfdoctor: did not run (exit 2)")
    prom = (tmp_path / "textfile" / "tfdoctor.prom").read_text()
    assert 'tfdoctor_run_failed{environment="tfdoctor"} 1' in prom and "tfdoctor_verdict" not in prom


@pytest.mark.parametrize("age, expected", [(60, 0), (7200, 2)])
def test_npd_treats_an_old_report_as_unknown(tmp_path, age, expected):
    """A report older than TFDOCTOR_MAX_AGE (the DaemonSet stopped) is Unknown, not healthy."""
    facts = write_facts(tmp_path / "facts.json", healthy())
    node_once(tmp_path, f"replay {facts}")
    report = tmp_path / "state" / "last.json"
    os.utime(report, (time.time() - age, time.time() - age))
    assert npd(tmp_path, TFDOCTOR_MAX_AGE="1800")[0] == expected


def materialise_configmap(configmap: dict, volume: dict, mount: Path) -> None:
    """Write a ConfigMap volume as kubelet's AtomicWriter does: the files in a hidden timestamped
    directory, each at the volume's mode (items[].mode, else defaultMode, else 0644), `..data`
    linking to that directory and one link per key through `..data`."""
    source = volume["configMap"]
    default_mode = source.get("defaultMode", 0o644)
    items = source.get("items") or [{"key": key, "path": key} for key in configmap["data"]]
    payload = mount / "..2026_11_27_09_00_00.000000001"
    payload.mkdir(parents=True)
    for item in items:
        target = payload / item["path"]
        target.write_text(configmap["data"][item["key"]])
        target.chmod(item.get("mode", default_mode))
    (mount / "..data").symlink_to(payload.name)
    for item in items:
        (mount / item["path"]).symlink_to(Path("..data") / item["path"])


def run_npd_rules(mount: Path, mount_path: str, monitor: str, env: dict) -> list:
    """Each rule of the monitor as NPD runs it: rule.path must exist (Validate), then it is
    executed directly with rule.args (util.Exec: no shell); (exit status, first line) each."""
    results = []
    for rule in json.loads((mount / monitor).read_text())["rules"]:
        assert rule["path"].startswith(mount_path + "/"), rule["path"]
        path = mount / rule["path"][len(mount_path) + 1:]
        assert path.exists(), f"NPD refuses the config: rule path {rule['path']} does not exist"
        run = subprocess.run([str(path), *rule.get("args", [])], env=env, capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
        results.append((run.returncode, run.stdout.strip().splitlines()[0]))
    return results


def test_npd_plugin_runs_from_the_configmap_volume_as_mounted(tmp_path):
    """npd-daemonset.yaml mounts npd-config.yaml's ConfigMap; materialised as kubelet writes it
    (at the volume's mode) and executed as NPD executes rule.path, the plugin runs and reads the
    node's report. At a ConfigMap volume's default 0644 it could not start at all."""
    configmap = yaml.safe_load((K8S / "npd-config.yaml").read_text())
    npd_ds = yaml.safe_load((K8S / "npd-daemonset.yaml").read_text())["spec"]["template"]["spec"]
    container = npd_ds["containers"][0]
    volume = next(v for v in npd_ds["volumes"] if v.get("configMap"))
    assert volume["configMap"]["name"] == configmap["metadata"]["name"]
    mount_path = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == volume["name"])
    flag = next(a for a in container["command"] if a.startswith("--config.custom-plugin-monitor="))
    monitor = flag.split("=", 1)[1][len(mount_path) + 1:]
    facts = write_facts(tmp_path / "facts.json", healthy())
    node_once(tmp_path, f"replay {facts}")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "TFDOCTOR_STATE_DIR": str(tmp_path / "state")}

    materialise_configmap(configmap, volume, tmp_path / "mounted")
    assert run_npd_rules(tmp_path / "mounted", mount_path, monitor, env) == [(0, "tfdoctor: healthy")]

    bare = {k: v for k, v in volume["configMap"].items() if k != "defaultMode"}
    materialise_configmap(configmap, {"configMap": bare}, tmp_path / "default-mode")
    with pytest.raises(PermissionError):
        run_npd_rules(tmp_path / "default-mode", mount_path, monitor, env)
