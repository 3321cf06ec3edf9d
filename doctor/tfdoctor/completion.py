"""Shell completion for check and finding ids (`tfdoctor explain`) and recipe names (`--only`).

click calls these while the shell completes a word (`_TFDOCTOR_COMPLETE=bash_source tfdoctor`
prints the script to source); they import only the light registry and recipe list.
"""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem


def complete_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Check ids (with their titles) and finding ids that start with `incomplete`."""
    from tfdoctor.cluster.catalogue import CLUSTER_CHECKS, ClusterCheckSpec
    from tfdoctor.registry import CheckSpec, all_checks

    specs: tuple[CheckSpec | ClusterCheckSpec, ...] = (*all_checks(), *CLUSTER_CHECKS)
    items: dict[str, str | None] = {}
    for spec in specs:
        items.setdefault(spec.id, spec.title)
        for finding in spec.finding_ids:
            items.setdefault(finding, f"finding of {spec.id}")
    return [CompletionItem(i, help=h) for i, h in items.items() if i.startswith(incomplete)]


def complete_recipes(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Recipe names for a comma-separated --only list: completes the word after the last comma."""
    from tfdoctor.smoke.recipes import RECIPES

    done, _, word = incomplete.rpartition(",")
    chosen = set(done.split(",")) if done else set()
    prefix = f"{done}," if done else ""
    return [CompletionItem(prefix + name) for name in RECIPES if name.startswith(word) and name not in chosen]
