"""Shell completion for check and finding ids (`tfdoctor explain`), recipe names (`--only`) and
the public cluster launchers; and a fish script that keeps completions containing commas.

click calls these while the shell completes a word (`_TFDOCTOR_COMPLETE=bash_source tfdoctor`
prints the script to source); they import only the light registry and recipe list.
"""

from __future__ import annotations

from collections.abc import Iterable

import click
from click.shell_completion import CompletionItem, FishComplete, add_completion_class

# click's fish script splits each "type,value" line on every comma, so "plain,matmul,xla" came
# out as "matmul" and fish, filtering by the word typed ("matmul,x"), offered nothing. The value
# is everything after the first comma: `string split -m 1`.
_SOURCE_FISH = """\
function %(complete_func)s;
    set -l response (env %(complete_var)s=fish_complete COMP_WORDS=(commandline -cp) \
COMP_CWORD=(commandline -t) %(prog_name)s);

    for completion in $response;
        set -l metadata (string split -m 1 "," $completion);

        if test $metadata[1] = "dir";
            __fish_complete_directories $metadata[2];
        else if test $metadata[1] = "file";
            __fish_complete_path $metadata[2];
        else if test $metadata[1] = "plain";
            echo $metadata[2];
        end;
    end;
end;

complete --no-files --command %(prog_name)s --arguments "(%(complete_func)s)";
"""


class CommaSafeFishComplete(FishComplete):
    """click's fish completion with a script that keeps the commas of a value."""

    source_template = _SOURCE_FISH


# Replaces click's "fish" entry for this process (the tfdoctor CLI imports this module).
add_completion_class(CommaSafeFishComplete, "fish")


def complete_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Check ids (with their titles) and finding ids that start with `incomplete`."""
    from tfdoctor.checks import all_checks
    from tfdoctor.cluster.catalogue import CLUSTER_CHECKS, ClusterCheckSpec
    from tfdoctor.registry import CheckSpec

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


def complete_from(values: Iterable[str]):
    """A completion callback offering only `values` (a Choice would offer every choice, internal
    ones included)."""
    offered = tuple(values)

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(v) for v in offered if v.startswith(incomplete)]

    return complete
