"""Generate the facts part of docs/report.schema.json, and docs/facts.md, from facts.py.

`python tests/contract/schema_gen.py` rewrites both; tests/contract/test_schema.py keeps them
equal to this output. The report's top level (verdict, config, findings, outcomes) and the
`$defs` with lowercase names stay hand-written in the JSON file; every CamelCase `$defs` entry
is one dataclass of facts.py, rebuilt here from `dataclasses.fields`, the type hints and the
attribute docstrings. Meanings live in facts.py only.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from tfdoctor import facts as facts_module
from tfdoctor import facts_smoke
from tfdoctor.facts import SCHEMA_VERSION, Facts

DOCS = Path(__file__).resolve().parents[2] / "docs"
SCHEMA = DOCS / "report.schema.json"
CLUSTER_SCHEMA = DOCS / "cluster.schema.json"
FACTS_DOC = DOCS / "facts.md"
ID_PATTERN = "^[a-z0-9]+(-[a-z0-9]+)*$"

# Hand constraints the type hints cannot say: closed vocabularies the probes and the smoke runner
# produce (each list checked against the code that writes the field), merged into the property.
OVERRIDES: dict[tuple[str, str], dict[str, Any]] = {
    ("Facts", "schema_version"): {"const": SCHEMA_VERSION},
    ("ProbeIssue", "kind"): {"enum": ["timeout", "crash", "error"]},
    ("Facts", "unknown"): {"items": {"enum": sorted(facts_module.UNKNOWABLE)}},
    ("ToolkitFacts", "via"): {"enum": ["dir", "nvcc", "cuda_home", "conda", "ticket", "claimed",
                                       "tensorflow log"]},
    ("GpuFacts", "compute_capability"): {"pattern": r"^[0-9]+\.[0-9]+$"},
    # probes/libresolve.py search_steps (rpath only when the object has no RUNPATH), then
    # probes/libraries.py: "preload" (the preload fix loaded it by path), "tensorflow" (TF's own
    # loader answered otherwise).
    ("LibraryFacts", "found_via"): {
        "enum": [
            "rpath", "ld_library_path", "runpath", "ldconfig", "default_dirs", "preload", "tensorflow", None
        ]
    },
    ("LibraryFacts", "origin"): {"enum": ["pip", "conda", "cuda-toolkit", "wsl", "system", None]},
    ("LibraryFacts", "version_source"): {"enum": ["library", "header", "metadata", "filename", None]},
    ("XlaFacts", "ptxas_found_via"): {"enum": ["xla_flags", "path", "cuda_root", None]},
    ("LogCause", "id"): {"pattern": ID_PATTERN},
    ("RecipeResult", "status"): {
        "enum": ["passed", "failed", "error", "skipped", "timeout", "crashed", "not-run"]
    },
    # smoke/runner.py: _loop, _ended_outcome, the could-not-start and internal-error returns.
    ("SmokeFacts", "outcome"): {
        "enum": [
            "completed",
            "timeout",
            "crashed",
            "exited",
            "garbage",
            "could-not-start",
            "budget",
            "cancelled",
            "internal-error",
            "ticket",
        ]
    },
    ("SmokeFacts", "seconds"): {"minimum": 0},
}

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def attribute_docs() -> dict[str, dict[str, str]]:
    """Class -> field -> the string literal written right after the field in facts.py (and in
    facts_smoke.py, whose classes facts.py re-exports)."""
    docs: dict[str, dict[str, str]] = {}
    nodes = [
        node
        for module in (facts_module, facts_smoke)
        for node in ast.parse(Path(module.__file__).read_text(encoding="utf-8")).body
    ]
    for node in nodes:
        if not isinstance(node, ast.ClassDef):
            continue
        fields = docs.setdefault(node.name, {})
        for stmt, after in zip(node.body, node.body[1:], strict=False):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                fields[stmt.target.id] = " ".join(after.value.value.split())
    return docs


def _ref(cls: type) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{cls.__name__}"}


def type_schema(tp: Any, found: list[type]) -> dict[str, Any]:
    """JSON Schema of one annotation; dataclasses met on the way are appended to `found`."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"unsupported union {tp}")
        schema = type_schema(inner[0], found)
        if "type" in schema:
            return {**schema, "type": [schema["type"], "null"]}
        return {"anyOf": [schema, {"type": "null"}]}
    if dataclasses.is_dataclass(tp):
        if tp not in found:
            found.append(tp)
        return _ref(tp)
    if typing.get_origin(tp) is tuple:
        item, dots = typing.get_args(tp)
        assert dots is Ellipsis, f"only tuple[X, ...] is supported, not {tp}"
        return {"type": "array", "items": type_schema(item, found)}
    if typing.get_origin(tp) is dict:
        key, value = typing.get_args(tp)
        assert key is str, f"only dict[str, X] is supported, not {tp}"
        return {"type": "object", "additionalProperties": type_schema(value, found)}
    if tp is Any:
        return {}
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    raise TypeError(f"no JSON Schema for {tp}")


# Fields added to schema "2" after documents of it were published: tfdoctor writes them, a document
# from before them lacks them and still validates (and replays, with the field's default).
ADDED_LATER: set[tuple[str, str]] = {
    ("Facts", "tensorrt"),
    ("IntentFacts", "start_seconds"),
    ("IntentFacts", "multi_gpu"),
    ("IntentFacts", "no_wheel"),
    ("HostFacts", "kernel_log_read"),
    ("HostFacts", "prime_profile"),
    ("PlatformFacts", "wsl_driver_libs"),
    ("PlatformFacts", "container_toolkit"),
    ("PlatformFacts", "hosted"),
    ("CudaDriverFacts", "copied_over"),
    ("GpuFacts", "memory_used_mib"),
    ("ToolkitFacts", "cudnn_version"),
    ("DriverFacts", "topology"),
    ("Facts", "node"),
    ("Facts", "assumed"),
    ("Facts", "intent"),
    ("GpuFacts", "power_default_limit_w"),
    ("NvmlSample", "power_default_limit_w"),
}


def class_schema(cls: type, docs: dict[str, dict[str, str]], found: list[type]) -> dict[str, Any]:
    """One dataclass as a closed object: to_dict always writes every field."""
    hints = typing.get_type_hints(cls, vars(facts_module))
    fields = [f.name for f in dataclasses.fields(cls)]
    properties = {}
    for name in fields:
        prop = type_schema(hints[name], found)
        prop.update(OVERRIDES.get((cls.__name__, name), {}))
        if name in docs.get(cls.__name__, {}):
            prop["description"] = docs[cls.__name__][name]
        properties[name] = prop
    return {
        "description": " ".join((cls.__doc__ or "").split()),
        "type": "object",
        "required": [f for f in fields if (cls.__name__, f) not in ADDED_LATER],
        "additionalProperties": False,
        "properties": properties,
    }


def facts_defs() -> dict[str, dict[str, Any]]:
    """`$defs` for Facts and every dataclass reachable from it, in discovery order."""
    docs = attribute_docs()
    found: list[type] = [Facts]
    defs: dict[str, dict[str, Any]] = {}
    for cls in found:  # grows while we walk it
        defs[cls.__name__] = class_schema(cls, docs, found)
    unused = {key for key in OVERRIDES if key[0] not in defs or key[1] not in defs[key[0]]["properties"]}
    assert not unused, f"OVERRIDES name fields that do not exist: {sorted(unused)}"
    return defs


def render_schema(current: dict[str, Any]) -> str:
    """The report schema: `current`'s hand-written parts plus freshly generated facts defs."""
    schema = dict(current)
    hand = {k: v for k, v in current.get("$defs", {}).items() if not k[:1].isupper()}
    schema["properties"] = {**current["properties"], "facts": _ref(Facts)}
    schema["$defs"] = {**hand, **facts_defs()}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def render_cluster_schema(current: dict[str, Any], report: dict[str, Any]) -> str:
    """The cluster document's schema: `current`'s hand-written parts (the top level and the
    `cluster_*` `$defs`), the worker outcomes from cluster/workers.py, and the report schema
    copied in whole (as `$defs/report` plus its own `$defs`), so one file validates a cluster
    document with any 2020-12 validator and no reference to resolve."""
    from tfdoctor.cluster.workers import OUTCOMES

    schema = dict(current)
    own = {k: v for k, v in current["$defs"].items() if k.startswith("cluster_")}
    own["cluster_worker"]["properties"]["outcome"] = {"enum": list(OUTCOMES)}
    body = {k: v for k, v in report.items() if k not in ("$schema", "$id", "$defs")}
    clash = set(own) & set(report["$defs"])
    assert not clash and "report" not in report["$defs"], f"report $defs named like cluster ones: {clash}"
    schema["$defs"] = {**own, "report": body, **report["$defs"]}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def _type_text(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in prop:
        return " or ".join(_type_text(p) for p in prop["anyOf"])
    if "const" in prop:
        return f"`{json.dumps(prop['const'])}`"
    if "enum" in prop:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    kinds = prop.get("type", [])
    if not kinds:
        return "any"
    parts = []
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        if kind == "array":
            parts.append(f"array of {_type_text(prop['items'])}")
        elif kind == "object":
            parts.append(f"object: string → {_type_text(prop['additionalProperties'])}")
        else:
            parts.append(kind)
    compound = any(" " in p for p in parts)  # "array of string, or null" reads unambiguously
    return (", or " if compound else " or ").join(parts)


def _paths(defs: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """Def name -> JSON paths in the report where it appears (`facts.driver.gpus[]`)."""
    paths: dict[str, list[str]] = {"Facts": ["facts"]}
    for name, schema in defs.items():  # discovery order: parents come first
        for here in paths.get(name, []):
            for field, prop in schema["properties"].items():
                text = json.dumps(prop)
                for child in defs:
                    if f'"#/$defs/{child}"' in text:
                        suffix = "[]" if prop.get("type") == "array" or "items" in prop else ""
                        paths.setdefault(child, []).append(f"{here}.{field}{suffix}")
    return paths


def render_facts_doc() -> str:
    """docs/facts.md: one table per dataclass, meanings from the attribute docstrings."""
    defs = facts_defs()
    paths = _paths(defs)
    lines = [
        "# Facts reference (schema version " + SCHEMA_VERSION + ")",
        "",
        "Generated from `doctor/tfdoctor/facts.py` by `python tests/contract/schema_gen.py`; a test",
        "keeps it, and the `$defs` of [report.schema.json](report.schema.json), in step with the",
        "code. `facts` is the document `tfdoctor --save` writes and the `facts` key of every",
        "`--json` report ([json-report.md](json-report.md)). Every object has every field listed",
        'here and no other. `null` always means "not collected"; absence is spelled out (`[]`,',
        "`false`, `{}`).",
        "",
    ]
    for name, schema in defs.items():
        where = ", ".join(f"`{p}`" for p in paths.get(name, []))
        lines += [
            f"## {name}",
            "",
            schema["description"],
            "",
            f"At {where}.",
            "",
            "| field | type | meaning |",
            "| --- | --- | --- |",
        ]
        for field, prop in schema["properties"].items():
            meaning = prop.get("description", "").replace("|", "\\|")
            kind = _type_text(prop).replace("|", "\\|")
            lines.append(f"| `{field}` | {kind} | {meaning} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    SCHEMA.write_text(render_schema(json.loads(SCHEMA.read_text(encoding="utf-8"))), encoding="utf-8")
    FACTS_DOC.write_text(render_facts_doc(), encoding="utf-8")
    CLUSTER_SCHEMA.write_text(
        render_cluster_schema(
            json.loads(CLUSTER_SCHEMA.read_text(encoding="utf-8")),
            json.loads(SCHEMA.read_text(encoding="utf-8")),
        ),
        encoding="utf-8",
    )
    sys.stdout.write(f"wrote {SCHEMA}\nwrote {FACTS_DOC}\nwrote {CLUSTER_SCHEMA}\n")
