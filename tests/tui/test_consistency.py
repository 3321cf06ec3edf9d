"""One report, every place that shows it: the verdict, the findings pane and its title, the
checks table and its title, the facts tree, the text and Markdown reports must agree, in many
states at once (stopped, timed out, import failed, no GPU, CPU-only, 4 GPUs, MIG, crashed,
ticket replay). Issue 22 found them contradicting each other at the edges ("7 checks did not
run" above "No findings: every check passed"; "[ok] TensorFlow sees the GPUs" with 0 GPUs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from early_stops import A100, CPU, EARLY_STOPS, make_facts
from helpers import gpu, healthy, judge
from textual.widgets import Tree
from tfdoctor.facts import MigDeviceFacts, RecipeResult, SmokeDevice, SmokeFacts
from tfdoctor.report import Report, build_report, load_facts_file
from tfdoctor.triage import triage_facts
from tfdoctor.tui.app import make_app

from tui.consistency import assert_consistent, assert_facts_tree, read_main
from tui.kit import Loader, crashed_report, drive, problems_report, settle

TESTS = Path(__file__).resolve().parents[1]


def four_gpus(kind: str, seen: int) -> Report:
    """4 H100s under NVML; TensorFlow saw `seen` of them and ran its strategy with `kind`."""
    devices = tuple(SmokeDevice(f"GPU:{i}", "GPU", "NVIDIA H100 80GB HBM3", "9.0")
                    for i in range(seen)) + (CPU,)
    on = ",".join(d.name for d in devices if d.device_type == "GPU") or "CPU:0,CPU:1"
    recipes = (RecipeResult("import", status="passed"), RecipeResult("devices", status="passed"),
               RecipeResult("multi-device", status="passed", metrics={"replicas": float(seen)},
                            info={"cross_device_ops": kind, "devices": on}))
    smoke = SmokeFacts(python="/venv/bin/python", outcome="completed", tf_version="2.21.0",
                       is_cuda_build=True, devices=devices, recipes=recipes)
    return judge(replace(healthy(gpus=4), smoke=smoke))


def cpu_only() -> Report:
    """tensorflow-cpu on a machine with no GPU: every recipe on CPU:0, tensor-cores too."""
    recipes = (RecipeResult("import", status="passed"), RecipeResult("devices", status="passed"),
               RecipeResult("matmul", device="CPU:0", status="passed"),
               RecipeResult("tensor-cores", device="CPU:0", status="passed",
                            metrics={"fp16_vs_fp32": 0.874}))
    smoke = SmokeFacts(python="/venv/bin/python", outcome="completed", tf_version="2.21.0",
                       is_cuda_build=False, devices=(CPU,), recipes=recipes)
    return build_report(make_facts(smoke))


def mig() -> Report:
    """Two A100s, one in MIG mode with two instances."""
    facts = healthy(gpus=2)
    gpus = (replace(facts.driver.gpus[0], mig_mode=True, mig_devices=(
        MigDeviceFacts(0, "MIG-aaaa", "NVIDIA A100 MIG 3g.20gb", 19968),
        MigDeviceFacts(1, "MIG-bbbb", "NVIDIA A100 MIG 3g.20gb", 19968))), gpu(1))
    return judge(replace(facts, driver=replace(facts.driver, gpus=gpus)))


def ticket() -> Report:
    """A ticket's nvidia-smi output replayed: most facts unknown."""
    text = (TESTS / "triage/data/nvidia_smi/tf38134_driver440_two_gpus.txt").read_text()
    return build_report(triage_facts([text], "2026-11-27T00:00:00+00:00")[0])


def early(state: str) -> Callable[[], Report]:
    return lambda: build_report(make_facts(EARLY_STOPS[state], driver=A100))


STATES: dict[str, Callable[[], Report]] = {
    "timed-out": early("timeout-in-xla"),
    "import-failed": early("import-failed"),
    "budget": early("budget-mid-recipes"),
    "crashed-in-matmul": early("crashed-in-matmul"),
    "no-gpu-recorded": lambda: build_report(*load_facts_file(
        TESTS / "recorded/no-gpu-tf-cuda-2-21/facts.json")),
    "cpu-only": cpu_only,
    "4-gpus-nccl": lambda: four_gpus("nccl", 4),
    "4-gpus-hierarchical": lambda: four_gpus("hierarchical-copy", 4),
    "4-gpus-tf-sees-one": lambda: four_gpus("one-device", 1),
    "mig": mig,
    "healthy-8": lambda: judge(healthy()),
    "problems": problems_report,
    "crashed-check": crashed_report,
    "ticket": ticket,
}


@pytest.mark.parametrize("state", sorted(STATES))
def test_every_place_agrees(state: str) -> None:
    """The main screen at 200x60 of each state, read back from its widgets: the counts add up
    across verdict, titles and rows; the facts tree says "(not collected)" only where the facts
    do; the text and Markdown reports of the same report agree with it."""
    report = STATES[state]()
    app = make_app(Loader(report))

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        assert_consistent(read_main(app), report)
        await pilot.press("f")
        await pilot.pause()
        assert assert_facts_tree(app.screen.query_one(Tree), report) > 0

    drive(app, scenario, size=(200, 60))


def test_after_stop_nothing_says_every_check_passed() -> None:
    """The reported bug: s during the smoke work; the verdict counts the checks that did not
    run, and the findings pane and the Checks title count the same ones."""
    report = build_report(make_facts(EARLY_STOPS["stopped-after-devices"]))
    loader = Loader(report, block=True)
    app = make_app(loader)

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        while not loader.entered.is_set():
            await pilot.pause(0.02)
        await pilot.press("s")
        await settle(pilot)
        shown = read_main(app)
        assert "Stopped early" in shown.screen
        assert "did not run" in shown.checks_title
        assert not any("every check passed" in p for p in shown.findings), shown.findings
        assert_consistent(shown, report)

    drive(app, scenario, size=(120, 40))


def test_nccl_note_names_the_gpus_tensorflow_had() -> None:
    """"fewer than two GPUs" beside "4 GPU(s)" was false: the note says how many GPUs the
    strategy had, and NVML's count, or which op it chose over 4."""
    one = {f.id: f.message for f in four_gpus("one-device", 1).findings}["nccl-not-run"]
    assert "had 1 GPU(s) to use (NVML lists 4)" in one
    four = {f.id: f.message for f in four_gpus("hierarchical-copy", 4).findings}["nccl-not-run"]
    assert "chose hierarchical-copy for 4 GPUs" in four and "fewer" not in four


def test_one_root_cause_in_the_cluster_screen(tmp_path: Path) -> None:
    """Both workers' 4 MiB all-reduce summed wrong: two findings share the root cause's id, and
    both were marked "root cause". Exactly one is, the one the verdict names, judged again by
    the real replay loader over the recorded 2-worker run."""
    import json

    from textual.widgets import OptionList
    from tfdoctor.cluster.replay import load_document
    from tfdoctor.tui.cluster import make_cluster_app

    doc = json.loads((TESTS / "cluster/fixtures/cluster-straggler.json").read_text())
    for worker in doc["workers"]:
        worker["allreduce"][2].update(exact=False, wrong_elements=5)
    (tmp_path / "wrong.json").write_text(json.dumps(doc))
    judged = load_document(tmp_path / "wrong.json")
    root = judged["verdict"]["root_cause"]
    assert [f["id"] for f in judged["findings"]].count(root) == 2
    app = make_cluster_app(lambda: judged, "replaying")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        options = app.screen.query_one("#cluster-findings", OptionList)
        titles = [str(options.get_option_at_index(i).prompt).splitlines()[0]
                  for i in range(options.option_count)]
        marked = [t for t in titles if t.endswith("root cause")]
        assert len(marked) == 1 and root in marked[0], titles
        assert f"root cause: {root}" in app.screen.query_one("#verdict").render().plain  # type: ignore[attr-defined]

    drive(app, scenario, size=(120, 40))


def test_the_detail_offers_the_fix_the_plan_applies() -> None:
    """The recorded no-GPU machine: cuda-library-missing's own hint says `export
    LD_LIBRARY_PATH=...`, but the fix plan writes a start-up preload. The finding's detail
    offered the export; it now shows the plan's step (its number on the fix screen, who
    applies it, its command), and c copies that command."""
    report = STATES["no-gpu-recorded"]()
    app = make_app(Loader(report))
    index = next(i for i, f in enumerate(report.findings) if f.id == "cuda-library-missing")

    async def scenario(pilot):  # type: ignore[no-untyped-def]
        await settle(pilot)
        app.open_detail(finding=report.findings[index])
        await pilot.pause()
        from tui.kit import screen_text

        text = screen_text(app)
        assert "Fix activation-hook-ld-library-path (step 1 of the fix plan, applied by " \
            "tfdoctor" in text, text
        assert "--preload" in text and "export LD_LIBRARY_PATH" not in text
        await pilot.press("c")
        await pilot.pause()
        assert "activation-hook-ld-library-path.sh --preload" in (app.clipboard or "")

    drive(app, scenario, size=(200, 60))
