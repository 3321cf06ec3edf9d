"""facts._to_plain / _from_plain test a list's or a map's types in C (set(map(type, ...)))
instead of a generator per item: the same copies, the same walks, the same errors."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import pytest
from tfdoctor import facts as facts_mod
from tfdoctor.facts import Facts
from tfdoctor.triage import triage_facts
from tfdoctor.triage.read import decode


class Colour(str, enum.Enum):
    RED = "red"


def old_to_plain(value: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: old_to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        if all(type(v) in facts_mod._PLAIN for v in value):
            return list(value)
        return [old_to_plain(v) for v in value]
    if isinstance(value, dict):
        if all(type(k) is str and type(v) in facts_mod._PLAIN for k, v in value.items()):
            return dict(value)
        return {str(k): old_to_plain(v) for k, v in value.items()}
    return value


VALUES = [
    [], (), {}, [1, "a", None, 2.5, True], [Colour.RED], ["a", Colour.RED, ("x",)],
    {"a": 1, "b": None}, {"a": Colour.RED}, {1: "a"}, {"a": [1, 2]}, {"a": {"b": 1}},
    {Colour.RED: "x"}, [{"a": 1}, [2, (3,)]], ("x", 1.0, False),
]


@pytest.mark.parametrize("value", VALUES)
def test_to_plain_as_before(value: Any):
    new, old = facts_mod._to_plain(value), old_to_plain(value)
    assert new == old and [type(x) for x in _walk(new)] == [type(x) for x in _walk(old)]


def _walk(value: Any) -> list[Any]:
    out = [value]
    if isinstance(value, dict):
        for k, v in value.items():
            out += [k, *_walk(v)]
    elif isinstance(value, list | tuple):
        for v in value:
            out += _walk(v)
    return out


def test_from_plain_maps_as_before():
    """A map of one item type copied whole; a key or value of another type walked, and refused
    where the old loop refused it."""
    tp = dict[str, str]
    assert facts_mod._from_plain(tp, {"a": "1", "b": "2"}, "x") == {"a": "1", "b": "2"}
    assert facts_mod._from_plain(tp, {}, "x") == {}
    with pytest.raises(ValueError, match=r"x\.b: expected str, got int"):
        facts_mod._from_plain(tp, {"a": "1", "b": 2}, "x")
    assert facts_mod._from_plain(dict[str, bool], {"a": True}, "x") == {"a": True}
    with pytest.raises(ValueError, match="expected bool, got int"):
        facts_mod._from_plain(dict[str, bool], {"a": 1}, "x")
    with pytest.raises(ValueError, match="expected int, got bool"):
        facts_mod._from_plain(dict[str, int], {"a": True}, "x")
    assert facts_mod._from_plain(dict[str, str], {1: "a"}, "x") == {"1": "a"}


def test_ticket_facts_round_trip_as_before():
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.glob("field/cases/*.txt"))[:60]:
        text = decode(path.read_bytes(), path.name).split("+++\n", 2)[-1]
        facts, _ = triage_facts([text], collected_at="2025-01-01T00:00:00+00:00")
        plain = facts.to_dict()
        assert plain == old_to_plain(facts)
        assert Facts.from_dict(plain) == facts
