"""What leaves the machine: the redacted support report, the fleet view, Prometheus metrics."""

CATEGORIES = ("user", "host", "gpu-ids", "pci-ids")
"""What redaction replaces by pseudonyms unless `tfdoctor report --keep` lets it through."""
