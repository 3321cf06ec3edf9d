"""Turn what the smoke child streamed (protocol events, stderr lines) into SmokeFacts. Pure."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tfdoctor.facts import LogCause, NvmlSample, RecipeResult, SmokeDevice
from tfdoctor.smoke import logmap, peaks

TAIL = 25
"""Log lines kept as evidence, per recipe and for the whole run."""
MARK = "tfdoctor-smoke: begin "


@dataclass
class LogBucket:
    """The stderr of one recipe (or of the whole run): a bounded tail, a count, the causes."""

    recipe: str | None = None
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL))
    count: int = 0
    causes: list[LogCause] = field(default_factory=list)
    _seen: set[tuple[str, str | None]] = field(default_factory=set)

    def add(self, line: str) -> None:
        line = line.rstrip("\n")
        if not line.strip() or logmap.is_noise(line):
            return
        self.count += 1
        self.tail.append(line[:1000])
        self.note(line)

    def note(self, line: str) -> None:
        """The cause of a line, if it has one, without adding the line to the log."""
        hit = logmap.recognise(line[:2000])
        if hit and hit not in self._seen:
            self._seen.add(hit)
            self.causes.append(LogCause(hit[0], line.strip()[:500], hit[1], self.recipe))


class LogSplitter:
    """Route stderr lines to per-recipe buckets using the child's begin markers."""

    def __init__(self) -> None:
        self.run = LogBucket()
        self.buckets: dict[tuple[str, str | None], LogBucket] = {}
        self.current: LogBucket | None = None

    def add(self, line: str) -> None:
        if line.startswith(MARK):
            parts = line[len(MARK) :].split()
            name = parts[0] if parts else "?"
            device = parts[1] if len(parts) > 1 and parts[1] != "-" else None
            self.current = self.buckets.setdefault((name, device), LogBucket(recipe=name))
            return
        self.run.recipe = self.current.recipe if self.current else None
        self.run.add(line)
        if self.current is not None:
            self.current.add(line)

    def bucket(self, name: str, device: str | None) -> LogBucket:
        return self.buckets.get((name, device)) or LogBucket(recipe=name)

    def note_error(self, name: str, device: str | None, text: str) -> None:
        """A recipe's error as TensorFlow raised it: Python exceptions the child caught never reach
        stderr ("UnknownError: JIT compilation failed", "InternalError: No allocator statistics"),
        so their causes are noted for the recipe and the run here."""
        bucket = self.buckets.setdefault((name, device), LogBucket(recipe=name))
        self.run.recipe = name
        for line in text.splitlines():
            bucket.note(line)
            self.run.note(line)


def _floats(raw: Any) -> tuple[dict[str, float], dict[str, str]]:
    """Finite numbers stay metrics; inf/NaN (not valid JSON) move to info as text."""
    metrics: dict[str, float] = {}
    odd: dict[str, str] = {}
    for key, value in (raw or {}).items() if isinstance(raw, dict) else ():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if math.isfinite(value):
            metrics[str(key)] = float(value)
        else:
            odd[str(key)] = str(value)
    return metrics, odd


def _strings(raw: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def recipe_result(
    event: dict[str, Any],
    logs: LogSplitter,
    samples: tuple[NvmlSample, ...] = (),
    begin_t: float | None = None,
) -> RecipeResult:
    """A RecipeResult from a child "result" event, with its log tail, causes and NVML samples."""
    name = str(event.get("recipe"))
    device = event.get("device")
    metrics, odd = _floats(event.get("metrics"))
    info = _strings(event.get("info"))
    info.update(odd)
    if name == "multi-device":
        metrics.update(peaks.allreduce_bandwidth(metrics))
    if event.get("detail"):
        logs.note_error(name, device if isinstance(device, str) else None, str(event["detail"])[:1000])
    bucket = logs.bucket(name, device if isinstance(device, str) else None)
    end_t = event.get("t")
    window = tuple(
        s
        for s in samples
        if isinstance(end_t, int | float) and begin_t is not None and begin_t <= s.t <= end_t
    )
    status = str(event.get("status"))
    return RecipeResult(
        name=name,
        device=device if isinstance(device, str) else None,
        status=status if status in ("passed", "failed", "error", "skipped", "not-run") else "error",
        seconds=float(event["seconds"]) if isinstance(event.get("seconds"), int | float) else None,
        metrics=metrics,
        info=info,
        detail=str(event["detail"])[:1000] if event.get("detail") else None,
        log_tail=tuple(bucket.tail),
        log_lines=bucket.count,
        causes=tuple(bucket.causes),
        nvml=window,
    )


def unfinished(
    name: str,
    device: str | None,
    status: str,
    detail: str,
    logs: LogSplitter,
    seconds: float | None = None,
) -> RecipeResult:
    """A recipe that began but never reported: it hung or the child died in it."""
    bucket = logs.bucket(name, device)
    return RecipeResult(
        name=name,
        device=device,
        status=status,
        seconds=seconds,
        detail=detail,
        log_tail=tuple(bucket.tail),
        log_lines=bucket.count,
        causes=tuple(bucket.causes),
    )


def devices_from(event: dict[str, Any]) -> tuple[SmokeDevice, ...]:
    out = []
    for d in event.get("devices") or ():
        if isinstance(d, dict) and isinstance(d.get("name"), str):
            out.append(
                SmokeDevice(
                    name=d["name"],
                    device_type=str(d.get("type") or "?"),
                    model=str(d["model"]) if d.get("model") else None,
                    compute_capability=str(d["compute_capability"])
                    if d.get("compute_capability")
                    else None,
                )
            )
    return tuple(out)
