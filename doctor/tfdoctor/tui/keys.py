"""Keys: the list keys every list answers (j/k), and the help text made from the real BINDINGS of
the app and its screens, so help never lists a key that does nothing or misses one that works."""

from __future__ import annotations

from collections.abc import Iterable

from textual.binding import Binding, BindingType

LIST_KEYS: list[BindingType] = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
]
"""vi's j/k, beside the arrows, on every list (findings, checks, fix steps, facts, cluster)."""

KEY_NAMES = {"question_mark": "?", "slash": "/", "escape": "Escape", "enter": "Enter",
             "space": "Space", "backspace": "Backspace", "ctrl+c": "Ctrl+C", "ctrl+p": "Ctrl+P",
             "tab": "Tab"}

ACTION_HELP = {
    "quit": "quit (stops a run, or a fix and its rollback, cleanly first)",
    "help": "this help",
    "rerun": "re-run the diagnosis (not while a fix runs)",
    "stop": "stop the run under way (what was learned stays)",
    "app.facts": "facts: everything the probes learned",
    "app.facts_filter": "facts, with the search box focused",
    "app.fixes": "fix plan: review, apply (with confirmation), undo",
    "app.export": "export the support report (Markdown and JSON) to a file",
    "export": "export the cluster report (JSON, as --json prints it) to a file",
    "filter": "filter the lists here: type; Enter keeps it, Escape clears it",
    "clear": "clear the filter",
    "search": "search the facts (path or value)",
    "back": "back (from the fix plan: once no fix runs)",
    "app.pop_screen": "back",
    "copy": "copy the fix command shown",
    "apply": "apply the selected steps, after a confirmation showing their commands",
    "undo": "undo the last apply in this environment (after a confirmation)",
    "answer(True)": "yes",
    "answer(False)": "no",
    "cancel": "cancel",
    "dismiss": "close this help",
    "cursor_down": "next row",
    "cursor_up": "previous row",
    "open": "open the highlighted row",
}
"""What an action does, in the help's words (a binding's own description is the fallback)."""

EXTRA = (
    ("Enter / click", "open a finding, a check or a row"),
    ("Up / Down", "move in a list (also j / k)"),
    ("Space", "select a fix step (in the fix plan)"),
    ("Tab", "move between panes"),
    ("Ctrl+P", "command palette: tfdoctor's actions, themes and more"),
)
"""Keys the widgets answer themselves (Textual's own bindings), shown once."""


def key_name(key: str) -> str:
    """A Textual key as people write it: "question_mark" -> "?", "ctrl+c" -> "Ctrl+C"."""
    return KEY_NAMES.get(key, key)


def keys_of(binding: BindingType) -> tuple[str, ...]:
    """The keys of one BINDINGS entry ("n,escape" is two)."""
    if isinstance(binding, Binding):
        key = binding.key
    else:
        key = binding[0]
    return tuple(k.strip() for k in key.split(",") if k.strip())


def help_rows(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    """(keys, what they do) for each binding, alike actions merged: "q / Ctrl+C  quit"."""
    rows: dict[str, list[str]] = {}
    words: dict[str, str] = {}
    for b in bindings:
        action = b.action if isinstance(b, Binding) else b[1]
        description = (b.description if isinstance(b, Binding) else (b[2] if len(b) > 2 else ""))
        rows.setdefault(action, []).extend(key_name(k) for k in keys_of(b))
        words.setdefault(action, ACTION_HELP.get(action, description or action))
    return [(" / ".join(dict.fromkeys(keys)), words[action]) for action, keys in rows.items()]
