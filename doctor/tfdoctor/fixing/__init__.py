"""Fixes: plan them from a report, show them, apply them with a journal and backups, undo them.

planner.py turns findings into a FixPlan (model.py); scripts.py reads the fix scripts' headers
and the manual recipes in fixes/; apply.py runs a plan and undoes the last one; journal.py and
pipstate.py hold what undo needs; render.py shows a plan; commands.py is the `fix` command.
"""
