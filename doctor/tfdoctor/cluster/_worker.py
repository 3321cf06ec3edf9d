"""tfdoctor cluster worker: one MultiWorkerMirroredStrategy task from TF_CONFIG, one JSON line
per event on a private copy of stdout.

Standalone on purpose, like smoke/_child.py: it runs in the TARGET interpreter and imports only
the standard library, tensorflow and numpy. Argument: a JSON config
  {"sizes": [bytes...], "iters": n, "steps": n, "timeout": s, "node_report": path|null,
   "hook": null | "wrong-sum" | "hang" | "kill"}
Events: hello (pid, host, address, interface, NCCL_* env, clock) | import | strategy |
allreduce (per size: seconds, algbw, busbw, exact) | skew | steps | reports (the chief only:
every worker's node report, gathered through the collectives themselves) | end.
Test hooks (TFDOCTOR_CLUSTER_HOOK="<task index>:<hook>") exist so the fault tests inject a
real fault into a real job: a wrong sum, a hang, a SIGKILL of this very process.
"""

# ruff: noqa: UP031  (runs in the target interpreter, kept to Python 3.7 syntax)

import json
import os
import signal
import socket
import sys
import time
import traceback
import zlib

_OUT = None
EVENTS = {}  # type: dict[str, dict]
"""Every event this task emitted, by name: gathered to the chief at the end."""


def emit(obj):
    assert _OUT is not None, "main() claims stdout before the first line"
    obj["t"] = time.time()
    if obj["event"] != "reports":
        EVENTS[obj["event"]] = obj
    _OUT.write(json.dumps(obj, sort_keys=True) + "\n")
    _OUT.flush()


def _claim_stdout():
    global _OUT
    fd = os.dup(1)
    os.dup2(2, 1)
    _OUT = os.fdopen(fd, "w", buffering=1)


def interface_of(ip):
    """The local network interface that holds `ip` (SIOCGIFADDR per interface), or None."""
    import fcntl
    import struct

    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))
            except OSError:
                continue
        if socket.inet_ntoa(packed[20:24]) == ip:
            return name
    return None


def describe_self(tf_config):
    """Where this task listens, the address it resolves to and the interface holding it."""
    task = tf_config.get("task") or {}
    kind, index = task.get("type", "worker"), int(task.get("index", 0))
    address = ((tf_config.get("cluster") or {}).get(kind) or [""])[index]
    host, _, port = address.rpartition(":")
    info = {"task": "%s:%d" % (kind, index), "address": address, "hostname": socket.gethostname()}
    try:
        ip = socket.gethostbyname(host)
        info["ip"] = ip
        info["interface"] = interface_of(ip)
    except OSError as exc:
        info["resolve_error"] = str(exc)
    info["nccl_env"] = {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}
    return info


def hook_for(index):
    spec = os.environ.get("TFDOCTOR_CLUSTER_HOOK", "")
    who, _, what = spec.partition(":")
    return what if who.strip() == str(index) else None


def main():
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    _claim_stdout()
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    me = describe_self(tf_config)
    index = int((tf_config.get("task") or {}).get("index", 0))
    hook = hook_for(index)
    emit(dict(me, event="hello", pid=os.getpid(), python=sys.version.split()[0]))
    if hook == "hang":
        while True:
            time.sleep(3600)
    start = time.perf_counter()
    import numpy as np
    import tensorflow as tf

    info = {"version": tf.__version__}
    try:
        build = tf.sysconfig.get_build_info()
        info["is_cuda_build"] = bool(build.get("is_cuda_build"))
        for key in ("cuda_version", "cudnn_version"):
            if key in build:
                info[key] = str(build[key])
    except Exception:  # noqa: BLE001  (removed in newer TF; the version is still worth it)
        pass
    emit(dict(info, event="import", seconds=round(time.perf_counter() - start, 3)))
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    impl = tf.distribute.experimental.CommunicationImplementation.AUTO
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=impl, timeout_seconds=float(config.get("timeout", 60))
    )
    # Said before the call that blocks until every peer is up: a worker that said it is
    # waiting on the others, one that never got here is the one they wait for.
    emit({"event": "waiting", "for": "strategy"})
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    n = strategy.num_replicas_in_sync
    # AUTO resolves to NCCL for GPU collectives and to RingReduce for CPU ones (TF's
    # collective_ops: NCCL has no CPU kernel), so the device type decides what really ran.
    emit(
        {
            "event": "strategy",
            "replicas": n,
            "workers": len(tf_config["cluster"]["worker"]),
            "gpus": len(gpus),
            "requested": "AUTO",
            "collective": "NCCL" if gpus else "RING",
        }
    )

    def all_reduce(x):
        ctx = tf.distribute.get_replica_context()
        # identity: a value made in the replica fn carries the replica device, which the
        # cross-device reduction needs as its destination (a captured input has none)
        return ctx.all_reduce(tf.distribute.ReduceOp.SUM, tf.identity(x))

    @tf.function
    def run_reduce(x):
        return strategy.run(all_reduce, args=(x,))

    def reduce(x):
        return strategy.experimental_local_results(run_reduce(x))[0]

    # Each task contributes (index + 1) + (j mod 7) at element j: small integers, so the sum is
    # exact in float32 and a wrong contribution from any task shows.
    base = n * (n + 1) / 2.0
    results = []
    for size in config.get("sizes", [4096, 262144, 4194304]):
        count = max(1, int(size) // 4)
        pattern = (np.arange(count) % 7).astype(np.float32)
        x = tf.constant(pattern + (index + 1), dtype=tf.float32)
        reduce(x)  # first call traces and sets the collective group up
        times = []
        for _ in range(int(config.get("iters", 3))):
            t0 = time.perf_counter()
            out = reduce(x).numpy()
            times.append(time.perf_counter() - t0)
        if hook == "wrong-sum":
            out = out + 1.0
        expected = pattern * n + base
        bad = int(np.count_nonzero(out != expected))
        seconds = sorted(times)[len(times) // 2]
        algbw = count * 4 / seconds / 1e9
        results.append(
            {
                "bytes": count * 4,
                "seconds": seconds,
                "algbw_gbs": algbw,
                # nccl-tests (PERFORMANCE.md): busbw = algbw * 2(n-1)/n for all-reduce
                "busbw_gbs": algbw * 2 * (n - 1) / n,
                "exact": bad == 0,
                "wrong_elements": bad,
                "got_first": float(out.flat[0]),
                "expected_first": float(expected[0]),
            }
        )
        if hook == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
    emit({"event": "allreduce", "results": results})

    # Clock skew: every task reads its clock right after the same barrier (an all-reduce) and
    # the clocks are all-reduced as a one-hot float64 vector; the spread bounds the skew (plus
    # the barrier's exit jitter). Best of 3.
    spreads = []
    for _ in range(3):
        reduce(tf.zeros([1]))
        now = time.time()
        stamps = reduce(tf.one_hot(index, n, on_value=now, dtype=tf.float64)).numpy()
        spreads.append(float(stamps.max() - stamps.min()))
    emit({"event": "skew", "spread_s": min(spreads)})

    steps, compute = _train(tf, strategy, int(config.get("steps", 5)), index, hook == "slow")
    emit({"event": "compute", "compute_seconds": compute})
    emit({"event": "steps", "step_seconds": steps})

    reports = _gather_reports(tf, reduce, config.get("node_report"), index, n)
    if index == 0 and reports is not None:
        emit({"event": "reports", "reports": reports})
    emit({"event": "end"})


def _train(tf, strategy, steps, index, slow):
    """A few data-parallel SGD steps of a small MLP: per-step wall time on this task, and the
    time of the same step without the all-reduce (in a synchronous job every task waits for
    the slowest, so only the local compute time names a straggler). `slow`: a test hook."""
    with strategy.scope():
        w1 = tf.Variable(
            tf.random.stateless_normal([64, 128], seed=[1, 2]) * 0.1, aggregation=tf.VariableAggregation.MEAN
        )
        w2 = tf.Variable(
            tf.random.stateless_normal([128, 1], seed=[3, 4]) * 0.1, aggregation=tf.VariableAggregation.MEAN
        )

    x = tf.random.stateless_normal([256, 64], seed=[5, index])
    y = tf.reduce_sum(x, axis=1, keepdims=True)

    @tf.function
    def step():
        def replica():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((tf.nn.relu(x @ w1) @ w2 - y) ** 2)
            g1, g2 = tape.gradient(loss, [w1, w2])
            ctx = tf.distribute.get_replica_context()
            g1, g2 = ctx.all_reduce(tf.distribute.ReduceOp.MEAN, [g1, g2])
            w1.assign_sub(0.01 * g1)
            w2.assign_sub(0.01 * g2)
            return loss

        return strategy.run(replica)

    @tf.function
    def local():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.nn.relu(x @ w1) @ w2 - y) ** 2)
        return tape.gradient(loss, [w1, w2])

    def timed(func):
        func()  # trace
        out = []
        for _ in range(steps):
            t0 = time.perf_counter()
            if slow:
                time.sleep(0.05)
            func()
            out.append(round(time.perf_counter() - t0, 6))
        return out

    compute = timed(local)
    return timed(step), compute


def _gather_reports(tf, reduce, path, index, n):
    """Every task's node report and events (JSON, zlib, one byte per float32) all-reduced into
    one row per task: the chief gets them over the job's own channel, no extra port to open."""
    import numpy as np

    node = None
    if path:
        try:
            with open(path) as f:
                node = json.load(f)
        except (OSError, ValueError) as exc:
            node = {"error": "cannot read the node report: %s" % exc}
    raw = zlib.compress(json.dumps({"node": node, "events": EVENTS}).encode("utf-8"), 9)
    lengths = reduce(tf.one_hot(index, n, on_value=float(len(raw)), dtype=tf.float32)).numpy()
    width = int(lengths.max())
    if width == 0:
        return None
    mine = np.zeros([n, width], dtype=np.float32)
    mine[index, : len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    summed = reduce(tf.constant(mine)).numpy()
    out = []
    for i in range(n):
        blob = summed[i, : int(lengths[i])].astype(np.uint8).tobytes()
        try:
            out.append(json.loads(zlib.decompress(blob).decode("utf-8")) if blob else None)
        except (zlib.error, ValueError):
            out.append({"error": "report damaged in transit"})
    return out


def _exit_with_parent():
    """Exit when stdin reaches EOF: the launcher keeps it open, so EOF means it is gone."""

    def watch():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(3)

    import threading

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    _exit_with_parent()
    try:
        main()
    except Exception as exc:  # noqa: BLE001  (the failure is the result, reported as data)
        emit(
            {
                "event": "error",
                "detail": "%s: %s" % (type(exc).__name__, str(exc)[:600]),
                "traceback": traceback.format_exc()[-2000:],
            }
        )
        sys.exit(1)
