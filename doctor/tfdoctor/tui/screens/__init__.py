"""Screens of the TUI: main (verdict, findings, checks), detail, facts, fixes, export, help."""
