"""The causes a TensorFlow log line shows, by log cause id: a view of the cause catalogue
(doctor/tfdoctor/knowledge/causes/*.toml), which holds what each means and what to do."""

from __future__ import annotations

from tfdoctor.knowledge import LOG_PREFIX, Cause, catalogue

CAUSES: dict[str, Cause] = {c.log_id: c for c in catalogue().causes.values() if c.log_id}
"""Log cause id ("cudnn-version-mismatch") -> its catalogue record."""


def finding_id(cause: str) -> str:
    """The finding a log cause becomes: "tf-log-<cause>"."""
    return f"{LOG_PREFIX}{cause}"


FINDING_IDS: tuple[str, ...] = tuple(finding_id(c) for c in CAUSES)
