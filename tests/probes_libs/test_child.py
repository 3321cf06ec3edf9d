"""The version child's own code, run in-process on stub libraries (the parent runs it with -I -S,
where coverage cannot follow): every calling convention, and its refusal of unknown names."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from types import ModuleType

from fakegpu.layout import soname_for, stub_library
from tfdoctor.probes.libversion import CHILD, decode


def load_child() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_libversion_child", CHILD)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_calling_convention_answers_through_ctypes() -> None:
    """Each entry point is called with its real C signature; the raw answers decode right."""
    child = load_child()
    versions = {
        "cudart": "12.5.82",
        "cublas": "12.5.3",
        "cublasLt": "12.5.3",
        "cufft": "11.2.3",
        "curand": "10.3.6",
        "cusolver": "11.6.3",
        "cusparse": "12.5.1",
        "cupti": "13.0.1",
        "cudnn": "8.9.7",
        "nccl": "2.8.4",
        "nvjitlink": "12.5.82",
    }
    expected = {
        "cudart": "12.5",
        "nvjitlink": "12.5",
        "cudnn": "8.9.7",
        "nccl": "2.8.4",
        "cupti": "13.0.1",
    }
    for name, version in versions.items():
        events: list[dict[str, object]] = []
        path = stub_library(name, soname_for(name, version.split(".")[0]), version)
        child.ask(name, str(path), events.append)
        assert [e["event"] for e in events] == ["start", "call", "result"], events
        assert decode(name, events[-1]["value"]) == expected.get(name, version), (name, events)


def test_child_process_frames_output_and_skips_unknown_names() -> None:
    """Run as the parent runs it: a library's banner goes to stderr, names it cannot ask are
    skipped, a library that will not load is an error result, and "done" ends the stream."""
    banner = stub_library("nccl", "libnccl.so.2", "2.21.5", BANNER=1)
    pairs = [
        ["nccl", str(banner)],
        ["nvshmem", "/x/libnvshmem_host.so.3"],
        ["cudnn", "/nonexistent/libcudnn.so.9"],
    ]
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(CHILD), json.dumps(pairs)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and "stub library loaded" in proc.stderr
    assert [(e["event"], e.get("name")) for e in events] == [
        ("start", "nccl"),
        ("call", "nccl"),
        ("result", "nccl"),
        ("start", "cudnn"),
        ("result", "cudnn"),
        ("done", None),
    ]
    assert events[2]["value"] == 22105
    assert str(events[4]["error"]).startswith("dlopen failed: /nonexistent/libcudnn.so.9")
