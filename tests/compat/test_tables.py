"""Contract test for compat_tables/*.toml: schema, sources, dates, order, specifiers."""

from __future__ import annotations

import datetime
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version
from tfdoctor.resources import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

TABLES = data_dir("compat_tables")
TODAY = datetime.date.today()

# table -> array -> {key: type}; optional keys may be absent, any other key is an error.
STR, BOOL, NUM, LIST, DICT = str, bool, (int, float), list, dict
COMMON_REQUIRED = {"source": STR, "checked": STR}
COMMON_OPTIONAL = {"verified": BOOL, "reason": STR, "note": STR}
SCHEMA = {
    ("tensorflow", "release"): (
        {
            "version": STR,
            "wheel_version": STR,
            "python_min": STR,
            "cuda": STR,
            "cudnn": STR,
            "verified": BOOL,
            "metadata_source": STR,
            "metadata_checked": STR,
            "requires": DICT,
        },
        {
            "python_max": STR,
            "cuda_build": STR,
            "cudnn_compiled": STR,
            "compute_capabilities": LIST,
            "compute_capabilities_source": STR,
            "ptx_targets": LIST,
            "ptx_source": STR,
            "ptx_checked": STR,
            "ptx_measured": STR,
            "glibc_min": STR,
            "windows_gpu": BOOL,
            "windows_source": STR,
            "runpath_nvidia": LIST,
            "unverified": LIST,
            "sonames_source": STR,
            "tf_keras": STR,
            "tf_keras_source": STR,
            "and_cuda": DICT,
            "sonames": DICT,
        },
    ),
    ("cuda_driver", "family"): ({"major": int, "linux": STR}, {"windows": STR}),
    ("cuda_driver", "toolkit"): ({"version": STR, "label": STR, "linux": STR}, {"windows": STR}),
    ("cudnn", "release"): (
        {"version": STR, "last": STR, "min_cc": STR, "cuda": DICT},
        {"max_cc": STR},
    ),
    ("gpus", "gpu"): (
        {
            "key": STR,
            "name": STR,
            "patterns": LIST,
            "examples": LIST,
            "compute_capability": STR,
            "memory_gb": NUM,
            "bandwidth_gbs": NUM,
            "fp32_tflops": NUM,
            "verified": BOOL,
        },
        {"fp16_tensor_tflops": NUM, "bf16_tensor_tflops": NUM},
    ),
    ("gpus", "series"): (
        {"name": STR, "patterns": LIST, "examples": LIST, "compute_capability": STR, "verified": BOOL},
        {},
    ),
    ("gpus", "cc"): (
        {
            "compute_capability": STR,
            "architecture": STR,
            "tensor_cores": BOOL,
            "bf16": BOOL,
            "verified": BOOL,
        },
        {"tensor_core_generation": int, "first_cuda": STR, "first_cuda_source": STR},
    ),
}
ROWS = [
    pytest.param(table, array, i, row, id=f"{table}.{array}[{i}]")
    for (table, array) in SCHEMA
    for i, row in enumerate(tomllib.loads((TABLES / f"{table}.toml").read_text())[array])
]


def load(table: str) -> dict:
    return tomllib.loads((TABLES / f"{table}.toml").read_text())


def test_every_table_file_is_covered_by_the_schema():
    """A new table or array must get a schema here, or it would ship unvalidated."""
    files = {p.stem for p in TABLES.glob("*.toml")}
    assert files == {t for t, _ in SCHEMA}
    for table in files:
        assert {(table, a) for a in load(table)} <= set(SCHEMA)


@pytest.mark.parametrize(("table", "array", "index", "row"), ROWS)
def test_row_schema_source_and_date(table, array, index, row):
    """Every row has the required keys with the right types, a http(s) source and a past date."""
    required, optional = SCHEMA[(table, array)]
    required = {**required, **COMMON_REQUIRED}
    optional = {**optional, **COMMON_OPTIONAL}
    for key in required:
        assert key in row, f"missing {key}"
    for key, value in row.items():
        kind = required.get(key) or optional.get(key)
        assert kind is not None, f"unknown key {key}"
        assert isinstance(value, kind) and not (kind is int and isinstance(value, bool)), key
    for key in [k for k in row if k == "source" or k.endswith("_source")]:
        assert re.match(r"https?://\S+$", row[key]), f"{key} is not a URL"
    for key in [k for k in row if k == "checked" or k.endswith("_checked")]:
        assert datetime.date.fromisoformat(row[key]) <= TODAY


@pytest.mark.parametrize(("table", "array", "index", "row"), ROWS)
def test_unverified_rows_say_why(table, array, index, row):
    """A row marked verified = false must give the reason, so a finding can quote it."""
    if row.get("verified", True) is False:
        assert row.get("reason"), "verified = false needs a reason"
    if row.get("unverified"):
        assert row["verified"] is False


def _sorted_unique(keys):
    assert keys == sorted(keys) and len(set(keys)) == len(keys), keys


def test_versions_sorted_and_unique():
    """Rows stay in version order without duplicates, so lookups are exact."""
    _sorted_unique([Version(r["version"]) for r in load("tensorflow")["release"]])
    _sorted_unique([Version(r["version"]) for r in load("cuda_driver")["toolkit"]])
    _sorted_unique([r["major"] for r in load("cuda_driver")["family"]])
    _sorted_unique([Version(r["version"]) for r in load("cudnn")["release"]])
    _sorted_unique([Version(r["compute_capability"]) for r in load("gpus")["cc"]])
    keys = [r["key"] for r in load("gpus")["gpu"]]
    assert len(set(keys)) == len(keys)


def test_cudnn_row_ranges_do_not_overlap():
    """Each cuDNN row covers version..last; overlapping ranges would make lookups ambiguous."""
    rows = load("cudnn")["release"]
    for row in rows:
        assert Version(row["version"]) <= Version(row["last"])
    for older, newer in zip(rows, rows[1:], strict=False):
        assert Version(older["last"]) < Version(newer["version"])


def test_python_ranges_and_cc_lists_are_well_formed():
    """python_min <= python_max; compute capabilities look like sm_XY / compute_XY, ascending."""
    for row in load("tensorflow")["release"]:
        if "python_max" in row:
            assert Version(row["python_min"]) <= Version(row["python_max"])
        caps = row.get("compute_capabilities", [])
        numbers = [int(re.fullmatch(r"(?:sm|compute)_(\d+)", c)[1]) for c in caps]
        assert numbers == sorted(numbers)


WHEEL_METADATA = Path(__file__).resolve().parents[1] / "scenarios" / "tf"
"""METADATA files of real TensorFlow wheels from PyPI (tests/scenarios/tf/*/METADATA)."""


def wheel_requirements(metadata: Path) -> tuple[str, str, dict[str, Requirement]]:
    """(name, version, requirements by canonical name, `[and-cuda]` ones keyed 'and-cuda:NAME')."""
    text = metadata.read_text(encoding="utf-8")
    head = dict(re.findall(r"^(Name|Version): (.+)$", text, re.MULTILINE))
    reqs = {}
    for line in re.findall(r"^Requires-Dist: (.+)$", text, re.MULTILINE):
        req = Requirement(line)
        extra = req.marker is not None and "extra ==" in str(req.marker)
        if extra and 'extra == "and-cuda"' not in str(req.marker):
            continue
        reqs[("and-cuda:" if extra else "") + canonicalize_name(req.name)] = req
    return head["Name"], head["Version"], reqs


def test_every_specifier_parses():
    """Every requirement and [and-cuda] pin parses with packaging, as the checks will parse it."""
    for row in load("tensorflow")["release"]:
        for spec in [*row["requires"].values(), *row.get("and_cuda", {}).values()]:
            assert str(SpecifierSet(spec)), row["version"]
        if "tf_keras" in row:
            assert SpecifierSet(row["tf_keras"]).contains(row["wheel_version"]), row["version"]


@pytest.mark.parametrize("metadata", sorted(WHEEL_METADATA.glob("*/METADATA")),
                         ids=lambda p: p.parent.name)
def test_requirements_are_the_wheels_own(metadata: Path):
    """A row's `requires` and `and_cuda` are what that wheel's own METADATA (as PyPI serves it)
    says, specifier for specifier, and `and_cuda` is the whole [and-cuda] extra: the checks that
    name a package TensorFlow needs are only as right as these rows."""
    name, version, reqs = wheel_requirements(metadata)
    rows = [r for r in load("tensorflow")["release"] if r["wheel_version"] == version]
    if not rows:
        assert Version(version).is_prerelease, f"{metadata}: no row for {name} {version}"
        return
    (row,) = rows
    for pkg, spec in row["requires"].items():
        key = canonicalize_name(pkg)
        assert key in reqs, f"{version}: {pkg} is not a requirement of the wheel"
        assert SpecifierSet(spec) == reqs[key].specifier, (version, pkg, spec, str(reqs[key]))
    cuda = {k.split(":", 1)[1]: r.specifier for k, r in reqs.items() if k.startswith("and-cuda:")}
    if name == "tensorflow":
        table = {canonicalize_name(p): SpecifierSet(s) for p, s in row.get("and_cuda", {}).items()}
        assert table == cuda, version


def test_the_recorded_wheels_cover_table_rows():
    """The METADATA comparison above runs against rows of the table, not only a pre-release."""
    versions = {wheel_requirements(m)[1] for m in WHEEL_METADATA.glob("*/METADATA")}
    rows = {r["wheel_version"] for r in load("tensorflow")["release"]}
    assert len(versions & rows) >= 2, versions


def test_driver_versions_are_numeric_and_family_floor_is_lowest():
    """Driver strings are dotted numbers; a family floor never exceeds its toolkit rows."""
    table = load("cuda_driver")
    for row in table["toolkit"] + table["family"]:
        for key in ("linux", "windows"):
            if key in row:
                assert re.fullmatch(r"\d+(\.\d+)*", row[key]), row
    floors = {f["major"]: tuple(map(int, f["linux"].split("."))) for f in table["family"]}
    for row in table["toolkit"]:
        major = Version(row["version"]).major
        # CUDA-RN: "CUDA 11.0 was released with an earlier driver version" than the 11.x floor.
        if major in floors and not row["version"].startswith("11.0."):
            assert floors[major] <= tuple(map(int, row["linux"].split(".")))


def test_gpu_examples_match_only_their_own_row():
    """NVML names must map to exactly one model: an ambiguous pattern would give wrong peaks."""
    gpus = load("gpus")["gpu"]
    compiled = {g["key"]: [re.compile(p, re.IGNORECASE) for p in g["patterns"]] for g in gpus}
    ccs = {r["compute_capability"] for r in load("gpus")["cc"]}
    for gpu in gpus:
        assert gpu["compute_capability"] in ccs
        for example in gpu["examples"]:
            hits = [k for k, pats in compiled.items() if any(p.search(example) for p in pats)]
            assert hits == [gpu["key"]], (example, hits)


def test_series_examples_match_only_their_own_row():
    """A named GPU maps to one series, of a compute capability the [[cc]] list knows; where the
    model table knows the name too, both say the same capability."""
    from tfdoctor import compat

    series = load("gpus")["series"]
    compiled = [[re.compile(p, re.IGNORECASE) for p in row["patterns"]] for row in series]
    ccs = {r["compute_capability"] for r in load("gpus")["cc"]}
    for i, row in enumerate(series):
        assert row["compute_capability"] in ccs, row["name"]
        for example in row["examples"]:
            hits = [j for j, pats in enumerate(compiled) if any(p.search(example) for p in pats)]
            assert hits == [i], (example, [series[j]["name"] for j in hits])
            assert compat.compute_capability_of(example)[0] == row["compute_capability"], example
    for model in load("gpus")["gpu"]:
        for example in model["examples"]:
            hits = [row for row, pats in zip(series, compiled, strict=True)
                    if any(p.search(example) for p in pats)]
            assert all(r["compute_capability"] == model["compute_capability"] for r in hits), (example, hits)
    assert compat.compute_capability_of("a Radeon RX 7900") is None


def test_first_cuda_rises_with_the_architecture():
    """The first CUDA that builds for a compute capability never falls as the capability rises,
    and each one names its source (NVIDIA's architecture compatibility guides)."""
    rows = sorted((Version(r["compute_capability"]), r) for r in load("gpus")["cc"] if "first_cuda" in r)
    assert [str(v) for v, _ in rows] == ["7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]
    firsts = [Version(r["first_cuda"]) for _, r in rows]
    assert firsts == sorted(firsts)
    assert all(r["first_cuda_source"].startswith("https://docs.nvidia.com/cuda/") for _, r in rows)
