"""The smoke recipe names (the values `--only` accepts), in run order."""

from __future__ import annotations

RECIPES: tuple[str, ...] = (
    "devices",
    "matmul",
    "conv2d",
    "mixed-precision",
    "xla",
    "throughput",
    "tensor-cores",
    "multi-device",
)
"""Must match ORDER in _recipes.py (the child cannot import this module); a test pins it."""


def recipe_names(only: tuple[str, ...] | None) -> tuple[str, ...]:
    """Known recipes to run, in run order; "devices" always runs (the checks need the list)."""
    if only is None:
        return RECIPES
    wanted = {"devices", *only}
    return tuple(name for name in RECIPES if name in wanted)
