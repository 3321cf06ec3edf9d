"""Every input document ends in a report or one line with exit code 2 (issue 16, point 1)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import healthy
from tfdoctor.cli import cli
from tfdoctor.docload import DocumentError, parse_document, printable


def facts_text(**top: object) -> str:
    data = healthy(gpus=1).to_dict()
    data.update(top)
    return json.dumps(data)


@pytest.mark.parametrize("text, words", [
    ("[" * 5000 + "]" * 5000, "nested deeper"),
    ('{"a": ' * 100 + "1" + "}" * 100, "nested deeper"),
    ('{"n": ' + "9" * 5000 + "}", "integer of 5000 digits"),
])
def test_limits_are_one_line_errors(text, words):
    """Nesting thousands deep (RecursionError) and 5,000-digit integers (ValueError) were exit 70."""
    with pytest.raises(DocumentError, match=words):
        parse_document(text)


def test_non_finite_numbers_and_surrogates_are_cleaned():
    """NaN/Infinity become null (so --json stays JSON); lone surrogates become U+FFFD."""
    data = parse_document('{"a": NaN, "b": [Infinity, -Infinity, 1e999], "\\ud800k": "\\udc80"}')
    assert data == {"a": None, "b": [None, None, None], "\ufffdk": "\ufffd"}


@pytest.mark.parametrize("text", [
    "[" * 5000 + "]" * 5000,
    '{"x": ' + "1" * 5000 + "}",
    facts_text(schema_version="\u00b2"),
    facts_text(schema_version="1e5"),
    "\ufeff{",
])
def test_replay_of_hostile_documents_is_exit_2(tmp_path, text):
    """Each shape of issue 16 through the real CLI: exit 2, one printable line, no traceback."""
    path = tmp_path / "f.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    result = CliRunner().invoke(cli, ["replay", "--json", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("tfdoctor: error: ")


def test_lone_surrogate_reports_and_leaves_no_temporary_file(tmp_path):
    """A lone surrogate ended in exit 70 with a 0-byte temporary file left behind: it is read
    as U+FFFD and the report is written whole."""
    path = tmp_path / "f.json"
    path.write_text(facts_text(collected_at="\ud800", tool_version="\udcff"),
                    encoding="utf-8", errors="surrogatepass")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["report", "--from", str(path), "-o", f"{out}/"])
    assert result.exit_code == 0, result.output
    assert sorted(p.suffix for p in out.iterdir()) == [".json", ".md"]


def test_nan_in_a_float_field_replays_as_strict_json(tmp_path):
    """NaN in a float field used to come out as NaN on --json, which is not JSON."""
    data = healthy(gpus=1).to_dict()
    data["driver"]["gpus"][0]["memory_total_mib"] = "@NAN@"
    path = tmp_path / "f.json"
    path.write_text(json.dumps(data).replace('"@NAN@"', "NaN"))
    result = CliRunner().invoke(cli, ["replay", "--json", str(path)])
    assert result.exit_code in (0, 1, 3), result.output
    json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))


def test_fleet_skips_and_counts_a_deep_file_and_escapes_names(tmp_path):
    """One deeply nested file made `tfdoctor fleet` exit 70; a document's OSC escape reached
    the terminal. Now: skipped, counted, and every control character shown escaped."""
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "evil.json").write_text(facts_text(schema_version="\x1b]0;pwned\x07"))
    (tmp_path / "ok.json").write_text(facts_text())
    result = CliRunner().invoke(cli, ["fleet", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "2 file(s) skipped" in result.stdout
    assert "\x1b" not in result.stdout and "\\x1b]0;pwned\\x07" in result.stdout


def test_printable_escapes_c0_c1_and_bidi():
    """What renderers rely on: ESC, BEL, C1 CSI, bidi overrides shown as escapes."""
    assert printable("a\x1b[2Jb\x07\x9b\u202e") == "a\\x1b[2Jb\\x07\\x9b\\u202e"
    assert printable("a\nb", keep_newlines=True) == "a\nb"
