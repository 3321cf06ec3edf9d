"""node_exporter textfile metrics, parsed back with prometheus-client's own text parser."""

from __future__ import annotations

import stat
import threading
import time

from helpers import judge
from prometheus_client.parser import text_string_to_metric_families
from share_helpers import change, healthy, with_smoke
from tfdoctor.facts import ProbeIssue
from tfdoctor.share.prometheus import (
    mark_run_failed,
    process_seconds,
    render_prometheus,
    write_prometheus_textfile,
)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def value(parsed, name, **labels):
    return parsed[(name, tuple(sorted(labels.items())))]


def env(**labels):
    """Labels of a series in a file named tfdoctor.prom (environment = the file's stem)."""
    return {"environment": "tfdoctor", **labels}


def test_healthy_node_with_smoke_figures(tmp_path):
    """Every family parses; counts, per-check states and measured figures are what the facts say."""
    report = judge(with_smoke(healthy(), tflops=64.0, busbw=300.0), expect_gpus=8)
    path = tmp_path / "tfdoctor.prom"
    write_prometheus_textfile(report, path, exit_code=0)
    text = path.read_text()
    parsed = samples(text)
    assert value(parsed, "tfdoctor_gpus_present", **env()) == 8
    assert value(parsed, "tfdoctor_gpus_expected", **env()) == 8
    assert value(parsed, "tfdoctor_gpus_usable", **env()) == 8
    assert value(parsed, "tfdoctor_exit_code", **env()) == 0
    assert value(parsed, "tfdoctor_run_failed", **env()) == 0
    assert value(parsed, "tfdoctor_verdict", **env(status="healthy")) == 1
    assert value(parsed, "tfdoctor_check_status", **env(check="driver-present", status="passed")) == 1
    assert value(parsed, "tfdoctor_check_status", **env(check="driver-present", status="failed")) == 0
    flops = value(parsed, "tfdoctor_smoke_matmul_flops_per_second", **env(device="GPU:3", dtype="float32"))
    assert flops == 64e12
    nccl = env(device_type="GPU", cross_device_ops="nccl")
    assert value(parsed, "tfdoctor_smoke_allreduce_bus_bandwidth_bytes_per_second", **nccl) == 300e9
    # The duration is this process's age (the test process here): bounded by the age read just after.
    age_after = process_seconds()
    assert age_after is not None
    assert 0 <= value(parsed, "tfdoctor_run_duration_seconds", **env()) <= age_after + 0.01
    assert abs(value(parsed, "tfdoctor_last_success_timestamp_seconds", **env()) - time.time()) < 60
    assert not any(k[0] == "tfdoctor_root_cause_info" for k in parsed)
    info = [k for k in parsed if k[0] == "tfdoctor_info"][0][1]
    assert dict(info)["driver_version"] == "580.65.06" and dict(info)["cudnn_version"] == "9.3.0"
    # One 1 per check among its states: a state set, as Prometheus' guidelines describe.
    checks = {dict(k[1])["check"] for k in parsed if k[0] == "tfdoctor_check_status"}
    assert sum(v for k, v in parsed.items() if k[0] == "tfdoctor_check_status") == len(checks)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_broken_node_counts_and_no_identifiers():
    """A masked GPU set: usable 0, errors counted; and no UUID or bus id in any label."""
    facts = change(
        healthy(),
        env={"CUDA_VISIBLE_DEVICES": ""},
        probe_issues=(ProbeIssue("xla", "timeout", "killed after 10 s"),),
    )
    text = render_prometheus(judge(facts, expect_gpus=8))
    parsed = samples(text)
    assert value(parsed, "tfdoctor_gpus_usable") == 0
    assert value(parsed, "tfdoctor_findings", severity="error") >= 1
    assert value(parsed, "tfdoctor_verdict", status="problems") == 1
    assert value(parsed, "tfdoctor_probe_issues") == 1
    assert value(parsed, "tfdoctor_root_cause_info", finding="cuda-visible-devices-hides-all",
                 check="cuda-visible-devices") == 1
    assert value(parsed, "tfdoctor_finding", finding="cuda-visible-devices-hides-all", severity="error") == 1
    assert "GPU-0000" not in text and "00000000:0A" not in text
    assert not any(k[0].startswith("tfdoctor_smoke") for k in parsed)


def test_label_values_are_escaped():
    """A quote, backslash or newline in a version string cannot break the exposition format."""
    facts = change(healthy(gpus=1), driver={"driver_version": 'odd "9"\\x\nnext'})
    parsed = samples(render_prometheus(judge(facts)))
    info = dict([k for k in parsed if k[0] == "tfdoctor_info"][0][1])
    assert info["driver_version"] == 'odd "9"\\x\nnext'


def test_write_is_atomic_for_a_concurrent_reader(tmp_path):
    """A reader polling the file while it is rewritten always sees a whole, parsable file."""
    path = tmp_path / "tfdoctor.prom"
    reports = [judge(with_smoke(healthy(), tflops=60.0 + i)) for i in range(2)]
    write_prometheus_textfile(reports[0], path)
    stop, seen, bad = threading.Event(), [], []

    def reader():
        while not stop.is_set():
            text = path.read_text()
            try:
                seen.append(len(samples(text)))
            except ValueError as exc:  # pragma: no cover - only on a torn file
                bad.append(str(exc))

    thread = threading.Thread(target=reader)
    thread.start()
    for i in range(40):
        write_prometheus_textfile(reports[i % 2], path)
    stop.set()
    thread.join()
    assert not bad and seen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tfdoctor.prom"]


def test_environment_label_defaults_to_the_file_name(tmp_path):
    """Two environments on one node, two files: no series collides, and --environment wins."""
    report = judge(healthy())
    write_prometheus_textfile(report, tmp_path / "tfdoctor-tf221.prom")
    write_prometheus_textfile(report, tmp_path / "b.prom", environment="tf220")
    a, b = (samples((tmp_path / n).read_text()) for n in ("tfdoctor-tf221.prom", "b.prom"))
    assert not set(a) & set(b)
    assert value(a, "tfdoctor_gpus_usable", environment="tfdoctor-tf221") == 8
    assert value(b, "tfdoctor_gpus_usable", environment="tf220") == 8


def test_a_failed_run_drops_the_verdict_and_keeps_the_last_success(tmp_path):
    """mark_run_failed: no stale verdict survives; run_failed 1 and the exit code; the last
    success time and the versions of that run stay, for the staleness alert and the dashboard."""
    path = tmp_path / "tfdoctor.prom"
    write_prometheus_textfile(judge(healthy()), path, exit_code=0)
    success = value(samples(path.read_text()), "tfdoctor_last_success_timestamp_seconds", **env())
    mark_run_failed(path, 124)
    parsed = samples(path.read_text())
    assert value(parsed, "tfdoctor_run_failed", **env()) == 1
    assert value(parsed, "tfdoctor_exit_code", **env()) == 124
    assert value(parsed, "tfdoctor_last_success_timestamp_seconds", **env()) == success
    assert not any(k[0] in ("tfdoctor_verdict", "tfdoctor_check_status") for k in parsed)
    assert any(k[0] == "tfdoctor_info" for k in parsed)
    mark_run_failed(tmp_path / "never.prom", 127)  # no earlier run: no success time at all
    never = samples((tmp_path / "never.prom").read_text())
    assert not any(k[0].startswith("tfdoctor_last_success") for k in never)


def test_a_cpu_all_reduce_is_not_labelled_nccl():
    """The multi-device recipe on two CPUs reduces on the host: labelled CPU, not NCCL."""
    from tfdoctor.facts import RecipeResult, SmokeFacts

    recipe = RecipeResult(
        "multi-device",
        None,
        "passed",
        1.0,
        metrics={"busbw_gbs": 2.0, "algbw_gbs": 2.0},
        info={"cross_device_ops": "reduction-to-one-device", "devices": "CPU:0,CPU:1"},
    )
    facts = change(healthy(), smoke=SmokeFacts(python="python", outcome="completed", recipes=(recipe,)))
    parsed = samples(render_prometheus(judge(facts)))
    labels = {"device_type": "CPU", "cross_device_ops": "reduction-to-one-device"}
    assert value(parsed, "tfdoctor_smoke_allreduce_bus_bandwidth_bytes_per_second", **labels) == 2e9
