"""Shared line handling for the recognisers: what a pasted line looks like once the paste is undone.

Tickets arrive with Windows line endings, Markdown quote markers, dmesg / syslog / ISO timestamps
and shell prompts in front of the text a tool printed. `clean` removes what can never be part of
the output; `strip_prompt` removes a prompt so a command can be compared with what was typed.
Every pattern here is anchored and bounded, so a line costs time linear in its length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

MAX_LINE = 20_000
"""Lines longer than this are no tool's output (a minified blob, a base64 paste): skipped unread."""

# "2023-06-30 11:07:05.123 ", "2024-01-01T00:00:00.0000000Z " (CI logs), "[ 7386.259769] " (dmesg),
# "[Mon Jun 30 11:07:05 2023] " (dmesg -T), "Jun 30 11:07:05 gpu-0 " (syslog / journalctl; the
# "kernel:" that follows is kept: kernel_log reads it).
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?:?\s+")
_DMESG = re.compile(r"\[\s*\d{1,10}\.\d{1,9}\]\s?|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d [\d:]{8} \d{4}\]\s?")
_SYSLOG = re.compile(r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} [\w.-]{1,100} ")
_MONTHS = frozenset("JFMASOND")

_PROMPT = re.compile(
    r"\s*(?:\([^()\s]{1,80}\)\s*)?"  # (venv) / (base)
    r"(?:[\w.-]{1,64}@[\w.-]{1,64}(?::[^\s$#>]{0,300})?\s?[$#%>]"  # user@host:~/dir$
    r"|PS [^>]{0,300}>"  # PowerShell
    r"|[A-Za-z]:\\[^>]{0,300}>"  # cmd.exe
    r"|>>>|In \[\d{1,6}\]:"  # Python REPL, IPython
    r"|[$#%>❯➜])\s+"
)


def clean(line: str) -> str:
    """The line as the tool printed it: no line ending, quote marker or leading timestamp."""
    s = line.rstrip()
    if not s:
        return s
    while s[0] == ">" and s[:2] in ("> ", ">") and not s.startswith(">>>"):
        s = s[1:].lstrip(" ")
        if not s:
            return s
    c = s[0]
    if c.isdigit():
        m = _ISO.match(s)
        if m:
            s = s[m.end() :]
    elif c == "[":
        m = _DMESG.match(s)
        if m:
            s = s[m.end() :]
    elif c in _MONTHS and len(s) > 16 and s[3] == " ":
        m = _SYSLOG.match(s)
        if m:
            s = s[m.end() :]
    return s


def strip_prompt(s: str) -> str:
    """The text after a shell / REPL prompt ("$ ", "(venv) user@host:~$ ", "PS C:\\> ", ">>> ")."""
    m = _PROMPT.match(s)
    return s[m.end() :].strip() if m else s.strip()


def has_prompt(s: str) -> bool:
    """Whether the line starts with a shell / REPL prompt."""
    return _PROMPT.match(s) is not None


# Every recogniser reads the same ticket; cleaning it once instead of thirteen times is most of
# their cost on a large ticket. The entry holds the sequence itself, so its id cannot be reused.
_last: tuple[Sequence[str] | None, int, list[str | None]] = (None, 0, [])


def cleaned(lines: Sequence[str]) -> list[str | None]:
    """Each line cleaned, or None where it is over MAX_LINE (the last ticket's result is reused)."""
    global _last
    seen, length, out = _last
    if seen is lines and length == len(lines):
        return out
    out = [clean(raw) if len(raw) <= MAX_LINE else None for raw in lines]
    _last = (lines, len(lines), out)
    return out


def forget() -> None:
    """Drop the last ticket's cleaned lines (cleaned() keeps them for the next recogniser)."""
    global _last
    _last = (None, 0, [])


def numbered(lines: Sequence[str]) -> Iterator[tuple[int, str]]:
    """(1-based line number, cleaned line) for every line not over MAX_LINE."""
    for number, s in enumerate(cleaned(lines), 1):
        if s is not None:
            yield number, s


def is_fence(s: str) -> bool:
    """A Markdown code fence ("```", "```shell", "~~~")."""
    t = s.lstrip()
    return t.startswith("```") or t.startswith("~~~")


_SEPARATORS = re.compile(r"[-_.]+")


def normalise(name: str) -> str:
    """PEP 503 normalised distribution name."""
    if "_" not in name and "." not in name and "--" not in name:  # most names: a pip list has many
        return name.lower()
    return _SEPARATORS.sub("-", name).lower()
