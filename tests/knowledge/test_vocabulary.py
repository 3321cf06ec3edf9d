"""The mined vocabulary (knowledge/vocabulary/*.toml) and its matcher (knowledge/vocab.py)."""

from __future__ import annotations

import os
import re
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import need
from tfdoctor.knowledge import vocab
from tfdoctor.smoke.causes import CAUSES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "field" / "cases"
PREFIX = "2023-05-10 12:16:23.632521: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] "
FAMILIES = {f"2.{m}" for m in range(0, 22)}
TEMPLATES = vocab.templates()
NEW_CAUSES = tomllib.loads((vocab.VOCABULARY / "new_causes.toml").read_text())["causes"]


def tid(t: vocab.Template) -> str:
    return f"{t.source}:{t.text[:50]}"


@pytest.mark.parametrize("t", TEMPLATES, ids=tid)
def test_instance_of_each_template_is_recognised(t: vocab.Template) -> None:
    """A line built from a template with concrete values, after TensorFlow's log prefix, is recognised
    as that template: the contract that makes every mined message usable by triage."""
    line = PREFIX + vocab.instance_of(vocab.first_line(t.text))
    assert vocab.same_reading(vocab.match(line), t), line


LONG = [t for t in TEMPLATES if vocab.fixed_prefix(vocab.first_line(t.text), vocab.TRUNCATED_MIN + 15)]


@pytest.mark.parametrize("t", LONG, ids=tid)
def test_truncated_and_rewrapped_instance_is_recognised(t: vocab.Template) -> None:
    """Pasted tickets cut long lines and re-wrap them at spaces: the first piece, which holds the
    template's first TRUNCATED_MIN fixed characters, still names the template."""
    head = vocab.fixed_prefix(vocab.first_line(t.text), vocab.TRUNCATED_MIN + 5)
    assert head is not None
    line = vocab.instance_of(vocab.first_line(t.text))
    cut = vocab.instance_of(head)
    wrapped = textwrap.wrap(line, width=len(cut) + 1, break_long_words=False)
    for piece in (PREFIX + cut, wrapped[0]):
        assert same_start(vocab.match(piece), t, piece), piece


def same_start(got: vocab.Template | None, want: vocab.Template, piece: str) -> bool:
    """A cut line names the template, or one that starts the same way and means the same: the words
    after the cut, which would tell them apart, are not in the line."""
    if got is None or vocab.same_reading(got, want):
        return got is not None
    words = set(vocab.PLACEHOLDER.sub(" ", vocab.first_line(want.text)).split()) & set(piece.split())
    return (got.cause, got.benign) == (want.cause, want.benign) and words <= set(got.fixed.split())


def test_each_template_has_exactly_one_of_cause_or_benign() -> None:
    """Every mined template is classified: a cause id, or the reason it is harmless, never both."""
    for path in sorted(vocab.VOCABULARY.glob("*.toml")):
        data = tomllib.loads(path.read_text())
        for t in data.get("template", []) if path.stem in vocab.SOURCES else []:
            assert ("cause" in t) != ("benign" in t), (path.name, t["text"])
    assert all((t.cause is None) != (t.benign is None) for t in TEMPLATES)


def test_every_cause_id_exists() -> None:
    """A cause a template names is one the catalogue holds (a log cause, or a static finding with
    the words a log finding needs) or one proposed in new_causes.toml."""
    from tfdoctor.knowledge import catalogue

    static = {c.id for c in catalogue().causes.values() if c.message and not c.log_id}
    known = set(CAUSES) | static | set(NEW_CAUSES)
    missing = {(t.cause, t.text[:60]) for t in TEMPLATES if t.cause and t.cause not in known}
    assert not missing


def test_new_causes_are_complete_and_used() -> None:
    """A proposed cause has what the catalogue needs (severity, message, hint, a source link) and is
    named by at least one template (the lead merges them into the catalogue under the same id)."""
    used = {t.cause for t in TEMPLATES}
    for cid, c in NEW_CAUSES.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", cid)
        assert c["severity"] in ("error", "warning", "info")
        assert c["message"] and c["hint"] and c["link"].startswith("https://")
        assert isinstance(c["explains_no_gpu"], bool)
        assert cid in used, cid
        assert cid not in CAUSES, f"{cid} is merged into the catalogue: remove it from new_causes.toml"


def test_releases_are_valid_families() -> None:
    """TensorFlow and XLA templates name the release families (2.0 ... 2.21) whose artefacts hold them."""
    for t in TEMPLATES:
        if t.source in ("tensorflow", "xla"):
            assert t.releases and set(t.releases) <= FAMILIES, (t.text, t.releases)
        else:
            assert t.releases, t.text


def test_levels_and_sources() -> None:
    """Levels are the three the report knows; every source file named is a path, not prose."""
    for t in TEMPLATES:
        assert t.level in ("error", "warning", "info")
        assert t.source_file is None or " " not in t.source_file


def test_most_specific_template_wins() -> None:
    """Where one template extends another, the line is the longer one when it holds the extra words,
    and the shorter one when it does not."""
    base = "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open"
    long_t = vocab.match(PREFIX + base + " shared object file: No such file; LD_LIBRARY_PATH: /usr/lib")
    short_t = vocab.match(PREFIX + base + " shared object file: No such file or directory")
    assert long_t is not None and "LD_LIBRARY_PATH" in long_t.text
    assert short_t is not None and "LD_LIBRARY_PATH" not in short_t.text
    assert long_t.cause == short_t.cause == "library-not-loaded"


def test_values_quoting_and_whitespace_are_tolerated() -> None:
    """Values may be quoted differently than the template has it, and whitespace runs may change
    (a ticket renderer, a copy from a terminal)."""
    assert vocab.match("Could not load dynamic library libcudnn.so.8; dlerror: not found").cause == (
        "library-not-loaded"
    )
    line = "failed  call to cuInit:\tCUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
    assert vocab.match(line).cause == "cuda-init-failed"


def test_unrelated_lines_match_nothing() -> None:
    """Training progress and prose name no template: the matcher must not invent findings."""
    for line in ("Epoch 1/10 - loss: 0.6931 - accuracy: 0.5000", "", "I installed CUDA yesterday.",
                 "Traceback (most recent call last):"):  # fmt: skip
        assert vocab.match(line) is None, line


def ticket_lines(case: str) -> list[str]:
    """The ticket text of a field case: what follows the second +++."""
    return CASES.joinpath(case).read_text().split("+++", 2)[2].splitlines()


# (field case, a substring of one of its real log lines, the cause that line shows)
REAL_LINES = [
    ("car-1.txt", "Loaded runtime CuDNN library: 8.0.4", "cudnn-version-mismatch"),
    ("car-1.txt", "DNN library is not found", "cudnn-failed"),
    ("dnascent-51.txt", "failed call to cuInit: CUDA_ERROR_NO_DEVICE", "cuda-init-failed"),
    ("mlperfautomations-308.txt", "does not match DSO version", "driver-version-mismatch"),
    ("tensorflow-60739.txt", "was not built with CUDA kernel binaries", "cc-not-in-build"),
    ("tensorflow-62064.txt", "You are using ptxas 10.1", "ptxas-too-old"),
    ("gpujupyter-129.txt", "Can't find libdevice directory", "libdevice-missing"),
    (
        "tensorflow-62032.txt",
        "Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED",
        "cudnn-handle-failed",
    ),
    (
        "deepchem-2467.txt",
        "Could not load dynamic library 'libcudart.so.11.0'; dlerror",
        "library-not-loaded",
    ),
    ("deeplabcut-1398.txt", "Could not load dynamic library 'cudart64_110.dll'", "library-not-loaded"),
    ("tensorflow-45671.txt", "failed to create cublas handle", "cublas-failed"),
    ("cml-508.txt", "no NVIDIA GPU device is present", "driver-not-running"),
    ("dockerdl-7.txt", "Could not find cuda drivers on your machine", "driver-library-missing"),
    ("tensorflow-66716.txt", "XLA requires ptxas version", "ptxas-too-old"),
    ("pangeodocker-450.txt", "Failed to launch ptxas", "ptxas-missing"),
    ("crepe-99.txt", "libdevice not found at", "libdevice-missing"),
    ("gpujupyter-147.txt", "Cannot dlopen some GPU libraries. Please", "gpu-libraries-missing"),
    ("tensorflow-47820.txt", "OOM when allocating tensor with shape", "gpu-out-of-memory"),
    ("agentlaboratory-87.txt", "No matching distribution found for", "no-matching-wheel"),
    ("gcsfuse-1557.txt", "unsatisfied condition: cuda>=", "driver-too-old"),
    ("mcmicro-546.txt", "Failed to get convolution algorithm", "cudnn-handle-failed"),
]


@pytest.mark.parametrize(("case", "marker", "cause"), REAL_LINES, ids=[r[1][:40] for r in REAL_LINES])
def test_real_field_lines_get_their_cause(case: str, marker: str, cause: str) -> None:
    """Lines copied by users into real tickets (tests/field/cases) are instances of the templates
    mined from the artefacts, and carry the cause the field corpus gives them."""
    line = next(x for x in ticket_lines(case) if marker in x)
    got = vocab.match(line)
    assert got is not None and got.cause == cause, (line, got)


BENIGN_LINES = [
    ("crepe-99.txt", "Unable to register cuDNN factory"),
    ("jaxtoolbox-192.txt", "TF-TRT Warning: Could not find TensorRT"),
    ("kerasocr-193.txt", "successful NUMA node read from SysFS"),
    ("tensorflow-62064.txt", "Loaded cuDNN version"),
    ("crepe-99.txt", "ran out of memory trying to allocate"),
]


@pytest.mark.parametrize(("case", "marker"), BENIGN_LINES, ids=[r[1][:40] for r in BENIGN_LINES])
def test_real_benign_lines_are_benign(case: str, marker: str) -> None:
    """Lines TensorFlow prints on healthy machines are recognised and marked benign, with a reason."""
    line = next(x for x in ticket_lines(case) if marker in x)
    got = vocab.match(line)
    assert got is not None and got.benign, (line, got)


ENVS = Path(os.environ.get("TFDOCTOR_TEST_ENVS", Path.home() / ".cache" / "tfdoctor" / "test-envs"))


def _artefacts_present() -> bool:
    return (ENVS / "frameworks").is_dir() or (ENVS / "tf-cuda").is_dir()


@pytest.mark.slow
def test_mining_reproduces_the_committed_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """benchmarks/mine_vocabulary.py --check, run on what CI has (tests/envs: 23 framework libraries
    and the 2.21 / 2.17 venvs, not the miner's cache of whole wheels), finds the committed data:
    every template those artefacts show is committed with the same releases and classification."""
    need(_artefacts_present(), "needs tests/envs/setup.sh's TensorFlow artefacts")
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import mine_vocabulary
    import vocab_artefacts

    monkeypatch.setattr(vocab_artefacts, "CACHE", tmp_path)
    assert mine_vocabulary.main(["--check"]) == 0
