"""pip's resolver conflicts, the wheels it fetches, and /proc/cpuinfo's flags line: facts in output no
other recogniser reads.

"tensorflow 2.9.1 requires protobuf<3.20,>=3.9.2, but you have protobuf 4.21.2 which is
incompatible." names an installed TensorFlow distribution and an installed package with their
versions; the line itself is a log cause (pip-dependency-conflict) with the package as subject.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.facts import LogCause
from tfdoctor.triage.observe import Observation
from tfdoctor.triage.recognisers._text import Trigger, Walk

NAME = "pip output"

_CONFLICT = re.compile(
    r"^(?P<who>[A-Za-z0-9][\w.-]{0,80}) (?P<wv>\d[\w.+!-]{0,40}) (?:has requirement|requires) "
    r"(?P<dep>[A-Za-z0-9][\w.-]{0,80})(?:\[[\w,]+\])?(?P<spec>[^,]*(?:,[^,]*)*?), but you(?:'ll)? have "
    r"(?P=dep) (?P<dv>\d[\w.+!-]{0,40})"
)
_TF = {
    "tensorflow",
    "tensorflow-gpu",
    "tensorflow-cpu",
    "tf-nightly",
    "tf-nightly-gpu",
    "tensorflow-intel",
    "tensorflow-macos",
    "tensorflow-cpu-aws",
    "intel-tensorflow",
}
# "tensorflow  2.15.0  cuda120py311h5cbd639_1  conda-forge", "tensorflow 2.7.0-cpu_py39h4655687_0 --> ..."
_CONDA_TF = re.compile(r"^(?P<n>tensorflow(?:-base)?)\s+(?P<v>2\.\d+\.\d+)(?:\s+|-)(?P<b>(?:cuda|cpu|mkl|eigen|gpu)\w*)")
_DETECTED = re.compile(r"(?:Detected an installation of version|The versions? of TensorFlow you are currently using is)"
                       r" (?P<v>2\.\d+\.\d+)")
# pip's resolver: "tensorflow 2.12.0 depends on numpy<1.24 and >=1.22"; poetry's and uv's (PubGrub):
# "tensorflow (2.14.0) depends on wrapt (>=1.11.0,<1.15)", "Because tensorflow[and-cuda] (2.15.0)
# depends on nvidia-nccl-cu12 (2.16.5)"; setuptools: "numpy 1.18.5 is installed but numpy~=1.19.2 is
# required by {'tensorflow'}".
_DEPENDS = re.compile(r"(?:^|\s)(?P<who>tensorflow(?:-gpu|-cpu|-intel)?)(?:\[[\w,-]{1,40}\])? \(?(?P<wv>\d+\.\d+[\w.]*)\)? "
                      r"depends on "
                      r"(?P<dep>[A-Za-z0-9][\w.-]{0,80}) ?\(?(?P<spec>[^)]{0,80})\)?")
_SETUPTOOLS = re.compile(r"(?P<dep>[A-Za-z0-9][\w.-]{0,80}) (?P<dv>\d[\w.]*) is installed but (?P=dep)"
                         r"(?P<spec>\S{1,80}) is required by \{'(?P<who>tensorflow[\w-]*)'\}")
_INSTALLED = re.compile(r"^Successfully installed (?P<list>.{1,20000})$")
# pip's "Downloading tensorflow_text-2.15.0-cp310-cp310-manylinux_2_17_x86_64.whl (5.2 MB)" and "Using
# cached ..." (pip 20.3+; older pips print the file's whole URL): the wheel it fetched for a
# requirement, named by the wheel's own file name (PEP 427: {distribution}-{version}-...-{platform}.whl),
# is the release it is about to install
_FETCHED = re.compile(r"^(?:Downloading|Using cached) (?:[^\s/]*/)*(?P<n>[A-Za-z0-9][A-Za-z0-9_.]*?)-(?P<v>\d[\w.+!]*?)"
                      r"(?:-\d\w*)?-[\w.]+-[\w.]+-[\w.]+\.whl\b")
_PKG = re.compile(r"^(?P<n>[A-Za-z0-9][\w.-]*?)-(?P<v>\d[\w.+!]*)$")
# The banner of NVIDIA's CUDA container images: "CUDA Version 12.1.1" under "== CUDA ==".
_BANNER = re.compile(r"^CUDA Version (?P<v>\d+\.\d+\.\d+)$")
_FLAGS = re.compile(r"^flags\s*:\s*(?P<f>[a-z0-9_ ]{10,4000})$")
_TRIGGER = Trigger(("tensorflow", "Detected an installation", "currently using is", " but you", " depends on ",
                     " is installed but ", "Successfully installed ", "CUDA Version ", "flags", "Downloading ",
                     "Using cached "))
_WANTED = ("sse4_1", "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "amx_tile")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Packages and TF distributions from resolver conflicts; CPU flags from /proc/cpuinfo."""
    flags_done = conda_done = False
    for number, line in Walk(lines, _TRIGGER):
        text = line.strip()
        if not conda_done and text.startswith("tensorflow"):
            conda = _CONDA_TF.match(text)
            if conda:
                conda_done = True
                yield Observation("tensorflow.version", conda.group("v"), number, NAME)
                yield Observation("python.conda", True, number, NAME)
                yield Observation("tensorflow.is_cuda_build", conda.group("b").startswith(("cuda", "gpu")),
                                  number, NAME)
        if "Detected an installation" in text or "currently using is" in text:
            detected = _DETECTED.search(text)
            if detected:
                yield Observation("tensorflow.version", detected.group("v"), number, NAME)
        if " but you" in text and " have " in text:
            m = _CONFLICT.match(text)
            if m:
                who, dep = _norm(m.group("who")), _norm(m.group("dep"))
                yield Observation("python.package", (dep, m.group("dv")), number, NAME)
                if who in _TF:
                    yield Observation("tensorflow.distribution", (who, m.group("wv")), number, NAME)
                if who in _TF or dep in (
                    "numpy",
                    "protobuf",
                    "keras",
                    "ml-dtypes",
                    "tensorboard",
                    "tensorflow-estimator",
                    "h5py",
                    "typing-extensions",
                    "gast",
                ):
                    subject = f"{dep} {m.group('dv')} ({who} {m.group('wv')} requires {dep}{m.group('spec').strip()})"
                    yield Observation(
                        "log.cause",
                        LogCause(id="pip-dependency-conflict", line=text[:500], subject=subject),
                        number,
                        NAME,
                    )
        elif " depends on " in text and "tensorflow" in text:
            depends = _DEPENDS.search(text)
            if depends:
                who = _norm(depends.group("who"))
                yield Observation("tensorflow.distribution", (who, depends.group("wv")), number, NAME)
                subject = (f"{_norm(depends.group('dep'))} ({who} {depends.group('wv')} requires "
                           f"{depends.group('dep')} {depends.group('spec').strip()})")
                yield Observation("log.cause", LogCause(id="pip-dependency-conflict", line=text[:500],
                                                        subject=subject), number, NAME)
        elif " is installed but " in text:
            st = _SETUPTOOLS.search(text)
            if st:
                dep = _norm(st.group("dep"))
                yield Observation("python.package", (dep, st.group("dv")), number, NAME)
                subject = f"{dep} {st.group('dv')} ({st.group('who')} requires {dep}{st.group('spec')})"
                yield Observation("log.cause", LogCause(id="pip-dependency-conflict", line=text[:500],
                                                        subject=subject), number, NAME)
        elif text.startswith("Successfully installed "):
            inst = _INSTALLED.match(text)
            for item in (inst.group("list").split() if inst else ()):
                pkg = _PKG.match(item)
                if pkg:
                    name = _norm(pkg.group("n"))
                    yield Observation("python.package", (name, pkg.group("v")), number, NAME)
                    if name in _TF:
                        yield Observation("tensorflow.distribution", (name, pkg.group("v")), number, NAME)
        elif text.startswith(("Downloading ", "Using cached ")) and len(text) < 1000:
            fetched = _FETCHED.match(text)
            if fetched:
                yield Observation("intent.pip_install", (f"{_norm(fetched.group('n'))}=={fetched.group('v')}",),
                                  number, NAME)
        elif text.startswith("CUDA Version ") and _BANNER.match(text):
            yield Observation("toolkit.nvcc_version", text.split()[-1], number, NAME)
        elif not flags_done and text.startswith("flags"):
            f = _FLAGS.match(text)
            if f:
                flags_done = True
                have = set(f.group("f").split())
                yield Observation("platform.cpu_flags", tuple(x for x in _WANTED if x in have), number, NAME)
                if "lm" in have or "sse2" in have:
                    yield Observation("platform.machine", "x86_64", number, NAME)
