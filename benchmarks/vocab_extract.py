"""Pure extractors for the vocabulary miner: message templates out of headers, Python and binaries.

Each function takes text (or a set of strings) and returns `Entry` dicts; nothing here reads the
machine, so the tests and `mine_vocabulary.py --check` run the same code on whatever is present.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator

# printf conversions (with flags, width, precision, length), Go-style %v, and Python's {} / {name}.
PLACEHOLDER = re.compile(
    r"%[-+#0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|z|j|t|L|q)?[sdiuxXfFgGeEpcvra]|\{[A-Za-z0-9_.!:]*\}"
)
_WORD = re.compile(r"[A-Za-z0-9_]{4,}")

# What makes a message part of the GPU stack (binary strings and Python sources alike).
GPU_WORDS = re.compile(
    r"CUDA|[Cc]uda\b|cuda_|\bGPU|\bgpu\b|[Cc]u[Dd][Nn][Nn]|cuBLAS|cublas|cuFFT|cufft|cuSolver|cusolver|"
    r"cusparse|cuSPARSE|NCCL|nccl|ptxas|\bPTX\b|libdevice|nvlink|nvjitlink|nvJitLink|TensorRT|NVML|"
    r"compute capability|libcuda|NVIDIA|nvidia|dlopen|\bdriver\b"
)
# Debug dumps and flag descriptions that happen to name the GPU: not messages a user meets.
_NOT_A_MESSAGE = re.compile(
    r"^(?:If (?:true|set|non-empty)|Use |Whether |Enable |Disable |Path to |\[Stable\]|"
    r"[A-Za-z]+\{|[a-z_]+\(|// |#|--)|[;{}]\s*$|\b(?:void|const|struct|return)\b|==|&&|->\w"
)
_FAILURE = re.compile(
    r"(?i)fail|error|cannot|can't|could not|couldn't|unable|invalid|not supported|unsupported|"
    r"insufficient|too old|out of memory|exceed|mismatch|not found|missing|not available|denied|"
    r"requires|must be|illegal|bad |corrupt|timeout|timed out|lost|only supported|does not support|"
    r"doesn't match|not suppor|improper|wrong |no device found|incompatible|conflict|not installed"
)


def fragments(text: str) -> list[str]:
    """The literal pieces of a template, as the compiler leaves them in a binary's string table."""
    out = []
    for piece in PLACEHOLDER.split(text.replace("%%", "%")):
        for line in piece.split("\n"):
            if _WORD.search(line):
                out.append(line)
    return out


def fixed_text(text: str) -> str:
    """The template without its placeholders (its length ranks matches: longest fixed text wins)."""
    return PLACEHOLDER.sub("", text)


def guess_level(text: str) -> str:
    """error / info for a template whose logging call is not known (a string found in a binary)."""
    return "error" if _FAILURE.search(text) else "info"


# --- binaries ----------------------------------------------------------------------------------


# A string table entry can start with a few printable bytes of whatever precedes it ("33s?Failed to",
# "@Cuda failure"): drop such a prefix when a capitalised word follows it.
_JUNK = re.compile(r"^(?=[^%\[(\"'])[\x21-\x7e]{0,3}[^A-Za-z0-9\s%\[(\"'](?=[A-Z][A-Za-z]+\b)")


def binary_format_strings(strings: Iterable[str]) -> Iterator[str]:
    """Complete printf-style templates of the GPU stack among a binary's strings."""
    for s in strings:
        s = _JUNK.sub("", s)
        if len(s) < 16 or len(s) > 600 or " " not in s.strip() or not PLACEHOLDER.search(s):
            continue
        if "{" in s or not GPU_WORDS.search(s) or _NOT_A_MESSAGE.search(s.strip()):
            continue
        if sum(c.isalpha() for c in s) < len(s) * 0.45:
            continue
        yield s


class StringIndex:
    """A release's strings, indexed by word, to answer 'is this fragment in the binary?' quickly."""

    def __init__(self, strings: Iterable[str], words: set[str]) -> None:
        self.by_word: dict[str, list[str]] = {w: [] for w in words}
        for s in strings:
            for w in set(_WORD.findall(s)) & words:
                self.by_word[w].append(s)

    def contains(self, fragment: str) -> bool:
        """The fragment is in one string, or is consecutive whole literals of the string table
        (`<< "trying " << "to allocate "`): the first piece ends a string, each next one starts
        (or, merged into a longer string's tail, ends) one, and every piece has 8 characters."""
        if self._one(fragment, lambda s, f: f in s):
            return True
        pieces = re.split(r"(?<=[ .,;:)])(?=\S)", fragment)
        start = 0
        while start < len(pieces):
            for end in range(len(pieces), start, -1):
                piece = "".join(pieces[start:end])
                if not re.search(r"[A-Za-z0-9]", piece):
                    found = True  # punctuation alone (`<< "."`) is shorter than any string kept
                elif len(piece.strip()) < 8:
                    continue  # too short to tell: only a shorter, punctuation-only piece can pass
                elif start == 0:
                    found = self._one(piece, lambda s, f: s.rstrip().endswith(f.rstrip()))
                else:
                    found = self._one(
                        piece,
                        lambda s, f: s.lstrip().startswith(f.strip()) or s.rstrip().endswith(f.rstrip()),
                    )
                if found:
                    start = end
                    break
            else:
                return False
        return True

    def _one(self, fragment: str, test: Callable[[str, str], bool]) -> bool:
        words = _WORD.findall(fragment)
        if not words:
            return True
        anchor = max(words, key=len)
        return any(test(s, fragment) for s in self.by_word.get(anchor, ()))


def anchor_words(texts: Iterable[str]) -> set[str]:
    """Every word of the templates' fragments: what StringIndex indexes the strings by."""
    return {w for t in texts for f in fragments(t) for w in _WORD.findall(f)}


# --- Python sources ----------------------------------------------------------------------------

_LOG_LEVELS = {
    "error": "error",
    "exception": "error",
    "fatal": "error",
    "critical": "error",
    "warning": "warning",
    "warn": "warning",
    "info": "info",
}


def _template_of(node: ast.expr) -> str | None:
    """The message an expression builds, literal text kept and every value turned into {}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}" for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template_of(node.left), _template_of(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _template_of(node.left)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.expr)
    ):
        return _template_of(node.func.value)
    return None


def _call_level(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute):
        if f.attr in _LOG_LEVELS and not (isinstance(f.value, ast.Name) and f.value.id == "self"):
            return _LOG_LEVELS[f.attr]
        return None
    if isinstance(f, ast.Name) and f.id == "warn":
        return "warning"
    return None


def python_messages(source: str, *, literals: bool = False) -> Iterator[tuple[str, str]]:
    """(template, level) of each raise / logging / warnings call of a Python module; with `literals`,
    also every string literal (level from its words): messages built in a variable first, as pip's are."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    # Help texts of command-line options are not messages.
    docstrings |= {id(k.value) for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg == "help"}
    for node in ast.walk(tree):
        if (
            literals
            and isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp))
            and id(node) not in docstrings
        ):
            text = _template_of(node)
            # A message is a sentence: identifiers, option names and type names are not.
            if text and len(text) >= 20 and len(PLACEHOLDER.sub("", text).split()) >= 4:
                yield text, guess_level(text)
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            text = _template_of(node.exc.args[0])
            if text:
                yield text, "error"
        elif isinstance(node, ast.Call) and node.args:
            level = _call_level(node)
            if level:
                text = _template_of(node.args[0])
                if text:
                    yield text, level


def clean_python_template(text: str) -> str:
    """One line per template: Python messages are often wrapped in the source with \\n and indents."""
    return re.sub(r"[ \t]*\n[ \t]*", "\n", text).strip()


# --- C headers ---------------------------------------------------------------------------------


def c_enum_docs(header: str, prefix: str) -> Iterator[tuple[str, str]]:
    """(NAME, first sentence of its doc comment) for each `PREFIX...= value` enumerator of a header."""
    doc = ""
    for m in re.finditer(
        r"/\*\*(.*?)\*/|^\s*(" + prefix + r"[A-Z0-9_]+)\s*(?:[A-Z_]+\s*)?=[^,\n]*,?[^\n]*",
        header,
        re.S | re.M,
    ):
        if m.group(1) is not None:
            doc = " ".join(line.strip(" *") for line in m.group(1).splitlines()).strip()
            continue
        name = m.group(2)
        trailing = re.search(r"/\*\*?<?(.*?)\*/", m.group(0))
        text = trailing.group(1).strip() if trailing else doc
        doc = ""
        first = re.split(r"(?<=\.)\s", re.sub(r"\\(?:ref|p|c)\s+|@\w+.*$|::", " ", text).strip())[0].strip()
        yield name, re.sub(r"\s+", " ", first)
