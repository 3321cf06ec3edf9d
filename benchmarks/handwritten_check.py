"""The TensorFlow check a user would write by hand: the baseline of `bench.py full`.

    python benchmarks/handwritten_check.py     (run with the target interpreter)

It does the TensorFlow work of tfdoctor's smoke child, written directly, with the same sizes,
seeds, iterations and timing loops, so that `tfdoctor --json` minus this script is what tfdoctor
itself costs. It mirrors (and must be kept in step with):
  doctor/tfdoctor/smoke/_child.py    import numpy and tensorflow, tf.sysconfig.get_build_info()
  doctor/tfdoctor/smoke/_recipes.py  setup (memory growth, two logical CPUs when < 2 GPUs),
                                     devices, matmul, conv2d, mixed-precision, xla
  doctor/tfdoctor/smoke/_perf.py     throughput, tensor-cores (profiler trace), multi-device
                                     (NCCL all-reduce with >= 2 GPUs, else the same strategy
                                     over two logical CPUs), each on every GPU and the CPU
                                     where the smoke child runs it there.
It imports nothing of tfdoctor, does not stream events or capture TensorFlow's log, and
prints one line per check.
"""

# ruff: noqa: B023  (every lambda here is called before its loop moves on)

import glob
import os
import shutil
import tempfile
import time

import numpy as np
import tensorflow as tf

print("TensorFlow", tf.__version__, tf.sysconfig.get_build_info().get("cuda_version"))

gpus = tf.config.list_physical_devices("GPU")
for gpu in gpus:
    tf.config.experimental.set_memory_growth(gpu, True)
if len(gpus) < 2:
    cpu0 = tf.config.list_physical_devices("CPU")[0]
    conf = tf.config.LogicalDeviceConfiguration
    tf.config.set_logical_device_configuration(cpu0, [conf(), conf()])
logical = tf.config.list_logical_devices()
GPUS = [d.name.split("device:")[-1] for d in logical if d.device_type == "GPU"]
CPUS = [d.name.split("device:")[-1] for d in logical if d.device_type == "CPU"]
ALL = CPUS[:1] + GPUS  # matmul, conv2d, mixed precision, XLA: the CPU and every GPU
FAST = GPUS or CPUS[:1]  # throughput, Tensor Cores: the GPUs (the CPU if none)
TOL = {"float32": 1e-2, "float16": 1e-2, "bfloat16": 4e-2}


def rel_err(got, ref):
    got = np.asarray(got, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


def check(name, dev, dtypes, compute, ref):
    for dt in dtypes:
        with tf.device("/device:" + dev):
            out = compute(getattr(tf, dt))
        err = rel_err(tf.cast(out, tf.float32).numpy(), ref)
        print(name, dev, dt, "ok" if err <= TOL[dt] else "WRONG", f"{err:.2g}")


# Devices: list them, and run one op on each.
for pd in tf.config.list_physical_devices():
    if pd.device_type == "GPU":
        print(pd.name, tf.config.experimental.get_device_details(pd))
for dev in CPUS + GPUS:
    with tf.device("/device:" + dev):
        print("placement", dev, (tf.constant([1.0, 2.0]) * 2.0).device)

for dev in ALL:
    # Matmul in three precisions against float64 numpy.
    rng = np.random.RandomState(0)
    a = rng.standard_normal((192, 256)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    check("matmul", dev, ("float32", "float16", "bfloat16"),
          lambda dt: tf.linalg.matmul(tf.cast(a, dt), tf.cast(b, dt)),
          a.astype(np.float64) @ b.astype(np.float64))

    # conv2d (cuDNN on a GPU), NHWC x HWIO, VALID, against numpy.
    rng = np.random.RandomState(1)
    x = rng.standard_normal((2, 16, 16, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    ref = np.zeros((2, 14, 14, 16))
    for i in range(3):
        for j in range(3):
            ref += np.tensordot(x64[:, i:i + 14, j:j + 14, :], w64[i, j], axes=([3], [0]))
    check("conv2d", dev, ("float32", "float16") if dev.startswith("GPU") else ("float32",),
          lambda dt: tf.nn.conv2d(tf.cast(x, dt), tf.cast(w, dt), strides=1, padding="VALID"),
          ref)

for dev in ALL:
    # Mixed precision: 40 Keras steps, the loss must stay finite and fall.
    policy = "mixed_float16" if dev.startswith("GPU") else "mixed_bfloat16"
    rng = np.random.RandomState(2)
    x = rng.standard_normal((256, 16)).astype(np.float32)
    y = (x @ rng.standard_normal((16, 1)) + 0.05 * rng.standard_normal((256, 1))).astype(np.float32)
    keras = tf.keras
    with tf.device("/device:" + dev):
        model = keras.Sequential([
            keras.Input((16,)),
            keras.layers.Dense(32, activation="relu", dtype=policy),
            keras.layers.Dense(1, dtype=policy),
            keras.layers.Activation("linear", dtype="float32"),
        ])
        model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
        losses = [float(model.train_on_batch(x, y)) for _ in range(40)]
    print("mixed precision", dev, policy, model.layers[0].compute_dtype,
          f"{losses[0]:.3g} -> {losses[-1]:.3g}")

for dev in ALL:
    # XLA: jit_compile=True gives the graph's result.
    rng = np.random.RandomState(3)
    a = tf.constant(rng.standard_normal((64, 96)).astype(np.float32))
    b = tf.constant(rng.standard_normal((96, 32)).astype(np.float32))

    def f(x, y):
        return tf.reduce_sum(tf.tanh(tf.linalg.matmul(x, y)) * tf.exp(-tf.abs(x[:, :1])), axis=1)

    with tf.device("/device:" + dev):
        plain = tf.function(f)(a, b)
        jit = tf.function(f, jit_compile=True)(a, b)
    print("xla", dev, f"{rel_err(jit.numpy(), plain.numpy().astype(np.float64)):.2g}")


def sync(t):
    while t.shape.rank:
        t = t[0]
    return t.numpy()


def per_call(fn, min_seconds):
    """Seconds per call: one warm-up, then doubling batches until one lasts min_seconds."""
    sync(fn())
    k = 1
    while True:
        start = time.perf_counter()
        for _ in range(k):
            out = fn()
        sync(out)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds or k >= 4096:
            return elapsed / k
        k = max(k * 2, int(k * min_seconds / max(elapsed, 1e-6)) + 1)


def sizes(dev):
    return (4096, 64 * 1024 * 1024) if dev.startswith("GPU") else (256, 2 * 1024 * 1024)


tflops = {}
for dev in FAST:
    # Throughput: matmul TFLOPS per precision (fp32 with TF32 off) and memory bandwidth.
    n, count = sizes(dev)
    tf32 = tf.config.experimental.tensor_float_32_execution_enabled()
    for dt in ("float32", "float16", "bfloat16"):
        tf.config.experimental.enable_tensor_float_32_execution(dt != "float32" and tf32)
        try:
            with tf.device("/device:" + dev):
                m = tf.cast(tf.random.uniform((n, n), dtype=tf.float32), getattr(tf, dt))
                s = per_call(lambda: tf.linalg.matmul(m, m), 0.05 if n < 1024 else 0.3)
            tflops[dev, dt] = 2.0 * n ** 3 / s / 1e12
        except Exception as exc:  # e.g. no bf16 kernels on an older GPU
            print("throughput", dev, dt, exc)
        finally:
            tf.config.experimental.enable_tensor_float_32_execution(tf32)
    with tf.device("/device:" + dev):
        v = tf.random.uniform((count,), dtype=tf.float32)
        s = per_call(lambda: v * 1.0001, 0.05 if count < 1e7 else 0.3)
    print("throughput", dev, {k[1]: round(t, 3) for k, t in tflops.items() if k[0] == dev},
          f"{8.0 * count / s / 1e9:.1f} GB/s")


def kernel_names(dev, run):
    """The GPU kernels (on a CPU, the host MatMul events) `run` launched, from a profiler trace."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    logdir = tempfile.mkdtemp()
    try:
        tf.profiler.experimental.start(logdir)
        try:
            run()
        finally:
            tf.profiler.experimental.stop()
        names = set()
        for path in glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb")):
            space = xplane_pb2.XSpace()
            with open(path, "rb") as fh:
                space.ParseFromString(fh.read())
            for plane in space.planes:
                gpu = plane.name.startswith("/device:GPU:")
                if gpu or (dev.startswith("CPU") and plane.name == "/host:CPU"):
                    for line in plane.lines:
                        for event in line.events:
                            name = plane.event_metadata[event.metadata_id].name
                            if gpu or "MatMul" in name:
                                names.add(name)
        return sorted(names)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


for dev in FAST:
    # Tensor Cores: fp16/bf16 over fp32 speed, and the kernel names in a profiler trace.
    n, _ = sizes(dev)
    with tf.device("/device:" + dev):
        a16 = tf.cast(tf.random.uniform((n, n)), tf.float16)
        b16 = tf.cast(tf.random.uniform((n, n)), tf.bfloat16)
    try:
        names = kernel_names(dev, lambda: (sync(tf.linalg.matmul(a16, a16)),
                                           sync(tf.linalg.matmul(b16, b16))))
    except Exception as exc:  # no CUPTI: the speed ratio is still evidence
        names = [f"profiler: {exc}"]
    fp32 = tflops[dev, "float32"]
    print("tensor cores", dev, {dt: round(tflops[dev, dt] / fp32, 2) for dt in ("float16", "bfloat16")
                                if (dev, dt) in tflops}, names[:5])

# Several devices: MirroredStrategy all-reduce (NCCL over >= 2 GPUs, else two logical CPUs),
# its time, and the step time on one device and on all.
if len(GPUS) >= 2:
    devs, cross, count, min_s = GPUS, tf.distribute.NcclAllReduce(), 32 * 1024 * 1024, 0.3
else:
    devs, cross, count, min_s = CPUS[:2], tf.distribute.ReductionToOneDevice(), 256 * 1024, 0.05
strategy = tf.distribute.MirroredStrategy(["/device:" + d for d in devs], cross_device_ops=cross)
n = strategy.num_replicas_in_sync
values = strategy.experimental_distribute_values_from_function(
    lambda c: tf.fill([count], float(c.replica_id_in_sync_group + 1)))


@tf.function
def allreduce(v):
    return strategy.run(lambda x: tf.distribute.get_replica_context().all_reduce("sum", x), (v,))


expected = n * (n + 1) / 2.0
for r in strategy.experimental_local_results(allreduce(values)):
    ok = float(tf.reduce_max(tf.abs(r - expected)).numpy()) <= 1e-3 * expected
    print("all-reduce", r.device, "ok" if ok else "WRONG")
print("all-reduce seconds",
      per_call(lambda: strategy.experimental_local_results(allreduce(values))[-1], min_s))
steps = {}
for label, use in (("1", devs[:1]), ("n", devs)):
    strat = tf.distribute.MirroredStrategy(["/device:" + d for d in use], cross_device_ops=cross)
    with strat.scope():
        w = tf.Variable(tf.random.uniform((256, 256)) * 0.01,
                        aggregation=tf.VariableAggregation.MEAN)

    @tf.function
    def step(w=w, strat=strat):
        def replica():
            x = tf.random.uniform((128, 256))
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.tanh(tf.linalg.matmul(x, w)))
            w.assign_sub(0.01 * tape.gradient(loss, w))
            return loss

        return strat.run(replica)

    steps[label] = per_call(lambda step=step, strat=strat: strat.experimental_local_results(step())[0],
                            0.05)
print(f"scaling efficiency {steps['1'] / steps['n']:.2f}")
