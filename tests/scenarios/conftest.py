"""Fixtures for the end-to-end scenarios: one template venv per session, one CLI run per case."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakegpu.e2e import Run, build, load_document, make_template_venv, run_tfdoctor

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
PROFILES = HERE / "tf"


@dataclass(frozen=True)
class Outcome:
    """One scenario, built once and run through the console script twice (--json, then text)."""

    doc: dict[str, Any]
    json_run: Run
    text_run: Run

    @property
    def report(self) -> dict[str, Any]:
        return self.json_run.report()


@pytest.fixture(scope="session")
def template_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv without pip; each scenario gets a copy, so it is made once."""
    return make_template_venv(tmp_path_factory.mktemp("e2e") / "template-venv")


@pytest.fixture(scope="session")
def scenario_outcome(
    template_venv: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Outcome]:
    """Build-and-run a case by name, at most once per session (the known-issue tests reuse it)."""
    cache: dict[str, Outcome] = {}

    def get(name: str) -> Outcome:
        if name not in cache:
            doc = load_document(CASES / f"{name}.json")
            machine = build(tmp_path_factory.mktemp(name), doc, template_venv, PROFILES)
            # Side by side: each run mostly waits on its probe children.
            with ThreadPoolExecutor(max_workers=2) as pool:
                as_json = pool.submit(run_tfdoctor, machine, "--json")
                as_text = pool.submit(run_tfdoctor, machine)
                cache[name] = Outcome(doc, as_json.result(), as_text.result())
        return cache[name]

    return get
