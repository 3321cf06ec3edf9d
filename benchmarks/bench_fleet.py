"""How long `tfdoctor fleet` takes over 10,000 generated node reports (issue: "a few seconds").

    python benchmarks/bench_fleet.py [--nodes 10000] [--keep DIR]

Generates realistic --json reports (8 GPUs, full facts, smoke figures; a few broken, slow,
odd-driver and corrupt ones), then times reading + summarising them, as the command does.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "share"))

from share_helpers import change, healthy, report_doc, with_smoke  # noqa: E402
from tfdoctor.share.fleet import load_node, report_files, summarise  # noqa: E402


def generate(root: Path, nodes: int) -> None:
    """Write `nodes` reports: variants are judged once, then copied with per-node figures."""
    rng = random.Random(7)
    variants = {
        "ok": report_doc(with_smoke(healthy())),
        "old": report_doc(with_smoke(healthy(driver="570.86.15"))),
        "broken": report_doc(with_smoke(change(healthy(), env={"CUDA_VISIBLE_DEVICES": ""}))),
    }
    for i in range(nodes):
        kind = "broken" if i % 997 == 0 else "old" if i % 251 == 0 else "ok"
        doc = json.loads(json.dumps(variants[kind]))
        for r in doc["facts"]["smoke"]["recipes"]:
            m = r["metrics"]
            if "float32_tflops" in m:
                m["float32_tflops"] = rng.gauss(64.0, 0.6) * (0.5 if i % 1499 == 0 else 1.0)
            if "busbw_gbs" in m:
                m["busbw_gbs"] = rng.gauss(300.0, 4.0)
        (root / f"node{i:05d}.json").write_text(json.dumps(doc, indent=2))
    (root / "corrupt.json").write_text('{"schema_version": "1", "fa')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="write the reports here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        generate(root, args.nodes)
        size = sum(p.stat().st_size for p in root.iterdir()) / 1e6
        t1 = time.perf_counter()
        summary = summarise(
            load_node(p) if isinstance(p, Path) else p for p in report_files([root])
        )
        t2 = time.perf_counter()
    print(f"generated {args.nodes} reports ({size:.0f} MB) in {t1 - t0:.1f} s")
    print(
        f"fleet summary of {summary['nodes']} nodes in {t2 - t1:.2f} s "
        f"({1e6 * (t2 - t1) / max(summary['nodes'], 1):.0f} us/node): "
        f"{len(summary['stacks'])} stacks, {len(summary['failing'])} failing, "
        f"{len(summary['outliers'])} slow figures, {len(summary['skipped'])} skipped"
    )


if __name__ == "__main__":
    main()
