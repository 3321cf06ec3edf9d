"""Inside a node: the GPU interconnect NCCL will use, from NVML (NVLink link states, P2P status
per pair) and `nvidia-smi topo -m`, and the single-node all-reduce bus bandwidth judged
against what that topology should give."""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any

from tfdoctor.cluster.catalogue import finding as _finding
from tfdoctor.findings import Finding
from tfdoctor.host import run_command
from tfdoctor.probes.driver import NVML_CHILD

NVLINK_GBS = 25.0
"""GB/s per NVLink link and direction (NVLink 3 and 4 both: A100 12 links = 300 GB/s, H100 18
links = 450 GB/s, NVIDIA's data sheets)."""
PCIE_GBS = {3: 16.0, 4: 32.0, 5: 64.0}
"""GB/s of a x16 link per direction by PCIe generation (PCI-SIG; ~1 GB/s per lane per gen-3)."""
ACHIEVABLE = 0.8
"""nccl-tests all_reduce busbw reaches about 80 % of the link rate on a healthy node."""
LOW = 0.5
"""Below half of what the topology should give is a finding."""


def probe_topology(
    env: dict[str, str], python: str = sys.executable, timeout: float = 30.0
) -> dict[str, Any]:
    """NVML's view of this node's interconnect (tfdoctor's own Python runs the NVML child with
    --topology); never raises: a failure is {"error": ...}."""
    done = run_command([python, "-I", str(NVML_CHILD), "--topology"], env=env, timeout=timeout)
    if done.error or done.timed_out:
        return {"error": f"NVML child: {done.describe_failure()}"}
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        return {"error": f"NVML child: {type(exc).__name__}: {exc}"}
    if data.get("import_error") or data.get("init_error"):
        return {"error": data.get("init_error") or data.get("import_error")}
    topo = data.get("topology") or {}
    out: dict[str, Any] = {
        "gpus": [
            {
                "index": g.get("index"),
                "name": g.get("name"),
                "pcie_gen": g.get("pcie_gen_current"),
                "pcie_width": g.get("pcie_width_current"),
            }
            for g in data.get("gpus") or ()
        ],
        "nvlink": topo.get("nvlink"),
        "p2p": topo.get("p2p"),
        "errors": data.get("errors") or {},
        "smi_topo": _smi_topo(env),
    }
    return out


def _smi_topo(env: dict[str, str]) -> str | None:
    smi = shutil.which("nvidia-smi", path=env.get("PATH"))
    if smi is None:
        return None
    done = run_command([smi, "topo", "-m"], env=env, timeout=20)
    return done.stdout[-4000:] if done.ok else None


def expected_busbw(topo: dict[str, Any]) -> tuple[float, str] | None:
    """(GB/s a healthy node should reach in an all-reduce across its GPUs, why), or None."""
    gpus = topo.get("gpus") or []
    if len(gpus) < 2:
        return None
    links = topo.get("nvlink") or []
    active = [sum(1 for s in g or () if s) for g in links]
    p2p = topo.get("p2p") or {}
    nvlink_pairs = _pairs(p2p.get("nvlink"))
    if active and min(active) > 0 and nvlink_pairs and all(s == "ok" for s in nvlink_pairs):
        rate = min(active) * NVLINK_GBS
        return rate * ACHIEVABLE, f"NVLink, {min(active)} active link(s) per GPU ({rate:g} GB/s)"
    gens = [g.get("pcie_gen") for g in gpus if g.get("pcie_gen")]
    widths = [g.get("pcie_width") for g in gpus if g.get("pcie_width")]
    if not gens or not widths:
        return None
    rate = PCIE_GBS.get(int(min(gens)), 16.0) * min(widths) / 16
    return rate * ACHIEVABLE, f"PCIe gen {min(gens)} x{min(widths)} ({rate:g} GB/s)"


def _pairs(matrix: Any) -> list[str | None]:
    rows = matrix if isinstance(matrix, list) else []
    return [v for a, row in enumerate(rows) for b, v in enumerate(row or ()) if a != b]


def judge_topology(
    topo: dict[str, Any], env: dict[str, str], busbw_gbs: float | None = None, where: str = "this node"
) -> Iterator[Finding]:
    """Links down, P2P unavailable between pairs, NCCL_P2P_DISABLE, and a single-node
    all-reduce busbw below half of what the topology should give, with the likely causes."""
    if not topo or topo.get("error"):
        return
    links = topo.get("nvlink") or []
    counts = [(i, sum(1 for s in g if s), len(g)) for i, g in enumerate(links) if g]
    most = max((up for _, up, _ in counts), default=0)
    down = [(i, n - up) for i, up, n in counts if most and up < most]
    causes: list[str] = []
    if down:
        causes.append("an NVLink link down")
        yield _finding(
            "node-nvlink-down",
            f"{where}: NVLink links down on "
            + ", ".join(f"GPU {i} ({d} of {most})" for i, d in down)
            + "; NCCL routes around them at a fraction of the bandwidth.",
            gpus=[i for i, _ in down],
        )
    read = (topo.get("p2p") or {}).get("read")
    bad = Counter(v for v in _pairs(read) if v not in (None, "ok"))
    if bad:
        status = bad.most_common(1)[0][0]
        causes.append(f"P2P {status}")
        yield _finding(
            "node-p2p-unavailable",
            f"{where}: GPU peer-to-peer is unavailable between {sum(bad.values()) // 2} "
            f"pair(s) ({', '.join(sorted(bad))}); NCCL copies through host memory.",
            _P2P_HINT.get(status),
            status=status,
        )
    if env.get("NCCL_P2P_DISABLE", "0") not in ("", "0"):
        causes.append("NCCL_P2P_DISABLE set")
        yield _finding(
            "node-nccl-p2p-disabled",
            f"{where}: NCCL_P2P_DISABLE={env['NCCL_P2P_DISABLE']} makes NCCL ignore "
            "NVLink and PCIe peer-to-peer.",
        )
    expected = expected_busbw(topo)
    if busbw_gbs is None or expected is None or busbw_gbs >= LOW * expected[0]:
        return
    likely = causes or ["IOMMU or ACS forcing P2P through the root complex", "another job's load"]
    yield _finding(
        "node-allreduce-below-topology",
        f"{where}: all-reduce busbw {busbw_gbs:.1f} GB/s is "
        f"{busbw_gbs / expected[0]:.0%} of the ~{expected[0]:.0f} GB/s its topology "
        f"should give ({expected[1]}).",
        "Likely: " + "; ".join(likely) + ". Check nvidia-smi topo -m, nvidia-smi "
        "nvlink -s, the kernel's iommu= setting and NCCL_P2P_DISABLE.",
        busbw_gbs=round(busbw_gbs, 2),
        expected_gbs=round(expected[0], 1),
    )


_P2P_HINT = {
    "ioh-topology-not-supported": "The GPUs sit under different root complexes or ACS/IOMMU "
    "redirects peer traffic: boot with iommu=pt (or disable ACS on the PCIe switch in the BIOS).",
    "chipset-not-supported": "The chipset blocks PCIe P2P: an IOMMU in translated mode is the "
    "usual cause (iommu=pt).",
    "disabled-by-regkey": "The driver's RMForceP2PType / registry key disables P2P: remove it "
    "from /etc/modprobe.d and reload the driver.",
    "gpu-not-supported": "This GPU model has no P2P (most GeForce boards): NVLink or a data-"
    "center GPU is needed for fast multi-GPU all-reduce.",
}
