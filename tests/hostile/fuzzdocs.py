"""A seeded generator of hostile documents: valid facts and reports, mutated the ways issue 16
found (deep nesting, long integers, NaN/Infinity, "²", lone surrogates, terminal escapes,
wrong types, cut bytes), plus canary secrets that redaction must remove."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

from helpers import change, healthy, judge

CANARY_PASSWORD = "CanaryPw0rdZ9"
CANARY_TOKEN = "ghp_CanaryFuzzToken0123456789abcdefgh"
CANARIES = (CANARY_PASSWORD, CANARY_TOKEN, "canaryfuzzuser")

# Placeholders json.dumps writes as strings, swapped for raw text after: JSON's own encoder
# cannot write these on purpose.
RAW = {
    '"@NAN@"': "NaN", '"@INF@"': "-Infinity", '"@BIGINT@"': "9" * 5000,
    '"@BIGFLOAT@"': "1e999", '"@SURROGATE@"': '"\\ud800 lone"', '"@DEEP@"': "[" * 5000 + "]" * 5000,
    '"@DEEPOBJ@"': '{"a":' * 3000 + "1" + "}" * 3000, '"@SUP2@"': '"\\u00b2"',
}
HOSTILE: list[Any] = [
    "@NAN@", "@INF@", "@BIGINT@", "@BIGFLOAT@", "@SURROGATE@", "@DEEP@", "@DEEPOBJ@", "@SUP2@",
    "\x1b]0;pwned\x07\x1b[2J", "\x9b31m", "\u202eevil", "a\x00b", "", None, True, -1, 2**63,
    1.5, [], {}, [1, [2, [3]]], {"x": {"y": "z"}}, "x" * 70000, "/home/victim/secret",
    f"https://canaryfuzzuser:{CANARY_PASSWORD}@h.example/lib", CANARY_TOKEN,
]


def base_documents() -> list[dict[str, Any]]:
    """A facts file and a --json report of a node, both carrying canary secrets."""
    facts = change(
        healthy(gpus=2),
        env={"LD_LIBRARY_PATH": f"/opt/a:https://canaryfuzzuser:{CANARY_PASSWORD}@h.example/lib"},
    )
    libs = []
    for lib in facts.to_dict()["libraries"]:
        lib["search_path"] = ["/opt/a", "https", "//canaryfuzzuser", f"{CANARY_PASSWORD}@h.example/lib"]
        libs.append(lib)
    data = facts.to_dict()
    data["libraries"] = libs
    data["probe_issues"] = [{"probe": "xla", "kind": "error", "message": f"token {CANARY_TOKEN}"}]
    report = judge(facts).to_dict(exit_code=0)
    report["facts"] = data
    return [data, report]


def _paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _set(rng: random.Random, doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    node = doc
    for key in path[:-1]:
        node = node[key]
    if isinstance(node, dict) and rng.random() < 0.1:
        node[str(rng.choice(HOSTILE)) if rng.random() < 0.5 else "extra"] = value
    elif isinstance(node, dict) and rng.random() < 0.1:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return doc


def mutate(rng: random.Random, base: dict[str, Any]) -> bytes:
    """One hostile document (bytes) made from `base`."""
    doc = json.loads(json.dumps(base))
    for _ in range(rng.choice((1, 1, 2, 3, 8))):
        paths = list(_paths(doc))
        # A copy: the same list set twice, once inside itself, made a cycle (RecursionError).
        doc = _set(rng, doc, rng.choice(paths), copy.deepcopy(rng.choice(HOSTILE)))
    if rng.random() < 0.15:
        holder = doc.get("facts", doc) if isinstance(doc, dict) else None
        if isinstance(holder, dict):
            holder["schema_version"] = rng.choice(["²", "1e5", "٣", 2, "99", None, "@SUP2@"])
    text = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
    for placeholder, raw in RAW.items():
        text = text.replace(placeholder, raw)
    data = text.encode("utf-8", "surrogatepass")
    roll = rng.random()
    if roll < 0.05:
        data = data[: rng.randrange(len(data) + 1)]
    elif roll < 0.10:
        pos = rng.randrange(len(data))
        data = data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1 :]
    elif roll < 0.12:
        data = b"\xef\xbb\xbf" + data
    elif roll < 0.14:
        data = b"\xff\xfe" + data
    return data


def documents(count: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    bases = base_documents()
    for i in range(count):
        yield mutate(rng, bases[i % len(bases)])
