"""The CUDA user-space libraries TensorFlow will dlopen: which file loads, from where, what version.

TensorFlow's DSO loader (XLA/TSL dso_loader.cc) lives in libtensorflow_framework.so.2, so each
dlopen() searches LD_LIBRARY_PATH, then that object's DT_RUNPATH, then the ldconfig cache and the
default directories (research/compat.md section 8). TF 2.21's RUNPATH lacks nvidia/cusolver/lib:
with the pip wheels installed, libcusolver.so.11 still does not load without LD_LIBRARY_PATH.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from tfdoctor.facts import LibraryFacts, ProbeIssue, PythonFacts, TensorFlowFacts, TfLoaderFacts
from tfdoctor.host import Host
from tfdoctor.probes import libfallback, libresolve, tfloader
from tfdoctor.probes.elf import DynamicInfo, expand_origin, read_dynamic
from tfdoctor.probes.ldcache import read_cache
from tfdoctor.probes.libversion import ASKABLE, Answer, ask_versions

FRAMEWORK = "libtensorflow_framework.so.2"

# Report order: the order TF's TryDlopenCUDALibraries asks for them (every one is askable), then
# the extras.
ORDER = ASKABLE

# nvJitLink is not dlopened by TF: libcusolver.so.11 and libcusparse.so.12 of CUDA 12 have it as
# DT_NEEDED ("dlerror: libnvJitLink.so.12: cannot open shared object file", compat.md section 8b),
# so it is searched from the RUNPATH of whichever of them loads.
NVJITLINK_REQUESTERS = ("cusolver", "cusparse")


def is_cuda_tf(tf: TensorFlowFacts | None) -> bool:
    """A TensorFlow that will load CUDA: a CUDA build, or one whose build is unknown but that
    names a CUDA version or CUDA sonames."""
    if tf is None or tf.is_cuda_build is False:
        return False
    return bool(tf.is_cuda_build or tf.cuda_version or tf.sonames)


def wanted_sonames(tf: TensorFlowFacts) -> dict[str, str]:
    """Short name -> soname TF will need, from its cuda_config.h or, failing that, the TF tables."""
    sonames = dict(tf.sonames)
    if not sonames and tf.cuda_version and tf.version:
        sonames = _table_sonames(tf.version)
    if not sonames:
        return {}
    cublas = sonames.get("cublas")
    if cublas and "cublasLt" not in sonames:
        sonames["cublasLt"] = cublas.replace("libcublas.", "libcublasLt.", 1)
    # TF >= 2.5 uses NCCL through libnccl.so.2; the 2.18+ cuda_config.h has no TF_NCCL_VERSION.
    sonames.setdefault("nccl", "libnccl.so.2")
    major = _cuda_major(tf)
    if major is not None and major >= 12:
        sonames.setdefault("nvjitlink", f"libnvJitLink.so.{major}")
    rank = {name: i for i, name in enumerate(ORDER)}
    return dict(sorted(sonames.items(), key=lambda kv: (rank.get(kv[0], len(ORDER)), kv[0])))


def _table_sonames(version: str) -> dict[str, str]:
    try:
        from tfdoctor.compat import tf_release
    except ImportError:
        return {}
    release = tf_release(version)
    return dict(release.sonames) if release is not None else {}


def _cuda_major(tf: TensorFlowFacts) -> int | None:
    match = re.match(r"(\d+)", tf.cuda_version or "")
    if match:
        return int(match.group(1))
    cudart = libfallback.soname_major(tf.sonames.get("cudart", ""))
    return int(cudart) if cudart and cudart.isdigit() else None


@dataclass(frozen=True, slots=True)
class Caller:
    """The object whose dlopen() is being modelled, and its search path entries."""

    path: str | None
    dynamic: DynamicInfo | None

    def rpath(self) -> tuple[str, ...]:
        if not self.dynamic or not self.path:
            return ()
        return expand_origin(self.dynamic.rpath, self.path)

    def runpath(self) -> tuple[str, ...]:
        if not self.dynamic or not self.path:
            return ()
        return libresolve.unique(expand_origin(self.dynamic.runpath, self.path))


def find_framework(package_dir: str | None) -> str | None:
    """TF's libtensorflow_framework (.so.2 since TF 2.0; other suffixes in odd builds)."""
    if not package_dir:
        return None
    exact = os.path.join(package_dir, FRAMEWORK)
    if os.path.isfile(exact):
        return exact
    try:
        names = sorted(
            n for n in os.listdir(package_dir) if n.startswith("libtensorflow_framework.so")
        )
    except OSError:
        return None
    return os.path.join(package_dir, names[0]) if names else None


def probe_libraries(
    host: Host, issues: list[ProbeIssue], python: PythonFacts, tf: TensorFlowFacts | None,
    loader: TfLoaderFacts | None = None,
) -> tuple[LibraryFacts, ...]:
    """Resolve, locate and version every CUDA library this TensorFlow will load; () for CPU TF.

    With `loader` (TensorFlow's own answers, tfloader.py), TensorFlow wins where it disagrees.
    """
    if tf is None or not is_cuda_tf(tf):
        return ()
    sonames = wanted_sonames(tf)
    if not sonames:
        return ()
    framework_path = find_framework(tf.package_dir)
    framework = Caller(framework_path, read_dynamic(framework_path) if framework_path else None)
    ident = libresolve.elf_ident(framework_path) if framework_path else None
    cache, cache_error = read_cache(host)
    if cache_error:
        issues.append(ProbeIssue("libraries", "error", f"ldconfig cache: {cache_error}"))
    conda = _conda_prefixes(host.env, python)
    ld_path = libresolve.split_path_list(host.env.get("LD_LIBRARY_PATH"))
    defaults = libresolve.default_dirs(host)
    extras = libresolve.extra_dirs(host, python.site_packages, conda)
    listing: dict[str, tuple[str, ...]] = {}

    preloaded = {os.path.basename(p): p for p in python.preloads}
    resolved: dict[str, tuple[libresolve.Resolution, tuple[str, ...]]] = {}
    for name, soname in sonames.items():
        caller = framework
        if name == "nvjitlink":
            caller = _requester(resolved, framework)
        steps = libresolve.search_steps(
            rpath=caller.rpath(),
            runpath=caller.runpath(),
            ld_library_path=ld_path,
            defaults=defaults,
        )
        searched = tuple(d for s in steps for d in s.dirs)
        resolved[name] = (libresolve.resolve(soname, steps, cache, ident), searched)
        if resolved[name][0].path is None and soname in preloaded:
            # Loaded by absolute path before TensorFlow asks (fix: tfdoctor-preload.pth): glibc
            # then answers dlopen(soname) with the object already loaded under that SONAME.
            resolved[name] = (libresolve.Resolution(preloaded[soname], "preload",
                                                    (preloaded[soname],)), searched)

    verdicts = tfloader.reconcile(sonames, {n: r.path for n, (r, _) in resolved.items()}, loader)
    for name, verdict in verdicts.items():
        model, searched = resolved[name]
        via = "tensorflow" if verdict.path else None
        resolved[name] = (libresolve.Resolution(verdict.path, via, model.candidates), searched)

    to_ask = [(n, r.path) for n, (r, _) in resolved.items() if r.path]
    hints = {
        n: int(m) for n, s in sonames.items() if (m := libfallback.soname_major(s)) and m.isdigit()
    }
    answers = ask_versions(host, issues, to_ask, hints) if to_ask else {}
    cuda_major = str(_cuda_major(tf)) if _cuda_major(tf) is not None else None

    facts = []
    for name, soname in sonames.items():
        resolution, searched = resolved[name]
        dirs = libresolve.unique(
            [*searched, *(os.path.dirname(e.path) for e in cache if e.soname == soname), *extras]
        )
        copies, others = libresolve.copies_and_versions(
            soname, resolution.path, resolution.candidates, dirs, cache, listing
        )
        fact = _library_facts(
            host,
            name,
            soname,
            resolution,
            searched,
            copies,
            others,
            answers.get(name),
            python.packages,
            cuda_major,
            conda,
        )
        if name in verdicts:
            fact = replace(fact, model_path=verdicts[name].model_path, model_disagrees=True,
                           error=verdicts[name].error or fact.error)
        facts.append(fact)
    return tuple(facts)


def _requester(
    resolved: Mapping[str, tuple[libresolve.Resolution, tuple[str, ...]]], framework: Caller
) -> Caller:
    """The loaded library whose DT_NEEDED pulls in nvJitLink, or TF's loader if none loaded."""
    for name in NVJITLINK_REQUESTERS:
        entry = resolved.get(name)
        if entry and entry[0].path:
            return Caller(entry[0].path, read_dynamic(entry[0].path))
    return framework


def _conda_prefixes(env: Mapping[str, str], python: PythonFacts) -> tuple[str, ...]:
    prefixes = [env["CONDA_PREFIX"]] if env.get("CONDA_PREFIX") else []
    if python.is_conda and python.prefix:
        prefixes.append(python.prefix)
    return libresolve.unique(prefixes)


def _library_facts(
    host: Host,
    name: str,
    soname: str,
    resolution: libresolve.Resolution,
    searched: tuple[str, ...],
    copies: tuple[str, ...],
    others: tuple[str, ...],
    answer: Answer | None,
    packages: Mapping[str, str],
    cuda_major: str | None,
    conda: tuple[str, ...],
) -> LibraryFacts:
    path = resolution.path
    if path is None:
        return LibraryFacts(
            name=name,
            soname=soname,
            other_copies=copies,
            other_versions=others,
            search_path=searched,
        )
    origin = libresolve.origin_of(host, path, conda)
    version, source = (answer.version, "library") if answer and answer.version else (None, None)
    if version is None:
        version, source = _fallback_version(host, name, soname, path, origin, packages, cuda_major)
    return LibraryFacts(
        name=name,
        soname=soname,
        path=path,
        found_via=resolution.found_via,
        origin=origin,
        version=version,
        version_source=source,
        error=answer.error if answer else None,
        other_copies=copies,
        other_versions=others,
        search_path=searched,
    )


def _fallback_version(
    host: Host,
    name: str,
    soname: str,
    path: str,
    origin: str,
    packages: Mapping[str, str],
    cuda_major: str | None,
) -> tuple[str | None, str | None]:
    """Header, then pip metadata, then file name: the first that knows, and which it was."""
    version = libfallback.header_version(host, name, path, soname)
    if version:
        return version, "header"
    if origin == "pip":
        version = libfallback.metadata_version(name, path, cuda_major, packages)
        if version:
            return version, "metadata"
    version = libfallback.filename_version(soname, path)
    return (version, "filename") if version else (None, None)
