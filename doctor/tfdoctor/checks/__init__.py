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
