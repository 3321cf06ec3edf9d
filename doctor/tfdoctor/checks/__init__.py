"""The checks, imported in stack order: registration order is display and root-cause order."""

from tfdoctor.checks import (  # noqa: F401
    cuda,
    driver,
    environment,
    gpu,
    packages,
    smoke,
    tensorflow,
)
