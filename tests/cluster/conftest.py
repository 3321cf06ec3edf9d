"""Fixtures of the cluster tests: an interpreter that reports another TensorFlow."""

from __future__ import annotations

import pytest
from clusterkit import SITE


@pytest.fixture(scope="session")
def other_tf_python(tf_cpu_python: str, tmp_path_factory) -> str:
    """A wrapper interpreter: the tf-cpu venv with a sitecustomize that makes its TensorFlow
    report 2.20.0 (what a node with another TensorFlow looks like from the job)."""
    root = tmp_path_factory.mktemp("other-tf")
    (root / "site").mkdir()
    (root / "site" / "sitecustomize.py").write_text(SITE)
    wrapper = root / "python"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH={root / "site"}${{PYTHONPATH:+:$PYTHONPATH}} exec {tf_cpu_python} "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)
