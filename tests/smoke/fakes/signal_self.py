#!/usr/bin/env python3
"""Fake target interpreter: imports fine, then kills itself with the signal named in FAKE_SIGNAL
during the matmul recipe (SIGSEGV, SIGILL, SIGABRT, SIGKILL), after TF-like log lines."""

import json
import os
import signal
import sys


def out(**kw):
    print(json.dumps(kw), flush=True)


out(event="hello")
out(event="begin", recipe="import", device=None)
out(
    event="result",
    recipe="import",
    device=None,
    status="passed",
    seconds=0.1,
    info={"version": "2.21.0", "is_cuda_build": "False"},
)
out(event="begin", recipe="devices", device=None)
out(
    event="result",
    recipe="devices",
    device=None,
    status="passed",
    devices=[{"name": "CPU:0", "type": "CPU"}],
)
out(event="begin", recipe="matmul", device="CPU:0")
sys.stderr.write("tfdoctor-smoke: begin matmul CPU:0\n")
sys.stderr.write(os.environ.get("FAKE_LOG", "I0000 about to crash") + "\n")
sys.stderr.flush()
os.kill(os.getpid(), getattr(signal, os.environ.get("FAKE_SIGNAL", "SIGSEGV")))
