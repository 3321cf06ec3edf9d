"""pip_list reads a listing's rows a block at a time (issue 21): what it reads is what reading
them one by one reads."""

from __future__ import annotations

import pytest
from tfdoctor.triage.recognisers import _text, pip_list
from tfdoctor.triage.recognisers._text import MAX_LINE

ROWS = [f"package-{i:05d}              {i % 97}.{i % 13}.{i % 7}" for i in range(300)]

LISTINGS = [
    ["Package    Version", "---------- -------", *ROWS],
    ["Package    Version", "---------- -------", *ROWS[:40], "tensorflow 2.15.0", *ROWS[40:90], "",
     "more words"],
    ["Package    Version", *ROWS[:20], "x" * (MAX_LINE + 1), *ROWS[20:60]],  # a line the walk skips
    ["Package    Version", *ROWS[:20], "> numpy 1.26.4", "2023-01-01 10:00:00 keras 2.15.0", *ROWS[20:30]],
    ["Package    Version", *ROWS[:5], "Markdown 3.4.1", "Jinja2 3.1.2", "tf-nightly 2.16.0.dev2023",
     *ROWS[5:9]],
    ["Package    Version", *ROWS[:17], "---------- -------", *ROWS[17:40], "not a row at all", *ROWS[40:50]],
    ["# packages in environment at /opt/conda:", "#", "# Name  Version  Build  Channel",
     *[r + "  py310_0  conda-forge" for r in ROWS[:100]], "# a comment",
     *[r + "  h1234_0" for r in ROWS[100:130]], "numpy 1.26.4",
     "tensorflow-gpu  2.10.0  cuda112py310  conda-forge", *[r + "  0" for r in ROWS[130:200]]],
    ["Package    Version", *ROWS[:3]],
    ["Package    Version"],
    ["Package    Version", "   ", *ROWS[:30]],
    ["Package    Version", "\tnumpy    1.26.4", *ROWS[:30], "pandas (2.0.1)", *ROWS[30:40]],
]


def _read(lines: list[str]) -> list:
    try:
        return list(pip_list.recognise(lines))
    finally:
        _text.forget()


@pytest.mark.parametrize("lines", LISTINGS, ids=range(len(LISTINGS)))
def test_block_reading_reads_what_row_by_row_reads(lines, monkeypatch):
    bulk = _read(lines)
    monkeypatch.setattr(pip_list, "_rows", lambda walk, mode: [])  # the loop reads every row
    assert bulk == _read(lines)


def test_trigger_regex_finds_where_the_lookahead_form_did():
    """The trigger's possessive regex matches the lines (and at the places) its earlier
    lookahead form did."""
    import random
    import re

    before = re.compile(r"[^\S\n]\(?(?=\d+(?:[^\W\d]|[.!+-]))\d[\w.!+-]*(?=[\s)]|\Z)")
    now = pip_list._TRIGGER.regex
    assert now is not None
    rng = random.Random(21)
    for _ in range(20000):
        line = "".join(rng.choice(" (\t1234a._!+-)xZ9é") for _ in range(rng.randrange(0, 14)))
        got, want = now.search(line), before.search(line)
        assert (got and got.start()) == (want and want.start()), line


ARROWS = [
    "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12",
    "numpy=>1.2", "x=>y>=1", "tensorflow==2.15.0", "keras>=3", "a<2", "pkg => 1.2a b", "foo 1.2a => x",
    "protobuf~=3.20", "requests!=2.0", "=>", ">", "=", "$ pip list | grep tensorflow", "tensorflow 2.15.0",
    "Name: tensorflow", "Version: 2.15.0", "=> Package    Version", "six==1.16.0", "wheel==0.41.2",
    "absl-py==2.0.0", "astunparse==1.6.3", "gast==0.5.4",
]


@pytest.mark.parametrize("seed", range(6))
def test_arrow_trigger_reads_what_every_line_reads(seed, monkeypatch):
    """Where a ticket holds "=>", the lines an "=" or ">" only inside one are not read: reading
    every line reads the same."""
    import random

    rng = random.Random(seed)
    lines = [rng.choice(ARROWS) for _ in range(rng.randrange(5, 400))]
    got = _read(lines)
    monkeypatch.setattr(pip_list, "_TRIGGER_ARROWS", _text.EVERY_LINE)
    monkeypatch.setattr(pip_list, "_TRIGGER", _text.EVERY_LINE)
    assert got == _read(lines)
