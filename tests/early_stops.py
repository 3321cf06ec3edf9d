"""Smoke facts as the runner leaves them when a run stops early, shared by the outcome tests
of every renderer (tests/smoke, tests/share, tests/tui).

Shaped exactly as smoke/runner.py leaves them: the recipe that was running gets timeout /
crashed / not-run, every later one "not-run" with the reason.
"""

from __future__ import annotations

from tfdoctor.facts import (
    Distribution,
    DriverFacts,
    Facts,
    GpuFacts,
    PythonFacts,
    RecipeResult,
    SmokeDevice,
    SmokeFacts,
    TensorFlowFacts,
)

TF = TensorFlowFacts(distributions=(Distribution("tensorflow", "2.21.0"),), version="2.21.0",
                     is_cuda_build=False)


def make_facts(smoke: SmokeFacts, **overrides: object) -> Facts:
    """Facts around smoke results, with TensorFlow installed (tf-not-installed would hide what
    the outcome tests look at); static sections at their defaults."""
    fields: dict[str, object] = {"tensorflow": TF, **overrides}
    return Facts(schema_version="2", tool_version="test", collected_at="2026-01-01T00:00:00+00:00",
                 python=PythonFacts(executable=smoke.python), smoke=smoke,
                 **fields)  # type: ignore[arg-type]


SMOKE_CHECKS = ("smoke-run", "smoke-gpus", "smoke-log", "smoke-recipes", "smoke-tensor-cores",
                "smoke-throughput", "smoke-multi-gpu")
NAMES = ("devices", "matmul", "conv2d", "mixed-precision", "xla", "throughput", "tensor-cores",
         "multi-device")
CPU = SmokeDevice("CPU:0", "CPU")
GPU = SmokeDevice("GPU:0", "GPU", "NVIDIA A100-SXM4-40GB", "8.0")
A100 = DriverFacts(driver_version="550.54.15", gpus=(GpuFacts(index=0, name="NVIDIA A100-SXM4-40GB"),))


def stopped(outcome: str, done: int, current: str | None, why: str, *, exit: str | None = None,
            import_status: str = "passed", limit: float | None = None) -> SmokeFacts:
    """The runner's facts when the run ended after `done` recipes, `current` one unfinished."""
    recipes = []
    if import_status != "not-run" or current == "import":
        recipes.append(RecipeResult("import", status=current == "import" and current_status(outcome)
                                    or import_status, detail=why if current == "import" else None))
    for name in NAMES[:done]:
        recipes.append(RecipeResult(name, device="CPU:0" if name not in ("devices", "multi-device")
                                    else None, status="passed", seconds=0.1))
    if current and current != "import":
        recipes.append(RecipeResult(current, status=current_status(outcome), detail=why))
    ran = {r.name for r in recipes}
    recipes += [RecipeResult(n, status="not-run", detail=why)
                for n in ("import", *NAMES) if n not in ran]
    return SmokeFacts(python="/venv/bin/python", outcome=outcome, exit=exit, limit_seconds=limit,
                      tf_version=None if import_status != "passed" or current == "import" else "2.21.0",
                      devices=(CPU,) if done else (), recipes=tuple(recipes))


def current_status(outcome: str) -> str:
    return {"timeout": "timeout", "budget": "timeout", "cancelled": "not-run"}.get(outcome, "crashed")


EARLY_STOPS = {
    "stopped-during-import": stopped("cancelled", 0, "import", "cancelled", exit="cancelled"),
    "stopped-after-devices": stopped("cancelled", 1, "matmul", "cancelled", exit="cancelled"),
    "budget-during-import": stopped("budget", 0, "import", "total smoke budget of 1 s reached",
                                    exit="killed after the total smoke budget of 1 s", limit=1.0),
    "budget-mid-recipes": stopped("budget", 3, "mixed-precision", "total smoke budget of 9 s reached",
                                  exit="killed after the total smoke budget of 9 s", limit=9.0),
    "import-failed": stopped("completed", 0, None, "the child stopped before it",
                             import_status="error"),
    "crashed-during-import": stopped("crashed", 0, "import", "the child was killed by SIGSEGV",
                                     exit="SIGSEGV"),
    "crashed-in-matmul": stopped("crashed", 1, "matmul", "the child was killed by SIGSEGV",
                                 exit="SIGSEGV"),
    "timeout-in-xla": stopped("timeout", 4, "xla", "time limit of 60 s reached",
                              exit="killed after the time limit of 60 s in xla", limit=60.0),
    "could-not-start": stopped("could-not-start", 0, None, "the child stopped before it",
                               import_status="not-run", exit="No such file or directory"),
    "exited": stopped("exited", 2, None, "the child stopped before it", exit="status 1"),
    "garbage": stopped("garbage", 0, None, "the child stopped before it", import_status="not-run"),
}
"""Names of the states; every smoke-dependent check is asserted in each of them."""

UNFINISHED_RUN = {"stopped-during-import", "stopped-after-devices"}
