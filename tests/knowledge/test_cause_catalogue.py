"""Contract of the cause catalogue (doctor/tfdoctor/knowledge/, docs/knowledge.md): every id it
names exists, every cause a log line shows has patterns with real samples, and recognition does
not depend on the order of the files."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from tfdoctor.asks import COMMANDS
from tfdoctor.checks import all_checks
from tfdoctor.cli import cli
from tfdoctor.knowledge import AREAS, Catalogue, Cause, _recognition_order, _record, catalogue
from tfdoctor.smoke import logmap

ROOT = Path(__file__).resolve().parents[2]
CAT = catalogue()
LOG = [c for c in CAT.causes.values() if c.log_id]
PATTERNS = [(c, i, p) for c in LOG for i, p in enumerate(c.patterns)]


def _ids(pairs: list[tuple[Cause, int, object]]) -> list[str]:
    return [f"{c.id}#{i}" for c, i, _ in pairs]


def test_every_emitted_finding_has_a_record_and_every_record_is_emitted() -> None:
    """The catalogue is the vocabulary of the verdict: a finding a check can emit without a record
    would have no ranking, no asks, no explanation; a record nothing emits is dead knowledge."""
    emitted = {f for s in all_checks() for f in s.finding_ids}
    assert emitted - set(CAT.causes) == set()
    assert set(CAT.causes) - emitted == set()


def test_every_referenced_id_exists() -> None:
    """explains, outranks and explains_checks name findings and checks that exist: a typo would
    silently drop a root-cause link."""
    checks = {s.id for s in all_checks()}
    for c in CAT.causes.values():
        assert set(c.explains) <= set(CAT.causes), c.id
        assert set(c.outranks) <= {x.id for x in LOG}, c.id
        assert set(c.explains_checks) <= checks, c.id
        assert c.id not in c.explains and c.id not in c.outranks, c.id


def test_asks_name_facts_tfdoctor_knows_how_to_ask_for() -> None:
    """An ask is a command support can send: each fact path must have one (asks.COMMANDS)."""
    for c in CAT.causes.values():
        for fact in c.asks:
            assert any(fact == k or fact.startswith(k + ".") for k in COMMANDS), (c.id, fact)


def test_log_causes_say_what_and_what_to_do() -> None:
    """A log cause becomes a finding on its own: it needs a severity, a message and a hint."""
    for c in LOG:
        assert c.severity is not None and c.message and c.hint, c.id
        assert c.patterns or c.recognised_by, f"{c.id}: no pattern and no recogniser shows it"


@pytest.mark.parametrize("cause, index, pattern", PATTERNS, ids=_ids(PATTERNS))
def test_each_pattern_matches_its_samples_and_they_read_as_its_cause(cause, index, pattern) -> None:
    """A pattern is written from a program's message and kept with real instances of it: each
    sample must match, and the whole log map must read it as this cause (not noise, not another)."""
    assert pattern.samples, f"{cause.id} pattern {index} has no sample"
    for sample in pattern.samples:
        assert pattern.regex.search(sample), (cause.id, sample)
        hit = logmap.recognise(sample)
        assert hit is not None and hit[0] == cause.log_id, (cause.id, sample, hit)


@pytest.mark.parametrize("cause, index, pattern", PATTERNS, ids=_ids(PATTERNS))
def test_recognition_does_not_depend_on_file_order(cause, index, pattern) -> None:
    """Where another cause's pattern also matches a sample, an `outranks` link (direct or through
    others) says which reading wins: moving a record between files cannot change a diagnosis."""
    beats: dict[str, set[str]] = {c.id: set(c.outranks) for c in LOG}

    def outranks(a: str, b: str, seen: frozenset[str] = frozenset()) -> bool:
        return b in beats[a] or any(outranks(x, b, seen | {a}) for x in beats[a] if x not in seen)

    for sample in pattern.samples:
        others = {o.id for o in LOG for p in o.patterns if o.id != cause.id and p.regex.search(sample)}
        assert all(outranks(cause.id, o) for o in others), (cause.id, sample, others)


def test_causes_read_by_a_recogniser_recognise_their_samples() -> None:
    """A cause shown by a recogniser's own parsing (pip's resolver lines, the mined vocabulary's
    templates) is tested like a pattern: each sample, pasted as a ticket, gives that finding; a
    static finding a log line shows keeps its own id (one cause, one id)."""
    for c in (c for c in CAT.causes.values() if c.recognised_by):
        assert c.samples, c.id
        assert (ROOT / "doctor" / "tfdoctor" / c.recognised_by).is_file(), c.recognised_by
        for sample in c.samples:
            result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=sample + "\n")
            assert f'"{c.id}"' in result.stdout, (c.id, sample)


def test_every_cause_the_vocabulary_names_is_a_record() -> None:
    """A mined template classified into a cause the catalogue does not hold would become a line
    quoted as unknown: every such id is a log cause or a static record with the words of one."""
    from tfdoctor.knowledge import vocab

    named = {t.cause for t in vocab.templates() if t.cause and t.source not in logmap.BY_PATTERN_ONLY}
    held = {c.log_id for c in LOG} | {c.id for c in CAT.causes.values() if c.message and not c.log_id}
    assert named - held == set()


def test_benign_lines_are_noise_and_never_a_cause() -> None:
    """Healthy output stays out of the findings: each benign sample is noise and recognised as
    nothing."""
    for b in CAT.benign:
        assert b.samples and b.reason, b.regex.pattern
        for sample in b.samples:
            assert b.regex.search(sample) and logmap.is_noise(sample), sample
            assert logmap.recognise(sample) is None, sample


def test_field_corpus_speaks_the_catalogue() -> None:
    """tests/field/causes.toml scores a case by finding ids: each must be one the catalogue knows
    (a renamed id would silently turn hits into misses)."""
    sys.path.insert(0, str(ROOT / "tests" / "field"))
    from corpus import load_causes

    named = {f for c in load_causes()["causes"].values() for f in c.get("findings", ())}
    assert named - set(CAT.causes) == set()


def test_unknown_fields_and_cycles_are_refused() -> None:
    """A misspelt field or an outranks cycle is a loading error, not a silently ignored record."""
    with pytest.raises(ValueError, match="unknown fields"):
        _record("tf-log-x", "driver", {"severity": "error", "explain": ["y"]})
    a = Cause("tf-log-a", "driver", outranks=("tf-log-b",))
    b = Cause("tf-log-b", "driver", outranks=("tf-log-a",))
    with pytest.raises(ValueError, match="cycle"):
        _recognition_order((a, b))


def test_outranks_orders_recognition_whatever_the_file_order() -> None:
    """The recognition order puts a cause before every cause it outranks, even when its record
    comes later in the catalogue."""
    generic = Cause("tf-log-generic", "gpu", patterns=())
    specific = Cause("tf-log-specific", "xla", outranks=("tf-log-generic",))
    order = Catalogue({"tf-log-generic": generic, "tf-log-specific": specific}, ()).log_causes()
    assert [c.id for c in order] == ["tf-log-specific", "tf-log-generic"]


def test_every_area_file_exists_and_holds_records() -> None:
    """The areas listed in the loader are the files on disk, so none is silently skipped."""
    files = {p.stem for p in (ROOT / "doctor" / "tfdoctor" / "knowledge" / "causes").glob("*.toml")}
    assert files == set(AREAS)
    assert all(any(c.area == a for c in CAT.causes.values()) for a in AREAS)


def test_explain_describes_the_cause_itself() -> None:
    """`tfdoctor explain <finding>` says what the cause means, how it is seen (the message's
    source), what to do and what explains it, from the catalogue."""
    result = CliRunner().invoke(cli, ["explain", "tf-log-cudnn-version-mismatch"])
    assert result.exit_code == 0, result.output
    cause = CAT.causes["tf-log-cudnn-version-mismatch"]
    assert cause.message and cause.message in result.output
    assert "What to do: Install the cuDNN this TensorFlow was built with" in result.output
    assert "{" not in result.output  # every placeholder filled
    assert "Loaded runtime CuDNN library" in result.output
    assert re.search(r"Explained by .*cuda-library-missing", result.output)
