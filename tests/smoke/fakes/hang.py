#!/usr/bin/env python3
"""Fake target interpreter: says hello, begins the import, then hangs forever."""

import json
import os
import subprocess
import sys
import time

if os.environ.get("FAKE_PIDFILE"):
    with open(os.environ["FAKE_PIDFILE"], "w") as fh:
        fh.write(str(subprocess.Popen(["sleep", "600"]).pid))
print(json.dumps({"event": "hello"}), flush=True)
print(json.dumps({"event": "begin", "recipe": "import", "device": None}), flush=True)
sys.stderr.write("I0000 loading things\n")
sys.stderr.flush()
time.sleep(600)
