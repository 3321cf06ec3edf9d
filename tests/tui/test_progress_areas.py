"""The progress count is "N of M probe areas": M must count every area the real probes report,
or the screen says "9 of 6" (issue 22: toolkits and host were left out of the total)."""

from __future__ import annotations

import os
import sys

from tfdoctor.host import Host
from tfdoctor.probes import collect_facts
from tfdoctor.tui.widgets.progress import PROBE_AREAS, area_names


def test_the_total_counts_every_area_collect_facts_reports() -> None:
    """Run the real probes on this machine (--quick's set): every area they report is one
    PROBE_AREAS names, so the count never passes the total; and the total is reached."""
    landed: list[str] = []
    host = Host(env=dict(os.environ), python=sys.executable, own_python=sys.executable, timeout=60)
    collect_facts(host, landed.append)
    assert sorted(landed) == sorted(PROBE_AREAS)
    names = area_names(tuple(landed))
    assert sum(n in landed for n in names) == len(names)


def test_an_area_of_some_runs_joins_the_total_when_it_lands() -> None:
    """tf-loader lands only on a full run with a CUDA TensorFlow: counted once it does."""
    done = (*PROBE_AREAS[:3], "tf-loader", "tf-loader")
    names = area_names(done)
    assert names[-1] == "tf-loader" and len(names) == len(PROBE_AREAS) + 1
