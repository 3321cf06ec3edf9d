"""The metrics, alert rules and dashboard against the real Prometheus tools on 127.0.0.1.

The real tfdoctor CLI writes textfiles for two environments of one node; a real node_exporter's
textfile collector serves them and a real Prometheus server scrapes it with the shipped alert
rules loaded; every dashboard query runs on that server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from helpers import change, healthy
from programs import INTEGRATIONS, TFDOCTOR, Daemons, free_port, program, version, wait_for, write_facts
from prometheus_client.parser import text_string_to_metric_families

RULES = INTEGRATIONS / "prometheus" / "tfdoctor-alerts.yml"
RULES_TEST = INTEGRATIONS / "prometheus" / "tfdoctor-alerts_test.yml"
DASHBOARD = INTEGRATIONS / "prometheus" / "tfdoctor-dashboard.json"
CAUSE = "cuda-visible-devices-hides-all"
# `tfdoctor integrations` until the lead registers it on the main group (then: TFDOCTOR).
INTEGRATIONS_CLI = [
    sys.executable,
    "-c",
    "import sys; from tfdoctor.cli import cli; from tfdoctor.integrations_cmd import integrations;"
    " cli.add_command(integrations); sys.exit(cli(prog_name='tfdoctor'))",
]


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def test_promtool_checks_the_rules_and_their_unit_tests():
    """`promtool check rules` accepts the shipped file, and `promtool test rules` on the unit
    tests shipped beside it (the file the rules' header names) shows the problems alert carries
    the root cause and the staleness alert fires on an old verdict."""
    promtool = program("promtool")
    print(version([promtool, "--version"]))
    check = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS: 5 rules found" in check.stdout
    named = [line for line in RULES.read_text().splitlines()[:6] if "promtool test rules" in line]
    assert named and RULES_TEST.name in named[0], "the rules file names its shipped unit tests"
    test = subprocess.run(
        [promtool, "test", "rules", RULES_TEST.name],
        cwd=RULES_TEST.parent,
        capture_output=True,
        text=True,
    )
    assert test.returncode == 0, test.stdout + test.stderr


def test_promtool_lints_what_tfdoctor_writes(tmp_path):
    """`promtool check metrics` (the exposition linter) finds nothing in a real textfile."""
    facts = write_facts(tmp_path / "facts.json", change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    prom = tmp_path / "tfdoctor.prom"
    subprocess.run([TFDOCTOR, "replay", str(facts), "--prometheus-textfile", str(prom)], capture_output=True)
    lint = subprocess.run(
        [program("promtool"), "check", "metrics"], input=prom.read_text(), capture_output=True, text=True
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """node_exporter (textfile collector only) and a Prometheus server scraping it every second."""
    exporter, server = program("prometheus-node-exporter"), program("prometheus")
    root = tmp_path_factory.mktemp("prometheus")
    textfiles = root / "textfile"
    textfiles.mkdir()
    exporter_port, server_port = free_port(), free_port()
    (root / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{RULES}]\n"
        "scrape_configs:\n"
        f"  - job_name: node\n    static_configs: [{{targets: ['127.0.0.1:{exporter_port}']}}]\n"
    )
    exporter_url = f"http://127.0.0.1:{exporter_port}/metrics"
    server_url = f"http://127.0.0.1:{server_port}"
    with Daemons() as daemons:
        daemons.start(
            "node_exporter",
            [
                exporter,
                f"--web.listen-address=127.0.0.1:{exporter_port}",
                "--collector.disable-defaults",
                "--collector.textfile",
                f"--collector.textfile.directory={textfiles}",
            ],
            root / "node_exporter.log",
            ready=lambda: _ok(exporter_url),
        )
        daemons.start(
            "prometheus",
            [
                server,
                f"--config.file={root / 'prometheus.yml'}",
                f"--storage.tsdb.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{server_port}",
            ],
            root / "prometheus.log",
            ready=lambda: _ok(server_url + "/-/ready"),
        )
        yield {"textfiles": textfiles, "exporter": exporter_url, "server": server_url, "root": root}


def _ok(url: str) -> bool:
    try:
        get(url)
        return True
    except OSError:
        return False


def query(server: str, expr: str) -> list[dict]:
    body = json.loads(get(f"{server}/api/v1/query?" + urllib.parse.urlencode({"query": expr})))
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_node_exporter_serves_two_environments_and_prometheus_alerts(stack, tmp_path):
    """Two environments of one node write two files without colliding series; the scrape has no
    error; Prometheus loads the rules and the problems alert names the root cause."""
    print(version([program("prometheus-node-exporter"), "--version"]))
    broken = write_facts(tmp_path / "broken.json", change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    good = write_facts(tmp_path / "good.json", healthy())
    for env, facts, code in (("tf221", broken, 1), ("tf220", good, 0)):
        out = stack["textfiles"] / f"tfdoctor-{env}.prom"
        run = subprocess.run(
            [TFDOCTOR, "replay", str(facts), "--prometheus-textfile", str(out)], capture_output=True
        )
        assert run.returncode == code
    text = get(stack["exporter"])
    assert "node_textfile_scrape_error 0" in text
    assert (
        'tfdoctor_root_cause_info{check="cuda-visible-devices",environment="tfdoctor-tf221",'
        f'finding="{CAUSE}"}} 1' in text
    )
    assert 'tfdoctor_verdict{environment="tfdoctor-tf220",status="healthy"} 1' in text
    server = stack["server"]
    # A rule's health is "unknown" until Prometheus first evaluates it: wait for that.
    def evaluated() -> list[dict]:
        found = json.loads(get(server + "/api/v1/rules"))["data"]["groups"][0]["rules"]
        return found if all(r["health"] != "unknown" for r in found) else []

    rules = wait_for(evaluated, 30, "every rule to be evaluated")
    assert {r["name"] for r in rules} >= {"TfdoctorProblems", "TfdoctorStale", "TfdoctorRunFailed"}
    assert all(r["health"] == "ok" for r in rules), rules
    alerts = wait_for(
        lambda: [
            a
            for a in json.loads(get(server + "/api/v1/alerts"))["data"]["alerts"]
            if a["labels"]["alertname"] == "TfdoctorProblems"
        ],
        30,
        "the problems alert to be pending",
    )
    assert [(a["labels"]["environment"], a["labels"]["finding"]) for a in alerts] == [
        ("tfdoctor-tf221", CAUSE)
    ]


def test_a_failed_run_removes_the_stale_verdict(stack):
    """After a run with no verdict the old verdict is gone from the scrape, run_failed is 1 and
    the last success time is the one of the run before."""
    path = stack["textfiles"] / "tfdoctor-tf221.prom"
    before = _value(path.read_text(), "tfdoctor_last_success_timestamp_seconds", "tfdoctor-tf221")
    run = subprocess.run(
        [*INTEGRATIONS_CLI, "integrations", "mark-failed", str(path), "--exit-code", "124"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    text = get(stack["exporter"])
    assert "node_textfile_scrape_error 0" in text
    assert 'tfdoctor_run_failed{environment="tfdoctor-tf221"} 1' in text
    assert 'tfdoctor_exit_code{environment="tfdoctor-tf221"} 124' in text
    assert 'tfdoctor_verdict{environment="tfdoctor-tf221"' not in text
    assert before and _value(text, "tfdoctor_last_success_timestamp_seconds", "tfdoctor-tf221") == before


def _value(text: str, name: str, environment: str) -> float | None:
    """One sample's value, parsed by prometheus-client (node_exporter reformats numbers)."""
    return next(
        (
            s.value
            for f in text_string_to_metric_families(text)
            for s in f.samples
            if s.name == name and s.labels.get("environment") == environment
        ),
        None,
    )


def test_every_dashboard_query_runs_on_the_real_server(stack):
    """Each panel's PromQL parses and evaluates on Prometheus, with the variables set to all."""
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert len(exprs) >= 10
    wait_for(lambda: query(stack["server"], "tfdoctor_run_failed"), 30, "the first scrape")
    for expr in exprs:
        concrete = expr.replace("$instance", ".*").replace("$environment", ".*")
        query(stack["server"], concrete)
    assert query(stack["server"], "sum(tfdoctor_gpus_usable)")[0]["value"][1] == "8"


def _input_series(textfile: str, instance: str) -> list[dict]:
    """A textfile as node_exporter's scrape gives it to Prometheus (the instance label added), in
    promtool's input_series notation: each sample constant over the test."""
    series = []
    for family in text_string_to_metric_families(textfile):
        for s in family.samples:
            labels = {**s.labels, "instance": instance, "job": "node"}
            selector = ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items()))
            series.append({"series": f"{s.name}{{{selector}}}", "values": f"{s.value:g}x10"})
    return series


def _fleet_panels() -> dict[str, str]:
    """The fleet stat panels' queries, with the dashboard variables set to all."""
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return {
        p["title"]: p["targets"][0]["expr"].replace("$instance", ".*").replace("$environment", ".*")
        for p in panels
        if p["title"] in ("Nodes with problems", "Usable GPUs (fleet)")
    }


def test_fleet_panels_count_nodes_not_environments(tmp_path):
    """One 8-GPU node with two environment files is one node with 8 usable GPUs, not 16; with
    problems in both environments it is one node with problems, not two. A second node adds to
    both sums. The shipped panel queries, evaluated by real Prometheus (`promtool test rules`)
    on the textfiles the real tfdoctor CLI writes."""
    import yaml

    broken = write_facts(tmp_path / "broken.json", change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))
    good = write_facts(tmp_path / "good.json", healthy())

    def textfile(env: str, facts: Path) -> str:
        out = tmp_path / f"tfdoctor-{env}.prom"
        subprocess.run([TFDOCTOR, "replay", str(facts), "--prometheus-textfile", str(out)],
                       capture_output=True, timeout=120)
        return out.read_text()

    node_a, node_b = "gpu-a:9100", "gpu-b:9100"
    healthy_node = _input_series(textfile("tf221", good), node_a) + _input_series(
        textfile("tf220", good), node_a)
    broken_node = _input_series(textfile("tf221", broken), node_a) + _input_series(
        textfile("tf220", broken), node_a)
    other_node = _input_series(textfile("tf221", good), node_b)
    panels = _fleet_panels()
    usable, problems = panels["Usable GPUs (fleet)"], panels["Nodes with problems"]

    def case(series: list[dict], expected: dict[str, int]) -> dict:
        return {
            "interval": "1m",
            "input_series": series,
            "promql_expr_test": [
                {"expr": expr, "eval_time": "5m", "exp_samples": [{"labels": "{}", "value": value}]}
                for expr, value in expected.items()
            ],
        }

    tests = {
        "rule_files": [],
        "evaluation_interval": "1m",
        "tests": [
            case(healthy_node, {usable: 8, problems: 0}),
            case(broken_node, {problems: 1, usable: 0}),
            case(healthy_node + other_node, {usable: 16}),
            case(broken_node + other_node, {problems: 1, usable: 8}),
        ],
    }
    (tmp_path / "panels_test.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    run = subprocess.run([program("promtool"), "test", "rules", "panels_test.yml"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SUCCESS" in run.stdout
