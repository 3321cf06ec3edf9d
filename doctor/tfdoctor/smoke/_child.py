"""tfdoctor smoke child: import TensorFlow once, run the recipes, stream one JSON line per event.

Standalone on purpose: it runs in the TARGET interpreter (`python _child.py CONFIG`), which may
be another Python than tfdoctor's, so it imports only the standard library, tensorflow and numpy
(the recipe modules it loads by path follow the same rule). Protocol on the private stdout copy:
  {"event": "hello"} | {"event": "begin", "recipe", "device"} | {"event": "result", ...}
  | {"event": "setup"} | {"event": "end"}
A recipe that cannot run (TensorFlow could not create its devices) is a "result" with status
"not-run" and the reason, with no "begin".
Before each recipe a marker line goes to stderr too, so the parent can split TF's log per recipe.
Not run with `-I`: that would hide PYTHONPATH and user site-packages, where the user's TensorFlow
may live; instead the script's own directory is dropped from sys.path so nothing here shadows.
"""

# ruff: noqa: UP031  (runs in the target interpreter, kept to Python 3.7 syntax)

import json
import os
import sys
import time
import traceback

MARK = "tfdoctor-smoke: begin"
_OUT = None


def emit(obj):
    """Write one protocol line to the private copy of stdout and flush it at once."""
    assert _OUT is not None, "main() claims stdout before the first line"
    _OUT.write(json.dumps(obj, sort_keys=True) + "\n")
    _OUT.flush()


def _claim_stdout():
    """Keep fd 1 for the protocol only: stray prints and C++ output now go to stderr."""
    global _OUT
    fd = os.dup(1)
    os.dup2(2, 1)
    _OUT = os.fdopen(fd, "w", buffering=1)


def _last_line(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:600] if lines else type(exc).__name__


def run_step(name, device, func):
    """Announce, run and report one recipe on one device; an exception is an "error" result."""
    emit({"event": "begin", "recipe": name, "device": device, "t": time.time()})
    sys.stderr.write("%s %s %s\n" % (MARK, name, device or "-"))
    sys.stderr.flush()
    start = time.perf_counter()
    result = {"status": "error", "metrics": {}, "info": {}, "detail": None}  # type: dict[str, object]
    try:
        out = func()
        result.update(out)
    except Exception as exc:  # noqa: BLE001  (a failing recipe is the finding, not a crash)
        result["detail"] = _last_line(exc)
        result["info"] = {
            "traceback": "".join(traceback.format_exception_only(type(exc), exc))[-2000:]
        }
    result.update(
        {
            "event": "result",
            "recipe": name,
            "device": device,
            "seconds": round(time.perf_counter() - start, 4),
            "t": time.time(),
        }
    )
    emit(result)
    return result


def _load(name):
    """Load a sibling module by path (the script directory is not on sys.path)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location("_tfdoctor" + name, path)
    # None only for a path no loader claims; ours always ends in ".py".
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(
        os.path.abspath(__file__)
    ):
        del sys.path[0]
    _claim_stdout()
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    emit({"event": "hello", "python": sys.version.split()[0], "pid": os.getpid()})
    state = {}

    def do_import():
        import numpy  # noqa: F401
        import tensorflow as tf

        info = {"version": tf.__version__}
        try:
            build = tf.sysconfig.get_build_info()
            for key in ("is_cuda_build", "cuda_version", "cudnn_version"):
                if key in build:
                    info[key] = str(build[key])
        except Exception as exc:  # noqa: BLE001  (removed in 2.22; still worth the version)
            info["build_info_error"] = _last_line(exc)
        state["tf"] = tf
        return {"status": "passed", "info": info}

    if run_step("import", None, do_import)["status"] != "passed":
        emit({"event": "end"})
        return
    _recipes = _load("_recipes")
    table = dict(_recipes.RECIPES, **_load("_perf").RECIPES)

    tf = state["tf"]
    wanted = config.get("recipes") or list(_recipes.ORDER)
    ctx = _recipes.setup(tf, wanted)
    emit({"event": "setup", "info": ctx.summary()})
    for name in wanted:
        func = table.get(name)
        if func is None:
            continue
        if ctx.device_error and name != "devices":
            # Nothing can run once TensorFlow failed to create its devices; say so per recipe
            # rather than raise the same error eight times.
            emit({"event": "result", "recipe": name, "device": None, "status": "not-run",
                  "detail": "TensorFlow could not create its devices: " + ctx.device_error,
                  "metrics": {}, "info": {}, "t": time.time()})
            continue
        for device in _recipes.devices_for(name, ctx):
            run_step(name, device, lambda f=func, d=device: f(ctx, d))
    emit({"event": "end"})


def _exit_with_parent():
    """Exit when stdin reaches EOF: tfdoctor keeps it open and unused, so EOF means the
    parent is gone (even by SIGKILL) and nobody will ever read our results."""

    def watch():
        # os.read on the raw fd: a daemon thread blocked in sys.stdin's buffered reader makes
        # interpreter shutdown abort ("could not acquire lock for <stdin>").
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(3)

    import threading

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    _exit_with_parent()
    main()
