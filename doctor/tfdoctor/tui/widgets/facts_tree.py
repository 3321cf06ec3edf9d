"""The facts snapshot as a tree (facts.to_dict()), filtered by a search string."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tfdoctor.tui.keys import LIST_KEYS
from tfdoctor.tui.present import describe_value

LEAF_LIMIT = 500
"""Leaves shown at most; a library's search path can be long and the tree must stay quick."""


class FactsTree(Tree[str]):
    """A branch per section, dict or list; a leaf per value. `show` rebuilds it filtered."""

    BINDINGS = LIST_KEYS
    _budget = LEAF_LIMIT
    hidden = 0
    """Matching leaves left out by LEAF_LIMIT in the last `show` (the tree says so)."""

    _known: Callable[[str], bool] | None = None
    """Whether the fact at a dotted path was collected (Facts.known); set by `show`."""

    def show(self, data: dict[str, Any], query: str = "", sections: tuple[str, ...] = (),
             known: Callable[[str], bool] | None = None) -> int:
        """Rebuild with the leaves whose path or value contains `query`; return how many.
        `known(path)` (Facts.known) tells a value not collected from a collected None."""
        self._known = known
        self.clear()
        self.root.expand()
        self._budget = LEAF_LIMIT
        needle = query.strip().lower()
        shown = 0
        self.hidden = 0
        for key, value in data.items():
            if sections and key not in sections:
                continue
            shown += self._add(self.root, key, value, key, needle)
        if self.hidden:  # never capped in silence: say how many and how to reach them
            self.root.add_leaf(Text(f"... {self.hidden} more value(s) not shown: search to narrow",
                                    style="italic"), data="")
        if needle or sections:
            self.root.expand_all()
        return shown

    def _add(self, parent: TreeNode[str], key: str, value: Any, path: str, needle: str) -> int:
        if not _matches(key, value, path, needle):
            return 0
        if isinstance(value, dict | list) and value:
            items = value.items() if isinstance(value, dict) else enumerate(value)
            branch = parent.add(Text.assemble((str(key), "bold"), f" ({len(value)})"), data=path)
            count = sum(self._add(branch, str(k), v, f"{path}.{k}", needle) for k, v in items)
            if not count:
                branch.remove()
            return count
        if self._budget <= 0:
            self.hidden += 1
            return 0
        self._budget -= 1
        # Tree labels are Rich Text (markup-free, so values with brackets stay literal); bold is
        # not a colour, so themes and NO_COLOR still hold.
        known = self._known is None or self._known(path)
        label = Text.assemble((str(key), "bold"), ": ", describe_value(value, known))
        parent.add_leaf(label, data=path)
        return 1


def _matches(key: str, value: Any, path: str, needle: str) -> bool:
    """Does anything at or under this node contain the search string?"""
    if not needle or needle in path.lower():
        return True
    if isinstance(value, dict):
        return any(_matches(str(k), v, f"{path}.{k}", needle) for k, v in value.items())
    if isinstance(value, list):
        return any(_matches(str(i), v, f"{path}.{i}", needle) for i, v in enumerate(value))
    return needle in describe_value(value).lower()
