"""What a ticket shows of the machine it came from: the names and secrets triage must not repeat.

A pasted `env` dump, an `export`, a shell prompt (`zoe@gpu-node-7:~$`) or TF_CONFIG name the user,
the host, the home directory and the cluster's hosts; a secret-named variable (HF_TOKEN=...) holds
a value that may appear elsewhere in the ticket. triage's report and saved facts are redacted with
these (share/redact.py), as `report` redacts a live run with this machine's own names (issue 21).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tfdoctor.share.redact import Identity, tf_config_hosts
from tfdoctor.share.secrets import secret_env_values

# NAME=value anywhere a word starts (env dumps, export, set, $env:, a command's prefix); names in
# capitals, as environment variables are (a lower-case token=... is scrub_secrets' to find).
_ASSIGN = re.compile(r"(?<![\w$.-])([A-Z_][A-Z0-9_]{0,60})[ \t]?=[ \t]?"
                     r"(\"[^\"\n]{1,5000}\"|'[^'\n]{1,5000}'|[^\s\"']{1,5000})")
# An assignment's name ends at most 62 characters before its "=" (61, then a space or a tab):
# _ASSIGN is matched only from there. Searched over a log, it starts at every capital letter
# (issue 21).
_NAME_BEFORE = re.compile(r"(?<![\w$.-])[A-Z_][A-Z0-9_]{0,60}[ \t]?\Z")
# An "=" _NAME_BEFORE can end at: after a name character, or one and a space or a tab. The "=" first,
# so re finds each at C speed; the look-behinds test the one or two characters before it.
_EQ = re.compile(r"=(?:(?<=[A-Z0-9_]=)|(?<=[A-Z0-9_][ \t]=))")
# A shell prompt: user@host: followed by a path ("zoe@gpu-node-7:~/src$"). Found from its "@" (re
# skips to it at C speed), the user read backwards from there.
_AT_HOST = re.compile(r"@([A-Za-z0-9][A-Za-z0-9.-]{0,62}):[~/]")
_USER_BEFORE = re.compile(r"(?<![\w.@-])([a-z_][a-z0-9_.-]{0,31})\Z")
_USERS = ("USER", "LOGNAME", "USERNAME")
_HOSTS = ("HOSTNAME", "HOST", "COMPUTERNAME", "SLURMD_NODENAME")
_HOMES = ("HOME", "USERPROFILE")


def ticket_identity(texts: Sequence[str]) -> Identity:
    """The users, hosts, homes and secret values the ticket's text names."""
    values: dict[str, str] = {}
    users: list[str] = []
    hosts: list[str] = []
    homes: list[str] = []
    for text in texts:
        if "=" in text:
            for m in _assignments(text):
                name, value = m.group(1), m.group(2).strip("\"'")
                values.setdefault(name, value)
                if name.upper() in _USERS:
                    users.append(value)
                elif name.upper() in _HOSTS:
                    hosts.append(value)
                elif name.upper() in _HOMES:
                    homes.append(value)
                elif name == "TF_CONFIG":  # JSON, spaces and quotes in it: the rest of the line
                    end = text.find("\n", m.start(2))
                    line = text[m.start(2) : end if end >= 0 else len(text)].strip()
                    hosts.extend(tf_config_hosts(line.strip("'") if line.startswith("'") else line))
        if "@" in text:
            for m in _AT_HOST.finditer(text):
                user = _USER_BEFORE.search(text, max(0, m.start() - 40), m.start())
                if user:
                    users.append(user.group(1))
                    hosts.append(m.group(1))
    hosts += [h.split(".")[0] for h in hosts]
    local = ("localhost", "localhost.localdomain")
    return Identity(
        users=tuple(dict.fromkeys(u for u in users if u and u not in ("root", "nobody"))),
        hosts=tuple(dict.fromkeys(h for h in hosts if h and h.lower() not in local)),
        homes=tuple(dict.fromkeys(h.rstrip("/\\") for h in homes if h.rstrip("/\\") not in ("", "/root"))),
        secrets=secret_env_values(values),
    )


def _assignments(text: str) -> Iterator[re.Match[str]]:
    """_ASSIGN.finditer(text), each match found from its "=": its name is the run of name
    characters that ends there (a start inside the run fails the look-behind). Only an "=" just
    after a name character (or one and a blank) can end a name: _EQ finds those in C, where a
    pasted pip freeze or ldconfig -p holds a hundred thousand others ("==", "=>")."""
    pos = 0  # where the previous match ended: matches never overlap
    for found in _EQ.finditer(text):
        eq = found.start()
        if eq < pos:
            continue
        name = _NAME_BEFORE.search(text, max(0, eq - 64), eq)
        m = _ASSIGN.match(text, name.start()) if name and name.start() >= pos else None
        if m is not None:
            yield m
            pos = m.end()
