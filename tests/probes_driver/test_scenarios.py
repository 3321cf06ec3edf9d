"""Every scenario in scenarios/*.json, probed through the real loaders against the stub libraries.

A scenario's "expect" block is a subset of the facts the probes must produce (docs/scenarios.md):
a field report becomes a regression test by dropping one JSON file here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from fakegpu.machine import from_scenario, load_scenario
from tfdoctor.facts import _from_plain, _to_plain
from tfdoctor.probes.cuda_driver import probe_cuda_driver
from tfdoctor.probes.driver import probe_driver

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.json"))


def assert_subset(actual: Any, expected: Any, where: str) -> None:
    """`actual` holds everything `expected` says; a string "*tail" matches values ending in tail."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key}: missing"
            assert_subset(actual[key], value, f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list), f"{where}: expected a list, got {actual!r}"
        if expected and isinstance(expected[0], dict):
            assert len(actual) >= len(expected), (
                f"{where}: {len(actual)} items, expected {len(expected)}"
            )
        else:
            assert len(actual) == len(expected), f"{where}: {actual!r} != {expected!r}"
        for i, value in enumerate(expected):
            assert_subset(actual[i], value, f"{where}[{i}]")
    elif isinstance(expected, str) and expected.startswith("*"):
        assert isinstance(actual, str) and actual.endswith(expected[1:]), (
            f"{where}: {actual!r} !~ {expected!r}"
        )
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def as_plain(value: Any) -> Any:
    return _to_plain(value)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path, tmp_path: Path) -> None:
    """The probes turn each recorded machine into exactly the facts the scenario expects."""
    doc = load_scenario(path)
    expect = doc["expect"]
    machine = from_scenario(tmp_path, doc)
    host = machine.host(**doc.get("host", {}))
    issues: list = []
    started = time.monotonic()
    got: dict[str, Any] = {}
    facts: list[Any] = []
    if "driver" in expect:
        facts.append(probe_driver(host, issues, access=machine.access))
        got["driver"] = as_plain(facts[-1])
    if "cuda_driver" in expect:
        facts.append(probe_cuda_driver(host, issues))
        got["cuda_driver"] = as_plain(facts[-1])
    elapsed = time.monotonic() - started
    got["probe_issues"] = as_plain(issues)
    assert set(expect) <= {"driver", "cuda_driver", "probe_issues"}, "unknown expect section"
    assert_subset(got, expect, path.stem)
    if "probe_issues" in expect:
        assert len(issues) == len(expect["probe_issues"]), got["probe_issues"]
    for item in facts:  # what the probes made survives the replay format unchanged
        assert _from_plain(type(item), as_plain(item), "facts") == item
    # Each child has its own time limit; a hung library must not hold the doctor much past it.
    assert elapsed < 2 * host.timeout + 5
