"""What the user says in words: "TensorFlow 2.11", "numpy 1.20.1", "Windows 11", "Python 3.9", "WSL2",
"CUDA 12.4".

Claims, not measurements: the assembler takes a fact from here only when no tool output in the
ticket gives it. Each pattern needs a version-shaped token, so prose without one says nothing.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, filterfalse, repeat
from operator import contains
from typing import TYPE_CHECKING

from tfdoctor.textgate import Gate, Need, folded, gated
from tfdoctor.triage.observe import Observation
from tfdoctor.triage.recognisers._text import MAX_LINE, _ticket, clean, gated_lines, strip_prompt

if TYPE_CHECKING:  # (not in the module's names: tests read its gated patterns off them)
    from tfdoctor.textgate import Gated

NAME = "ticket prose"

_TF = gated(re.compile(
    r"\b(?:tensorflow(?:[-_ ]gpu)?|TF(?:[-_ ]GPU)?|tf[-_ ]nightly(?:[-_ ][cg]pu)?)(?:\s*(?:version)?\s*(?:==|=|:|(?<=\s)-|v)?\s*`?)"
    r"(?P<v>2\.\d{1,2}(?:\.\d{1,2})?(?:rc\d|[.-]dev\d{8})?)\b",
    re.IGNORECASE,
))
# "Tensorflow - 2.7.0" (an issue template's list) as "tensorflow==2.7.0"; not "tf-2.16" (a name).
# "keras 2.11.0", "numpy==1.20.1": a full version, so "Keras 3" or "NumPy 2" in passing says nothing.
# The packages that break TensorFlow most (checks/packages.py judges them against TF's ranges).
_PACKAGE = gated(re.compile(r"(?<![\w-])(?P<n>keras|numpy|protobuf)(?:\s*(?:version)?\s*(?:==|=|:|v)?\s*)"
                      r"(?P<v>\d{1,2}\.\d{1,2}\.\d{1,2})\b", re.IGNORECASE))
_PY = gated(re.compile(r"\bPython\s*(?:version)?\s*:{0,2}\s*`?(?P<v>3\.\d{1,2}(?:\.\d{1,2})?)\b", re.IGNORECASE))
_WIN = gated(re.compile(
    r"\b(?:Windows|Win)\s*(?:10|11|Server)\b|\bnative Windows\b|\bwin(?:10|11)\b", re.IGNORECASE
))
_WSL = gated(re.compile(r"\bWSL\s*(?P<v>[12])?\b", re.IGNORECASE))
_LINUX = gated(re.compile(
    r"\b(?P<d>Ubuntu|Debian|CentOS|Rocky Linux|Fedora|RHEL|Linux Mint|Pop!_OS|Arch Linux)"
    r"(?:\s+(?P<v>\d{1,2}(?:\.\d{1,2})?))?",
    re.IGNORECASE,
))
_MAC = gated(re.compile(r"\bmacOS\b|\bMac ?OS X\b|\bApple (?:M1|M2|M3|Silicon)\b", re.IGNORECASE))
_GPU = gated(re.compile(
    r"\b(?P<g>(?:GeForce |NVIDIA |Quadro )?(?:RTX|GTX|Tesla|Titan|Quadro)\s?[A-Z]?\d{3,4}[A-Za-z]*"
    r"(?: Ti| SUPER)?|(?:NVIDIA )?RTX PRO \d{4}(?: Blackwell)?"
    r"|(?:NVIDIA )?(?:A100|H100|H200|V100|P100|T4|L4|L40S?|A10G?|A6000|K80|G?B[12]00)\b)"
))
# "GPU model and memory: 5070TI": a GeForce model without its RTX, on a line about the GPU
_BARE_MODEL = gated(re.compile(r"(?<![\w.])(?P<g>(?:20|30|40|50)[5-9]0(?:\s?Ti|TI| SUPER)?)(?![\w.])"))
_GPU_WORDS = gated(re.compile(r"\b(?:GPUs?|CUDA|cuDNN|NVIDIA)\b"))
# A program's own output, not the user's words: TensorFlow/XLA log lines ("gpu_device.cc:2251]"),
# traceback frames. TensorFlow's log says "GPU" on machines that have none.
_PROGRAM_LINE = gated(re.compile(r"\.(?:cc|cpp|h|py):\d+\]|^\s*File \""))
# "CUDA 12.4", "CUDA toolkit 11.8", "CUDA toolkit: 11.2.0": the toolkit the user says is installed.
# Not nvidia-smi's "CUDA Version: 12.2" (the driver's), nor a sentence quoting what some release
# requires.
_CUDA = gated(re.compile(r"\b(?:CUDA\s+toolkit(?:\s+version)?\s*:|CUDA(?:\s+toolkit)?|cudatoolkit)\s*(?:==|=|v)?\s*"
                         r"(?P<v>(?:9|1[0-3])\.\d)(?![\d])", re.IGNORECASE))
# "cuDNN 7.4.1", "cudnn version: 8.1": the cuDNN the user says is installed (judged per element,
# against the build's cuDNN, when nothing else in the ticket shows the libraries).
_CUDNN = gated(re.compile(r"\bcudnn\s*(?:version)?\s*(?:==|=|:|v)?\s*v?(?P<v>[5-9]\.\d{1,2}(?:\.\d{1,3})?)(?![\d.])",
                    re.IGNORECASE))
_NOT_INSTALLED = gated(re.compile(r"Driver Version|NVIDIA-SMI|^\s*\||requir|need|support|compatib|recommend|"
                            r"tested|built|compiled|\bfor CUDA|instead of", re.IGNORECASE))
# "Nvidia Driver: 572.16", "NVIDIA driver version 535.183.01", "host driver 450.203.8": the NVIDIA driver
# the user says the machine runs (an issue template's list, a sentence); not a version some release
# needs ("requires driver 525.60.13 or newer")
_DRIVER = gated(re.compile(r"\bdriver(?:\s+version)?\s*[:=]?\s*v?(?P<v>[3-9]\d{2}\.\d{2,3}(?:\.\d{1,3})?)(?![\d.])",
                           re.IGNORECASE))
_DRIVER_NEEDED = gated(re.compile(r"requir|\bneeds?\b|minimum|at least|>=|or (?:newer|later|higher)", re.IGNORECASE))
# An NVIDIA Jetson (an Arm board with an integrated GPU): by name or by its own tools
_JETSON = gated(re.compile(r"\b(?:Jetson|JetPack|jtop|L4T|Tegra)\b", re.IGNORECASE))
# ... unless the user says it is theirs: "my CUDA 10.2", "now with cuda 12.2", "installs cudatoolkit"
_MINE = gated(re.compile(r"\b(?:my|I have|I've got|I installed|installs?|installed|I'm using|I am using|using|"
                   r"now (?:with|on|using))\s+(?:the\s+)?(?:CUDA|cudatoolkit)\b", re.IGNORECASE))
_AND_CUDA = gated(re.compile(r"\btensorflow\[and-cuda\]", re.IGNORECASE))
# What the user says is installed: "the CPU version that is installed", "cpu build is installed"
_CPU_BUILD = gated(re.compile(r"\bcpu[- ](?:only )?(?:build|version|variant)s? (?:that )?(?:of tensorflow )?"
                              r"(?:is|was|are|were|gets|got|being) (?:installed|pulled|picked)", re.IGNORECASE))
# "libcudart.so.11.0 not found", "cannot find libcudnn.so.8", "the images have no libcudnn.so.8",
# "tensorflow tries to load `libcudnn.so.9`, but ...", "cudart64_110.dll is missing" (the names
# TensorFlow's loader asks for on Linux and on native Windows, never a bare product name): a CUDA
# library the user says TensorFlow cannot find (a fact judged by cuda-libraries like a probed
# library that did not resolve; TensorFlow's own message for it is dso_loader's "Could not load
# dynamic library" and cuDNN's own "Could not load library %s", log lines)
_LIBRARY_MISSING = gated(re.compile(
    r"\b(?P<s>(?P<lib>lib)?(?P<n>cudart|cublaslt|cublas|cufft|curand|cusolver|cusparse|cudnn|nccl)"
    r"(?(lib)\w*(?:\.so[.\d]*)?|64_\d+\.dll))", re.IGNORECASE))
# what is said before and after the name, read in a short window around each name found (one
# pattern with these alternatives before the name cost a third more time on long prose)
_MISSING_BEFORE = re.compile(
    r"(?:\b(?!could not load library )(?:cannot|can't|can ?not|could ?not|couldn't|unable to|fails? to|failed to|"
    r"did ?not|didn't) (?:find|load|open|locate|dlopen)(?: the)?(?: shared)?(?: (?:library|lib|file))?(?: file)?"
    r"|\b(?:has|have|had|there is|there's|without) no)\s*[`'\"]?$", re.IGNORECASE)
_TRIES_BEFORE = re.compile(r"\b(?:tries|tried|trying) to (?:load|open|dlopen|find)\s*[`'\"]?$", re.IGNORECASE)
_MISSING_AFTER = re.compile(r"[`'\"]?\s+(?:is\s+|was\s+|are\s+)?(?:not found|missing)", re.IGNORECASE)
_BUT_AFTER = re.compile(r"[`'\"]?,?\s+but\b", re.IGNORECASE)
_LIBRARY_NAMES = {"cublaslt": "cublasLt"}
# "works in tf 2.15 ... fails in 2.16", "upgrading from TensorFlow 2.15 to 2.16": the release the code
# worked with, and the one in hand (checks/packages.py judges a move across Keras 2 -> 3)
_WORKED = gated(re.compile(
    r"\bwork(?:s|ed|ing)?(?: \w+){0,2} (?:in|with|on|under) (?:tensorflow|tf) ?v?(?P<was>2\.\d{1,2})(?:\.\d{1,2})?\b"
    r".{0,80}?(?:tensorflow|tf) ?v?(?P<now>2\.\d{1,2}(?:\.\d{1,2})?)\b"
    r"|\bupgrad\w* from (?:tensorflow|tf) ?v?(?P<was2>2\.\d{1,2})(?:\.\d{1,2})?\b[^.]{0,20}? to "
    r"(?:tensorflow |tf )?v?(?P<now2>2\.\d{1,2}(?:\.\d{1,2})?)\b", re.IGNORECASE))
# "with MirroredStrategy the loss becomes NaN": the user's own multi-GPU run gave wrong numbers, a
# result like tfdoctor's multi-device recipe's wrong all-reduce (checks/smoke_perf.py judges both)
_MULTI_GPU_NAN = gated(re.compile(
    r"(?:MirroredStrategy|multi-?gpu|multiple gpus|pairs? of gpus)[^\n]{0,80}\bnan\b"
    r"|\bnan\b[^\n]{0,80}(?:MirroredStrategy|multi-?gpu|multiple gpus|pairs? of gpus)", re.IGNORECASE))
# "strategy = tf.distribute.MirroredStrategy()", "training on multiple GPUs": TensorFlow on several
# GPUs at once (the strategies of tf.distribute that span GPUs; OneDeviceStrategy and TPUStrategy do
# not). A fact of what the user runs, which decides what to ask first (asks.py), never a cause.
_MULTI_GPU = gated(re.compile(
    r"\b(?:MultiWorker)?MirroredStrategy\b|\bCentralStorageStrategy\b|\bmulti-?gpus?\b"
    r"|\b(?:multiple|several) (?:NVIDIA )?gpus\b", re.IGNORECASE))
# "on Google Colab", "my colab notebook", `from google.colab import drive`: TensorFlow runs on Colab,
# whose GPU runtime is set up for the TensorFlow it preinstalls (checks/tensorflow.py hosted-tf). Not
# a link (colab.research.google.com, googlecolab/colabtools): tracker templates ask for a Colab gist.
_COLAB = gated(re.compile(r"(?<![\w/.-])(?:google[ .])?colab(?:oratory)?\b(?![./])", re.IGNORECASE))
# "tfjs-node-gpu 4.22.0", "@tensorflow/tfjs-node", ".../node_modules/@tensorflow/tfjs-node-gpu/lib/...":
# TensorFlow.js in Node.js, whose native addon loads the libtensorflow it downloaded; the ticket's
# TensorFlow is that one, not a Python package (asks.py asks for what Node.js shows)
_TFJS = gated(re.compile(r"(?<![\w-])tfjs-node(?:-gpu)?(?![\w-])", re.IGNORECASE))
# "a first-time delay of 90-120 seconds when we create the session", "takes 20 minutes to start":
# how long each start of GPU work takes, as the user timed it (checks/gpu.py gpu-slow-start judges
# it against the build's architectures, as it judges a live run's device creation time)
_START_DELAY = gated(re.compile(
    r"\b(?:first[- ]time|startup|start-up|initial|warm-?up) delay of (?:about |around |over |more than )?"
    r"(?P<n>\d+(?:\.\d+)?)(?:\s*-\s*\d+)? ?(?P<u>seconds|secs?|minutes|mins?|hours?)\b"
    r"|\btakes? (?:about |around |over |more than |almost |nearly )?(?P<n2>\d+(?:\.\d+)?)(?:\s*-\s*\d+)? ?"
    r"(?P<u2>seconds|secs?|minutes|mins?|hours?) to (?:start|initiali[sz]e|create the session|warm up)\b",
    re.IGNORECASE))
_SECONDS = {"s": 1, "m": 60, "h": 3600}
# "there is no wheel for tensorflow-text 2.13", "tensorflow-io has no wheels for Python 3.12": a
# package the user says pip cannot install (checks/packages.py companion-wheel judges a
# companion's; pip's own "No matching distribution found" is the log's, not this)
_NO_WHEEL = gated(re.compile(
    r"\bno (?:binary )?(?:wheels?|distributions?)\b[^\n]{0,80}?(?<![\w-])(?P<p>tensorflow[-/_][a-z][a-z_-]*[a-z])"
    r"|(?<![\w-])(?P<q>tensorflow[-_][a-z][a-z_-]*[a-z]) (?:has|publishes|ships|provides) no "
    r"(?:binary )?(?:wheels?|distributions?)\b", re.IGNORECASE))
# "pip install tensorflow-gpu==2.12.0rc0": the requirements a ticket asks pip for (a command the user
# ran, a fact; checks/tensorflow.py judges them against what PyPI has)
_PIP_INSTALL = gated(re.compile(
    r"(?:^|[\s`$>!%])(?:pip3?|python3?\s+-m\s+pip|uv\s+pip)\s+install\s+(?P<args>[^\n`#;|&]+)", re.IGNORECASE))
# a command commented out ("# RUN pip install tensorflow-gpu==2.8.0" in a Dockerfile, "# pip install
# ..." in a script): not run
_COMMENTED = re.compile(r"\s*#+\s*(?:RUN\s+|\$\s*|!)?(?:pip3?|python3?\s+-m\s+pip|uv\s+pip)\s", re.IGNORECASE)
_REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,.-]+\])?(?:[=<>!~]=?[\w.*+!]+(?:,[=<>!~]=?[\w.*+!]+)*)?")
_CONDA = gated(re.compile(r"\bconda (?:install|create|env|activate)\b|\bminiconda|\banaconda\b", re.IGNORECASE))


_PACKAGE_KINDS = frozenset(f"python.package:{name}" for name in ("keras", "numpy", "protobuf"))
_PROSE_LINE = 2000
"""Longer cleaned lines are no one's words (a pasted blob): not read."""

# A program's own output (_PROGRAM_LINE) wherever this finds something in a raw line: no part of
# what clean takes off a line can be part of a match.
_PROGRAM_RAW = re.compile(r"\.(?:cc|cpp|h|py):\d+\]")
# pip's command anywhere in a folded raw line: wherever _PIP_INSTALL finds one in the cleaned line
# (whose "^" may be just after a dmesg timestamp's "]" in the raw line). Case-sensitive over the
# folded line (what IGNORECASE matches to a lowercase letter, folded() lowers to it): re skips the
# positions no literal starts at.
_PIP_IN_FOLDED = re.compile(r"(?:pip3?|python3?\s+-m\s+pip|uv\s+pip)\s+install\s+[^\n`#;|&]")


@dataclass(frozen=True, slots=True)
class _Finder:
    """The lines one claim's search can find something in, searched for in the raw lines: a
    raw line holds its cleaned line with a line break, whitespace, "]" or ">" on either side
    (clean takes off only a prefix ending so, and trailing whitespace), which every boundary and
    look-around of the claim patterns reads like the line's ends; so `search` finds something in
    a raw line wherever the pattern does in its cleaned line."""

    search: Callable[[str], object]
    options: tuple[tuple[Need, ...], ...]
    """A line search finds something in holds, for one of the options, one literal of each of its
    needs (tfdoctor.textgate.Need); () for no literal needed."""
    kinds: frozenset[str]
    """The kinds of claim it leads to; empty: never all done (one per pip install or library)."""
    on_folded: bool = False
    """search reads the folded line (textgate.folded), not the raw one."""

    @classmethod
    def of(cls, gate: Gated, kinds: Iterable[str], needs_of: Gated | None = None,
           search: re.Pattern[str] | None = None, on_folded: bool = False) -> _Finder:
        """The gated pattern's search (or search's), on lines holding what needs_of's (by
        default the gated pattern's) matches need."""
        needs, alts = (needs_of or gate).needs, (needs_of or gate).alternatives
        options = tuple((*needs, *alt) for alt in alts) if alts else (needs,) if needs else ()
        return cls((search or gate.pattern).search, options, frozenset(kinds), on_folded)


def _one_package(name: str) -> _Finder:
    """_PACKAGE's search, on the lines naming one package (a claim per package name)."""
    return _Finder(_PACKAGE.pattern.search, ((frozenset({(name, True)}),),), frozenset({f"python.package:{name}"}))


_WSL_FINDER = _Finder.of(_WSL, ())
_ANY_WSL = re.compile("wsl", re.IGNORECASE)
"""In every line _WSL finds something in (the ticket's text is searched for it first: its folded
copy, 4 bytes a character for some tickets, was a hundred MB)."""
_FINDERS = (
    _Finder.of(_WORKED, ("intent.worked_with", "tensorflow.version")),
    _Finder.of(_TF, ("tensorflow.version",)),
    *(_one_package(name) for name in ("keras", "numpy", "protobuf")),
    _Finder.of(_PY, ("python.version",)),
    _Finder.of(_WSL, ("platform.is_wsl", "platform.system", "platform.wsl_version")),
    _Finder.of(_WIN, ("platform.system",)),
    _Finder.of(_LINUX, ("platform.system", "platform.distro")),
    _Finder.of(_MAC, ("platform.system",)),
    _Finder.of(_CUDA, ("toolkit.claimed_version",)),
    _Finder.of(_CUDNN, ("toolkit.claimed_cudnn",)),
    _Finder.of(_DRIVER, ("driver.driver_version",)),
    _Finder.of(_GPU, ("intent.gpu",)),
    # a bare model counts only beside _GPU_WORDS: on lines holding one of its words
    _Finder.of(_BARE_MODEL, ("intent.gpu",), needs_of=_GPU_WORDS),
    _Finder.of(_JETSON, ("platform.machine", "platform.system", "intent.gpu")),
    _Finder.of(_AND_CUDA, ("intent.and_cuda",)),
    _Finder.of(_CPU_BUILD, ("tensorflow.is_cuda_build",)),
    _Finder.of(_CONDA, ("python.conda",)),
    _Finder.of(_MULTI_GPU_NAN, ("run.multi_gpu_wrong",)),
    _Finder.of(_MULTI_GPU, ("intent.multi_gpu",)),
    _Finder.of(_COLAB, ("platform.hosted",)),
    _Finder.of(_TFJS, ("intent.binding",)),
    _Finder.of(_START_DELAY, ("intent.start_seconds",)),
    _Finder.of(_NO_WHEEL, ()),
    _Finder.of(_PIP_INSTALL, (), search=_PIP_IN_FOLDED, on_folded=True),
    _Finder.of(_LIBRARY_MISSING, ()),
)
"""What each search of _claims needs, and the claims it leads to (_GPU_WORDS's generic "GPU":
_GPU_WORDS_FINDER)."""
_GPU_WORDS_FINDER = _Finder.of(_GPU_WORDS, ("intent.gpu",))
_CLAIM_GATE = Gate((_TF, _PACKAGE, _PY, _WSL, _WIN, _LINUX, _MAC, _CUDA, _CUDNN, _GPU, _GPU_WORDS, _JETSON,
                    _AND_CUDA, _CONDA, _CPU_BUILD, _DRIVER, _LIBRARY_MISSING, _WORKED, _MULTI_GPU_NAN, _MULTI_GPU, _START_DELAY, _COLAB, _TFJS,
                    _NO_WHEEL, _PIP_INSTALL))
"""Every pattern a finder's search needs the words of: a line holding none of their keys is
found by no finder (where such lines are most, they are left out before the finders' words are
looked for)."""


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """The first claim of each kind (of each package, for package versions); a GPU's model
    wins over an earlier bare "GPU"."""
    done: set[str] = set()
    generic: Observation | None = None

    def live() -> list[_Finder]:
        """The searches that can still lead to a claim not yet made."""
        found = [f for f in _FINDERS if not f.kinds or not f.kinds <= done]
        if generic is None and "intent.gpu" not in done:
            found.append(_GPU_WORDS_FINDER)
        return found

    # Only the lines where a search of a claim not yet made finds something are read, found a
    # chunk of lines at a time in C: cleaning, folding and asking a dozen patterns of every line
    # a claim's words are on (every line of a ticket naming the GPU) made long tickets slow
    # (issue 21). A line none of them finds anything in makes no claim that is not made yet.
    readable = _Readable(lines)
    # Where a claim's word is on few of the lines, those lines are found first (one search of the
    # text for all the words, over its distinct lines: a test of each finder's words over the
    # whole text costs more); where they are on most, every line is left to the finders.
    keyed = gated_lines(lines, _CLAIM_GATE.few_lines_in) if readable.joined else None
    # "wsl2 in windows 11": Windows hosts WSL, whose TensorFlow is Linux's, wherever it is said
    wsl = _ANY_WSL.search(_ticket(lines)[0]) is not None and any(
        _WSL.search(line, folded(line)) for _, line in readable.prose(_hits(readable, lambda: [_WSL_FINDER])))
    for number, line in readable.prose(_hits(readable, live, None if keyed is None else sorted(keyed))):
        for path, value in _claims(line, folded(line), done):
            if wsl and (path, value) == ("platform.system", "Windows"):
                continue
            if path == "intent.gpu" and value == "GPU":
                generic = generic or Observation(path, value, number, NAME)
                continue
            # a package or a library: one claim per name
            kind = f"{path}:{value[0]}" if isinstance(value, tuple) else \
                f"{path}:{value}" if path == "intent.no_wheel" else path
            if kind not in done:
                done.add(kind)
                yield Observation(path, value, number, NAME)
    if generic is not None and "intent.gpu" not in done:
        yield generic


class _Readable:
    """The ticket's lines as prose reads them: those over MAX_LINE, or over _PROSE_LINE once
    cleaned, blank (a search costs at most a bounded line)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        # The lines over _PROSE_LINE found in the joined text (re finds each line break in C; a
        # len per line costs 0.2 s on four million lines), the few then cleaned to see.
        text, over_max, _low, _memo = _ticket(lines)
        long: list[int] = [0] if lines and len(lines[0]) > _PROSE_LINE else []
        self.joined = text.count("\n") + 1 == len(lines)
        """Whether the ticket's joined text has one line per line (none holds a line break, as
        none from splitlines does)."""
        if not self.joined:
            long = list(compress(range(len(lines)), map(_PROSE_LINE.__lt__, map(len, lines))))
        else:
            breaks = last = 0  # line breaks before last
            for m in _LONG_LINE.finditer(text):  # (m starts with the line break before the line)
                breaks += text.count("\n", last, m.start())
                last = m.start()
                long.append(breaks + 1)
        self.blank = sorted({*over_max, *(i for i in long if len(clean(lines[i])) > _PROSE_LINE)})

    def chunk(self, start: int, end: int, keyed: list[int] | None) -> tuple[Sequence[int], list[str], str]:
        """The indexes of the lines of start:end to search (of keyed, if given), without the
        unreadable ones and a program's output; those lines, and their text."""
        lines = self.lines
        at: Sequence[int]
        if keyed is None:
            at, part = range(start, end), list(lines[start:end])
        else:
            at = keyed[bisect_left(keyed, start) : bisect_left(keyed, end)]
            part = list(map(lines.__getitem__, at))
        blank = self.blank[bisect_left(self.blank, start) : bisect_left(self.blank, end)]
        if blank:
            at = list(filterfalse(set(blank).__contains__, at))
            part = list(map(lines.__getitem__, at))
        # a log's lines: never someone's words (and slow to search)
        bracket = list(compress(at, map(contains, part, repeat("]"))))
        if bracket:
            program = set(compress(bracket, map(_PROGRAM_RAW.search, map(lines.__getitem__, bracket))))
            if program:
                at = list(filterfalse(program.__contains__, at))
                part = list(map(lines.__getitem__, at))
        return at, part, "\n".join(part)

    def prose(self, indexes: Iterable[int]) -> Iterator[tuple[int, str]]:
        """(number, cleaned line) of the lines of indexes that are someone's words."""
        lines = self.lines
        for i in indexes:
            raw = lines[i]
            if len(raw) > MAX_LINE:
                continue
            line = clean(raw)
            if line and len(line) <= _PROSE_LINE and not _PROGRAM_LINE.search(line, folded(line)):
                yield i + 1, line


_LONG_LINE = re.compile(rf"\n[^\n]{{{_PROSE_LINE + 1}}}")
_FIRST_CHUNK, _CHUNK = 512, 1 << 16
"""Lines searched at a time: few at first (most claims are made in a ticket's first lines, and
their searches stop), more later."""


def _hits(readable: _Readable, live: Callable[[], list[_Finder]], keyed: list[int] | None = None) -> Iterator[int]:
    """Ascending indexes of the lines where a finder live() gives finds something, live() asked
    before each chunk (a finder whose claims are all made before its chunk is not searched)."""
    n, start, size = len(readable.lines), 0, _FIRST_CHUNK
    while start < n:
        finders = live()
        if not finders:
            return
        end = min(n, start + size)
        at, part, text = readable.chunk(start, end, keyed)
        chunk = _Chunk(part, text)
        found: set[int] = set()
        for finder in finders:
            candidates = chunk.holding(finder.options)
            if candidates:
                lines = chunk.folded_lines() if finder.on_folded else chunk.lines
                found.update(compress(candidates, map(finder.search, map(lines.__getitem__, candidates))))
        for i in sorted(found):
            yield at[i]
        start, size = end, min(size * 2, _CHUNK)


class _Chunk:
    """Lines searched together: which hold a literal, found in C."""

    def __init__(self, lines: list[str], text: str) -> None:
        self.lines, self.text = lines, text
        self._low: tuple[str, list[str]] | None = None
        self._where: dict[tuple[str, bool], list[int]] = {}

    def folded_lines(self) -> list[str]:
        return self._folded()[1]

    def _folded(self) -> tuple[str, list[str]]:
        if self._low is None:
            text = folded(self.text)
            lines = text.split("\n")
            if len(lines) != len(self.lines):  # (a line holding a line break: not from splitlines)
                lines = list(map(folded, self.lines))
            self._low = (text, lines)
        return self._low

    def holding(self, options: tuple[tuple[Need, ...], ...]) -> Sequence[int]:
        """Ascending indexes of the lines that hold, for one option, a literal of each need."""
        if not options:
            return range(len(self.lines))
        found: set[int] = set()
        for needs in options:
            first, *rest = needs
            at = self._union(first)
            for need in rest:
                if not at:
                    break
                at = self._among(need, at)
            found.update(at)
        return sorted(found)

    def _union(self, need: Need) -> list[int]:
        parts = [self._holding(key) for key in need]
        parts = [p for p in parts if p]
        if len(parts) <= 1:
            return parts[0] if parts else []
        return sorted(set().union(*parts))

    def _holding(self, key: tuple[str, bool]) -> list[int]:
        """Indexes of the lines holding the literal (of the folded lines if case-insensitive)."""
        at = self._where.get(key)
        if at is None:
            literal, icase = key
            text, lines = self._folded() if icase else (self.text, self.lines)
            at = list(compress(range(len(lines)), map(contains, lines, repeat(literal)))) if literal in text else []
            self._where[key] = at
        return at

    def _among(self, need: Need, at: list[int]) -> list[int]:
        """The lines of at that hold a literal of need."""
        kept: set[int] = set()
        for literal, icase in need:
            lines = self.folded_lines() if icase else self.lines
            kept.update(compress(at, map(contains, map(lines.__getitem__, at), repeat(literal))))
        return sorted(kept)


def _claims(line: str, low: str, done: set[str]) -> Iterator[tuple[str, object]]:
    """What the line claims, skipping the searches whose every kind is already done (recognise
    keeps only the first claim of a kind)."""
    if "intent.worked_with" not in done:
        worked = _WORKED.search(line, low)
        if worked:
            yield "intent.worked_with", worked.group("was") or worked.group("was2")
            yield "tensorflow.version", worked.group("now") or worked.group("now2")
    if "tensorflow.version" not in done:
        tf = _TF.search(line, low)
        if tf:
            yield "tensorflow.version", tf.group("v")
    if not _PACKAGE_KINDS <= done:
        for package in (_PACKAGE.pattern.finditer(line) if _PACKAGE.could_match(line, low) else ()):
            yield "python.package", (package.group("n").lower(), package.group("v"))
    if "python.version" not in done:
        py = _PY.search(line, low)
        if py:
            yield "python.version", py.group("v")
    if not {"platform.is_wsl", "platform.system", "platform.wsl_version"} <= done:
        wsl = _WSL.search(line, low)
        if wsl:
            yield "platform.is_wsl", True
            yield "platform.system", "Linux"
            if wsl.group("v"):
                yield "platform.wsl_version", int(wsl.group("v"))
        elif _WIN.search(line, low):
            yield "platform.system", "Windows"
    if not {"platform.system", "platform.distro"} <= done:
        linux = _LINUX.search(line, low)
        if linux:
            yield "platform.system", "Linux"
            yield "platform.distro", " ".join(p for p in (linux.group("d"), linux.group("v")) if p)
    if "platform.system" not in done and _MAC.search(line, low):
        yield "platform.system", "Darwin"
    if "toolkit.claimed_version" not in done:
        cuda = _CUDA.search(line, low)
        if cuda and (_MINE.search(line, low) or not _NOT_INSTALLED.search(line, low)):
            yield "toolkit.claimed_version", cuda.group("v")
    if "driver.driver_version" not in done:
        driver = _DRIVER.search(line, low)
        if driver and not _DRIVER_NEEDED.search(line, low):
            yield "driver.driver_version", driver.group("v")
    if "toolkit.claimed_cudnn" not in done:
        cudnn = _CUDNN.search(line, low)
        if cudnn and not _NOT_INSTALLED.search(line, low):
            yield "toolkit.claimed_cudnn", cudnn.group("v")
    if "intent.gpu" not in done:
        gpu = _GPU.search(line, low) or (_BARE_MODEL.search(line, low) if _GPU_WORDS.search(line, low) else None)
        if gpu:
            yield "intent.gpu", gpu.group("g")
        elif _GPU_WORDS.search(line, low):
            yield "intent.gpu", "GPU"
    if not {"platform.machine", "platform.system", "intent.gpu"} <= done and _JETSON.search(line, low):
        yield "platform.machine", "aarch64"
        yield "platform.system", "Linux"
        yield "intent.gpu", "Jetson"
    if "intent.and_cuda" not in done and _AND_CUDA.search(line, low):
        yield "intent.and_cuda", True
    if "tensorflow.is_cuda_build" not in done and _CPU_BUILD.search(line, low):
        yield "tensorflow.is_cuda_build", False
    if "python.conda" not in done and _CONDA.search(line, low):
        yield "python.conda", True
    if "run.multi_gpu_wrong" not in done and _MULTI_GPU_NAN.search(line, low):
        yield "run.multi_gpu_wrong", True
    if "intent.multi_gpu" not in done and _MULTI_GPU.search(line, low):
        yield "intent.multi_gpu", True
    if "intent.binding" not in done and _TFJS.search(line, low):
        yield "intent.binding", "tfjs-node"
    if "platform.hosted" not in done and _COLAB.search(line, low):
        yield "platform.hosted", "Google Colab"
    if "intent.start_seconds" not in done:
        delay = _START_DELAY.search(line, low)
        if delay:
            unit = (delay.group("u") or delay.group("u2")).lower()
            yield "intent.start_seconds", float(delay.group("n") or delay.group("n2")) * _SECONDS[unit[0]]
    for stated in (_NO_WHEEL.pattern.finditer(line) if _NO_WHEEL.could_match(line, low) else ()):
        yield "intent.no_wheel", re.sub(r"[/_]", "-", (stated.group("p") or stated.group("q")).lower())
    pip = _PIP_INSTALL.search(line, low)
    if pip and not _COMMENTED.match(line):
        args = [a.strip("'\"") for a in pip.group("args").split()[:20] if not a.startswith("-")]
        # a command line gives every requirement; inside a sentence only the first is surely one
        # ("pip install tensorflow==2.6.0 brought in keras")
        # (a notebook's "!pip install ..." is one; a bare version among the words is a sentence's)
        command = strip_prompt(line).lower().lstrip("!%").startswith(("pip", "python", "uv ")) \
            and not any(a[:1].isdigit() for a in args)
        wanted = tuple(a for a in (args if command else args[:1]) if _REQUIREMENT.fullmatch(a))
        if wanted:
            yield "intent.pip_install", wanted
    for lib in (_LIBRARY_MISSING.pattern.finditer(line) if _LIBRARY_MISSING.could_match(line, low) else ()):
        before, after = line[max(0, lib.start() - 80):lib.start()], line[lib.end():lib.end() + 40]
        if not (_MISSING_BEFORE.search(before) or _MISSING_AFTER.match(after)
                or (_TRIES_BEFORE.search(before) and _BUT_AFTER.match(after))):
            continue
        name = lib.group("n").lower()
        name = _LIBRARY_NAMES.get(name, name)
        prefix = "lib" if lib.group("lib") else ""
        yield "library.missing", (name, prefix + name + lib.group("s")[len(prefix) + len(name):])
