"""Widgets of the TUI; each renders a part of the app's state (report, run, progress)."""
