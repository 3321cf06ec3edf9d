"""Typed access from any widget to the app whose reactive state it renders."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from tfdoctor.tui.app import DoctorApp

WATCHED = ("report", "running", "error", "areas_done", "stopping")
"""The app's reactive attributes that change what the main screen shows."""


def doctor(node: DOMNode) -> DoctorApp:
    """The DoctorApp a widget belongs to."""
    return cast("DoctorApp", node.app)
