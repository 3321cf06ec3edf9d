"""Correctness recipes of the smoke child: placement, matmul, conv2d, mixed precision, XLA.

Runs inside the target interpreter (see _child.py): standard library, tensorflow and numpy only,
and Python-3.7-compatible syntax. Each recipe returns a dict with status ("passed", "failed",
"skipped"), metrics (floats), info (strings) and detail (one line); exceptions are the caller's.
"""

# ruff: noqa: UP031  (runs in the target interpreter, kept to Python 3.7 syntax)

ORDER = (
    "devices",
    "matmul",
    "conv2d",
    "mixed-precision",
    "xla",
    "throughput",
    "tensor-cores",
    "multi-device",
)

# Relative error bounds, scaled by max|reference|. Generous enough for TF32 (fp32 matmuls on
# Ampere+ run on Tensor Cores with a 10-bit mantissa by default) and for bf16's 8-bit mantissa;
# a wrong kernel, a NaN or garbage memory gives errors of order 1.
TOLERANCE = {"float32": 1e-2, "float16": 1e-2, "bfloat16": 4e-2}


class Context:
    """What setup learned: TF, numpy, logical devices, and a cache of timings between recipes."""

    def __init__(self, tf, np, notes):
        self.tf = tf
        self.np = np
        self.notes = notes
        self.gpus, self.cpus = [], []
        self.device_error = None
        """TensorFlow's error when it could not create its devices: then nothing can run."""
        try:
            logical = tf.config.list_logical_devices()
        except Exception as exc:  # noqa: BLE001
            # Listing logical devices creates TF's eager context and every device. When that
            # fails (seen: cudart's "cudaGetDevice() failed ... not supported in the installed
            # CUDA driver"), no op can run on any device, the CPU included.
            self.device_error = _error_text(exc)
            logical = []
        self.gpus = [_short(d.name) for d in logical if d.device_type == "GPU"]
        self.cpus = [_short(d.name) for d in logical if d.device_type == "CPU"]
        self.cache = {}

    def summary(self):
        out = dict(self.notes)
        out["gpus"] = ",".join(self.gpus)
        out["cpus"] = ",".join(self.cpus)
        if self.device_error:
            out["device_creation_error"] = self.device_error
        return out


def _error_text(exc):
    """TensorFlow's error as it said it: type and the last non-empty line of the message."""
    lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
    return ("%s: %s" % (type(exc).__name__, lines[-1] if lines else "")).strip(": ")[:600]


def _short(name):
    """ "/job:localhost/replica:0/task:0/device:GPU:0" -> "GPU:0"."""
    return name.split("device:")[-1]


def setup(tf, wanted):
    """Memory growth on every GPU before first use; two logical CPUs for the strategy path."""
    import numpy as np

    notes = {}
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        try:
            tf.config.experimental.set_memory_growth(gpu, True)
        except Exception as exc:  # noqa: BLE001
            notes["memory_growth_error"] = str(exc)[:300]
    if "multi-device" in wanted and len(gpus) < 2:
        cpus = tf.config.list_physical_devices("CPU")
        try:
            conf = tf.config.LogicalDeviceConfiguration
            tf.config.set_logical_device_configuration(cpus[0], [conf(), conf()])
        except Exception as exc:  # noqa: BLE001
            notes["logical_cpus_error"] = str(exc)[:300]
    return Context(tf, np, notes)


def devices_for(name, ctx):
    """The devices a recipe runs on: every GPU and the CPU, or the GPUs (the CPU if none)."""
    if name in ("devices", "multi-device"):
        return [None]
    if name in ("throughput", "tensor-cores"):
        return list(ctx.gpus) or ctx.cpus[:1]
    return ctx.cpus[:1] + list(ctx.gpus)


def devices(ctx, _device):
    """List physical devices with model and compute capability; prove placement on each one."""
    tf = ctx.tf
    found = []
    for pd in tf.config.list_physical_devices():
        entry = {"name": _short(pd.name), "type": pd.device_type}
        if pd.device_type == "GPU":
            details = tf.config.experimental.get_device_details(pd)
            cc = details.get("compute_capability")
            entry["model"] = details.get("device_name")
            entry["compute_capability"] = "%d.%d" % tuple(cc) if cc else None
        found.append(entry)
    if ctx.device_error:
        return {
            "status": "error",
            "devices": found,
            "info": {"device_creation_error": ctx.device_error},
            "metrics": {"gpus": float(len([d for d in found if d["type"] == "GPU"]))},
            "detail": "TensorFlow could not create its devices: " + ctx.device_error,
        }
    info, wrong, raised = {}, [], []
    for name in ctx.cpus + ctx.gpus:
        try:
            with tf.device("/device:" + name):
                out = tf.constant([1.0, 2.0]) * 2.0
            got = out.device
        except Exception as exc:  # noqa: BLE001  (a GPU that is listed but cannot run a kernel)
            info["placement.%s.error" % name] = _error_text(exc)
            raised.append("%s raised %s" % (name, _error_text(exc)))
            continue
        info["placement." + name] = got
        if _short(got) != name:
            wrong.append("%s ran on %s" % (name, got))
    return {
        "status": "error" if raised else "failed" if wrong else "passed",
        "devices": found,
        "info": info,
        "metrics": {"gpus": float(len(ctx.gpus))},
        "detail": "; ".join(raised + wrong) or None,
    }


def _rel_err(np, got, ref):
    got = np.asarray(got, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


def _compare(ctx, device, dtypes, compute, ref):
    """Run `compute(dtype)` on the device for each dtype and judge it against the reference."""
    tf, np = ctx.tf, ctx.np
    metrics, info, bad = {}, {}, []
    for dtype in dtypes:
        try:
            with tf.device("/device:" + device):
                out = compute(getattr(tf, dtype))
            info[dtype + ".device"] = out.device
            err = _rel_err(np, tf.cast(out, tf.float32).numpy(), ref)
        except Exception as exc:  # noqa: BLE001  (fp16/bf16 may be unsupported on a device)
            info[dtype + ".error"] = (
                str(exc).strip().splitlines()[-1][:300] if str(exc) else repr(exc)
            )
            if dtype == "float32":
                bad.append("float32 raised: " + info[dtype + ".error"])
            continue
        metrics[dtype + "_rel_err"] = err
        if not err <= TOLERANCE[dtype]:
            bad.append("%s error %.3g > %.3g" % (dtype, err, TOLERANCE[dtype]))
    return {
        "status": "failed" if bad else "passed",
        "metrics": metrics,
        "info": info,
        "detail": "; ".join(bad) or None,
    }


def matmul(ctx, device):
    """fp32, fp16 and bf16 matmul against a float64 numpy reference."""
    np, tf = ctx.np, ctx.tf
    rng = np.random.RandomState(0)
    a = rng.standard_normal((192, 256)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return _compare(
        ctx,
        device,
        ("float32", "float16", "bfloat16"),
        lambda dt: tf.linalg.matmul(tf.cast(a, dt), tf.cast(b, dt)),
        ref,
    )


def _conv_reference(np, x, w):
    """NHWC x HWIO, stride 1, VALID padding, in float64."""
    kh, kw = w.shape[:2]
    n, h, wd, _ = x.shape
    out = np.zeros((n, h - kh + 1, wd - kw + 1, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out += np.tensordot(
                x[:, i : i + h - kh + 1, j : j + wd - kw + 1, :], w[i, j], axes=([3], [0])
            )
    return out


def conv2d(ctx, device):
    """conv2d (cuDNN on a GPU) in fp32 (and fp16 on a GPU) against a numpy reference."""
    np, tf = ctx.np, ctx.tf
    rng = np.random.RandomState(1)
    x = rng.standard_normal((2, 16, 16, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    ref = _conv_reference(np, x.astype(np.float64), w.astype(np.float64))
    dtypes = ("float32", "float16") if device.startswith("GPU") else ("float32",)
    return _compare(
        ctx,
        device,
        dtypes,
        lambda dt: tf.nn.conv2d(tf.cast(x, dt), tf.cast(w, dt), strides=1, padding="VALID"),
        ref,
    )


def mixed_precision(ctx, device):
    """A short Keras training under a mixed policy: loss must stay finite and fall."""
    np, tf = ctx.np, ctx.tf
    keras = tf.keras
    # mixed_float16 needs loss scaling (Keras wraps the optimizer in compile); bf16 has fp32's
    # exponent range and is what CPUs support (TF mixed precision guide).
    policy = "mixed_float16" if device.startswith("GPU") else "mixed_bfloat16"
    rng = np.random.RandomState(2)
    x = rng.standard_normal((256, 16)).astype(np.float32)
    y = (x @ rng.standard_normal((16, 1)) + 0.05 * rng.standard_normal((256, 1))).astype(np.float32)
    with tf.device("/device:" + device):
        model = keras.Sequential(
            [
                keras.Input((16,)),
                keras.layers.Dense(32, activation="relu", dtype=policy),
                keras.layers.Dense(1, dtype=policy),
                keras.layers.Activation("linear", dtype="float32"),
            ]
        )
        model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
        losses = [float(model.train_on_batch(x, y)) for _ in range(40)]
    compute = str(model.layers[0].compute_dtype)
    finite = all(np.isfinite(losses))
    fell = finite and losses[-1] < 0.5 * losses[0]
    info = {"policy": policy, "compute_dtype": compute, "optimizer": type(model.optimizer).__name__}
    bad = []
    if not finite:
        bad.append("loss became %s" % next(v for v in losses if not np.isfinite(v)))
    elif not fell:
        bad.append("loss did not fall: %.4g -> %.4g" % (losses[0], losses[-1]))
    if compute not in ("float16", "bfloat16"):
        bad.append("layers computed in %s, not the policy's dtype" % compute)
    return {
        "status": "failed" if bad else "passed",
        "info": info,
        "detail": "; ".join(bad) or None,
        "metrics": {"loss_first": losses[0], "loss_last": losses[-1]},
    }


def xla(ctx, device):
    """jit_compile=True result equals the graph result (on a GPU XLA needs ptxas and libdevice)."""
    np, tf = ctx.np, ctx.tf
    rng = np.random.RandomState(3)
    a = tf.constant(rng.standard_normal((64, 96)).astype(np.float32))
    b = tf.constant(rng.standard_normal((96, 32)).astype(np.float32))

    def f(x, y):
        # tanh/exp lower to libdevice calls on a GPU, so a missing libdevice shows up here.
        return tf.reduce_sum(tf.tanh(tf.linalg.matmul(x, y)) * tf.exp(-tf.abs(x[:, :1])), axis=1)

    with tf.device("/device:" + device):
        plain = tf.function(f)(a, b)
        jit = tf.function(f, jit_compile=True)(a, b)
    err = _rel_err(np, jit.numpy(), plain.numpy().astype(np.float64))
    ok = err <= 1e-3
    return {
        "status": "passed" if ok else "failed",
        "metrics": {"rel_err": err},
        "info": {"device": jit.device},
        "detail": None if ok else "XLA result differs: relative error %.3g" % err,
    }


RECIPES = {
    "devices": devices,
    "matmul": matmul,
    "conv2d": conv2d,
    "mixed-precision": mixed_precision,
    "xla": xla,
}
