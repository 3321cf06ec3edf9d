"""The cluster findings: pure functions over the worker records and the node reports.

A worker record is the plain dict `record()` builds from one worker's events (the same shape
whether the events were read from a local child or gathered to the chief over the job's own
collectives). Finding ids are a public contract, listed in docs/cluster.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from statistics import median
from typing import Any

from tfdoctor.cluster.catalogue import finding as _finding
from tfdoctor.findings import Finding

SKEW_LIMIT_S = 1.0
"""TF's coordination service and NCCL do not care about wall clocks, but logs, checkpoints'
timestamps and any time-based rendezvous do; more than a second apart is a misconfigured NTP."""
STRAGGLER_RATIO = 1.5
"""A task whose local compute step is 1.5x the others' median drags every synchronous step."""
STRAGGLER_FLOOR_S = 0.01
"""...and 10 ms slower in absolute terms: a 1 ms step twice as long is scheduling noise
(measured: 0.3 vs 3.2 ms between two idle tasks of one 2-core machine)."""
ROOTS = (
    "cluster-port-unreachable",
    "cluster-worker-could-not-start",
    "cluster-tf-import-failed",
    "cluster-worker-died",
    "cluster-worker-hung",
    "cluster-tf-version-differs",
)
"""Findings that explain the others, in the order a root cause is picked."""
CONSEQUENCES = frozenset({"cluster-collective-failed"})
NCCL_KEYS = (
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_HCA",
    "NCCL_IB_DISABLE",
    "NCCL_P2P_DISABLE",
    "NCCL_DEBUG",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_ALGO",
    "NCCL_PROTO",
)


def record(
    index: int,
    address: str,
    events: dict[str, dict[str, Any]],
    *,
    outcome: str,
    exit: str | None = None,
    log: tuple[str, ...] = (),
    survivors: tuple[int, ...] = (),
    phase: str | None = None,
) -> dict[str, Any]:
    """One worker as the cluster document shows it (docs/cluster.md, "workers")."""
    hello, imp = events.get("hello") or {}, events.get("import") or {}
    strategy = events.get("strategy") or {}
    return {
        "index": index,
        "task": hello.get("task") or f"worker:{index}",
        "address": address,
        "hostname": hello.get("hostname"),
        "ip": hello.get("ip"),
        "interface": hello.get("interface"),
        "pid": hello.get("pid"),
        "python": hello.get("python"),
        "nccl_env": dict(hello.get("nccl_env") or {}),
        "outcome": outcome,
        "phase": phase,
        "exit": exit,
        "error": (events.get("error") or {}).get("detail"),
        "tf_version": imp.get("version"),
        "is_cuda_build": imp.get("is_cuda_build"),
        "import_seconds": imp.get("seconds"),
        "collective": strategy.get("collective"),
        "replicas": strategy.get("replicas"),
        "allreduce": list((events.get("allreduce") or {}).get("results") or []),
        "clock_spread_s": (events.get("skew") or {}).get("spread_s"),
        "compute_seconds": list((events.get("compute") or {}).get("compute_seconds") or []),
        "step_seconds": list((events.get("steps") or {}).get("step_seconds") or []),
        "log_tail": list(log),
        "survivors": list(survivors),
    }


def judge(workers: list[dict[str, Any]], nodes: list[dict[str, Any] | None]) -> list[Finding]:
    """Every cluster finding, most basic first (a dead worker before a slow one)."""
    out: list[Finding] = []
    for rule in (_processes, _versions, _stacks, _nodes, _network, _sums, _timing, _summary):
        out.extend(rule(workers, nodes))
    cause = next((c for c in ROOTS if any(f.id == c for f in out)), None)
    if cause is not None:  # every worker's collectives fail once one peer is gone
        out = [replace(f, caused_by=cause) if f.id in CONSEQUENCES else f for f in out]
    return sorted(
        out,
        key=lambda f: (
            f.caused_by is not None,
            -f.severity.rank,
            ROOTS.index(f.id) if f.id in ROOTS else len(ROOTS),
        ),
    )


def _processes(workers: list[dict[str, Any]], _: Any) -> Iterator[Finding]:
    for w in workers:
        name, outcome = f"{w['task']} ({w['address']})", w["outcome"]
        where = {"phase": w.get("phase") or "-", "log": " | ".join(w["log_tail"][-3:]) or "-"}
        if outcome == "died":
            yield _finding(
                "cluster-worker-died",
                f"{name} died ({w['exit'] or 'no end'}) after '{where['phase']}'; the job "
                "cannot finish without it.",
                exit=w["exit"],
                **where,
            )
        elif outcome == "hung":
            yield _finding(
                "cluster-worker-hung",
                f"{name} stopped making progress after '{where['phase']}' and was killed "
                "at the deadline; the others were waiting for it.",
                **where,
            )
        elif outcome == "port-closed":
            yield _finding(
                "cluster-port-unreachable",
                f"Nothing accepts connections at {w['address']} ({w['exit']}): the "
                "other workers wait for it until the deadline.",
                address=w["address"],
                error=w["exit"],
            )
        elif outcome == "error" and not w["tf_version"]:
            yield _finding(
                "cluster-tf-import-failed",
                f"{name} could not import TensorFlow: {_gist(w['error'])}",
                **where,
            )
        elif outcome in ("error",):
            yield _finding(
                "cluster-collective-failed",
                f"{name} failed after '{where['phase']}': {_gist(w['error'])}",
                **where,
            )
        elif outcome == "could-not-start":
            yield _finding(
                "cluster-worker-could-not-start",
                f"{name} could not start: {w['exit']}.",
                exit=w["exit"],
            )
        if w["survivors"]:
            yield _finding(
                "cluster-orphan-process",
                f"{name} left processes behind: {w['survivors']}.",
                survivors=w["survivors"],
            )


def _versions(workers: list[dict[str, Any]], _: Any) -> Iterator[Finding]:
    seen = {w["task"]: w["tf_version"] for w in workers if w["tf_version"]}
    if len(set(seen.values())) > 1:
        common = Counter(seen.values()).most_common(1)[0][0]
        odd = {t: v for t, v in seen.items() if v != common}
        yield _finding(
            "cluster-tf-version-differs",
            f"TensorFlow differs between workers: {_pairs(odd)} against {common} on the "
            "others; MultiWorkerMirroredStrategy needs one version everywhere.",
            **seen,
        )


def _stacks(_: Any, nodes: list[dict[str, Any] | None]) -> Iterator[Finding]:
    from tfdoctor.share.fleet import FINGERPRINT, fingerprint

    prints = {
        i: dict(zip(FINGERPRINT, fingerprint(n.get("facts") or {}), strict=True))
        for i, n in enumerate(nodes)
        if isinstance(n, dict)
    }
    for key, label in (
        ("cuda_driver", "CUDA driver version"),
        ("cudnn", "cuDNN"),
        ("nccl", "NCCL"),
        ("driver", "driver branch"),
    ):
        values = {i: fp[key].split(".")[0] if key == "driver" else fp[key] for i, fp in prints.items()}
        if len(set(values.values())) > 1:
            yield _finding(
                "cluster-stack-differs",
                f"{label} differs between nodes: "
                + ", ".join(f"worker:{i} {v}" for i, v in sorted(values.items()))
                + ".",
                what=key,
                **{f"worker:{i}": v for i, v in values.items()},
            )


def _nodes(_: Any, nodes: list[dict[str, Any] | None]) -> Iterator[Finding]:
    for i, node in enumerate(nodes):
        verdict = (node or {}).get("verdict") or {}
        if verdict.get("status") == "problems":
            yield _finding(
                "cluster-node-problems",
                f"worker:{i}'s own diagnosis found problems "
                f"(root cause: {verdict.get('root_cause') or 'see its report'}).",
                worker=i,
                root_cause=verdict.get("root_cause"),
            )


def _network(workers: list[dict[str, Any]], _: Any) -> Iterator[Finding]:
    hosts = {w["hostname"] for w in workers if w["hostname"]}
    for w in workers:
        ifname = w["nccl_env"].get("NCCL_SOCKET_IFNAME")
        iface = w["interface"]
        if ifname and iface and not _ifname_matches(ifname, iface):
            yield _finding(
                "cluster-nccl-ifname-mismatch",
                f"{w['task']}'s address {w['address']} is on {iface}, but "
                f"NCCL_SOCKET_IFNAME={ifname} excludes it.",
                interface=iface,
                NCCL_SOCKET_IFNAME=ifname,
            )
        if len(hosts) > 1 and iface == "lo":
            yield _finding(
                "cluster-address-loopback",
                f"{w['task']} on {w['hostname']} listens on a loopback address "
                f"({w['address']}) in a multi-host cluster.",
            )
    envs = {
        w["task"]: tuple(sorted((k, v) for k, v in w["nccl_env"].items() if k in NCCL_KEYS))
        for w in workers
        if w["hostname"]
    }
    if len(set(envs.values())) > 1:
        yield _finding(
            "cluster-nccl-env-differs",
            "NCCL settings differ between workers: "
            + "; ".join(f"{t}: {' '.join(f'{k}={v}' for k, v in e) or '(none)'}" for t, e in envs.items())
            + ".",
        )


def _ifname_matches(spec: str, iface: str) -> bool:
    """NCCL_SOCKET_IFNAME: comma-separated prefixes; ^ excludes, = makes them exact."""
    exclude = spec.startswith("^")
    spec = spec.lstrip("^")
    exact = spec.startswith("=")
    names = [p for p in spec.lstrip("=").split(",") if p]
    hit = any(iface == p if exact else iface.startswith(p) for p in names)
    return hit != exclude


def _sums(workers: list[dict[str, Any]], _: Any) -> Iterator[Finding]:
    for w in workers:
        bad = [r for r in w["allreduce"] if not r.get("exact")]
        if bad:
            r = bad[0]
            yield _finding(
                "cluster-allreduce-wrong",
                f"{w['task']}'s all-reduce of {r['bytes']} bytes is wrong in "
                f"{r['wrong_elements']} element(s) (first: {r['got_first']:g}, "
                f"expected {r['expected_first']:g}).",
                bytes=r["bytes"],
                wrong_elements=r["wrong_elements"],
            )


def _timing(workers: list[dict[str, Any]], _: Any) -> Iterator[Finding]:
    spread = max((w["clock_spread_s"] for w in workers if w["clock_spread_s"] is not None), default=None)
    if spread is not None and spread > SKEW_LIMIT_S:
        yield _finding(
            "cluster-clock-skew",
            f"Worker clocks differ by up to {spread:.2f} s.",
            spread_s=round(spread, 3),
        )
    # The fastest of its steps: a straggler is slow even at its best, noise is not.
    compute = {w["task"]: min(w["compute_seconds"]) for w in workers if w["compute_seconds"]}
    if len(compute) < 2:
        return
    for task, t in compute.items():
        rest = median(v for k, v in compute.items() if k != task)
        if rest > 0 and t / rest >= STRAGGLER_RATIO and t - rest >= STRAGGLER_FLOOR_S:
            yield _finding(
                "cluster-straggler",
                f"{task} is a straggler: its compute step takes {t / rest:.1f}x the "
                "others' (every synchronous step waits for it).",
                task=task,
                ratio=round(t / rest, 2),
                step_s=round(t, 4),
                others_s=round(rest, 4),
            )


def _summary(workers: list[dict[str, Any]], _: Any) -> Iterator[Finding]:
    done = [w for w in workers if w["allreduce"] and w["outcome"] == "completed"]
    if not done:
        return
    chief = done[0]
    largest = max(chief["allreduce"], key=lambda r: r["bytes"])
    collective = chief["collective"] or "?"
    yield _finding(
        "cluster-allreduce-measured",
        f"{len(workers)} workers, {collective} collectives: all-reduce of "
        f"{largest['bytes']} bytes at busbw {largest['busbw_gbs']:.3f} GB/s.",
        collective=collective,
        busbw_gbs=round(largest["busbw_gbs"], 4),
    )
    if collective != "NCCL":
        yield _finding(
            "cluster-nccl-not-run",
            f"The collectives ran as {collective} on CPUs: NCCL was not exercised.",
        )


def _gist(detail: str | None) -> str:
    """The first line of a TensorFlow error and, when there is one, the line saying why the
    collective was aborted (the middle is TF's own traceback of the graph node)."""
    lines = [ln.strip() for ln in (detail or "").splitlines() if ln.strip()]
    if not lines:
        return "(no detail)"
    why = next((ln for ln in lines if "aborted by" in ln or "deadline" in ln.lower()), None)
    return lines[0] + (f" ... {why}" if why and why != lines[0] else "")


def _pairs(values: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in values.items())
