"""What leaves the machine: the redacted support report, the fleet view, Prometheus metrics."""
