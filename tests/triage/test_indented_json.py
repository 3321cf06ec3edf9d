"""cmdkit.indented_json writes json.dumps(doc, indent=2)'s text, faster (issue 21)."""

from __future__ import annotations

import enum
import json

import pytest
from tfdoctor.cmdkit import indented_json


class _Int(int):
    pass


class _Level(enum.IntEnum):
    A = 1


DOCS = [
    {}, [], (), "s", 1, 1.5, True, None, {"a": []}, {"a": {}}, [[]], [{}],
    [1, 2.5, float("nan"), float("inf"), -float("inf"), True, False, None, -0.0, 1e300, 10**30],
    ["é\u2028\"\\\n\t"],
    {"x": [{"a": 1}, [], [[]], {"b": {"c": [1, "2", None]}}]},
    (1, 2), {"k": (1, [2, {"z": 1.0}])},
    {"t": True, "n": None, "f": 0.1, "s": "\ud800", "": ""},
    {"packages": {f"package-{i}": f"{i}.0" for i in range(50)}, "list": [f"x{i}" for i in range(20)]},
    {1: 2}, {"a": _Int(3)}, [_Level.A], {None: 1, 2.5: "x", True: [1]},
]


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
def test_same_text_as_json_dumps(doc):
    assert indented_json(doc) == json.dumps(doc, indent=2)


def test_what_json_refuses_it_refuses():
    with pytest.raises(TypeError):
        indented_json({"a": {1, 2}})
