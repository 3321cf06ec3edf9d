"""TensorFlow's own output: its log lines, tracebacks and device lists.

The known failure lines are smoke/logmap.py's (the same table the smoke child's log is read
with). Besides them: the GPUs TensorFlow registered ("Created device ... name: ..., compute
capability: 7.5"; "Found device 0 with properties: ... name: ... computeCapability: 6.1"), an
empty GPU list printed by `tf.config.list_physical_devices('GPU')`, and what paths in a
traceback give away: the Python version (.../python3.8/site-packages/tensorflow/...) and a
Windows interpreter (C:\\...\\site-packages).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from functools import cache
from itertools import compress
from operator import itemgetter

from tfdoctor.facts import LogCause
from tfdoctor.knowledge import vocab
from tfdoctor.smoke import logmap
from tfdoctor.textgate import ZERO, Gate, digit_blind, literal
from tfdoctor.triage.observe import Observation
from tfdoctor.triage.recognisers._text import (
    EVERY_LINE,
    Trigger,
    Walk,
    gated_lines,
    literal_lines,
    regex_lines,
)

NAME = "tensorflow log"

# Every stretch between two literals is bounded (a device path, a GPU's name: tens of characters):
# with an open-ended one, a 20,000-character line repeating "Found device 0 with properties: name: "
# took 0.1-0.5 s, quadratic in the line (issue 21).
_CREATED = re.compile(
    r"Created (?:TensorFlow )?device \S{0,200}?(?:GPU|gpu):(?P<i>\d+)\b.{0,200}?name: (?P<name>[^,]{1,200})"
    r"(?:, pci bus id: (?P<bus>[0-9a-fA-F:.]+))?(?:, compute capability: (?P<cc>\d+\.\d+))?"
)
_FOUND = re.compile(
    r"Found device (?P<i>\d+) with properties:\s*(?:pciBusID: (?P<bus>\S{1,100})\s+)?name: "
    r"(?P<name>.{1,200}?)\s+computeCapability: (?P<cc>\d+\.\d+)"
)
_FOUND_HEAD = re.compile(r"Found device (?P<i>\d+) with properties:\s*$")
_PROPS = re.compile(
    r"(?:pciBusID: (?P<bus>\S{1,100})\s+)?name: (?P<name>.{1,200}?)\s+computeCapability: (?P<cc>\d+\.\d+)"
)
_GPU_REPR = re.compile(r"PhysicalDevice\(name='/physical_device:GPU:(?P<i>\d+)'")
_EMPTY_LIST = re.compile(
    r"^(?:\[\]|Num GPUs Available:?\s*0|GPUs?:?\s*\[\]|.*list_physical_devices\(.*\).*\[\]\s*$)"
)
_SITE = re.compile(r"[/\\](?:lib[/\\])?python(?P<v>3\.\d{1,2})[/\\](?:site|dist)-packages[/\\]")
# a traceback frame (...\site-packages\pkg) or pip's "Requirement already satisfied: ... in c:\...\site-packages"
_WIN_SITE = re.compile(r"\b[A-Za-z]:\\\S*\\(?:Lib\\)?site-packages(?:\\|\b)", re.IGNORECASE)
_WIN_PY = re.compile(r"\\Python(?P<v>3)(?P<m>\d{1,2})\\", re.IGNORECASE)
# A traceback frame inside a package that needs Keras 2 under TF >= 2.16 (checks/packages.py
# KERAS2_PACKAGES): installed, version not shown.
_SITE_PACKAGE = re.compile(r"site-packages[/\\](?P<p>deepface|tensorflow_hub|gpflow)[/\\]", re.IGNORECASE)
# ... or the user's own `import gpflow` (at a prompt, in a notebook cell): it is installed.
_IMPORT_PACKAGE = re.compile(r"^\s*(?:>>>?\s*|In \[\d*\]:\s*|\$\s*python -c ['\"])?(?:import|from) "
                             r"(?P<p>deepface|tensorflow_hub|gpflow)\b")
# TensorFlow's loader asking for a CUDA DLL ('cudart64_110.dll', 'cudnn64_8.dll') or saying it opened
# one ("Successfully opened dynamic library nvcuda.dll", dso_loader.cc): native Windows
_DLL = re.compile(r"(?:'|\bopened dynamic library )(?:cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|cudnn"
                  r"|cupti|nvinfer|nvcuda)\w*\.dll\b")
_CUDA_NOT_ENABLED = "The requested device appears to be a GPU, but CUDA is not enabled."
_OPENED = re.compile(r"Successfully opened (?:dynamic|CUDA) library (?P<lib>lib\S+?\.so[.\d]*)")
# The CUDA runtime the loader asks for is the one TensorFlow was built with (dso_loader.cc
# GetCudaRuntimeLibrary: TF_CUDART_VERSION), in every release's wording
_CUDART = re.compile(r"(?:Successfully opened (?:dynamic|CUDA) library |Could not (?:load dynamic|dlopen) library ['\"]?"
                     r"|Couldn't open CUDA library )(?P<lib>libcudart\.so\.\d{1,2}(?:\.\d)?|cudart64_\d{2,3}\.dll)")
_LD_PATH = re.compile(r"dlerror: .*?; LD_LIBRARY_PATH: (?P<v>\S*)")
# Besides the lines a log pattern could match, only these lines are read (the literals recognise tests)
_TRIGGER = Trigger(("device", "[]", "Num GPUs Available", "ython", ".dll'", "site-packages", "import", "Successfully opened",
                    "LD_LIBRARY_PATH:", "cudart"))


def recognise(lines: Sequence[str]) -> Iterator[Observation]:
    """Log causes, registered GPUs, an empty GPU list, the Python version and OS from paths."""
    seen_causes: set[tuple[str, str | None]] = set()
    python_seen = windows_seen = ld_seen = cpu_build_seen = cudart_seen = False
    packages_seen: set[str] = set()
    pending_found: str | None = None
    gate, known = _causes()
    # Over the raw lines: a key the cleaned line holds, the raw one holds too (a superset is exact:
    # _cause asks the gates again).
    keyed = gated_lines(lines, gate.lines_in)
    walk = Walk(lines, _TRIGGER if keyed is not None else EVERY_LINE, lambda: pending_found is not None,
                extra=keyed or ())
    for number, line in walk:
        if not line:
            continue
        hit = _cause(line, gate, known) if keyed is None or number - 1 in keyed else None
        if hit and hit not in seen_causes:
            seen_causes.add(hit)
            yield Observation(
                "log.cause", LogCause(id=hit[0], line=line.strip()[:500], subject=hit[1]), number, NAME
            )
        if pending_found is not None:
            props = _PROPS.search(line) if "computeCapability: " in line else None
            if props:
                yield _gpu(pending_found, props.group("name"), props.group("cc"), props.group("bus"), number)
            pending_found = None
        if "device" in line:
            m = _CREATED.search(line) or (_FOUND.search(line) if "computeCapability: " in line else None)
            if m:
                yield _gpu(
                    m.group("i"), m.group("name"), m.groupdict().get("cc"), m.groupdict().get("bus"), number
                )
            else:
                head = _FOUND_HEAD.search(line)
                pending_found = head.group("i") if head else None
        if not cpu_build_seen and _CUDA_NOT_ENABLED in line:
            # the placer's own words for a build without CUDA (colocation_graph.cc: IsGoogleCudaEnabled)
            cpu_build_seen = True
            yield Observation("tensorflow.is_cuda_build", False, number, NAME)
        repr_hit = _GPU_REPR.search(line) if "physical_device:GPU" in line else None
        if repr_hit:
            yield Observation("log.gpu_device", {"index": int(repr_hit.group("i"))}, number, NAME)
        stripped = line.strip()  # _EMPTY_LIST's ".*...\(.*\).*\[\]" is quadratic unless the line can match
        if stripped.startswith(("[]", "Num GPUs Available", "GPU")) or stripped.endswith("[]"):
            empty = _EMPTY_LIST.match(stripped)
        else:
            empty = None
        if empty:
            yield Observation("log.gpu_list", 0, number, NAME)
        if "ython" in line and not python_seen:
            site = _SITE.search(line)
            if site:
                python_seen = True
                yield Observation("python.version", site.group("v"), number, NAME)
        if ".dll" in line and not windows_seen and _DLL.search(line):
            windows_seen = True
            yield Observation("platform.system", "Windows", number, NAME)
        if "site-packages" in line and not windows_seen and _WIN_SITE.search(line):
            windows_seen = True
            yield Observation("platform.system", "Windows", number, NAME)
            py = _WIN_PY.search(line)
            if py and not python_seen:
                python_seen = True
                yield Observation("python.version", f"{py.group('v')}.{py.group('m')}", number, NAME)
        if "site-packages" in line or "import" in line:
            frame = _SITE_PACKAGE.search(line) or _IMPORT_PACKAGE.search(line)
            if frame:
                name = frame.group("p").lower().replace("_", "-")
                if name not in packages_seen:
                    packages_seen.add(name)
                    yield Observation("python.package", (name, "unknown"), number, NAME)
        if "Successfully opened" in line:
            opened = _OPENED.search(line)
            if opened and opened.group("lib").startswith("libcuda.so"):
                yield Observation("log.libcuda_loaded", opened.group("lib"), number, NAME)
        if not cudart_seen and "cudart" in line:
            cudart = _CUDART.search(line)
            if cudart:
                cudart_seen = True
                yield Observation("tensorflow.cudart", cudart.group("lib"), number, NAME)
        if not ld_seen and "LD_LIBRARY_PATH:" in line:
            ld = _LD_PATH.search(line)
            if ld:
                ld_seen = True
                yield Observation("env", ("LD_LIBRARY_PATH", ld.group("v")), number, NAME)


# Wherever logmap.LOG_LINE matches, this does (each branch without what comes before its level
# letter). LOG_LINE's own literals ("]", "ERROR") are on most lines of any log, and the Python
# work per line they let through made a log of short lines slow (issue 21): this regex sorts
# them out in C.
_LOG_LINE_WIDER = re.compile(
    r"[EWF](?: |\d{4} \d\d:\d\d:\d+\.\d+\s+\d+ )[\w./+-]+\.(?:cc|cpp|h|cu):\d+\]|ERROR:tensorflow:"
)


_FEW = 2000
"""Lines (of anchors that need a second word) read without looking for the second word first."""


class _Gates:
    """The lines logmap.recognise can answer: those a pattern of its could match (its causes'
    patterns, its log-format line), and those holding a mined template's rarest head words."""

    def __init__(self) -> None:
        self.patterns = Gate(p for _, p in logmap.PATTERNS)
        words = vocab.anchors()
        # Both in one gate for the whole-text search: one scan of the text instead of two (the
        # anchors' own gate is never searched: not made, its regex compiled for nothing)
        self.both = Gate([*self.patterns.gated, *map(literal, words)]) if words is not None else None
        # Where it keeps many lines, those it keeps for an anchor that needs a second word only are
        # kept where vocab.could_match says so: prose and short lines naming CUDA or TensorFlow
        # (anchors that need "device", "Created") were each read, cleaned and asked of every gate
        # in turn (issue 21).
        self._alone: Gate | None | bool = False  # not made yet
        self.by_digits: dict[str, tuple[object, ...]] = {}
        """Lines with each digit a 0 (textgate.ZERO) -> the reading (_reading) every line alike
        but for its digits shares, as (reading,), or _SEEN, or _ALONE (see _cause)."""

    def alone(self) -> Gate | None:
        """`both` without the anchors that need a second word (made when first needed); None
        when every anchor decides alone, or no line can be ruled out by its words."""
        if self._alone is False:
            groups = vocab.anchor_groups() if self.both is not None else None
            self._alone = (Gate([*self.patterns.gated, *map(literal, groups[0])])
                           if groups is not None and groups[1] else None)
        return self._alone  # type: ignore[return-value]

    def lines_to_search(self, lines: Sequence[str]) -> set[int] | None:
        """Indexes of the lines either gate keeps, found over the whole text at once; None: all."""
        return self.lines_in("\n".join(lines))

    def lines_in(self, text: str) -> set[int] | None:
        """lines_to_search for lines already joined by "\\n": a line where a pattern's key or
        an anchor that decides alone is, or an anchor that needs a second word (with one, where
        such lines are many), or the log format."""
        if self.both is None:
            return None
        keyed = self.both.lines_in(text)
        if keyed is None:
            return None
        logged: set[int] = set()
        _log_lines(text, logged)
        gate = self.alone() if len(keyed) > _FEW else None
        # a second scan, where it may save many lines: none where every line either gate keeps is
        # of the log format (kept whatever the scan finds: a log's warnings)
        if gate is not None and not keyed <= logged:
            # (keys on most lines, and short ones: each distinct line searched, not each position)
            count = text.count("\n") + 1
            alone = gate.lines_in(text, dense=len(keyed) * 2 > count and len(text) < 40 * count)
            if alone is None:
                return None
            maybe = keyed - alone  # lines of anchors that need a second word only
            if len(maybe) > _FEW:
                keyed = alone | _vocab_lines(text, maybe)
        keyed |= logged
        return keyed

    def any_match(self, line: str) -> bool:
        # the pattern gate last: logmap.recognise searches it again on a line it lets through
        return _log_line(line) or vocab.could_match(line) or self.patterns.any_match(line)


def _vocab_lines(text: str, maybe: set[int]) -> set[int]:
    """The lines of maybe (indexes of text's lines) vocab.could_match keeps: the text split a
    chunk at a time. A line it keeps cleaned, it keeps raw: cleaning takes off a prefix that ends
    where a word does. could_match is asked once per distinct line with each digit a 0 (_ZERO:
    lines distinct only by their numbers, "GPU 12 CUDA", are asked once)."""
    out: set[int] = set()
    wanted = sorted(maybe)
    could_match = vocab.could_match
    n, pos, line, k = len(text), 0, 0, 0
    while k < len(wanted):
        end = n if pos + _CHUNK >= n else text.rfind("\n", pos, pos + _CHUNK)
        if end < 0:
            end = text.find("\n", pos + _CHUNK)
            end = n if end < 0 else end
        chunk = text[pos:end]
        count = chunk.count("\n") + 1
        top = line + count
        stop = bisect_left(wanted, top, k)
        if stop > k:
            zeroed = chunk.translate(_ZERO)
            parts = (zeroed if not any(map(zeroed.__contains__, _zeroed_words())) else chunk).split("\n")
            here = wanted[k:stop]
            keys = parts if len(here) == count else _pick(parts, [i - line for i in here])
            verdict = {key: could_match(key) for key in set(keys)}
            out.update(compress(here, map(verdict.__getitem__, keys)))
        k = stop
        if end >= n:
            break
        line, pos = top, end + 1
    return out


# Every digit a 0: could_match reads only words (vocab.WORD's runs of ASCII letters, digits and
# "_"), and a digit for a digit keeps every run where it was, as long, and a word or not; a word
# of its own without a digit is unchanged, and one with a digit changed. Unless the zeroed text
# holds a word could_match looks up with a digit in it, zeroed (that word with its digits zeroed
# is not there), the words it looks up are the same in both lines and it answers the same.
_ZERO = str.maketrans("123456789", "000000000")


@cache
def _zeroed_words() -> tuple[str, ...]:
    """The words could_match looks up that hold a digit, each digit a 0."""
    return tuple(sorted({w.translate(_ZERO) for w in vocab.lookup_words() if any(map(str.isdigit, w))}))


def _pick(parts: list[str], indexes: list[int]) -> list[str]:
    """parts at indexes, in C."""
    if len(indexes) == 1:
        return [parts[indexes[0]]]
    return list(itemgetter(*indexes)(parts))


_CHUNK = 1 << 20


def _log_lines(text: str, out: set[int]) -> None:
    """Add the lines of text where _LOG_LINE_WIDER matches. A line of the log format holds "]"
    or "ERROR:"; where few lines do (prose, a pip list), they are searched one by one instead of
    the whole text (whose every "E", "W" and "F" the regex tries)."""
    if (text.count("]") + text.count("ERROR:")) * 300 > len(text):
        regex_lines(text, _LOG_LINE_WIDER, out)
        return
    found: set[int] = set()
    literal_lines(text, "]", found)
    literal_lines(text, "ERROR:", found)
    lines = text.split("\n") if found else []
    out.update(i for i in found if _LOG_LINE_WIDER.search(lines[i]))


def _log_line(line: str) -> bool:
    """logmap.LOG_LINE.search(line) is not None, quickly where it is not (a search of its own
    costs 20 us on a line of prose)."""
    return (("]" in line or "ERROR:" in line) and _LOG_LINE_WIDER.search(line) is not None
            and logmap.LOG_LINE.search(line) is not None)


_cache: tuple[object, _Gates, dict[str, tuple[str, str | None] | None]] | None = None


def _causes() -> tuple[_Gates, dict[str, tuple[str, str | None] | None]]:
    """The gates before logmap.recognise, and a memo of its answers, both rebuilt when logmap's
    patterns change."""
    global _cache
    if _cache is None or _cache[0] is not logmap.PATTERNS:
        _cache = (logmap.PATTERNS, _Gates(), {})
    return _cache[1], _cache[2]


_SEEN = ("seen",)  # in _Gates.by_digits: a zeroed line met once, its reading not shared
_ALONE = ("alone",)  # ... a zeroed line whose lines may read differently


def _cause(line: str, gate: _Gates, known: dict[str, tuple[str, str | None] | None]) -> tuple[str, str | None] | None:
    """logmap.recognise(line), asked only when the gates say it could answer (searching every
    pattern on every line of a large ticket was most of triage's time, issue 21), and once per
    text: a log repeats its lines once timestamps are cleaned off. Lines alike but for their
    numbers ("step 7", "step 8") are read once, from the second such line on, where the reading
    is digit-blind there (_shared)."""
    if line in known:
        return known[line]
    if len(known) > 4096:  # bounded
        known.clear()
    zeroed = line.translate(ZERO)
    if zeroed == line:
        found = _reading(line, gate)[1]
    else:
        by_digits = gate.by_digits
        if len(by_digits) > 4096:  # bounded
            by_digits.clear()
        shared = by_digits.get(zeroed)
        if shared is None or shared is _ALONE:
            if shared is None:
                by_digits[zeroed] = _SEEN
            found = _reading(line, gate)[1]
        elif shared is _SEEN:
            matched, found = _reading(line, gate)
            by_digits[zeroed] = (found,) if _shared(line, zeroed, gate, matched) else _ALONE
        else:
            found = shared[0]  # type: ignore[assignment]
    known[line] = None if found is None else (found[0], logmap.subject_of(line, found[1]))
    return known[line]


def _reading(line: str, gate: _Gates) -> tuple[bool, tuple[str, logmap.Where] | None]:
    """(whether the gates let the line through, logmap's reading of it then)."""
    if not gate.any_match(line):
        return False, None
    # A warning TensorFlow prints on healthy machines is answered with why it is harmless.
    return True, logmap.reading(line)


def _shared(line: str, zeroed: str, gate: _Gates, matched: bool) -> bool:
    """Whether every line whose digits zeroed are `zeroed` reads as line does (_reading): the
    gates' any_match answers alike there (the log format's patterns are digit-blind, the causes'
    gate is there, vocab.could_match looks up no word with a digit there), and, where they let
    the line through, logmap.reading (logmap.digit_blind_on)."""
    return (_log_format_blind() and not any(map(zeroed.__contains__, _zeroed_words()))
            and gate.patterns.digit_blind_on(line, zeroed)
            and (not matched or logmap.digit_blind_on(line, zeroed)))


@cache
def _log_format_blind() -> bool:
    return digit_blind(_LOG_LINE_WIDER) and digit_blind(logmap.LOG_LINE)


def _gpu(index: str, name: str, cc: str | None, bus: str | None, number: int) -> Observation:
    value: dict[str, object] = {"index": int(index), "name": name.strip()}
    if cc:
        value["compute_capability"] = cc
    if bus:
        value["pci_bus_id"] = bus
    return Observation("log.gpu_device", value, number, NAME)
