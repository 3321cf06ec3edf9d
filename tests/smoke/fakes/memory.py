#!/usr/bin/env python3
"""Fake target interpreter: allocates past a small address-space limit during the import.

Like an OOM kill in a container, the process does not survive: after MemoryError it kills itself
with SIGKILL (what the kernel's OOM killer sends)."""

import json
import os
import resource
import signal

print(json.dumps({"event": "hello"}), flush=True)
print(json.dumps({"event": "begin", "recipe": "import", "device": None}), flush=True)
resource.setrlimit(resource.RLIMIT_AS, (512 * 1024 * 1024, 512 * 1024 * 1024))
try:
    hog = bytearray(1024 * 1024 * 1024)
except MemoryError:
    os.kill(os.getpid(), signal.SIGKILL)
