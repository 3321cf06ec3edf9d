"""Pilot tests of the cluster screen over recorded cluster documents (a real 2-worker
tensorflow-cpu run, judged again by the real replay loader): verdict, nodes, sizes, findings."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

from textual.widgets import OptionList
from tfdoctor.cluster.replay import load_document
from tfdoctor.errors import TfdoctorError
from tfdoctor.tui.cluster import make_cluster_app

from tui.kit import drive, screen_text, settle

RECORDED = Path(__file__).resolve().parents[1] / "cluster" / "fixtures" / "cluster-straggler.json"
"""`tfdoctor cluster --json` of 2 real workers, worker 1 slowed by the test hook (a straggler)."""


def recorded() -> dict[str, Any]:
    return load_document(RECORDED)


def broken(tmp_path: Path) -> dict[str, Any]:
    """The recorded run with worker 1 on another TensorFlow and a wrong sum in its 4 MiB
    all-reduce, judged by today's rules through the replay loader."""
    doc = json.loads(RECORDED.read_text())
    w = doc["workers"][1]
    w["tf_version"] = "2.20.0"
    w["allreduce"][2].update(exact=False, wrong_elements=5)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    return load_document(path)


def line_with(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


def test_verdict_nodes_sizes_and_straggler_of_a_real_run() -> None:
    """The header has the verdict and the workers' interpreter; each worker is a row with its
    versions, node verdict and step time; the straggler's row carries its ratio and a glyph."""
    doc = recorded()
    app = make_cluster_app(lambda: copy.deepcopy(doc), "replaying")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        text = screen_text(app)
        lines = text.splitlines()
        assert lines[0].strip() == "✓ Cluster verdict: healthy (1 warning(s))"
        assert "2 worker(s), 2 completed | RING collectives | launcher local" in lines[1]
        assert "Workers' interpreter: " in lines[2]
        assert "Nodes: 2, straggler: worker:1" in text
        slow = line_with(text, "worker:1 ")
        assert "✓ completed" in slow and "2.21.0" in slow and "✓ healthy" in slow
        assert slow.rstrip().endswith("x ▲ straggler") and " ms " in slow
        assert "straggler" not in line_with(text, "worker:0 ")
        for size in ("4 KiB", "256 KiB", "4 MiB"):
            assert "GB/s" in line_with(text, size) and "✓ exact on all" in line_with(text, size)
        assert "! warning cluster-straggler" in text
        assert "Hint: Compare its clocks" in text  # the first finding's detail

    drive(app, scenario, size=(120, 40))


def test_root_cause_on_top_wrong_sum_marked_and_detail_follows_the_cursor(tmp_path) -> None:
    """A broken job: the root cause is in the verdict and first in the list, the wrong size
    says which worker got how many wrong elements, and moving in the findings list shows each
    finding's evidence and hint."""
    doc = broken(tmp_path)
    app = make_cluster_app(lambda: doc, "replaying")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        text = screen_text(app)
        assert "✗ Cluster verdict: problems; root cause: cluster-tf-version-differs" in text
        assert "cluster-tf-version-differs  root cause" in text
        assert "✗ WRONG: worker:1 (5)" in line_with(text, "4 MiB")
        assert "2.20.0" in line_with(text, "worker:1 ")
        assert "worker:1: 2.20.0" in text  # evidence of the highlighted root cause
        findings = app.screen.query_one("#cluster-findings", OptionList)
        findings.focus()
        await pilot.press("down")
        await pilot.pause()
        text = screen_text(app)
        assert "wrong_elements: 5" in text
        assert "Hint: Silent data corruption" in text

    drive(app, scenario, size=(120, 40))


def test_no_color_still_reads(monkeypatch) -> None:
    """With NO_COLOR the app drops colours; glyphs and words still say healthy, straggler, wrong."""
    monkeypatch.setenv("NO_COLOR", "1")
    doc = recorded()
    app = make_cluster_app(lambda: doc, "replaying")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        assert app.no_color
        text = screen_text(app)
        assert "✓ Cluster verdict" in text and "▲ straggler" in text and "! warning" in text

    drive(app, scenario, size=(120, 40))


def test_running_then_quit_stops_the_job() -> None:
    """While the job runs the header says so; q kills it (the stop callback) and the outcome is
    interrupted, so the CLI exits 130 with no worker left."""
    release, stopped = threading.Event(), []

    def load() -> dict[str, Any]:
        release.wait(10)
        return recorded()

    app = make_cluster_app(load, "2 local worker(s) of /venv/bin/python", stop=lambda: (
        stopped.append(True), release.set()))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await pilot.pause()
        assert "Running ... 2 local worker(s) of /venv/bin/python" in screen_text(app)
        await pilot.press("q")
        await pilot.pause()

    drive(app, scenario, size=(100, 30))
    assert stopped == [True] and app.outcome == "interrupted"


def test_a_failed_run_says_why() -> None:
    """A loader that fails (no report from srun's chief task) is a line in the header, not a crash."""

    def load() -> dict[str, Any]:
        raise TfdoctorError("no report from the chief task")

    app = make_cluster_app(load, "slurm")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        assert "The cluster run failed: TfdoctorError: no report from the chief task" in screen_text(app)
        assert isinstance(app.failure, TfdoctorError) and app.document is None

    drive(app, scenario, size=(100, 30))
