"""Helpers shared by the driver probe children (`_cuda_child.py`, `_nvml_child.py`): stdlib only.

Not a child itself and imports nothing from tfdoctor: the children run as `python -I script.py`
in tfdoctor's own interpreter and load this file as a plain module from their own directory.
"""

import sys


def step(name):
    """Tell the parent (on stderr) which call comes next, so a crash inside it can be named."""
    sys.stderr.write(f"@step {name}\n")
    sys.stderr.flush()


def loaded_library(fragment):
    """Path of the mapped file whose name starts with `fragment` (the library dlopen chose)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].rsplit("/", 1)[-1].startswith(fragment):
                    return parts[5].strip()
    except OSError:
        pass
    return None
