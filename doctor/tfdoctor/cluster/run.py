"""The launchers: local (N workers on this machine), tf-config (this process is one worker of
a job whose TF_CONFIG it was given; the chief writes the document) and slurm (srun one
tf-config-style task per node inside an allocation). Each returns the cluster document."""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfdoctor.cluster import workers as W
from tfdoctor.cluster.document import build_document
from tfdoctor.cluster.judge import record

HOOK = "TFDOCTOR_CLUSTER_HOOK"
"""Test seam: "<index>:<hook>" (wrong-sum, hang, kill, slow in the worker; absent here: that
worker is never started, so its port has nothing listening)."""


@dataclass(frozen=True, slots=True)
class Options:
    """What one `tfdoctor cluster` run does."""

    python: str
    workers: int = 2
    worker_python: dict[int, str] = field(default_factory=dict)
    ports: tuple[int, ...] = ()
    host: str = "127.0.0.1"
    timeout: float = 120.0
    sizes: tuple[int, ...] = (4096, 262144, 4194304)
    iters: int = 3
    steps: int = 5

    def job_config(self, node_report: str | None) -> dict[str, Any]:
        return {
            "sizes": list(self.sizes),
            "iters": self.iters,
            "steps": self.steps,
            "timeout": self.timeout,
            "node_report": node_report,
        }


def diagnose_node(
    python: str, env: dict[str, str], directory: Path, index: int, topology: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The static (--quick) diagnosis of one worker's interpreter and its node's GPU topology
    (`topology` when already probed on this node): (report dict, topology, the file both were
    written to, which the worker gathers to the chief)."""
    from tfdoctor.cluster.topology import probe_topology
    from tfdoctor.diagnose import diagnose
    from tfdoctor.exit_codes import exit_code_for
    from tfdoctor.host import Host

    host = Host(env=env, root=Path(os.environ.get("TFDOCTOR_FS_ROOT", "/")), python=python)
    report = diagnose(host)
    doc = report.to_dict(exit_code=int(exit_code_for(report)))
    topo = topology if topology is not None else probe_topology(env)
    path = directory / f"node-{index}.json"
    path.write_text(json.dumps({"report": doc, "topology": topo}))
    return doc, topo, str(path)


def _hook_absent(index: int) -> bool:
    who, _, what = os.environ.get(HOOK, "").partition(":")
    return who.strip() == str(index) and what == "absent"


def run_local(opts: Options) -> dict[str, Any]:
    """N workers on this machine, each a child of its interpreter, with a shared deadline."""
    started = time.monotonic()
    ports = list(opts.ports) or W.free_ports(opts.workers, opts.host)
    addresses = [f"{opts.host}:{p}" for p in ports]
    env = dict(os.environ)
    runs = [W.WorkerRun(i, a, opts.worker_python.get(i, opts.python)) for i, a in enumerate(addresses)]
    with tempfile.TemporaryDirectory(prefix="tfdoctor-cluster-") as tmp:
        nodes: list[dict[str, Any] | None] = []
        topologies: list[dict[str, Any] | None] = []
        for r in runs:
            node_env = dict(env, TF_CONFIG=W.tf_config(addresses, r.index))
            # one machine: its interconnect is probed once and shared by its workers
            doc, topo, path = diagnose_node(
                r.python, node_env, Path(tmp), r.index, topologies[0] if topologies else None
            )
            nodes.append(doc)
            topologies.append(topo)
            if not _hook_absent(r.index):
                W.start(r, addresses, opts.job_config(path), env)
        W.watch(runs, started + opts.timeout)
    records = [_record(r) for r in runs]
    return build_document("local", records, nodes, time.monotonic() - started, opts.timeout, topologies)


def _record(r: W.WorkerRun) -> dict[str, Any]:
    return record(
        r.index,
        r.address,
        r.events,
        outcome=r.outcome,
        exit=r.exit,
        log=tuple(r.log),
        survivors=r.survivors,
        phase=r.phase,
    )


def run_tf_config(
    opts: Options, launcher: str = "tf-config", tf_config: dict[str, Any] | None = None
) -> tuple[dict[str, Any] | None, int]:
    """This process is one worker of TF_CONFIG's cluster: (the document on the chief, else
    None; this worker's own outcome as 0 completed / 1 not)."""
    from tfdoctor.errors import TfdoctorError

    started = time.monotonic()
    config = tf_config if tf_config is not None else _read_tf_config()
    addresses = list(config["cluster"].get("worker") or [])
    index = int(config["task"].get("index", 0))
    if config["task"].get("type", "worker") != "worker" or not 0 <= index < len(addresses):
        raise TfdoctorError(
            f"TF_CONFIG: this tool runs worker tasks only (worker 0 is the chief); got task {config['task']}"
        )
    run = W.WorkerRun(index, addresses[index], opts.python)
    with tempfile.TemporaryDirectory(prefix="tfdoctor-cluster-") as tmp:
        env = dict(os.environ, TF_CONFIG=W.tf_config(addresses, index))
        own_node, own_topo, path = diagnose_node(opts.python, env, Path(tmp), index)
        W.start(run, addresses, opts.job_config(path), env)
        W.watch([run], started + opts.timeout)
    mine = 0 if run.outcome == "completed" else 1
    if index != 0:
        return None, mine
    records: list[dict[str, Any]] = []
    nodes: list[dict[str, Any] | None] = []
    topologies: list[dict[str, Any] | None] = []
    gathered = (run.events.get("reports") or {}).get("reports") or []
    for i, address in enumerate(addresses):
        if i == 0:
            records.append(_record(run))
            nodes.append(own_node)
            topologies.append(own_topo)
        elif i < len(gathered) and isinstance(gathered[i], dict):
            records.append(
                record(i, address, gathered[i].get("events") or {}, outcome="completed", phase="end")
            )
            node = gathered[i].get("node") or {}
            nodes.append(node.get("report"))
            topologies.append(node.get("topology"))
        else:
            records.append(
                record(i, address, {}, outcome=_reach(address), phase=None, exit=_reach_error(address))
            )
            nodes.append(None)
            topologies.append(None)
    if records[0]["outcome"] in ("hung", "timeout") and any(r["outcome"] == "port-closed" for r in records):
        records[0]["outcome"] = "blocked"  # it waited for the address nothing listens on
    seconds = time.monotonic() - started
    return build_document(launcher, records, nodes, seconds, opts.timeout, topologies), mine


def _reach_error(address: str) -> str | None:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2.0):
            return None
    except (OSError, ValueError) as exc:
        return f"{address}: {getattr(exc, 'strerror', None) or exc}"


def _reach(address: str) -> str:
    """A peer that sent nothing back: its port closed, or it was reachable but never reported."""
    return "no-report" if _reach_error(address) is None else "port-closed"


def _read_tf_config() -> dict[str, Any]:
    from tfdoctor.errors import TfdoctorError

    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise TfdoctorError("--launcher tf-config: TF_CONFIG is not set")
    try:
        config = json.loads(raw)
        config["cluster"]["worker"], config["task"]["index"]  # noqa: B018  (shape check)
    except (ValueError, KeyError, TypeError):
        raise TfdoctorError("TF_CONFIG is not {'cluster': {'worker': [...]}, 'task': {...}}") from None
    return dict(config)


def slurm_tf_config(base_port: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    """TF_CONFIG of this Slurm task: one worker per task of the step, in SLURM_PROCID order,
    the node's address (its hostname, else scontrol's NodeAddr) and base_port + the task id
    (distinct even when several NodeNames share one host, as in the tests)."""
    from tfdoctor.errors import TfdoctorError

    env = dict(os.environ if env is None else env)
    try:
        rank, ntasks = int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"])
        nodelist = env.get("SLURM_STEP_NODELIST") or env["SLURM_JOB_NODELIST"]
    except (KeyError, ValueError):
        raise TfdoctorError(
            "--launcher slurm: not inside an srun step (SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST)"
        ) from None
    names = _scontrol(["show", "hostnames", nodelist]).split()
    per_node = max(1, ntasks // max(1, len(names)))
    hosts = [_node_address(names[min(t // per_node, len(names) - 1)]) for t in range(ntasks)]
    return {
        "cluster": {"worker": [f"{h}:{base_port + t}" for t, h in enumerate(hosts)]},
        "task": {"type": "worker", "index": rank},
    }


def _node_address(name: str) -> str:
    for line in _scontrol(["-o", "show", "node", name]).split():
        if line.startswith("NodeAddr=") and line != "NodeAddr=" + name:
            return line.split("=", 1)[1]
    return socket.gethostbyname(name)


def _scontrol(args: list[str]) -> str:
    from tfdoctor.errors import TfdoctorError
    from tfdoctor.host import run_command

    done = run_command(["scontrol", *args], timeout=30)
    if not done.ok:
        raise TfdoctorError(f"scontrol {' '.join(args)}: {done.describe_failure()}")
    return done.stdout


def run_slurm(opts: Options, nodes: int | None, port: int) -> tuple[dict[str, Any] | None, str]:
    """srun one task per node of the allocation; the chief task's document, and srun's stderr."""
    env = dict(os.environ)
    count = nodes or int(env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES") or 0)
    if not count or "SLURM_JOB_ID" not in env:
        from tfdoctor.errors import TfdoctorError

        raise TfdoctorError("--launcher slurm runs inside an allocation (salloc / sbatch)")
    argv = [
        "srun",
        f"--nodes={count}",
        f"--ntasks={count}",
        "--ntasks-per-node=1",
        "--kill-on-bad-exit=0",
        sys.executable,
        "-m",
        "tfdoctor",
        "cluster",
        "--launcher",
        "slurm-task",
        "--port",
        str(port),
        "--python",
        opts.python,
        "--timeout",
        str(opts.timeout),
        "--steps",
        str(opts.steps),
        "--json",
    ]
    from tfdoctor.host import run_command

    # Ctrl+C / SIGTERM of tfdoctor stops srun, and srun its tasks; so does the time limit.
    done = run_command(argv, timeout=opts.timeout + 60, env=env)
    out, err = done.stdout, done.stderr or (done.error or "")
    try:  # only the chief task writes to stdout
        parsed = json.loads(out[out.find("{") :]) if "{" in out else None
    except ValueError:
        parsed = None
    return (parsed if isinstance(parsed, dict) else None), err
