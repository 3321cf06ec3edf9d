"""The version each resolved CUDA library really is: asked of the library in an isolated child.

One child (`_libversion_child.py`, run by tfdoctor's own interpreter with `-I`) loads every
library by absolute path and calls its version entry point. It reports each step as it goes, so
when a library kills it, that library gets the error ("SIGSEGV in cudnnGetVersion") and a fresh
child asks the rest. Numbers are decoded here, by pure functions.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from time import monotonic

from tfdoctor.facts import ProbeIssue
from tfdoctor.host import CommandResult, Host

CHILD = Path(__file__).with_name("_libversion_child.py")
# The libraries the child can ask (its ASK table), in report order: libraries.ORDER is this tuple.
ASKABLE = (
    "cudart",
    "cublas",
    "cublasLt",
    "cufft",
    "curand",
    "cusolver",
    "cusparse",
    "cupti",
    "cudnn",
    "nccl",
    "nvjitlink",
)


@dataclass(frozen=True, slots=True)
class Answer:
    """What one library said about itself: a decoded version, or why there is none."""

    version: str | None = None
    error: str | None = None
    """A failure worth reporting: a crash, a time-out, a load failure, a bad status."""


def _dotted(*parts: int) -> str:
    return ".".join(str(p) for p in parts)


def decode(name: str, value: object, major_hint: int | None = None) -> str | None:
    """The dotted version for a raw answer of library `name`'s entry point; None if meaningless."""
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return _dotted(*value)  # *GetProperty (major, minor, patch) and nvJitLinkVersion
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return None
    v = value
    if name == "cudart":
        # cudaRuntimeGetVersion: "1000 x major + 10 x minor" (CUDA Runtime API).
        return _dotted(v // 1000, (v % 1000) // 10)
    if name == "cudnn":
        # cudnn_version.h: 9.x is MAJOR*10000 + MINOR*100 + PATCH; 8.x and older MAJOR*1000 + ...
        return (
            _dotted(v // 10000, (v % 10000) // 100, v % 100)
            if v >= 90000
            else _dotted(v // 1000, (v % 1000) // 100, v % 100)
        )
    if name == "nccl":
        # nccl.h NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after.
        return (
            _dotted(v // 10000, (v % 10000) // 100, v % 100)
            if v >= 10000
            else _dotted(v // 1000, (v % 1000) // 100, v % 100)
        )
    if name == "cublasLt":
        # cublas_api.h CUBLAS_VERSION: MAJOR*10000 + MINOR*100 + PATCH since CUDA 12, MAJOR*1000
        # + MINOR*100 + PATCH before (11.11.3 -> 12103: the soname's major disambiguates).
        if v >= 100000:
            return _dotted(v // 10000, (v % 10000) // 100, v % 100)
        major = major_hint if major_hint and major_hint * 1000 <= v else v // 1000
        return _dotted(major, (v - major * 1000) // 100, v % 100)
    if name == "cupti":
        # cupti_version.h: CUDA 13 encodes the toolkit ("v130001 : CUDA Toolkit 13.0 Update 1");
        # before that CUPTI_API_VERSION is a bare API level (28 in 12.9), not a release.
        return _dotted(v // 10000, (v % 10000) // 100, v % 100) if v >= 10000 else None
    return None


def ask_versions(
    host: Host,
    issues: list[ProbeIssue],
    libraries: Sequence[tuple[str, str]],
    major_hints: dict[str, int] | None = None,
) -> dict[str, Answer]:
    """Answers for (short name, absolute path) pairs; every askable name gets an Answer."""
    pending = [(n, p) for n, p in libraries if n in ASKABLE]
    answers: dict[str, Answer] = {}
    deadline = monotonic() + host.timeout
    while pending:
        remaining = deadline - monotonic()
        if remaining <= 0:
            for name, _ in pending:
                answers[name] = Answer(error="not asked: the version probe ran out of time")
            break
        result = host.run(
            [host.own_python, "-I", "-S", str(CHILD), json.dumps(pending)], timeout=remaining
        )
        events = parse_events(result.stdout)
        for name, value in events.results.items():
            answers[name] = _answer(name, value, (major_hints or {}).get(name))
        if events.done and result.ok:
            break
        culprit = _culprit(result, events)
        if culprit is None:
            # Died before reaching any library (no interpreter, broken Python): say so once.
            issues.append(
                ProbeIssue(
                    "libraries",
                    "error",
                    f"version child: {result.describe_failure()}{_tail(result)}",
                )
            )
            for name, _ in pending:
                answers.setdefault(name, Answer(error=f"not asked: {result.describe_failure()}"))
            break
        name, error = culprit
        answers[name] = Answer(error=error)
        if result.timed_out:
            issues.append(ProbeIssue("libraries", "timeout", f"asking {name} its version: {error}"))
        pending = [(n, p) for n, p in pending if n not in answers]
    return answers


@dataclass(frozen=True, slots=True)
class Events:
    """The child's progress: finished results, the step it was in last, and whether it finished."""

    results: dict[str, object]
    current: tuple[str, str] | None
    """(name, where) of a library started but not finished: where is "load" or the symbol."""
    done: bool


def parse_events(stdout: str) -> Events:
    """Read the child's JSON lines; lines that are not ours are ignored."""
    results: dict[str, object] = {}
    current: tuple[str, str] | None = None
    done = False
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind, name = event.get("event"), str(event.get("name"))
        if kind == "start":
            current = (name, "load")
        elif kind == "call":
            current = (name, str(event.get("symbol")))
        elif kind == "result":
            results[name] = event
            current = None
        elif kind == "done":
            done = True
    return Events(results, current, done)


def _answer(name: str, event: object, major_hint: int | None) -> Answer:
    assert isinstance(event, dict)
    if "error" in event:
        return Answer(error=str(event["error"]))
    return Answer(version=decode(name, event.get("value"), major_hint))


def _culprit(result: CommandResult, events: Events) -> tuple[str, str] | None:
    """The library the child was busy with when it died, and what happened to it."""
    if events.current is None:
        return None
    name, where = events.current
    what = "timed out" if result.timed_out else result.signal_name or result.describe_failure()
    step = f"while loading {name}" if where == "load" else f"in {where}"
    return name, f"{what} {step}"


def _tail(result: CommandResult) -> str:
    lines = result.stderr.strip().splitlines()
    return f" ({lines[-1][:200]})" if lines else ""
