"""Probes: the only code that touches the machine. `collect_facts` runs them and never raises.

Independent probes run in parallel threads (each mostly waits on a child process); the library
and XLA probes start as soon as the target interpreter has told where TensorFlow lives.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone
from typing import TypeVar

from tfdoctor import __version__
from tfdoctor.facts import SCHEMA_VERSION, Facts, ProbeIssue, PythonFacts, ToolkitFacts
from tfdoctor.host import Host, quiet_thread

T = TypeVar("T")
Issues = list[ProbeIssue]


def guarded(name: str, issues: Issues, default: T, func: Callable[[], T]) -> T:
    """Run a probe; a bug in it becomes a ProbeIssue and the default, never an exception."""
    try:
        return func()
    except Exception as exc:  # noqa: BLE001  (the doctor must survive its own probes)
        where = traceback.extract_tb(exc.__traceback__)[-1]
        issues.append(ProbeIssue(name, "crash", f"{type(exc).__name__}: {exc} ({where.name}:{where.lineno})"))
        return default


Progress = Callable[[str], None]
"""Called with a probe's name when it finishes (the TUI streams areas in as they land)."""


def collect_facts(host: Host, progress: Progress | None = None, *, tf_loader: bool = False) -> Facts:
    """Probe the machine: driver, CUDA driver API, target interpreter, libraries, XLA, platform.

    `tf_loader` also asks TensorFlow's own DSO loader (tfloader.py; the full run, not --quick).
    """
    from tfdoctor.facts import (
        CudaDriverFacts,
        DriverFacts,
        HostFacts,
        LibraryFacts,
        PlatformFacts,
        TensorFlowFacts,
        TfLoaderFacts,
    )
    from tfdoctor.probes.cuda_driver import probe_cuda_driver
    from tfdoctor.probes.driver import probe_driver
    from tfdoctor.probes.hoststate import probe_host
    from tfdoctor.probes.libraries import find_framework, is_cuda_tf, probe_libraries
    from tfdoctor.probes.platform import probe_env, probe_node, probe_platform
    from tfdoctor.probes.target import probe_target
    from tfdoctor.probes.tfloader import probe_tf_loader
    from tfdoctor.probes.toolkits import probe_toolkits
    from tfdoctor.probes.xla import probe_xla

    issues: Issues = []
    with ThreadPoolExecutor(max_workers=6, initializer=quiet_thread) as pool:

        def submit(name: str, default: T, func: Callable[[], T]) -> Future[T]:
            future = pool.submit(guarded, name, issues, default, func)
            if progress is not None:
                future.add_done_callback(lambda _f: progress(name))
            return future

        driver = submit("driver", DriverFacts(), lambda: probe_driver(host, issues))
        cuda = submit("cuda-driver", CudaDriverFacts(), lambda: probe_cuda_driver(host, issues))
        platform = submit("platform", PlatformFacts(), lambda: probe_platform(host, issues))
        no_kits: tuple[ToolkitFacts, ...] = ()
        toolkits = submit("toolkits", no_kits, lambda: probe_toolkits(host))
        host_state = submit("host", HostFacts(), lambda: probe_host(host))
        # The defaults carry the probes' full types: `T` is inferred from them.
        no_target: tuple[PythonFacts, TensorFlowFacts | None] = (PythonFacts(executable=host.python), None)
        target = submit("target", no_target, lambda: probe_target(host, issues))
        python, tensorflow = target.result()
        no_loader: TfLoaderFacts | None = None
        loader = submit("tf-loader", no_loader, lambda: probe_tf_loader(
            host, issues, find_framework(tensorflow.package_dir if tensorflow else None),
            tensorflow)) if tf_loader and is_cuda_tf(tensorflow) else None
        no_libraries: tuple[LibraryFacts, ...] = ()
        libraries = submit("libraries", no_libraries, lambda: probe_libraries(
            host, issues, python, tensorflow, loader.result() if loader else None))
        xla = submit("xla", None, lambda: probe_xla(host, issues, python, tensorflow))
        no_env: dict[str, str] = {}
        env = guarded("env", issues, no_env, lambda: probe_env(host))
        platform_facts = platform.result()
        return Facts(
            schema_version=SCHEMA_VERSION,
            tool_version=__version__,
            collected_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            python=python,
            platform=platform_facts,
            env=env,
            driver=driver.result(),
            cuda_driver=cuda.result(),
            tensorflow=tensorflow,
            libraries=libraries.result(),
            xla=xla.result(),
            tf_loader=loader.result() if loader else None,
            probe_issues=tuple(issues),
            toolkits=toolkits.result(),
            host=host_state.result(),
            unknown=probe_unknowns(host, issues, platform_facts.system),
            node=probe_node(host),
        )


# A probe that crashed left its whole area at the default value: that value is unknown, not absent.
AREAS = {"driver": ("driver",), "cuda-driver": ("cuda_driver",), "libraries": ("libraries",),
         "xla": ("xla",), "env": ("env",), "tf-loader": ("tf_loader",),
         "target": ("tensorflow", "python.packages"), "toolkits": ("toolkits",), "host": ("host",)}


def probe_unknowns(host: Host, issues: Issues, system: str | None) -> tuple[str, ...]:
    """Fact paths the probes could not read (Facts.unknown)."""
    out: list[str] = []
    for issue in issues:
        # guarded()'s own message ends "(function:line)": the probe function itself raised.
        if issue.kind == "crash" and issue.probe in AREAS and re.search(r"\(\w+:\d+\)$", issue.message):
            out.extend(AREAS[issue.probe])
    if system == "Linux" and host.read_text("/proc/modules") is None:
        out.append("driver.kernel_module")  # no module list: "not loaded" would be a guess
    return tuple(dict.fromkeys(out))
