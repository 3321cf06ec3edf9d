"""Smoke work: real TensorFlow work in a child of the target interpreter, turned into facts.

`run_smoke(host, ...)` is the entry point (runner.py); the child scripts (_child.py,
_recipes.py, _perf.py, _nvml_sampler.py) are standalone files run by path.
"""

from tfdoctor.smoke.recipes import RECIPES
from tfdoctor.smoke.runner import run_smoke

__all__ = ["RECIPES", "run_smoke"]
