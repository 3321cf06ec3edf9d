"""Capture real TensorFlow log output on the fake machines of cases.py into tests/recorded/tf-logs.

    python tests/oracle/capture_tf_logs.py [CASE ...]

Each file holds the log lines real TensorFlow printed on one machine (tf_probe.py under
tests/fakegpu/run.py), start-up noise left out; test_logmap_real.py maps them to causes. Rerun
after a stub or TensorFlow change and review the diff.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from oracle.cases import CASES  # noqa: E402
from oracle.differential import run_tensorflow  # noqa: E402

OUT = TESTS / "recorded" / "tf-logs"
TF_CUDA = Path.home() / ".cache" / "tfdoctor" / "test-envs" / "tf-cuda" / "bin" / "python"


def main(names: list[str]) -> int:
    site = next((TF_CUDA.parent.parent / "lib").glob("python3*/site-packages"))
    version = "2.21.0"
    with tempfile.TemporaryDirectory() as scratch:
        for name, case in sorted(CASES.items()):
            if (names and name not in names) or case.venv != "stock":
                continue
            tf = run_tensorflow(case.machine, str(TF_CUDA), site, Path(scratch))
            out = OUT / f"tf-{version}" / f"{name}.log"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("\n".join(tf.raw) + "\n")
            print(f"{out.relative_to(TESTS.parent)}: {len(tf.raw)} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
