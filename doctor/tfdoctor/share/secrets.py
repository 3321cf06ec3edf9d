"""What a secret looks like: token formats, passwords in URLs, key=value pairs, high-entropy words.

Redaction is by allowlist first (only allowlisted environment variables enter the facts); these
patterns are the second line, applied to every string that does leave: an allowlisted variable
can still carry a token (a path with a token in it, a URL with a password).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

REDACTED = "<redacted>"

# Every pattern here runs on values an attacker may choose (a 1 MB LD_LIBRARY_PATH). Each one
# starts only at the beginning of a run of the characters its repetition takes (a lookbehind
# that excludes them), and what follows a repetition cannot be one of its characters, so a
# failed match gives back at most one run once: the scrub is linear (Python 3.10 has no
# possessive quantifiers to say so directly). tests/hostile/test_redaction.py pins it.

# Credentials inside URLs: scheme://user:password@host or scheme://token@host (RFC 3986
# userinfo). Both parts go: the user name identifies a person too.
_URL_USERINFO = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*://)[^/\s@:]+(?::[^/\s@]*)?@")

# Published token formats (each vendor documents its prefix so scanners can find leaks):
# GitHub ghp_/gho_/ghu_/ghs_/ghr_ and github_pat_, Hugging Face hf_, AWS access key ids
# AKIA/ASIA, Slack xox?-, OpenAI/Anthropic-style sk-, GitLab glpat-, Google AIza and ya29.,
# npm_, PyPI pypi-, and JSON Web Tokens (three base64url parts, the first two starting "eyJ").
_TOKENS = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}|"
    r"(?:AKIA|ASIA)[A-Z0-9]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{20,}|"
    r"glpat-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}|"
    r"npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,}|"
    r"(?<![_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
)

_SECRET_WORD = (
    r"(?:token|secret|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|private[_-]?key|"
    r"credentials?|auth)"
)
_SECRET_IN_NAME = re.compile(r"(?i)" + _SECRET_WORD)

# name=value or name: value where the name says it is a secret (token=..., PASSWORD: ...): the
# name is matched whole (from the start of its run), the secret word looked for inside it after.
_NAME_SEP = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]+)\s*[=:]\s*[\"']?")
_VALUE = re.compile(r"(?!/)[^\s\"'&;,]{4,}")
_BEARER = re.compile(r"(?i)(?<![A-Za-z0-9_])(bearer|basic)\s+[A-Za-z0-9._~+/-]{8,}=*")

# Long words of mixed case and digits (base64 keys, AWS secret keys) or long hex (API keys such
# as Weights & Biases'); ordinary paths, versions and library names never look like this.
_MIXED = re.compile(
    r"(?<![A-Za-z0-9+=_-])(?!(?:MIG-)?GPU-|MIG-)[A-Za-z0-9+=_-]{32,}(?![A-Za-z0-9+=_-])"
)
# AWS secret access keys: exactly 40 base64 characters, "/" and "+" included.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_HEX = re.compile(r"(?<![A-Za-z0-9])(?:[0-9a-f]{32,}|[0-9A-F]{32,})(?![A-Za-z0-9])")

_SECRET_NAME = re.compile(
    r"(?i)" + _SECRET_WORD + r"|(?:^|_)(?:key|pass|pw|creds?|jwt)(?:$|_)|session|cookie"
)
_NOT_SECRET_NAMES = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY"})


def _mixed_case_digits(word: str) -> bool:
    return (
        any(c.islower() for c in word)
        and any(c.isupper() for c in word)
        and any(c.isdigit() for c in word)
    )


def _mangled(word: str) -> bool:
    """A namespaced C++ symbol as the Itanium ABI mangles it (the dynamic loader's "undefined
    symbol: _ZN4absl12lts_2022062320raw_logging_internal21internal_log_functionB5cxx11E"): "_ZN",
    two or more <length><identifier> parts whose lengths match, then the end of the name (E), an
    ABI tag (B), template arguments (I) or a constructor (C). It names code, not a secret, and
    says which library a package was built against."""
    if not word.startswith("_ZN"):
        return False
    i, parts = 3, 0
    while i < len(word) and word[i].isdigit():
        j = i
        while j < len(word) and word[j].isdigit():
            j += 1
        n = int(word[i:j])
        ident = word[j : j + n]
        if n == 0 or len(ident) != n or ident[0].isdigit() or not ident.replace("_", "a").isalnum():
            return False
        parts, i = parts + 1, j + n
    return parts >= 2 and i < len(word) and word[i] in "EBIC"


def _secret_looking(word: str) -> bool:
    return _mixed_case_digits(word) and not _mangled(word)


def scrub_secrets(text: str, literals: tuple[str, ...] = ()) -> str:
    """`text` with every secret-looking part replaced by <redacted>; known secret values first.

    Linear in len(text) (no backtracking pattern): a 1 MB value takes milliseconds.
    """
    for value in literals:
        if value in text:
            text = text.replace(value, REDACTED)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    text = _TOKENS.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + " " + REDACTED, text)
    text = _key_values(text)
    text = _MIXED.sub(lambda m: REDACTED if _secret_looking(m.group(0)) else m.group(0), text)
    text = _AWS_SECRET.sub(
        lambda m: REDACTED if _secret_looking(m.group(0)) else m.group(0), text
    )
    return _HEX.sub(
        lambda m: (
            REDACTED
            if any(c.isdigit() for c in m.group(0)) and any(c.isalpha() for c in m.group(0))
            else m.group(0)
        ),
        text,
    )


def _key_values(text: str) -> str:
    """The value after every `name=` / `name:` whose name holds a secret word, redacted."""
    out, last = [], 0
    for m in _NAME_SEP.finditer(text):
        if m.start() < last or not _SECRET_IN_NAME.search(m.group(1)):
            continue
        value = _VALUE.match(text, m.end())
        if value is None:
            continue
        out += [text[last : m.end()], REDACTED]
        last = value.end()
    return "".join(out) + text[last:] if out else text


def url_credentials(text: str) -> list[str]:
    """The user and password parts of every scheme://user:password@ in `text` (to be matched
    literally wherever they turn up: a path list split at ":" cuts the URL apart)."""
    found = []
    for m in _URL_USERINFO.finditer(text):
        info = m.group(0)[len(m.group(1)) : -1]
        found += [part for part in info.split(":", 1) if part]
    return found


def scrub_split(items: list[str], sep: str = ":") -> list[str]:
    """A list that was one value split at `sep` (LD_LIBRARY_PATH, PATH): URL credentials that
    the split cut into pieces ("https", "//user", "pw@host/lib") are found in the joined value
    and redacted in every piece they touch; the list keeps its length."""
    joined = sep.join(items)
    spans = [(m.end(1), m.end() - 1) for m in _URL_USERINFO.finditer(joined)]
    if not spans:
        return items
    out, pos = [], 0
    for item in items:
        start, end = pos, pos + len(item)
        for a, b in spans:
            lo, hi = max(a, start), min(b, end)
            if lo < hi:
                item = item[: lo - start] + REDACTED + item[hi - start :]
                break
        out.append(item)
        pos = end + len(sep)
    return out


def secret_env_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """Values of this process's variables that are secrets (HF_TOKEN, ACME_PASS, ...), by name
    or by shape (a token format or URL credentials in any variable, whatever its name), and
    tokens in variable names themselves.

    None of them is allowlisted, so none should reach a report; they are matched literally in
    everything written as a last check that no probe copied one into free text (a log line).
    """
    values: set[str] = set()
    for k, v in environ.items():
        if k in _NOT_SECRET_NAMES:
            continue
        if _SECRET_NAME.search(k) and len(v) >= 8:
            values.add(v)
        values.update(m.group(0) for m in _TOKENS.finditer(k))
        values.update(m.group(0) for m in _TOKENS.finditer(v))
        values.update(c for c in url_credentials(v) if len(c) >= 4)
    return tuple(sorted(values, key=len, reverse=True))
