"""NVML samples while the smoke work runs, taken by a small child of tfdoctor's own python."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from tfdoctor.children import reap, spawn, wait_exited
from tfdoctor.facts import NvmlSample
from tfdoctor.host import Host

SAMPLER = Path(__file__).with_name("_nvml_sampler.py")
INTERVAL = 0.2


def parse_sample(line: str) -> NvmlSample | str | None:
    """A sample from one sampler line; the error text for "unavailable"; None for anything else."""
    try:
        data: Any = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if data.get("event") == "unavailable":
        return str(data.get("error") or "NVML unavailable")
    if not isinstance(data.get("gpu"), int) or not isinstance(data.get("t"), int | float):
        return None

    def num(key: str, kind: type) -> Any:
        value = data.get(key)
        return (
            kind(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )

    return NvmlSample(
        gpu=data["gpu"],
        t=float(data["t"]),
        sm_clock_mhz=num("sm_clock_mhz", int),
        sm_clock_max_mhz=num("sm_clock_max_mhz", int),
        power_w=num("power_w", float),
        power_limit_w=num("power_limit_w", float),
        power_default_limit_w=num("power_default_limit_w", float),
        utilization_pct=num("utilization_pct", int),
        temperature_c=num("temperature_c", int),
        throttle_reasons=tuple(str(r) for r in data.get("throttle_reasons") or ()),
        pcie_gen=num("pcie_gen", int),
        pcie_gen_max=num("pcie_gen_max", int),
        pcie_width=num("pcie_width", int),
        pcie_width_max=num("pcie_width_max", int),
    )


class NvmlSampler:
    """Starts the sampler child once, on demand; collects its samples until stop()."""

    def __init__(self, host: Host):
        self.host = host
        self.error: str | None = None
        self._samples: list[NvmlSample] = []
        self._proc: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        if self._proc is not None or self.error is not None:
            return
        try:
            self._proc = spawn([self.host.own_python, str(SAMPLER), str(INTERVAL)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               env=self.host.env, text=True)
        except OSError as exc:
            self.error = f"could not start the NVML sampler: {exc.strerror or exc}"
            return
        self._thread = threading.Thread(target=self._pump, name="smoke-nvml", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            parsed = parse_sample(line)
            with self._lock:
                if isinstance(parsed, NvmlSample):
                    self._samples.append(parsed)
                elif isinstance(parsed, str):
                    self.error = parsed

    def samples(self) -> tuple[NvmlSample, ...]:
        with self._lock:
            return tuple(self._samples)

    def stop(self) -> None:
        """Close the sampler's stdin (its signal to exit), then reap it with all it started."""
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass
        wait_exited(proc, 2.0)
        reap(proc)
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        # A reader still blocked (a pipe held by a process we could not kill): closing the
        # stream under it would wait for it.
        if proc.stdout is not None and (self._thread is None or not self._thread.is_alive()):
            proc.stdout.close()
