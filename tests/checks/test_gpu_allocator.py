"""TF_GPU_ALLOCATOR=cuda_malloc_async on TensorFlow 2.5, whose asynchronous allocator keeps no
statistics: judged from the variable and the release (gpu-allocator), under the cause id TensorFlow's
own "No allocator statistics" line gives, and read from a ticket that only states both."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner
from helpers import change, healthy, judge
from tfdoctor.cli import cli
from tfdoctor.facts import LogCause, SmokeFacts
from tfdoctor.findings import CheckStatus

H = healthy()


def _outcome(report, check: str):
    [row] = [o for o in report.outcomes if o.check == check]
    return row


@pytest.mark.parametrize("version,fires", [("2.5.0", True), ("2.5.3", True), ("2.6.0", False),
                                           ("2.15.1", False)])
def test_only_the_release_whose_allocator_is_broken(version: str, fires: bool) -> None:
    report = judge(change(H, env={"TF_GPU_ALLOCATOR": "cuda_malloc_async"}, tensorflow={"version": version}))
    found = [f for f in report.findings if f.id == "tf-log-allocator-stats-missing"]
    assert bool(found) is fires
    assert _outcome(report, "gpu-allocator").status is (CheckStatus.FAILED if fires else CheckStatus.PASSED)


def test_unset_or_another_allocator_is_not_applicable() -> None:
    assert _outcome(judge(change(H, tensorflow={"version": "2.5.0"})), "gpu-allocator").status \
        is CheckStatus.NOT_APPLICABLE
    report = judge(change(H, env={"TF_GPU_ALLOCATOR": "cuda_malloc"}, tensorflow={"version": "2.5.0"}))
    assert _outcome(report, "gpu-allocator").status is CheckStatus.NOT_APPLICABLE


def test_tensorflows_own_line_is_reported_once() -> None:
    facts = change(H, env={"TF_GPU_ALLOCATOR": "cuda_malloc_async"}, tensorflow={"version": "2.5.0"})
    facts = replace(facts, smoke=SmokeFacts(python="python", outcome="ticket", causes=(
        LogCause(id="allocator-stats-missing", line="InternalError: No allocator statistics"),)))
    report = judge(facts)
    assert [f.check for f in report.findings if f.id == "tf-log-allocator-stats-missing"] == ["smoke-log"]
    assert _outcome(report, "gpu-allocator").status is CheckStatus.PASSED


def test_a_ticket_that_states_the_variable_in_a_sentence() -> None:
    """tensorflow/tensorflow#50669 (tests/field/cases/tensorflow-50669.txt): the variable is named
    in a sentence, the release in the template; the sentence's comma is not part of the value."""
    ticket = ("- TensorFlow version (use command below): v2.5.0-rc3-213-ga4dfb8d1a71 2.5.0\n"
              "When using the TF_GPU_ALLOCATOR=cuda_malloc_async, TF throws an internal error after "
              "allocation of GPU:\n")
    report = json.loads(CliRunner().invoke(cli, ["triage", "--json", "-"], input=ticket).stdout)
    assert report["facts"]["env"] == {"TF_GPU_ALLOCATOR": "cuda_malloc_async"}
    assert report["verdict"]["root_cause"] == "tf-log-allocator-stats-missing"
