"""Mine the GPU-stack message vocabulary from real artefacts into doctor/tfdoctor/knowledge/vocabulary/.

    python benchmarks/mine_vocabulary.py            # write the vocabulary TOMLs
    python benchmarks/mine_vocabulary.py --fetch    # first: download every family's wheel, cache strings
    python benchmarks/mine_vocabulary.py --check    # exit 1 if the committed data disagrees with what
                                                    # the artefacts present here show

Sources (docs/vocabulary.md has the table):
- TensorFlow 2.0-2.21: tf_sources.toml (templates read from TensorFlow's C++ sources) confirmed per
  release family against the strings of its wheel's shared libraries, plus every complete printf
  template of the GPU stack found in those strings, plus raise/logging messages of the wheel's
  Python about the GPU stack (vocab_artefacts.py says where each family's artefacts come from).
- CUDA driver CUresult (cuda.h), NVML return codes (pynvml), cuDNN status (cudnn_graph.h), NCCL
  results (nccl.h), Keras 3 (the keras wheel), pip (pip's own source), the tensorflow-gpu
  placeholder (its sdist, cached), nvidia-container-cli (container_sources.toml).
Every template is classified by classify.toml; the GPU-stack filter is vocab_extract.GPU_WORDS.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vocab_artefacts as art  # noqa: E402
import vocab_extract as ex  # noqa: E402
import vocab_finite as fin  # noqa: E402
from vocab_toml import dump_entries, load_toml  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doctor"))
from tfdoctor.knowledge.vocab import SOURCES as SOURCES_WRITTEN  # noqa: E402  (the files the matcher reads)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "doctor/tfdoctor/knowledge/vocabulary"

# A template belongs to XLA when its source file is XLA's or its words are XLA's compiler path.
_XLA_FILE = re.compile(
    r"(^|/)xla/(service|stream_executor/(cuda/(subprocess|assemble|.*compil)|gpu/(asm|redzone)))"
)
_XLA_WORDS = re.compile(
    r"ptxas|\bPTX\b|nvlink|nvjitlink|libdevice|\bHLO\b|\bXLA\b|autotun|Triton|clique|XLA_FLAGS"
)


def _area(text: str, source_file: str | None) -> str:
    if source_file and (_XLA_FILE.search(source_file) or "/service/gpu/" in source_file):
        return "xla"
    if source_file is None and _XLA_WORDS.search(text):
        return "xla"
    return "tensorflow"


Release = tuple[set[str], dict[str, str], list[str]]
"""One family's binary strings, GPU-related Python sources, and what they came from."""
Artefacts = dict[str, Callable[[], Release]]
"""Family -> its loader (a family's strings take hundreds of MB: one is loaded at a time)."""


def release_artefacts(families: Iterable[str]) -> tuple[Artefacts, set[str]]:
    """The families that have artefacts here, and those whose whole wheel they are (the others have
    only tests/envs' libtensorflow_framework.so.2)."""
    out: Artefacts = {}
    whole = set()
    for fam in families:
        if (art.CACHE / fam / "strings.txt.gz").exists():
            out[fam] = partial(_load, art.cached_release, fam)
            whole.add(fam)
        elif fam in art.VENVS and (art.ENVS / art.VENVS[fam]).is_dir():
            out[fam] = partial(_load, art.local_release, fam)
            whole.add(fam)
        elif (art.ENVS / "frameworks" / art.RELEASES[fam][0]).is_dir():
            out[fam] = partial(_load, art.local_release, fam)
    return out, whole


def _load(loader: Callable[[str], Release | None], fam: str) -> Release:
    got = loader(fam)
    return got if got is not None else (set(), {}, [])


def mine_tensorflow(artefacts: Artefacts) -> list[dict]:
    """TensorFlow's and XLA's templates, each with the families whose artefacts contain it."""
    curated = load_toml(OUT / "tf_sources.toml")["template"]
    entries: dict[str, dict] = {}
    for t in curated:
        entries[t["text"]] = {
            "text": t["text"],
            "level": t["level"],
            "source_file": t.get("source_file"),
            "releases": set(),
            "origin": "source",
        }
    py_found: dict[str, dict] = {}
    words = ex.anchor_words(t["text"] for t in curated)
    for fam, load in artefacts.items():
        strings, python, _ = load()
        for s in ex.binary_format_strings(strings):
            e = entries.setdefault(
                s,
                {
                    "text": s,
                    "level": ex.guess_level(s),
                    "source_file": None,
                    "releases": set(),
                    "origin": "binary",
                },
            )
            e["releases"].add(fam)
        for path, source in python.items():
            for text, level in ex.python_messages(source):
                text = ex.clean_python_template(text)
                gpu = ex.GPU_WORDS.search(text) or path.endswith(art.SELF_CHECK)
                if len(ex.fixed_text(text)) < 20 or not gpu:
                    continue
                e = py_found.setdefault(
                    text,
                    {
                        "text": text,
                        "level": level,
                        "source_file": path,
                        "releases": set(),
                        "origin": "python",
                    },
                )
                e["releases"].add(fam)
        # Confirm the curated templates: all their literal fragments in this family's strings.
        index = ex.StringIndex(strings, words)
        for t in curated:
            if all(index.contains(f) for f in ex.fragments(t["text"])):
                entries[t["text"]]["releases"].add(fam)
        print(f"mined {fam}", file=sys.stderr, flush=True)
    for text, e in py_found.items():
        entries.setdefault(text, e)
    out = []
    for e in entries.values():
        if not e["releases"]:
            continue  # read in a source, but no release's artefacts hold it: not kept
        e["source"] = _area(e["text"], e["source_file"])
        e["releases"] = sorted(e["releases"], key=_family_key)
        out.append(e)
    return out


def _family_key(fam: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", fam))


def classify(entries: list[dict], rules: list[dict]) -> list[dict]:
    """Give every entry its cause or benign reason from the first rule that fits it."""
    compiled = [(r, re.compile(r["match"])) for r in rules]
    for e in entries:
        for r, pattern in compiled:
            if "sources" in r and e["source"] not in r["sources"]:
                continue
            if "levels" in r and e["level"] not in r["levels"]:
                continue
            if "origins" in r and e["origin"] not in r["origins"]:
                continue
            if pattern.search(e["text"]):
                if "cause" in r:
                    e["cause"] = r["cause"]
                else:
                    e["benign"] = r["benign"]
                break
    return entries


def mine_all(artefacts: Artefacts, *, tensorflow: bool = True) -> dict[str, list[dict]]:
    """Every source's classified entries, keyed by source name (the TOML file's stem); without
    `tensorflow`, only the finite vocabularies (no wheel is read)."""
    entries = (mine_tensorflow(artefacts) if tensorflow else []) + fin.mine_finite()
    rules = load_toml(OUT / "classify.toml")["rule"]
    by_source: dict[str, list[dict]] = {}
    for e in classify(entries, rules):
        by_source.setdefault(e["source"], []).append(e)
    for items in by_source.values():
        items.sort(key=lambda e: (e["text"].lower(), e["text"]))
    return by_source


HEADERS = {
    "tensorflow": "TensorFlow's own messages about the GPU stack: tf_sources.toml's templates (read from\n"
    "# TensorFlow's C++ sources) and the complete printf templates of the GPU stack in its binaries,\n"
    "# each with the release families whose wheels' shared libraries hold all its literal fragments;\n"
    "# and the wheel's Python raise/logging messages that name the GPU stack.",
    "xla": "XLA's messages (ptxas, libdevice, the driver JIT, NCCL cliques, autotuning), found in\n"
    "# TensorFlow's binaries: XLA is linked into libtensorflow_cc / _pywrap_tensorflow_internal.",
}
KEEP_RULE = (
    "# Kept: a template of the GPU stack (its source file is one of the GPU ones, or its words match\n"
    "# benchmarks/vocab_extract.py GPU_WORDS), found in at least one artefact listed in `releases`.\n"
    "# Generated by benchmarks/mine_vocabulary.py; edit tf_sources.toml or classify.toml, then re-run."
)


def write_all(by_source: dict[str, list[dict]]) -> None:
    for source, items in by_source.items():
        header = HEADERS.get(source) or fin.HEADERS.get(source, source)
        (OUT / f"{source}.toml").write_text(dump_entries(f"# {header}\n{KEEP_RULE}\n", items))


def check(by_source: dict[str, list[dict]], full: set[str], partial: set[str]) -> list[str]:
    """Differences between the committed data and what the artefacts present here can show.

    A family whose whole wheel is here (the cache, or a tests/envs venv) must give exactly the
    committed releases; one with only its framework library (tests/envs frameworks/) holds part of
    the wheel, so what it shows must be committed, not the reverse. A finite vocabulary is compared
    when the artefact here is the version the data was mined from.
    """
    problems = []
    for source in sorted(set(by_source) | set(SOURCES_WRITTEN)):
        items = by_source.get(source, [])
        committed = {e["text"]: e for e in load_toml(OUT / f"{source}.toml").get("template", [])}
        mined = {e["text"]: e for e in items}
        if source not in ("tensorflow", "xla"):
            here = {r for e in items for r in e["releases"]}
            there = {r for e in committed.values() for r in e.get("releases", [])}
            if not items or here != there:
                print(f"{source}: artefact here {sorted(here)}, data from {sorted(there)}: not compared",
                      file=sys.stderr)  # fmt: skip
                continue
            for text in sorted(set(mined) ^ set(committed)):
                where = "not committed" if text in mined else "not found here"
                problems.append(f"{source}: {where}: {text[:90]!r}")
        for text, e in mined.items():
            c = committed.get(text)
            if c is None:
                if source in ("tensorflow", "xla"):
                    problems.append(f"{source}: not committed: {text[:90]!r}")
                continue
            if source in ("tensorflow", "xla"):
                here, there = set(e["releases"]), set(c["releases"])
                if here & full != there & full or not (here & partial) <= there:
                    problems.append(f"{source}: releases of {text[:70]!r}: here {sorted(here)}, "
                                    f"committed {sorted(there & (full | partial))}")  # fmt: skip
            if (c.get("cause"), c.get("benign")) != (e.get("cause"), e.get("benign")):
                problems.append(f"{source}: classification differs for {text[:70]!r}")
        if source in ("tensorflow", "xla"):
            for text, c in committed.items():
                if text not in mined and set(c["releases"]) & full:
                    problems.append(f"{source}: committed for {sorted(set(c['releases']) & full)}, "
                                    f"not found here: {text[:70]!r}")  # fmt: skip
    return problems




def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fetch", action="store_true", help="download and cache every family's wheel strings")
    p.add_argument("--check", action="store_true", help="compare with the committed data, write nothing")
    p.add_argument("--families", nargs="*", default=list(art.FAMILIES))
    p.add_argument("--finite-only", action="store_true", help="re-mine only the vocabularies around TF")
    args = p.parse_args(argv)
    if args.fetch:
        for fam in args.families:
            if art.cached_release(fam) is None:
                print(f"fetching {fam}", file=sys.stderr, flush=True)
                art.fetch_release(fam)
    if args.finite_only:
        by_source = mine_all({}, tensorflow=False)
        write_all(by_source)
        return 0
    artefacts, whole = release_artefacts(args.families)
    print(f"artefacts for {len(artefacts)} families: {', '.join(artefacts)}; whole wheels: "
          f"{', '.join(sorted(whole, key=_family_key))}", file=sys.stderr)  # fmt: skip
    by_source = mine_all(artefacts)
    if args.check:
        problems = check(by_source, whole, set(artefacts) - whole)
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    write_all(by_source)
    for source, items in sorted(by_source.items()):
        print(f"{source}: {len(items)} templates", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
