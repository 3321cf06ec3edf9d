"""Shared fixtures: the real TensorFlow venvs of this machine, an interpreter known to lack
TensorFlow, and fact builders.

No test may depend on what tfdoctor's own `.venv` holds: `./install.sh` (no `--dev`) puts
TensorFlow there, `./install.sh --dev` does not, and the README's two commands run one after the
other on one checkout. A test that needs "tfdoctor without TensorFlow" uses `python_without_tf`;
one that needs a TensorFlow uses the cached real venvs. `pytest --fake-own-tensorflow` proves it:
a `tensorflow` package (an `__init__.py` that raises) sits in `.venv`'s site-packages for the
run and is removed after it.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import need  # noqa: E402

ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS", Path.home() / ".cache" / "tfdoctor" / "test-envs"))
OWN_SITE = Path(sysconfig.get_paths()["purelib"])
FAKE_TF_MARK = "# tfdoctor tests/conftest.py --fake-own-tensorflow\n"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fake-own-tensorflow", action="store_true",
                     help="put a fake tensorflow package into this interpreter's site-packages "
                          "for the run (as ./install.sh leaves TensorFlow in .venv)")


@pytest.fixture(scope="session", autouse=True)
def fake_own_tensorflow(request: pytest.FixtureRequest) -> Iterator[None]:
    """With --fake-own-tensorflow: tfdoctor's own interpreter finds a `tensorflow` package for
    the whole run (importing it raises), and the package is gone afterwards."""
    if not request.config.getoption("--fake-own-tensorflow"):
        yield
        return
    package = OWN_SITE / "tensorflow"
    if package.exists():
        pytest.exit(f"{package} exists already: --fake-own-tensorflow would not be what the run sees")
    package.mkdir()
    (package / "__init__.py").write_text(FAKE_TF_MARK + "raise ImportError('fake TensorFlow of the tests')\n")
    try:
        yield
    finally:
        (package / "__init__.py").unlink()
        for cache in package.glob("__pycache__/*"):
            cache.unlink()
        if (package / "__pycache__").exists():
            (package / "__pycache__").rmdir()
        package.rmdir()


@pytest.fixture(scope="session")
def python_without_tf(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with everything tfdoctor's own has (tfdoctor, click, textual, ...) except
    TensorFlow, whatever `.venv` holds: a venv whose site-packages links to each entry of the
    own site-packages but those of TensorFlow. Costs a few symbolic links, no copy."""
    path = tmp_path_factory.mktemp("no-tf") / "venv"
    venv.create(path, with_pip=False, symlinks=True)
    site = next(path.glob("lib/python3*/site-packages"))
    for entry in OWN_SITE.iterdir():
        name = entry.name.lower().replace("-", "_")
        if name.startswith("tensorflow") or name == "__pycache__":
            continue
        (site / entry.name).symlink_to(entry)
    return str(path / "bin" / "python")


def _venv_python(var: str, name: str) -> str:
    """A real TensorFlow venv made by tests/envs/setup.sh; CI must have it, so never skip there."""
    path = os.environ.get(var) or str(ENVS / name / "bin" / "python")
    need(Path(path).exists(), f"{path} missing: run tests/envs/setup.sh (or set {var})")
    return path


@pytest.fixture(scope="session")
def tf_cpu_python() -> str:
    """Python of a venv with tensorflow-cpu 2.21 installed from PyPI."""
    return _venv_python("TFDOCTOR_TEST_TF_CPU", "tf-cpu")


@pytest.fixture(scope="session")
def tf_cuda_python() -> str:
    """Python of a venv with tensorflow[and-cuda] 2.21: real CUDA 12 libraries, no driver."""
    return _venv_python("TFDOCTOR_TEST_TF_CUDA", "tf-cuda")
