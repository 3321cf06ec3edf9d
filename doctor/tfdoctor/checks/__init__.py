"""The checks, imported in stack order: registration order is display and root-cause order.

The order is the design (driver, GPUs, CUDA libraries, TensorFlow, Python packages, environment,
then smoke work), so import sorting is off for this file.
"""
# isort: skip_file
# ruff: noqa: F401, I001

from tfdoctor.checks import driver
from tfdoctor.checks import gpu
from tfdoctor.checks import host
from tfdoctor.checks import cuda
from tfdoctor.checks import tensorflow
from tfdoctor.checks import packages
from tfdoctor.checks import environment
from tfdoctor.checks import smoke
from tfdoctor.checks import smoke_perf

from collections.abc import Iterable

from tfdoctor.facts import Facts
from tfdoctor.findings import CheckOutcome
from tfdoctor.registry import CheckConfig, CheckSpec, registered, run_check


def all_checks() -> tuple[CheckSpec, ...]:
    """Every check, in registration order (the imports above register them)."""
    return registered()


def run_checks(
    facts: Facts, config: CheckConfig = CheckConfig(), only: Iterable[str] | None = None
) -> tuple[CheckOutcome, ...]:
    """Run every check (or the named ones) in order."""
    wanted = set(only) if only is not None else None
    return tuple(run_check(spec, facts, config) for spec in all_checks()
                 if wanted is None or spec.id in wanted)
