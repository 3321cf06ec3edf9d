"""The pictures in the plain-text and Markdown reports, through the real CLI on saved multi-GPU
machines (4x A100, 8x H100, MIG, --quick, the recorded GPU-less container); the topology
matrix from `nvidia-smi topo -m` and from the NVML stub's recorded topologies; the cluster
bars of a recorded straggler run. Unknown must read "not measured", never 0 %."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from picture_fixtures import eight_h100, four_a100, four_unmeasured, mig_a100, no_gpu, save
from share_helpers import invoke, share_cli
from stubs.build import install_stub
from stubs.catalogue import NVML_SONAME, stub
from tfdoctor.cluster.topology import probe_topology
from tfdoctor.pictures import Bar, cluster_pictures, gpu_table, topology_matrix
from tfdoctor.pictures.text import draw_bar, render_cluster_pictures, render_topology

TESTS = Path(__file__).parents[1]


def replay_text(facts, tmp_path: Path, charset: str = "utf-8") -> list[str]:  # type: ignore[no-untyped-def]
    saved = save(facts, tmp_path / "facts.json")
    result = CliRunner(charset=charset).invoke(share_cli(), ["replay", str(saved)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.stdout.splitlines()


def section(lines: list[str], start: str) -> list[str]:
    """The lines from the one starting with `start` to the next blank line."""
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    end = next((i for i in range(first, len(lines)) if not lines[i]), len(lines))
    return lines[first:end]


def test_four_gpus_as_a_table_with_bars_in_the_text_report(tmp_path):
    """4x A100: a row per GPU with NVML's facts, four bars each against the A100 spec; the
    throttled GPU's low bars are marked, its narrow link and hot temperature shown."""
    table = section(replay_text(four_a100(), tmp_path), "GPUs (4")
    assert table[1].split() == ["GPU", "name", "CC", "mem", "used/total", "PCIe", "now/max",
                                "temp", "MIG", "throttle"]
    assert table[2].split() == ["0", "NVIDIA", "A100-SXM4-80GB", "8.0", "0.0/80.0", "GiB",
                                "gen4x16/gen4x16", "41C", "off", "none"]
    assert table[3:7] == [
        "       fp32    ▇▇▇▇▇▇▇▇▇░  88 % of 19.5 TFLOPS",
        "       fp16    ▇▇▇▇▇▇░░░░  61 % of 312 TFLOPS",
        "       bf16    ▇▇▇▇▇▇░░░░  61 % of 312 TFLOPS",
        "       memory  ▇▇▇▇▇▇▇▇░░  83 % of 2039 GB/s",
    ]
    gpu2 = table[12:17]
    assert gpu2[0].endswith("84C   off  sw_thermal_slowdown; measuring: hw_thermal_slowdown")
    assert gpu2[3] == "       bf16    ▇▇▇░░░░░░░  32 % of 312 TFLOPS  << low"
    assert "3.5/80.0 GiB" in gpu2[0]
    assert "?/80.0 GiB" in table[17] and "gen4x8/gen4x16" in table[17]  # used: not collected
    assert table[-2].startswith("  Bars: measured by the smoke run against the spec of NVIDIA A100")
    assert table[-1].startswith("  all-reduce  180.0 GB/s busbw over 4 GPUs (NCCL)")


def test_bars_are_ascii_where_stdout_cannot_encode_unicode(tmp_path):
    """An ASCII stdout (a C locale, a pipe with PYTHONIOENCODING=ascii) gets # and . bars."""
    table = section(replay_text(eight_h100(), tmp_path, charset="ascii"), "GPUs (8")
    assert "       fp32    #########.  90 % of 67 TFLOPS" in table
    assert not any("▇" in line or "░" in line for line in table)


def test_a_gpu_whose_run_timed_out_is_not_measured_never_zero(tmp_path):
    """8x H100, GPU 7's throughput recipe hit its limit: its row says so, and no 0 % appears."""
    lines = replay_text(eight_h100(), tmp_path)
    table = section(lines, "GPUs (8")
    assert len([line for line in table if line.startswith("       bf16")]) == 7
    seven = table.index(next(line for line in table if line.startswith("  7 ")))
    assert table[seven + 1] == (
        "       throughput  not measured (throughput recipe timeout: killed after the time "
        "limit of 60 s)")
    assert not any(" 0 %" in line for line in lines)


def test_mig_gpu_row(tmp_path):
    """GPU 1 in MIG mode with three instances: the MIG cell counts them; unmeasured there."""
    table = section(replay_text(mig_a100(), tmp_path), "GPUs (2")
    row = next(line for line in table if line.startswith("  1 "))
    assert "on, 3 dev" in row
    assert table[table.index(row) + 1].endswith("not measured (no throughput result on this GPU)")


def test_quick_run_lists_gpus_without_bars(tmp_path):
    """--quick (no smoke run): NVML's rows, one line saying throughput was not measured."""
    table = section(replay_text(four_unmeasured(), tmp_path), "GPUs (4")
    assert len(table) == 7 and "%" not in "".join(table)
    assert table[-1] == "  Throughput not measured: the smoke run did not run (--quick, or a ticket)."


def test_recorded_machine_without_gpu_has_no_gpu_table(tmp_path):
    """The recorded GPU-less container: no GPU section in the text or the Markdown report."""
    assert gpu_table(no_gpu()) is None
    assert not any(line.startswith("GPUs (") for line in replay_text(no_gpu(), tmp_path))
    saved = save(no_gpu(), tmp_path / "facts.json")
    preview = invoke("report", "--from", str(saved), "--preview")
    assert preview.exit_code == 0 and "### GPUs" not in preview.stdout


def test_markdown_report_has_the_gpu_tables(tmp_path):
    """The support report (report --preview): the NVML table with values in code spans, and a
    bar table with one column per measurement, the low one in bold."""
    saved = save(four_a100(), tmp_path / "facts.json")
    md = invoke("report", "--from", str(saved), "--preview").stdout.splitlines()
    table = section(md, "### GPUs (4)")
    assert table == ["### GPUs (4)"]
    rows = section(md[md.index("### GPUs (4)") + 2:], "| GPU |")
    assert rows[0] == "| GPU | name | CC | mem used/total | PCIe now/max | temp | MIG | throttle |"
    assert rows[5].startswith("| `3` | `NVIDIA A100-SXM4-80GB` | `8.0` | `?/80.0 GiB` | "
                              "`gen4x8/gen4x16` | `40C` |")
    bars = section(md, "| GPU | fp32 |")
    assert bars[0] == "| GPU | fp32 | fp16 | bf16 | memory |"
    assert bars[4] == ("| 2 | `▇▇▇▇▇░░░░░` 46 % of 19.5 TFLOPS **low** | `▇▇▇░░░░░░░` 32 % of 312 "
                       "TFLOPS **low** | `▇▇▇░░░░░░░` 32 % of 312 TFLOPS **low** | `▇▇▇▇▇▇▇▇░░` "
                       "81 % of 2039 GB/s |")


def test_unknown_bar_is_blank_not_empty():
    """A bar without a value draws blanks (not a 0 % track) and has no fraction."""
    unknown = Bar("bf16", None, 989.0, "not measured")
    assert unknown.fraction is None and draw_bar(unknown) == " " * 10
    assert draw_bar(Bar("bf16", 0.001, 989.0, "")) == "▇" + "░" * 9  # measured, tiny: visible
    assert draw_bar(Bar("bf16", 2000.0, 989.0, "")) == "▇" * 10  # above spec: full, not longer


SMI_TOPO = (
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV12\tSYS\tSYS\tPXB\t0-31\t0\t\tN/A\n"
    "GPU1\tNV12\t X \tSYS\tSYS\tPXB\t0-31\t0\t\tN/A\n"
    "GPU2\tSYS\tSYS\t X \tNV12\tSYS\t32-63\t1\t\tN/A\n"
    "GPU3\tSYS\tSYS\tNV12\t X \tSYS\t32-63\t1\t\tN/A\n"
    "NIC0\tPXB\tPXB\tSYS\tSYS\t X \t\t\t\t\n\nLegend:\n\n  X    = Self\n"
)


def test_topology_from_nvidia_smi_topo_m():
    """`nvidia-smi topo -m` as it prints on a terminal (underlined header, a NIC column): the
    GPU matrix in its own words, NIC columns left out."""
    topo = {"gpus": [{"pcie_gen": 4, "pcie_width": 16}] * 4, "nvlink": [[]] * 4, "p2p": None,
            "smi_topo": SMI_TOPO}
    matrix = topology_matrix(topo, 20.0, "this node")
    assert matrix is not None and matrix.source == "nvidia-smi topo -m"
    assert matrix.labels == ("GPU0", "GPU1", "GPU2", "GPU3")
    assert matrix.cells[0] == ("X", "NV12", "SYS", "SYS")
    assert matrix.busbw is not None and matrix.busbw.text.startswith(
        "20.0 GB/s measured = 78 % of the ~26 GB/s predicted (PCIe gen 4 x16")


def probe(name: str, tmp_path: Path) -> dict:
    """A recorded topology read through the real NVML child from the NVML stub."""
    lib = install_stub(stub("nvml.c", NVML_SONAME), tmp_path / "lib")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LD_LIBRARY_PATH": str(lib.parent),
           "TFDOCTOR_FAKE_NVML": str(TESTS / "cluster" / "topologies" / name)}
    return probe_topology(env)


@pytest.mark.parametrize("name, cell, measured, words", [
    ("hgx-h100-healthy.json", "NV18", 380.0, "380.0 GB/s measured = 106 % of the ~360 GB/s"),
    ("hgx-h100-link-down.json", "NV16", 40.0, "40.0 GB/s measured = 12 % of the ~320 GB/s"),
    ("pcie-l40s-iommu.json", "SYS", None, "not measured; the topology predicts ~26 GB/s"),
])
def test_topology_from_nvml(name, cell, measured, words, tmp_path):
    """NVML's NVLink states and P2P status per pair, like topo -m: NV# with the pair's active
    links, SYS where P2P is blocked; the predicted busbw beside the measured one."""
    topo = probe(name, tmp_path)
    topo["smi_topo"] = None  # this machine's nvidia-smi, if any, is not the recorded node's
    matrix = topology_matrix(topo, measured, "node-1")
    assert matrix is not None and matrix.source.startswith("NVML")
    assert matrix.cells[3][0] == cell and matrix.cells[3][3] == "X"
    assert matrix.busbw is not None and matrix.busbw.text.startswith(words)
    lines = render_topology(matrix)
    assert lines[0] == "GPU topology of node-1 (NVML (NVLink states, P2P status)):"
    assert lines[1].split()[:2] == ["GPU0", "GPU1"]


def test_cluster_straggler_stands_out():
    """The recorded straggler run: worker:1's compute bar is full and flagged, worker:0's is a
    sliver; busbw by message size grows with the size."""
    doc = json.loads((TESTS / "cluster" / "fixtures" / "cluster-straggler.json").read_text())
    pictures = cluster_pictures(doc)
    assert [b.flag for b in pictures.steps] == [None, "straggler"]
    assert [b.label for b in pictures.busbw] == ["4 KiB", "256 KiB", "4 MiB"]
    lines = render_cluster_pictures(pictures)
    assert "  worker:1 vm  ▇▇▇▇▇▇▇▇▇▇  compute 51.26 ms, step 58.5 ms  << straggler" in lines
    assert "  worker:0 vm  ▇░░░░░░░░░  compute 0.25 ms, step 58.6 ms" in lines


@pytest.mark.parametrize("case, rows, mig", [("healthy_h100x8", 8, None),
                                            ("mig_enabled", 2, ("1", "on"))])
def test_stand_in_stack_through_the_installed_script(case, rows, mig, tmp_path):
    """The real probes on a fake machine (stub NVML, fake TensorFlow wheel; --quick): the GPU
    table lists every GPU the stub NVML reports, in the console script's plain output, with
    ASCII-safe words when stdout is ASCII (PYTHONIOENCODING, as a C locale without UTF-8)."""
    from fakegpu.e2e import build, load_document, make_template_venv, run_tfdoctor

    doc = load_document(TESTS / "scenarios" / "cases" / f"{case}.json")
    template = make_template_venv(tmp_path / "template")
    machine = build(tmp_path / "m", doc, template, TESTS / "scenarios" / "tf")
    machine.env["PYTHONIOENCODING"] = "ascii"
    lines = run_tfdoctor(machine).stdout.splitlines()
    table = section(lines, f"GPUs ({rows}, as NVML lists them):")
    assert len(table) == rows + 3
    assert table[-1] == "  Throughput not measured: the smoke run did not run (--quick, or a ticket)."
    if mig:
        row = next(line for line in table if line.startswith(f"  {mig[0]} "))
        assert f" {mig[1]}" in row


@pytest.mark.parametrize("charset, bar", [("utf-8", "▇▇▇▇▇▇▇▇▇▇"), ("ascii", "##########")])
def test_cluster_text_draws_the_straggler_through_the_cli(charset, bar):
    """`tfdoctor cluster --replay FILE --no-tui`: the bars under the all-reduce table, in
    Unicode or, on an ASCII stdout, in # and ."""
    from tfdoctor.cli import cli

    doc = TESTS / "cluster" / "fixtures" / "cluster-straggler.json"
    result = CliRunner(charset=charset).invoke(cli, ["cluster", "--replay", str(doc), "--no-tui"])
    lines = result.stdout.splitlines()
    assert f"  worker:1 vm  {bar}  compute 51.26 ms, step 58.5 ms  << straggler" in lines
    assert any(line.startswith("  4 MiB    " + bar) for line in lines)


def test_tensorflow_devices_map_to_the_gpus_cuda_visible_devices_leaves():
    """CUDA_VISIBLE_DEVICES=2,3: TensorFlow's GPU:0 is NVML's GPU 2, so its bars go on row 2;
    rows 0 and 1 were not measured; a device whose model names another GPU is not attached."""
    from picture_fixtures import A100, smoke, throughput
    from tfdoctor.facts import SmokeDevice

    base = four_a100()
    facts = replace(base, env={"CUDA_VISIBLE_DEVICES": "2,3"},
                    smoke=smoke(A100, 2, [throughput(0, 18.0, 250.0, 250.0, 1800.0),
                                          throughput(1, 18.0, 250.0, 250.0, 1800.0)]))
    table = gpu_table(facts)
    assert table is not None
    assert [r.device for r in table.rows] == [None, None, "GPU:0", "GPU:1"]
    assert table.rows[0].bars[0].text == "not measured (no throughput result on this GPU)"
    assert table.rows[2].bars[2].text == "80 % of 312 TFLOPS"
    assert facts.smoke is not None
    other = replace(facts.smoke, devices=(SmokeDevice("GPU:0", "GPU", "Tesla T4", "7.5"),
                                          facts.smoke.devices[1]))
    table = gpu_table(replace(facts, smoke=other))
    assert table is not None and [r.device for r in table.rows] == [None, None, None, "GPU:1"]
    assert table.unmatched == ("GPU:0 (Tesla T4): not matched to an NVML GPU",)


def test_memory_used_comes_from_nvml_through_the_real_probe(tmp_path):
    """The NVML child reads nvmlDeviceGetMemoryInfo_v2's `used` from the stub library: the
    facts carry it and the GPU table shows used/total; a GPU with nothing on it reads 0.0."""
    from fakegpu.machine import FakeMachine
    from tfdoctor.probes.driver import probe_driver

    machine = FakeMachine(tmp_path)
    machine.kernel_module("580.65.06")
    busy = {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0",
            "memory_total_mib": 81559, "memory_used_mib": 71680}
    machine.nvml({"driver_version": "580.65.06", "gpus": [busy, {**busy, "memory_used_mib": None}]})
    driver = probe_driver(machine.host(), [])
    assert [g.memory_used_mib for g in driver.gpus] == [71680, 0]
    table = gpu_table(replace(four_unmeasured(), driver=driver))
    assert table is not None
    assert [r.cells[3] for r in table.rows] == ["70.0/79.6 GiB", "0.0/79.6 GiB"]


def test_the_machines_topology_beside_the_busbw_it_predicts(tmp_path):
    """8x H100 whose GPU 3 has 2 of 18 NVLink links down, read through the real NVML child from
    the stub: the text report draws the matrix (NV16 on GPU 3's pairs) and the measured busbw
    against the ~320 GB/s those links predict; the Markdown report has the same matrix."""
    from picture_fixtures import eight_h100_link_down

    facts = eight_h100_link_down(tmp_path / "machine")
    lines = replay_text(facts, tmp_path)
    matrix = section(lines, "GPU topology of this machine (NVML (NVLink states, P2P status)):")
    assert matrix[1].split() == [f"GPU{i}" for i in range(8)]
    assert matrix[5].split() == ["GPU3", "NV16", "NV16", "NV16", "X", "NV16", "NV16", "NV16", "NV16"]
    assert matrix[2].split()[:5] == ["GPU0", "X", "NV18", "NV18", "NV16"]
    assert matrix[-1] == (
        "  all-reduce busbw  ▇▇▇▇▇▇▇▇▇▇  360.0 GB/s measured = 112 % of the ~320 GB/s predicted "
        "(NVLink, 16 active link(s) per GPU (400 GB/s))")
    assert not any(line.startswith("  all-reduce  ") for line in lines)  # said once, here
    saved = save(facts, tmp_path / "facts.json")
    md = invoke("report", "--from", str(saved), "--preview").stdout.splitlines()
    assert "### GPU topology of this machine (NVML (NVLink states, P2P status))" in md
    assert "| GPU3 | `NV16` | `NV16` | `NV16` | `X` | `NV16` | `NV16` | `NV16` | `NV16` |" in md


def test_pcie_machine_behind_an_iommu_reads_sys(tmp_path):
    """4x L40S whose P2P is blocked (IOH topology): SYS between every pair, and with nothing
    measured the prediction alone, from PCIe gen 4 x16."""
    from picture_fixtures import probed_driver

    driver = probed_driver(tmp_path, "pcie-l40s-iommu.json")
    table = gpu_table(replace(four_unmeasured(), driver=driver))
    assert table is not None and table.topology is not None
    assert {c for row in table.topology.cells for c in row} == {"X", "SYS"}
    assert table.topology.busbw is not None
    assert table.topology.busbw.text == ("not measured; the topology predicts ~26 GB/s "
                                         "(PCIe gen 4 x16 (32 GB/s))")


def test_low_bars_are_yellow_on_a_colour_terminal():
    """With colour, a low bar's line is yellow; its `<< low` mark stays for NO_COLOR readers."""
    from helpers import judge
    from tfdoctor.render_text import render_text

    lines = render_text(judge(four_a100()), color=True).splitlines()
    low = [line for line in lines if "<< low" in line]
    assert len(low) == 3 and all(line.startswith("\x1b[33m") for line in low)
    plain = render_text(judge(four_a100())).splitlines()
    assert "\x1b" not in "".join(line for line in plain if "<< low" in line)
