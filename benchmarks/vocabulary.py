"""Coverage of the mined vocabulary: per source and per TensorFlow release family.

    python benchmarks/vocabulary.py [--speed]

extracted  templates in the source's TOML (for a release: templates whose artefacts hold it)
classified templates with a cause id or a benign reason
causes     templates classified as a cause
recognised templates an instance of which (placeholders filled with values) vocab.match returns
           as that template (or one with the same words and classification)
cut        templates with 15 fixed characters more than the truncation minimum (40); cut_ok: those
           whose instance cut at a space after 45 fixed characters is still recognised
With --speed, also times vocab.match over a synthetic 8 MiB ticket made of the instances.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doctor"))

from tfdoctor.knowledge import vocab  # noqa: E402

PREFIX = "2024-05-01 10:00:00.123456: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:535] "


def recognised(t: vocab.Template) -> bool:
    return vocab.same_reading(vocab.match(PREFIX + vocab.instance_of(vocab.first_line(t.text))), t)


def cut(t: vocab.Template) -> bool | None:
    """None when the template is too short to be cut; else whether its instance, cut at the first
    space after the truncation minimum (plus 5) of fixed text, names it or one it cannot be told from."""
    if vocab.fixed_prefix(vocab.first_line(t.text), vocab.TRUNCATED_MIN + 15) is None:
        return None
    head = vocab.fixed_prefix(vocab.first_line(t.text), vocab.TRUNCATED_MIN + 5)
    piece = PREFIX + vocab.instance_of(head or "")
    got = vocab.match(piece)
    if got is None or vocab.same_reading(got, t):
        return got is not None
    words = set(vocab.PLACEHOLDER.sub(" ", vocab.first_line(t.text)).split()) & set(piece.split())
    return (got.cause, got.benign) == (t.cause, t.benign) and words <= set(got.fixed.split())


def table(rows: dict[str, dict[str, int]], key: str) -> str:
    cols = ("extracted", "classified", "causes", "recognised", "causes_recognised", "cut", "cut_ok")
    out = [f"| {key} | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
    for name, r in rows.items():
        out.append(f"| {name} | " + " | ".join(str(r.get(c, 0)) for c in cols) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--speed", action="store_true")
    args = p.parse_args(argv)
    by_source: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_release: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    missed = []
    for t in vocab.templates():
        ok = recognised(t)
        c = cut(t)
        rows = [by_source[t.source], by_source["all"]]
        if t.source in ("tensorflow", "xla"):
            rows += [by_release[r] for r in t.releases]
        for row in rows:
            row["extracted"] += 1
            row["classified"] += (t.cause is not None) != (t.benign is not None)
            row["causes"] += t.cause is not None
            row["recognised"] += ok
            row["causes_recognised"] += ok and t.cause is not None
            if c is not None:
                row["cut"] += 1
                row["cut_ok"] += c
        if not ok:
            missed.append(t)
    order = sorted((k for k in by_release), key=lambda f: tuple(int(x) for x in f.split(".")))
    print(table({k: by_source[k] for k in [*vocab.SOURCES, "all"] if k in by_source}, "source"))
    print()
    print(table({k: by_release[k] for k in order}, "TF family (tensorflow + xla)"))
    for t in missed:
        print(f"not recognised: [{t.source}] {t.text[:100]!r}", file=sys.stderr)
    if args.speed:
        lines = [PREFIX + vocab.instance_of(vocab.first_line(t.text)) for t in vocab.templates()]
        filler = "Epoch 1/10 - loss: 0.6931 - accuracy: 0.5000 - val_loss: 0.6920 - step 100/1000"
        body, size = [], 0
        while size < 8 << 20:
            for line in lines[:50] + [filler] * 200:
                body.append(line)
                size += len(line) + 1
        start = time.perf_counter()
        hits = sum(vocab.match(line) is not None for line in body)
        elapsed = time.perf_counter() - start
        print(
            f"\nspeed: {len(body)} lines ({size >> 20} MiB) in {elapsed:.2f} s, {hits} matched",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
