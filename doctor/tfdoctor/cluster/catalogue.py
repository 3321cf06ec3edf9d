"""The cluster findings' catalogue: every id `tfdoctor cluster` can report, as data.

judge.py and topology.py build each finding from its row here (severity, and the hint when
the rule has no more specific one), so an id without a row cannot be emitted; `tfdoctor
checks`, `tfdoctor explain ID` and docs/checks.md read the same rows. The cluster rules are not
checks of one machine's facts (they compare workers and nodes of one job), so they live beside
the check registry, not in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from textwrap import TextWrapper

from tfdoctor.findings import Finding, Severity

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True, slots=True)
class ClusterFindingSpec:
    """One cluster finding id: its severity, when it fires, and what to do."""

    id: str
    severity: Severity
    when: str
    hint: str


@dataclass(frozen=True, slots=True)
class ClusterCheckSpec:
    """A group of cluster findings, shown like a check (`check` of each finding it emits)."""

    id: str
    title: str
    doc: str
    findings: tuple[ClusterFindingSpec, ...]
    area: str = "cluster"

    @property
    def finding_ids(self) -> tuple[str, ...]:
        return tuple(f.id for f in self.findings)


def _f(id: str, severity: Severity, when: str, hint: str) -> ClusterFindingSpec:
    return ClusterFindingSpec(id, severity, " ".join(when.split()), " ".join(hint.split()))


CLUSTER_CHECKS: tuple[ClusterCheckSpec, ...] = (
    ClusterCheckSpec(
        id="cluster",
        title="Workers of one MultiWorkerMirroredStrategy job compared",
        doc="`tfdoctor cluster` only (docs/cluster.md): every worker's process, TensorFlow, node "
        "report, network settings, all-reduce results and step times, compared across the job. "
        "A dead, hung or unreachable worker is the root cause of its peers' failed collectives.",
        findings=(
            _f(
                "cluster-port-unreachable",
                E,
                "Nothing accepts connections at a worker's address (never started, firewalled); "
                "the others wait for it until the deadline.",
                "Start that worker, or open the port between the nodes (firewall, security group, "
                "NetworkPolicy); TF_CONFIG must list reachable addresses.",
            ),
            _f(
                "cluster-worker-could-not-start",
                E,
                "The worker's interpreter could not be started.",
                "Check the --python / --worker-python path on that node: it must exist and run.",
            ),
            _f(
                "cluster-tf-import-failed",
                E,
                "The worker's interpreter could not import TensorFlow.",
                "Run `tfdoctor --python PATH` with that worker's interpreter on its node.",
            ),
            _f(
                "cluster-worker-died",
                E,
                "A worker exited without finishing (a signal or an exit status), with its last phase "
                "and log tail; the job cannot finish without it.",
                "Read its log tail; SIGKILL is usually the kernel's OOM killer or a scheduler "
                "(dmesg, the job's memory limit).",
            ),
            _f(
                "cluster-worker-hung",
                E,
                "At the deadline, the worker furthest behind stopped making progress and was killed; "
                "the others were blocked waiting for it.",
                "py-spy dump --pid PID on that node shows where it waits; a GPU in a bad state or a "
                "stuck filesystem are the usual causes.",
            ),
            _f(
                "cluster-tf-version-differs",
                E,
                "The TensorFlow each worker imported differs; MultiWorkerMirroredStrategy needs one "
                "version everywhere.",
                "Install the same TensorFlow on every node (one image, one lock file).",
            ),
            _f(
                "cluster-orphan-process",
                E,
                "A process of a worker's group survived the kill (must never happen).",
                "Kill the listed process ids by hand and report this with the cluster document.",
            ),
            _f(
                "cluster-collective-failed",
                E,
                "A worker's job raised, usually as a consequence of a dead or unreachable peer "
                "(then it carries caused_by).",
                "A peer that died or cannot be reached makes TensorFlow's collectives fail on every "
                "worker; see the other findings.",
            ),
            _f(
                "cluster-stack-differs",
                W,
                "The CUDA driver version, cuDNN, NCCL or driver branch differs between the nodes' reports.",
                "One image or one driver branch on every node: a mismatch shows up as hangs or NCCL "
                "errors only under load.",
            ),
            _f(
                "cluster-node-problems",
                E,
                "A node's own diagnosis (`tfdoctor --quick` on its worker's interpreter) found "
                "problems; its root cause is named.",
                "Fix that node first: `tfdoctor` on it shows the findings.",
            ),
            _f(
                "cluster-nccl-ifname-mismatch",
                W,
                "NCCL_SOCKET_IFNAME (NCCL's syntax: prefixes, ^ to exclude, = for exact names) "
                "excludes the interface that holds the worker's address.",
                "Point NCCL_SOCKET_IFNAME at the interface of the cluster addresses.",
            ),
            _f(
                "cluster-address-loopback",
                E,
                "A worker listens on a loopback address in a cluster of several hosts.",
                "Use each node's routable address in TF_CONFIG.",
            ),
            _f(
                "cluster-nccl-env-differs",
                W,
                "NCCL_SOCKET_IFNAME, NCCL_IB_*, NCCL_P2P_DISABLE, NCCL_DEBUG, NCCL_ALGO, ... differ "
                "between workers.",
                "Set NCCL_* the same way on every node (the job's environment, not a node's profile).",
            ),
            _f(
                "cluster-allreduce-wrong",
                E,
                "An all-reduce result differs from the exact expected sum (every element compared).",
                "Silent data corruption: take the node out and test its memory, network and GPU "
                "(ECC errors in nvidia-smi -q).",
            ),
            _f(
                "cluster-clock-skew",
                W,
                "Worker clocks are more than 1 s apart (logs, checkpoint timestamps and time-based "
                "rendezvous suffer).",
                "Run chrony or ntpd on every node.",
            ),
            _f(
                "cluster-straggler",
                W,
                "A worker's fastest compute step is at least 1.5x the others' median and at least "
                "10 ms slower: every synchronous step waits for it.",
                "Compare its clocks, throttling and load (nvidia-smi -q -d PERFORMANCE, top) with "
                "the others.",
            ),
            _f(
                "cluster-allreduce-measured",
                INFO,
                "The collective implementation used and the bus bandwidth of the largest all-reduce.",
                "Compare busbw with the interconnect's rate (docs/cluster.md).",
            ),
            _f(
                "cluster-nccl-not-run",
                INFO,
                "The collectives ran as RING on CPUs: NCCL was not exercised.",
                "Run on the GPU nodes to test NCCL itself.",
            ),
        ),
    ),
    ClusterCheckSpec(
        id="cluster-node",
        title="GPU interconnect inside each node of the cluster",
        doc="`tfdoctor cluster` only: NVML's NVLink link states and P2P status per GPU pair, "
        "NCCL_P2P_DISABLE, and the node's multi-GPU all-reduce busbw against what its topology "
        "should give (NVLink 25 GB/s per active link, PCIe 16/32/64 GB/s per x16 for gen 3/4/5, "
        "80 % achievable).",
        findings=(
            _f(
                "node-nvlink-down",
                E,
                "A GPU has fewer active NVLink links than its peers; NCCL routes around them at a "
                "fraction of the bandwidth.",
                "nvidia-smi nvlink -s shows each link; a link down needs a GPU reset or the node's "
                "vendor (NVSwitch, fabric manager: systemctl status nvidia-fabricmanager).",
            ),
            _f(
                "node-p2p-unavailable",
                W,
                "NVML's P2P read status is not OK between some GPU pairs; NCCL copies through host memory.",
                "nvidia-smi topo -p2p r shows the P2P matrix; the finding's own hint names the fix "
                "for its status (IOMMU / ACS, chipset, registry key, GPU model).",
            ),
            _f(
                "node-nccl-p2p-disabled",
                W,
                "NCCL_P2P_DISABLE is set: NCCL ignores NVLink and PCIe peer-to-peer.",
                "Unset it unless a known driver bug needs it.",
            ),
            _f(
                "node-allreduce-below-topology",
                W,
                "The node's multi-GPU all-reduce busbw (its smoke multi-device result) is under half "
                "of what its topology should give, e.g. an NVLink node at PCIe speed.",
                "Check nvidia-smi topo -m, nvidia-smi nvlink -s, the kernel's iommu= setting and "
                "NCCL_P2P_DISABLE; the finding lists the likely causes it found.",
            ),
        ),
    ),
)

FINDINGS: dict[str, ClusterFindingSpec] = {f.id: f for c in CLUSTER_CHECKS for f in c.findings}
CHECK_OF: dict[str, str] = {f.id: c.id for c in CLUSTER_CHECKS for f in c.findings}


def finding(id: str, message: str, hint: str | None = None, **evidence: object) -> Finding:
    """A finding of the catalogue's row `id` (its severity; its hint unless a sharper one is given):
    an id without a row raises KeyError, so the rules cannot emit one."""
    spec = FINDINGS[id]
    return Finding(
        id=id,
        severity=spec.severity,
        message=message,
        hint=hint or spec.hint,
        check=CHECK_OF[id],
        evidence={k: str(v) for k, v in evidence.items()},
    )


def lookup(id: str) -> tuple[ClusterCheckSpec, ClusterFindingSpec | None] | None:
    """(check, finding or None) for a cluster check id or finding id; None if it is neither."""
    for check in CLUSTER_CHECKS:
        if id == check.id:
            return check, None
        if id in FINDINGS and CHECK_OF[id] == check.id:
            return check, FINDINGS[id]
    return None


def _wrap(text: str) -> str:
    return TextWrapper(96, break_long_words=False, break_on_hyphens=False).fill(text)


def explain_text(id: str) -> str | None:
    """What `tfdoctor explain ID` prints for a cluster id, or None if it is not one."""
    found = lookup(id)
    if found is None:
        return None
    check, finding = found
    lines = [f"{check.id} ({check.area}): {check.title}", "", _wrap(check.doc)]
    if finding is not None:
        lines += [
            "",
            _wrap(f"{finding.id} ({finding.severity.value}): {finding.when}"),
            _wrap(f"Hint: {finding.hint}"),
        ]
    lines += ["", f"Findings: {', '.join(check.finding_ids)}"]
    return "\n".join(lines) + "\n"
