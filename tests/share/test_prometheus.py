"""node_exporter textfile metrics, parsed back with prometheus-client's own text parser."""

from __future__ import annotations

import stat
import threading

from helpers import judge
from prometheus_client.parser import text_string_to_metric_families
from share_helpers import change, healthy, with_smoke
from tfdoctor.facts import ProbeIssue
from tfdoctor.share.prometheus import render_prometheus, write_prometheus_textfile


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
    }


def value(parsed, name, **labels):
    return parsed[(name, tuple(sorted(labels.items())))]


def test_healthy_node_with_smoke_figures(tmp_path):
    """Every family parses; counts, per-check states and measured figures are what the facts say."""
    report = judge(with_smoke(healthy(), tflops=64.0, busbw=300.0), expect_gpus=8)
    path = tmp_path / "tfdoctor.prom"
    write_prometheus_textfile(report, path, exit_code=0)
    text = path.read_text()
    parsed = samples(text)
    assert value(parsed, "tfdoctor_gpus_present") == 8
    assert value(parsed, "tfdoctor_gpus_expected") == 8
    assert value(parsed, "tfdoctor_gpus_usable") == 8
    assert value(parsed, "tfdoctor_exit_code") == 0
    assert value(parsed, "tfdoctor_verdict", status="healthy") == 1
    assert value(parsed, "tfdoctor_check_status", check="driver-present", status="passed") == 1
    assert value(parsed, "tfdoctor_check_status", check="driver-present", status="failed") == 0
    assert (
        value(parsed, "tfdoctor_smoke_matmul_flops_per_second", device="GPU:3", dtype="float32")
        == 64e12
    )
    assert value(parsed, "tfdoctor_smoke_allreduce_bus_bandwidth_bytes_per_second") == 300e9
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
