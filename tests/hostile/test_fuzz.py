"""Fuzz: thousands of hostile documents through replay, report and fleet; every one ends in a
report or one line with exit code 2, never a traceback, a leaked canary or a stray file."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

from click.testing import CliRunner
from fuzzdocs import CANARIES, documents
from tfdoctor.cli import cli

DOCS = int(os.environ.get("TFDOCTOR_FUZZ_DOCS", "3000"))
SEED = int(os.environ.get("TFDOCTOR_FUZZ_SEED", "16"))
REPORT_EVERY = 4
"""`report` (redaction, Markdown) is the slow path: every 4th document goes through it too."""


def strict(text: str) -> object:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} in output")

    return json.loads(text, parse_constant=refuse)


def controls(text: str) -> list[str]:
    return sorted({c for c in text if (ord(c) < 32 and c not in "\n") or 0x7F <= ord(c) < 0xA0})


def test_fuzzed_documents_through_replay_report_and_fleet(tmp_path):
    """The figures of issue 16's closing note come from here (printed with -s)."""
    runner = CliRunner()
    docs = tmp_path / "docs"
    docs.mkdir()
    codes: Counter[str] = Counter()
    slowest = (0.0, "")
    leaked = 0
    for i, data in enumerate(documents(DOCS, SEED)):
        path = docs / f"doc{i:05d}.json"
        path.write_bytes(data)
        started = time.monotonic()
        result = runner.invoke(cli, ["replay", "--json", str(path)])
        assert isinstance(result.exception, SystemExit | None), (path, result.exception)
        assert result.exit_code in (0, 1, 2, 3), (path, result.output)
        if result.exit_code == 2:
            assert result.stdout == "" and result.stderr.startswith("tfdoctor: error: ")
            assert result.stderr.count("\n") == 1 and not controls(result.stderr), path
        else:
            assert strict(result.stdout)["verdict"]["exit_code"] == result.exit_code, path
        codes[f"replay {result.exit_code}"] += 1
        if i % REPORT_EVERY == 0:
            out = tmp_path / f"report{i}"
            rep = runner.invoke(cli, ["report", "--from", str(path), "-o", f"{out}/",
                                      "--salt", "fuzz"])
            assert isinstance(rep.exception, SystemExit | None), (path, rep.exception)
            assert rep.exit_code in (0, 2), (path, rep.output)
            codes[f"report {rep.exit_code}"] += 1
            written = list(out.iterdir()) if out.exists() else []
            assert not [p for p in written if p.name.endswith(".tmp")], path
            for p in written:
                text = p.read_text(encoding="utf-8")
                leaked += sum(c in text for c in CANARIES)
                if p.suffix == ".json":
                    strict(text)
                else:
                    assert not controls(text), (path, controls(text))
        took = time.monotonic() - started
        slowest = max(slowest, (took, path.name))
    started = time.monotonic()
    fleet = runner.invoke(cli, ["fleet", str(docs)])
    fleet_json = runner.invoke(cli, ["fleet", "--json", str(docs)])
    fleet_took = time.monotonic() - started
    for result in (fleet, fleet_json):
        assert isinstance(result.exception, SystemExit | None), result.exception
        assert result.exit_code in (0, 1, 3), result.output[-500:]
    assert not controls(fleet.stdout)
    summary = strict(fleet_json.stdout)
    assert summary["nodes"] + len(summary["skipped"]) == DOCS
    codes[f"fleet {fleet.exit_code}"] += 1
    leftovers = [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    figures = {
        "documents": DOCS, "seed": SEED, "exit_codes": dict(sorted(codes.items())),
        "slowest_case_s": round(slowest[0], 3), "slowest_case": slowest[1],
        "fleet_s": round(fleet_took, 2), "fleet_nodes": summary["nodes"],
        "fleet_skipped": len(summary["skipped"]), "canaries_leaked": leaked,
        "hangs": int(slowest[0] > 10), "temp_files_left": len(leftovers),
    }
    print("\nfuzz figures:", json.dumps(figures))
    if os.environ.get("TFDOCTOR_FUZZ_FIGURES"):
        Path(os.environ["TFDOCTOR_FUZZ_FIGURES"]).write_text(json.dumps(figures, indent=2))
    assert leaked == 0 and not leftovers and slowest[0] < 10
