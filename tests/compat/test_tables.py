"""Contract test for compat_tables/*.toml: schema, sources, dates, order, specifiers."""

from __future__ import annotations

import datetime
import re
import sys

import pytest
from packaging.specifiers import SpecifierSet
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
    ("gpus", "cc"): (
        {
            "compute_capability": STR,
            "architecture": STR,
            "tensor_cores": BOOL,
            "bf16": BOOL,
            "verified": BOOL,
        },
        {"tensor_core_generation": int},
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


def test_specifiers_parse():
    """Every requirement and [and-cuda] pin parses with packaging, as the checks will parse it."""
    for row in load("tensorflow")["release"]:
        for spec in [*row["requires"].values(), *row.get("and_cuda", {}).values()]:
            SpecifierSet(spec)
        if "tf_keras" in row:
            SpecifierSet(row["tf_keras"])


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
