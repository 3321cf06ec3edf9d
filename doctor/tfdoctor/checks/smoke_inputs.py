"""What the smoke checks judge from: a recipe's results, or why it has none (not-run reasons).

A check over smoke work whose input was never produced (the run stopped, was cut short, crashed,
or TensorFlow did not import) raises NotRun with one of these reasons: never "passed".
"""

from __future__ import annotations

from tfdoctor.facts import Facts, RecipeResult, SmokeFacts
from tfdoctor.registry import CheckConfig, NotApplicable, NotRun

DONE = ("passed", "failed", "error", "skipped")
"""Recipe statuses that are a result; not-run, timeout and crashed are not."""

RUN_ENDS = {
    "cancelled": "the smoke run was stopped",
    "budget": "the smoke time budget ran out",
    "timeout": "the smoke child hung",
    "crashed": "the smoke child crashed",
    "exited": "the smoke child stopped early",
    "garbage": "the smoke child's output was not the smoke protocol",
    "could-not-start": "the target interpreter could not be started",
    "internal-error": "tfdoctor's smoke runner failed",
}


def why_not_run(s: SmokeFacts, name: str) -> str:
    """One line: why recipe `name` gave no result (how the run ended, then the recipe's detail)."""
    return f"the {name} recipe gave no result: {no_result_cause(s, name)}"


def no_result_cause(s: SmokeFacts, name: str) -> str:
    """Why recipe `name` has no result: how the run ended, then what only the recipe says."""
    imported = s.recipe("import")
    if imported is not None and imported.status == "error":
        return "import tensorflow failed in the target interpreter"
    r = next((r for r in s.recipes if r.name == name and r.status not in DONE), None)
    end = RUN_ENDS.get(s.outcome)
    if s.outcome in ("budget", "timeout") and s.limit_seconds:
        end = f"{end} ({s.limit_seconds:g} s)"
    if imported is not None and imported.status in ("not-run", "timeout", "crashed") and \
            s.outcome in ("cancelled", "budget", "timeout", "crashed") and end:
        end += " during import tensorflow"
    # The recipe's own detail repeats a stop, a limit or a cancel; it adds to a crash or exit.
    detail = r.detail if r and r.detail and s.outcome not in ("cancelled", "budget", "timeout") \
        and r.detail != "the child stopped before it" else None
    return "; ".join(p for p in (end, detail) if p) or "it did not run"


def recipe_results(s: SmokeFacts, name: str) -> tuple[RecipeResult, ...]:
    """The results recipe `name` reached; NotRun with the reason when it reached none.

    NotApplicable when a finished run did not ask for it (--only) or the smoke facts are a
    ticket's (`tfdoctor triage`: TensorFlow output that was not our run).
    """
    results = tuple(r for r in s.recipes if r.name == name)
    imported = s.recipe("import")
    if not results and s.outcome in ("completed", "ticket") and (
        imported is None or imported.status == "passed"
    ):
        raise NotApplicable
    done = tuple(r for r in results if r.status in DONE)
    if not done or (imported is not None and imported.status == "error"):
        raise NotRun(why_not_run(s, name))
    return done


def gpu_expected(facts: Facts, config: CheckConfig) -> bool:
    """A GPU should have been usable: NVML lists one, some were expected, or the driver is unknown."""
    return bool(facts.driver.gpus) or bool(config.expect_gpus) or not facts.known("driver.gpus")

