"""Redacting a large map of plain words at once redacts it as word by word does (issue 21, item 4).

Redactor._walk passes a map of short plain strings through whole when one search of them all
finds no name; every map here is redacted both ways and compared.
"""

from __future__ import annotations

import random

import pytest
from tfdoctor.share import redact
from tfdoctor.share.redact import Identity, Policy, Redactor


def _maps() -> list[dict]:
    rng = random.Random(9)
    plain = {f"package-{i:05d}": f"{i % 7}.{i % 5}.{i % 3}" for i in range(300)}
    return [
        plain,
        {**plain, "zoe-tools": "1.0"},  # a user name inside a package name
        {**plain, "tools": "1.0+gpu-node-7"},  # a host name in a version
        {**plain, "uuid": "1.0", "serial": "0.2", "pci_bus_id": "0000:01:00.0"},  # keys _walk reads apart
        {**plain, "unknown": "x", "provenance": "y"},
        {**plain, "longer-name-than-twenty-characters": "1.0"},
        {**plain, "p": "https://user:secret99@example.com/x"},
        {**plain, "xoxb-1": "1"},
        {**plain, "nested": {"a": "b"}},
        {**plain, 7: "1"},
        {f"p{i}": rng.choice(["1.0", "ZOE", "Gpu-Node-7", "a/b", "2.0 x"]) for i in range(200)},
    ]


@pytest.mark.parametrize("index", range(11))
def test_a_large_map_is_redacted_as_word_by_word(monkeypatch, index):
    data = _maps()[index]
    identity = Identity(users=("zoe",), hosts=("gpu-node-7",), secrets=("secret99",))

    def walk(many: int) -> object:
        monkeypatch.setattr(redact, "_MANY", many)
        redactor = Redactor(Policy.make(salt="s"), identity)
        redactor._learn({"python": {"packages": data}})
        return redactor._walk(data, "packages")

    assert walk(64) == walk(10**9)


def test_strings_are_every_string_of_the_facts():
    """_strings lists every key and string value (a list of strings also joined by ":")."""
    data = {"a": {"b": "c", "d": ["e", "f"], "g": None}, "h": {"i": "j", "k": "l"}, "m": 1}
    assert sorted(redact._strings(data)) == sorted(["a", "b", "c", "d", "e:f", "e", "f", "g", "h", "i",
                                                     "j", "k", "l", "m"])


def test_only_plain_nameless_maps_pass_whole():
    identity = Identity(users=("zoe",), hosts=("gpu-node-7",), secrets=("secret99",))
    redactor = Redactor(Policy.make(salt="s"), identity)
    redactor._learn({})
    passes = [redactor._all_plain_and_nameless(m) for m in _maps()]
    assert passes == [True] + [False] * 10
