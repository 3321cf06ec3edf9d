"""Performance recipes of the smoke child: throughput, Tensor Core evidence, MirroredStrategy.

Runs inside the target interpreter (see _child.py): standard library, tensorflow and numpy only.
Measurements are raw (seconds, bytes, FLOPs per second); the parent turns them into verdicts.
"""

# ruff: noqa: UP031  (runs in the target interpreter, kept to Python 3.7 syntax)

import glob
import os
import shutil
import tempfile
import time


def _sizes(device):
    """Matmul edge and elementwise element count: big enough to saturate a GPU, tiny on a CPU."""
    return (4096, 64 * 1024 * 1024) if device.startswith("GPU") else (256, 2 * 1024 * 1024)


def _sync(tensor):
    # One element to host: the stream is in order, so every queued kernel has finished.
    while tensor.shape.rank:
        tensor = tensor[0]
    return tensor.numpy()


def _seconds_per_call(fn, min_seconds):
    """Time fn in growing batches until one batch lasts min_seconds (one warm-up call first)."""
    _sync(fn())
    k = 1
    while True:
        start = time.perf_counter()
        for _ in range(k):
            out = fn()
        _sync(out)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds or k >= 4096:
            return elapsed / k
        k = max(k * 2, int(k * min_seconds / max(elapsed, 1e-6)) + 1)


def matmul_tflops(ctx, device, dtype):
    """Achieved matmul TFLOPS for a dtype on a device (fp32 with TF32 off), cached per run."""
    key = (device, dtype)
    if key in ctx.cache:
        return ctx.cache[key]
    tf = ctx.tf
    n, _ = _sizes(device)
    tf32 = tf.config.experimental.tensor_float_32_execution_enabled()
    # TF32 would run fp32 matmuls on Tensor Cores and beat the fp32 peak; measure true fp32.
    tf.config.experimental.enable_tensor_float_32_execution(dtype != "float32" and tf32)
    try:
        with tf.device("/device:" + device):
            a = tf.random.uniform((n, n), dtype=tf.float32)
            a = tf.cast(a, getattr(tf, dtype))
            seconds = _seconds_per_call(lambda: tf.linalg.matmul(a, a), 0.05 if n < 1024 else 0.3)
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(tf32)
    ctx.cache[key] = 2.0 * n**3 / seconds / 1e12
    return ctx.cache[key]


def throughput(ctx, device):
    """Matmul TFLOPS (fp32, fp16, bf16) and elementwise memory bandwidth on one device."""
    tf = ctx.tf
    metrics, info = {}, {}
    for dtype in ("float32", "float16", "bfloat16"):
        try:
            metrics[dtype + "_tflops"] = matmul_tflops(ctx, device, dtype)
        except Exception as exc:  # noqa: BLE001  (e.g. no bf16 kernels on an older GPU)
            info[dtype + ".error"] = (
                str(exc).strip().splitlines()[-1][:300] if str(exc) else repr(exc)
            )
    _, count = _sizes(device)
    with tf.device("/device:" + device):
        x = tf.random.uniform((count,), dtype=tf.float32)
        seconds = _seconds_per_call(lambda: x * 1.0001, 0.05 if count < 1e7 else 0.3)
    # x * c reads and writes every element once: 2 x 4 bytes per element.
    metrics["bandwidth_gbs"] = 8.0 * count / seconds / 1e9
    metrics["matmul_n"] = float(_sizes(device)[0])
    info["tf32_enabled"] = str(tf.config.experimental.tensor_float_32_execution_enabled())
    status = "passed" if "float32_tflops" in metrics else "failed"
    return {
        "status": status,
        "metrics": metrics,
        "info": info,
        "detail": None if status == "passed" else info.get("float32.error"),
    }


def _kernel_names(tf, run, device):
    """Names of the GPU kernels (or, on a CPU, the host MatMul events) that `run` launched."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    logdir = tempfile.mkdtemp(prefix="tfdoctor-prof-")
    try:
        tf.profiler.experimental.start(logdir)
        try:
            run()
        finally:
            tf.profiler.experimental.stop()
        names = []
        for path in glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb")):
            space = xplane_pb2.XSpace()
            with open(path, "rb") as fh:
                space.ParseFromString(fh.read())
            for plane in space.planes:
                gpu = plane.name.startswith("/device:GPU:")
                if not gpu and not (device.startswith("CPU") and plane.name == "/host:CPU"):
                    continue
                for line in plane.lines:
                    for event in line.events:
                        name = plane.event_metadata[event.metadata_id].name
                        if (gpu or "MatMul" in name) and name not in names:
                            names.append(name[:200])
        return names[:40]
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def tensor_cores(ctx, device):
    """Evidence for Tensor Cores: fp16/bf16-vs-fp32 matmul ratio and the kernels that ran."""
    tf = ctx.tf
    metrics, info = {}, {}
    fp32 = matmul_tflops(ctx, device, "float32")
    for dtype, key in (("float16", "fp16_vs_fp32"), ("bfloat16", "bf16_vs_fp32")):
        try:
            metrics[key] = matmul_tflops(ctx, device, dtype) / fp32
        except Exception as exc:  # noqa: BLE001
            info[dtype + ".error"] = (
                str(exc).strip().splitlines()[-1][:300] if str(exc) else repr(exc)
            )
    n, _ = _sizes(device)
    try:
        with tf.device("/device:" + device):
            a = tf.cast(tf.random.uniform((n, n)), tf.float16)
            b = tf.cast(tf.random.uniform((n, n)), tf.bfloat16)
        names = _kernel_names(
            tf, lambda: (_sync(tf.linalg.matmul(a, a)), _sync(tf.linalg.matmul(b, b))), device
        )
        info["kernels"] = "\n".join(names)
        metrics["kernels_seen"] = float(len(names))
    except Exception as exc:  # noqa: BLE001  (no CUPTI: the ratio is still evidence)
        info["profiler_error"] = str(exc).strip().splitlines()[-1][:300] if str(exc) else repr(exc)
    return {"status": "passed", "metrics": metrics, "info": info}


def multi_device(ctx, _device):
    """MirroredStrategy: checked all-reduce, its timing, and 1 -> N step scaling."""
    tf = ctx.tf
    if len(ctx.gpus) >= 2:
        names, cross, kind = ctx.gpus, tf.distribute.NcclAllReduce(), "nccl"
        count = 32 * 1024 * 1024
    else:
        # No NCCL without two GPUs: the same strategy code over logical CPUs with a
        # host-side reduction keeps the path exercised (NCCL itself is reported as not run).
        names, cross, kind = (
            ctx.cpus[:2],
            tf.distribute.ReductionToOneDevice(),
            "reduction-to-one-device",
        )
        count = 256 * 1024
    if len(names) < 2:
        return {
            "status": "skipped",
            "detail": "fewer than two devices",
            "info": {"cross_device_ops": kind},
        }
    strategy = tf.distribute.MirroredStrategy(
        ["/device:" + d for d in names], cross_device_ops=cross
    )
    n = strategy.num_replicas_in_sync
    values = strategy.experimental_distribute_values_from_function(
        lambda c: tf.fill([count], float(c.replica_id_in_sync_group + 1))
    )

    @tf.function
    def allreduce(v):
        return strategy.run(
            lambda x: tf.distribute.get_replica_context().all_reduce("sum", x), (v,)
        )

    results = strategy.experimental_local_results(allreduce(values))
    expected = n * (n + 1) / 2.0
    wrong = [
        str(r.device)
        for r in results
        if not float(tf.reduce_max(tf.abs(r - expected)).numpy()) <= 1e-3 * expected
    ]
    seconds = _seconds_per_call(
        lambda: strategy.experimental_local_results(allreduce(values))[-1],
        0.05 if kind != "nccl" else 0.3,
    )
    metrics = {"replicas": float(n), "allreduce_bytes": 4.0 * count, "allreduce_seconds": seconds}
    metrics.update(_scaling(tf, names, cross))
    return {
        "status": "failed" if wrong else "passed",
        "metrics": metrics,
        "info": {"cross_device_ops": kind, "devices": ",".join(names),
                 **({"wrong_results": ",".join(wrong)} if wrong else {})},
        "detail": ("all-reduce sum wrong on " + ", ".join(wrong)) if wrong else None,
    }


def _scaling(tf, names, cross):
    """Seconds per data-parallel step on one device and on all (same per-replica batch)."""
    out = {}
    for label, devs in (("1", names[:1]), ("n", names)):
        strategy = tf.distribute.MirroredStrategy(
            ["/device:" + d for d in devs], cross_device_ops=cross
        )
        with strategy.scope():
            w = tf.Variable(
                tf.random.uniform((256, 256)) * 0.01, aggregation=tf.VariableAggregation.MEAN
            )

        @tf.function
        def step(w=w, strategy=strategy):
            def replica():
                x = tf.random.uniform((128, 256))
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.tanh(tf.linalg.matmul(x, w)))
                w.assign_sub(0.01 * tape.gradient(loss, w))
                return loss

            return strategy.run(replica)

        out["step_seconds_" + label] = _seconds_per_call(
            lambda step=step, strategy=strategy: strategy.experimental_local_results(step())[0],
            0.05,
        )
    out["scaling_efficiency"] = out["step_seconds_1"] / out["step_seconds_n"]
    return out


RECIPES = {"throughput": throughput, "tensor-cores": tensor_cores, "multi-device": multi_device}
