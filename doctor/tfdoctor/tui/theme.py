"""The theme for terminals with 16 colours (TERM=xterm, the Linux console): ANSI colours only,
so the terminal's own palette draws them, with errors in bright red (bold red is the strongest
text there) on a red verdict bar that does not fade to black as Textual's truecolor theme did."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.theme import BUILTIN_THEMES, Theme

_ANSI = BUILTIN_THEMES["ansi-dark"]

SIXTEEN = Theme(
    name="tfdoctor-16",
    ansi=True,
    primary="ansi_blue",
    secondary="ansi_cyan",
    warning="ansi_yellow",
    error="ansi_bright_red",
    success="ansi_green",
    accent="ansi_magenta",
    foreground="ansi_default",
    background="ansi_default",
    surface="ansi_default",
    panel="ansi_default",
    boost="ansi_default",
    dark=True,
    variables={
        **_ANSI.variables,
        "text-error": "ansi_bright_red",
        "text-warning": "ansi_bright_yellow",
        "text-success": "ansi_bright_green",
        "text-primary": "ansi_bright_cyan",
        "text-accent": "ansi_bright_magenta",
        "text-muted": "ansi_default",
        "error-muted": "ansi_red",
        "success-muted": "ansi_green",
        "warning-muted": "ansi_yellow",
        "primary-muted": "ansi_blue",
    },
)
"""Registered by the app and chosen when the terminal has 16 colours (see sixteen_colours)."""


def sixteen_colours(app: App[Any]) -> bool:
    """Whether the terminal the app draws on has only the 16 ANSI colours (Rich's "standard" or
    "windows" colour system, from TERM and COLORTERM), and no theme was chosen over the default.
    Headless runs (Pilot, snapshots) draw on no terminal: they keep the theme they were given."""
    return (not app.is_headless and app.console.color_system in ("standard", "windows")
            and app.theme == "textual-dark")
