"""Redaction of facts before they leave the machine: allowlisted variables, stable pseudonyms.

The facts are redacted field by field, not the rendered text: environment variables are cut to
the probe's allowlist, identifiers (GPU UUIDs, serials, PCI bus ids) are replaced whole, and
every other string is scrubbed of secrets, home directories, user and host names. Pseudonyms
are HMAC-SHA256 of the value under a salt, so one salt gives the same pseudonym for the same
user, host or GPU on every node of a fleet, and paths keep their shape (/home/<user-3f2a9b01>/venv)
so the redacted facts still replay through the checks.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import os
import re
import secrets
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tfdoctor.facts import Facts
from tfdoctor.share.secrets import scrub_secrets, scrub_split, secret_env_values, url_credentials

"""What `--keep` can let through: user names and home paths, host names, GPU UUIDs and serials,
PCI bus ids. Everything else identifying is always replaced."""

_NOT_IDENTIFYING_USERS = frozenset({"root", "nobody"})
_NOT_IDENTIFYING_HOSTS = frozenset({"localhost", "localhost.localdomain"})

_GPU_UUID = re.compile(
    r"(?<![A-Za-z0-9])(?:MIG-)?(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}"
    r"-[0-9a-fA-F]{12}(?![0-9a-fA-F])"
)
# NVML writes "00000000:0A:00.0", TensorFlow logs "0000:0a:00.0": both name one PCI function.
_PCI = re.compile(
    r"(?<![0-9A-Za-z:])([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])"
    r"(?![0-9A-Za-z])"
)
# A user's directory under a home root, also below a mount or a cluster file system
# (/gpfs/home/zoe, /mnt/c/Users/zoe on WSL); at most three leading components, so a failed
# match rescans a bounded stretch: linear on any input.
_HOME = re.compile(
    r"(?<![\w.])((?:/[\w.-]+){0,3}?/(?:home|homes|Users|export/home))/([A-Za-z0-9._-]+)"
)
_WIN_HOME = re.compile(r"(?i)\b([A-Z]:\\Users)\\([A-Za-z0-9._ -]+)")
_VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
_PLAIN = re.compile(r"[A-Za-z0-9._+-]*")

_PLAIN_LINES = re.compile(r"[A-Za-z0-9._+\-\n]*")
"""Plain words (_PLAIN), one a line."""
_MANY = 64
"""Pairs in a map from which one test of them all is worth making first (_walk)."""

STRUCTURAL = frozenset({"unknown", "provenance", "assumed"})
"""Keys whose strings (or, for provenance, whose keys) are fact paths, not collected text."""
_KEYED = STRUCTURAL | {"uuid", "serial", "pci_bus_id"}
"""Keys whose values _walk does not simply pass to text()."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who and where this process runs: the literal names and secrets that must not leave."""

    users: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    homes: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    """Values of secret-named variables in this process's environment, matched literally."""

    @classmethod
    def of_this_process(cls, environ: Mapping[str, str] | None = None) -> Identity:
        """This machine's user, home and host names (several sources each), and env secrets."""
        env = os.environ if environ is None else environ
        users = [env.get("USER"), env.get("LOGNAME"), _safe(getpass.getuser)]
        homes = [env.get("HOME")]
        try:
            import pwd

            entry = pwd.getpwuid(os.getuid())
            users.append(entry.pw_name)
            homes.append(entry.pw_dir)
        except (ImportError, KeyError, OSError):
            pass
        hosts = [_safe(socket.gethostname), env.get("HOSTNAME")]
        hosts += [h.split(".")[0] for h in hosts if h]
        return cls(
            users=_unique(u for u in users if u and u not in _NOT_IDENTIFYING_USERS),
            hosts=_unique(h for h in hosts if h and h.lower() not in _NOT_IDENTIFYING_HOSTS),
            homes=_unique(h.rstrip("/") for h in homes if h and h.rstrip("/") not in ("", "/root")),
            secrets=secret_env_values(env),
        )


    @classmethod
    def of_document(cls, facts: Facts) -> Identity:
        """The names the document itself says it was collected under: its node (host, user,
        home) and, in a ticket's environment lines, USER, LOGNAME, HOME, HOSTNAME and the values
        of secret-named variables. For facts from another machine, whose names this one's
        identity does not know (`report --from`, `triage`)."""
        env = {k: v for k, v in facts.env.items() if isinstance(v, str)}
        node = facts.node
        users = [node.user, env.get("USER"), env.get("LOGNAME")]
        hosts = [node.host, env.get("HOSTNAME"), env.get("HOST")]
        hosts += [h.split(".")[0] for h in hosts if h]
        homes = [node.home, env.get("HOME")]
        return cls(
            users=_unique(u for u in users if u and u not in _NOT_IDENTIFYING_USERS),
            hosts=_unique(h for h in hosts if h and h.lower() not in _NOT_IDENTIFYING_HOSTS),
            homes=_unique(h.rstrip("/") for h in homes if h and h.rstrip("/") not in ("", "/root")),
            secrets=secret_env_values(env),
        )

    def __or__(self, other: Identity) -> Identity:
        return Identity(
            users=_unique((*self.users, *other.users)), hosts=_unique((*self.hosts, *other.hosts)),
            homes=_unique((*self.homes, *other.homes)), secrets=_unique((*self.secrets, *other.secrets)),
        )


@dataclass(frozen=True, slots=True)
class Policy:
    """How to redact: the HMAC salt and the categories allowed through unchanged."""

    salt: bytes
    keep: frozenset[str] = frozenset()
    fleet_salt: bool = False
    """True when the salt was given (stable pseudonyms across nodes), False for a random one."""

    @classmethod
    def make(cls, salt: str | None = None, keep: tuple[str, ...] = ()) -> Policy:
        if salt:
            return cls(salt.encode("utf-8"), frozenset(keep), fleet_salt=True)
        return cls(secrets.token_bytes(16), frozenset(keep), fleet_salt=False)


@dataclass
class Redactor:
    """Applies a Policy to one machine's facts; learns names it must hide as it reads them."""

    policy: Policy
    identity: Identity = field(default_factory=Identity)
    _users: set[str] = field(default_factory=set)
    _hosts: set[str] = field(default_factory=set)
    _serials: set[str] = field(default_factory=set)
    _uuids: tuple[str, ...] = ()
    _homes: set[str] = field(default_factory=set)
    _memo: dict[str, str] = field(default_factory=dict)
    _any_name: re.Pattern[str] | None = None
    """text()'s answers: versions and paths repeat across a document (cleared when names are learned)."""
    _credentials: set[str] = field(default_factory=set)
    """User names and passwords of URLs found in the facts, matched literally everywhere."""
    _any_name_low: re.Pattern[str] | None = None
    """_name_regex's names folded, for lowered ASCII text (_nameless_plain)."""

    def pseudonym(self, category: str, value: str) -> str:
        """A stable name for `value`: the same for the same salt on every machine."""
        digest = hmac.new(self.policy.salt, f"{category}\0{value}".encode(), hashlib.sha256)
        tag = digest.hexdigest()[:8]
        if category == "gpu":
            return ("MIG-" if value.startswith("MIG-") else "GPU-") + f"<{tag}>"
        return f"<{category}-{tag}>"

    def facts(self, facts: Facts) -> Facts:
        """The redacted copy of `facts`; still a valid, replayable Facts."""
        data = facts.to_dict()
        self._learn(data)
        env = data.get("env") or {}
        data = {k: self._walk(v, k) for k, v in data.items() if k != "env"}
        data["env"] = self.env(env)
        return Facts.from_dict(data)

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Allowlisted variables only, each value scrubbed (TF_CONFIG host names pseudonymised)."""
        from tfdoctor.probes.platform import ENV_ALLOWLIST

        out = {}
        for name in ENV_ALLOWLIST:
            if name not in env or not isinstance(env[name], str):
                continue
            value = env[name]
            if name == "TF_CONFIG":
                out[name] = self._tf_config(value)
            elif name in _VISIBLE_VARS and "gpu-ids" not in self.policy.keep:
                out[name] = self.text(",".join(self._device(e) for e in value.split(",")))
            else:
                out[name] = self.text(value)
        return out

    def text(self, value: str) -> str:
        """Any string: secrets, GPU ids, PCI ids, home paths, user and host names replaced."""
        done = self._memo.get(value)
        if done is None:
            done = self._memo[value] = self._text(value)
        return done

    def _text(self, value: str) -> str:
        if len(value) < 20 and "xox" not in value and _PLAIN.fullmatch(value):
            return self._names(value)  # a package name, a version: only a literal name can be in it
        keep = self.policy.keep
        value = scrub_secrets(value, self.identity.secrets + self._learned_secrets())
        if "gpu-ids" not in keep:
            value = _GPU_UUID.sub(lambda m: self.pseudonym("gpu", m.group(0)), value)
            for serial in self._serials:
                value = _replace_word(value, serial, self.pseudonym("serial", serial))
        if "pci-ids" not in keep:
            value = _PCI.sub(lambda m: self.pseudonym("pci", _pci_key(m)), value)
        if "user" not in keep:
            value = self._user_text(value)
        if "host" not in keep:
            for host in sorted(self._hosts | set(self.identity.hosts), key=len, reverse=True):
                value = _replace_word(value, host, self.pseudonym("host", host.lower()), True)
        return value

    def _names(self, value: str) -> str:
        """text() of a short word of letters, digits and ._+- (no secret pattern, path, URL, GPU
        or PCI id fits in one): the literal secrets and names only. A 300,000-line pip list made
        redaction take seconds."""
        if not self._name_regex().search(value):  # one search: no name, secret or serial in most words
            return value
        keep = self.policy.keep
        for secret in self.identity.secrets + self._learned_secrets():
            if secret in value:
                value = value.replace(secret, "<redacted>")
        if "gpu-ids" not in keep:
            for serial in self._serials:
                value = _replace_word(value, serial, self.pseudonym("serial", serial))
        if "user" not in keep:
            for user in sorted(self._users | set(self.identity.users), key=len, reverse=True):
                value = _replace_word(value, user, self.pseudonym("user", user))
        if "host" not in keep:
            for host in sorted(self._hosts | set(self.identity.hosts), key=len, reverse=True):
                value = _replace_word(value, host, self.pseudonym("host", host.lower()), True)
        return value

    def leftovers(self, text: str) -> list[str]:
        """What should have been redacted but is still in `text` (a guard before writing)."""
        found = [f"secret value of length {len(s)}"
                 for s in self.identity.secrets + self._learned_secrets() if s in text]
        if "user" not in self.policy.keep:
            found += [
                f"user name {u!r}"
                for u in self._users | set(self.identity.users)
                if _word(u).search(text)
            ]
        if "host" not in self.policy.keep:
            found += [
                f"host name {h!r}"
                for h in self._hosts | set(self.identity.hosts)
                if _word(h, True).search(text)
            ]
        return found

    def _user_text(self, value: str) -> str:
        for home in sorted(self._homes | set(self.identity.homes), key=len, reverse=True):
            head, _, name = home.rpartition("/")
            value = _replace_path(value, home, f"{head}/{self.pseudonym('user', name)}")
        value = _HOME.sub(lambda m: f"{m.group(1)}/{self.pseudonym('user', m.group(2))}", value)
        value = _WIN_HOME.sub(
            lambda m: f"{m.group(1)}\\{self.pseudonym('user', m.group(2))}", value
        )
        for user in sorted(self._users | set(self.identity.users), key=len, reverse=True):
            value = _replace_word(value, user, self.pseudonym("user", user))
        return value

    def _learned_secrets(self) -> tuple[str, ...]:
        # Long ones first, so a password is replaced before a user name inside it.
        return tuple(sorted(self._credentials, key=len, reverse=True))

    def _walk(self, value: Any, key: str) -> Any:
        if key in STRUCTURAL:
            # Fact paths, tfdoctor's own vocabulary ("host" is one): a ticket's placeholder
            # "host" must not turn them into pseudonyms. provenance's values are redacted.
            if isinstance(value, dict):
                return {str(k): self._walk(v, "") for k, v in value.items()}
            return value
        if isinstance(value, dict):
            if len(value) >= _MANY and self._all_plain_and_nameless(value):
                return dict(value)  # what the comprehension below makes of it
            return {self.text(str(k)): self._walk(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            if value and all(isinstance(v, str) for v in value):
                value = scrub_split(value)  # a path list may hold a URL cut at its ":"
            return [self._walk(v, key) for v in value]
        if not isinstance(value, str):
            return value
        if key == "uuid" and "gpu-ids" not in self.policy.keep:
            return self.pseudonym("gpu", value)
        if key == "serial" and "gpu-ids" not in self.policy.keep:
            return self.pseudonym("serial", value)
        if key == "pci_bus_id" and "pci-ids" not in self.policy.keep:
            match = _PCI.fullmatch(value)
            return self.pseudonym("pci", _pci_key(match) if match else value)
        return self.text(value)

    def _all_plain_and_nameless(self, value: dict[Any, Any]) -> bool:
        """Whether text() leaves every key and value of a map of strings as it is and _walk asks
        nothing else of them: each a short plain word (text() reads only the literal names in
        those), none of them names a name (one search of them all joined), and no key is one
        _walk treats apart. A pasted pip list is 230,000 such pairs, each looked up twice."""
        if not set(map(type, value)) <= {str} or not set(map(type, value.values())) <= {str}:
            return False
        if not value.keys().isdisjoint(_KEYED):
            return False
        if max(map(len, value)) >= 20 or max(map(len, value.values())) >= 20:
            return False
        joined = "\n".join([*value, *value.values()])
        if "xox" in joined or not _PLAIN_LINES.fullmatch(joined):
            return False
        # a name holding a line break may match across two: then the pairs are read one by one
        return self._nameless_plain(joined)

    def _nameless_plain(self, text: str) -> bool:
        """_name_regex().search(text) is None, for text of ASCII letters, digits, ._+- and line
        breaks: each name folded (textgate.folded: what re's IGNORECASE matches to an ASCII
        letter) looked for in the text lowered, case-sensitively, and no search without a name.
        Searched with IGNORECASE, each position of a pasted pip list's text was tried every way
        its letter is written: 0.04 s without a name, 0.5 s with a user name (issue 21)."""
        if self._any_name_low is None:
            from tfdoctor.textgate import folded

            names = {folded(n) for n in self._name_regex_names() if n}
            self._any_name_low = re.compile("|".join(map(re.escape, sorted(names))) or "(?!)")
        if self._any_name_low.pattern == "(?!)":
            return True
        return self._any_name_low.search(text.lower()) is None

    def _name_regex_names(self) -> tuple[str, ...]:
        return (*self.identity.secrets, *self._credentials, *self._serials, *self._users,
                *self.identity.users, *self._hosts, *self.identity.hosts)

    def _name_regex(self) -> re.Pattern[str]:
        """_names' one search for any name, secret or serial."""
        if self._any_name is None:
            names = self._name_regex_names()
            self._any_name = re.compile("|".join(re.escape(n) for n in names if n) or "(?!)", re.IGNORECASE)
        return self._any_name

    def _learn(self, data: dict[str, Any]) -> None:
        """Collect the names to hide from the facts themselves (a file from another machine)."""
        self._memo.clear()
        self._any_name = self._any_name_low = None
        strings = _strings(data)
        joined = "\n".join(strings)  # which marks any string holds, three searches in C
        learners = (("@", self._learn_credentials), ("/", self._learn_home), ("\\", self._learn_win_home))
        # Each distinct string once, made only where a mark is: a pasted pip list's 464,000
        # strings hold none, and deduplicating them cost 0.05 s
        texts: list[str] | None = None
        for mark, learn in learners:
            if mark in joined:
                if texts is None:
                    texts = list(dict.fromkeys(strings))
                for text in texts:
                    if mark in text:
                        learn(text)
        self._users -= _NOT_IDENTIFYING_USERS
        gpus = (data.get("driver") or {}).get("gpus") or []
        self._serials = {
            g["serial"] for g in gpus if isinstance(g.get("serial"), str) and g["serial"]
        }
        self._uuids = tuple(g["uuid"] for g in gpus if isinstance(g.get("uuid"), str))
        node = data.get("node") or {}
        if isinstance(node.get("host"), str) and node["host"].lower() not in _NOT_IDENTIFYING_HOSTS:
            self._hosts.update({node["host"], node["host"].split(".")[0]} - {""})
        if isinstance(node.get("user"), str) and node["user"] not in _NOT_IDENTIFYING_USERS:
            self._users.add(node["user"])
        if isinstance(node.get("home"), str) and node["home"].rstrip("/") not in ("", "/root"):
            self._homes.add(node["home"].rstrip("/"))
        tf_config = (data.get("env") or {}).get("TF_CONFIG")
        if isinstance(tf_config, str):
            self._hosts.update(
                h for h in tf_config_hosts(tf_config) if h.lower() not in _NOT_IDENTIFYING_HOSTS
            )

    def _learn_credentials(self, text: str) -> None:
        self._credentials.update(c for c in url_credentials(text) if len(c) >= 4)

    def _learn_home(self, text: str) -> None:
        self._users.update(m.group(2) for m in _HOME.finditer(text))

    def _learn_win_home(self, text: str) -> None:
        self._users.update(m.group(2) for m in _WIN_HOME.finditer(text))

    def _device(self, entry: str) -> str:
        """A CUDA_VISIBLE_DEVICES entry; a UUID prefix becomes the pseudonym of the GPU it picks."""
        raw = entry.strip()
        if not raw.startswith(("GPU-", "MIG-")):
            return entry
        match = [u for u in self._uuids if u.startswith(raw)]
        return self.pseudonym("gpu", match[0] if len(match) == 1 else raw)

    def _tf_config(self, value: str) -> str:
        try:
            config = json.loads(value)
        except ValueError:
            return self.text(value)
        cluster = config.get("cluster") if isinstance(config, dict) else None
        if isinstance(cluster, dict):
            for job, addresses in cluster.items():
                if isinstance(addresses, list):
                    cluster[job] = [self._address(a) for a in addresses]
        return self.text(json.dumps(config, sort_keys=True))

    def _address(self, address: Any) -> Any:
        if not isinstance(address, str) or "host" in self.policy.keep:
            return address
        host, sep, port = address.rpartition(":")
        host, port = (host, port) if sep else (address, "")
        if host.lower() in _NOT_IDENTIFYING_HOSTS:
            return address
        return self.pseudonym("host", host.lower()) + (f":{port}" if sep else "")


def tf_config_hosts(value: str) -> Iterator[str]:
    """The host names of a TF_CONFIG value's cluster addresses."""
    try:
        cluster = json.loads(value).get("cluster") or {}
    except (ValueError, AttributeError):
        return
    for addresses in cluster.values() if isinstance(cluster, dict) else ():
        for a in addresses if isinstance(addresses, list) else ():
            if isinstance(a, str) and a:
                yield a.rpartition(":")[0] or a


def _pci_key(match: re.Match[str]) -> str:
    domain, bus, dev, fn = match.groups()
    return f"{int(domain, 16):04x}:{bus.lower()}:{dev.lower()}.{fn}"


def _word(name: str, ignore_case: bool = False) -> re.Pattern[str]:
    # Names are delimited by anything that cannot be part of a user or host name; "<" and the
    # "-" after guard pseudonyms: a user called "user" must not match inside "<user-3f2a9b01>".
    # A "-" before is a delimiter: files are named after users ("smoke-zoe.log", issue 21).
    return re.compile(
        r"(?<![A-Za-z0-9_<])" + re.escape(name) + r"(?![A-Za-z0-9_>-])",
        re.IGNORECASE if ignore_case else 0,
    )


def _replace_word(text: str, name: str, replacement: str, ignore_case: bool = False) -> str:
    if (name.lower() if ignore_case else name) not in (text.lower() if ignore_case else text):
        return text
    return _word(name, ignore_case).sub(lambda _m: replacement, text)


def _replace_path(text: str, prefix: str, replacement: str) -> str:
    if prefix not in text:
        return text
    pattern = re.escape(prefix) + r"(?=$|[/\s:;,\"'])"
    return re.sub(pattern, lambda _m: replacement, text)


def _strings(value: Any, out: list[str] | None = None) -> list[str]:
    """Every string of value (dict keys too, and a list of strings also joined by ":"), into a
    list: a pasted pip list is 460,000 of them, each yielded up three generators."""
    if out is None:
        out = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        if set(map(type, value.values())) <= {str}:  # a map of strings: no call per entry
            out.extend(map(str, value))
            out.extend(value.values())
            return out
        for k, v in value.items():
            out.append(str(k))
            _strings(v, out)
    elif isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            out.append(":".join(value))  # a split path list: a URL cut apart is whole again
        for v in value:
            _strings(v, out)
    return out


def _safe(func: Any) -> str | None:
    try:
        return str(func())
    except Exception:  # noqa: BLE001  (no user database in a container: just skip the source)
        return None


def _unique(items: Iterator[str] | Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
