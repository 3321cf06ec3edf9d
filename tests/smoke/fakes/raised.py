#!/usr/bin/env python3
"""Fake target interpreter: every recipe fails with an exception the child caught and reported
(its text is in the result's detail, nothing on stderr), as TF 2.9's kernel JIT error was."""

import json
import sys

MARK = "tfdoctor-smoke: begin"


def emit(event):
    print(json.dumps(event), flush=True)


emit({"event": "hello"})
emit({"event": "begin", "recipe": "import", "device": None})
sys.stderr.write(f"{MARK} import -\n")
emit({"event": "result", "recipe": "import", "device": None, "status": "passed", "seconds": 0.1})
emit({"event": "begin", "recipe": "matmul", "device": "GPU:0"})
sys.stderr.write(f"{MARK} matmul GPU:0\n")
sys.stderr.flush()
emit({"event": "result", "recipe": "matmul", "device": "GPU:0", "status": "error", "seconds": 0.2,
      "detail": "UnknownError: JIT compilation failed. [Op:FloorMod]"})
emit({"event": "end"})
