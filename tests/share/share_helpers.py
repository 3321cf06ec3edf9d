"""Builders for the share tests: the CLI with `report` and `fleet`, smoke figures, report files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from helpers import change, healthy, judge
from tfdoctor.exit_codes import exit_code_for
from tfdoctor.facts import Facts, RecipeResult, SmokeDevice, SmokeFacts


def share_cli():
    """The real `tfdoctor` group with this area's commands registered (idempotent)."""
    from tfdoctor.cli import cli
    from tfdoctor.share.commands import fleet, report

    for command in (report, fleet):
        if command.name not in cli.commands:
            cli.add_command(command)
    return cli


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(share_cli(), list(args), env=env)


def with_smoke(
    facts: Facts, tflops: float = 64.0, busbw: float | None = 300.0, slow_gpu: int | None = None
) -> Facts:
    """Facts with a finished smoke run: a throughput result per GPU and an all-reduce."""
    gpus = len(facts.driver.gpus)
    recipes = [
        RecipeResult(
            "throughput",
            f"GPU:{i}",
            "passed",
            1.0,
            metrics={
                "float32_tflops": tflops * (0.5 if i == slow_gpu else 1.0),
                "float16_tflops": tflops * 8,
                "bandwidth_gbs": 2800.0,
            },
        )
        for i in range(gpus)
    ]
    if busbw is not None:
        recipes.append(
            RecipeResult(
                "multi-device",
                None,
                "passed",
                2.0,
                metrics={"replicas": float(gpus), "busbw_gbs": busbw, "algbw_gbs": busbw / 1.75},
            )
        )
    smoke = SmokeFacts(
        python=facts.python.executable,
        outcome="completed",
        tf_version="2.21.0",
        is_cuda_build=True,
        devices=tuple(
            SmokeDevice(f"GPU:{i}", "GPU", "NVIDIA H100 80GB HBM3", "9.0") for i in range(gpus)
        ),
        recipes=tuple(recipes),
    )
    return change(facts, smoke=smoke)


def report_doc(facts: Facts, expect_gpus: int | None = None) -> dict:
    """The --json document of `facts`, as `tfdoctor --json` writes it."""
    report = judge(facts, expect_gpus)
    return report.to_dict(exit_code=int(exit_code_for(report)))


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


__all__ = ["change", "healthy", "invoke", "report_doc", "share_cli", "with_smoke", "write_json"]
