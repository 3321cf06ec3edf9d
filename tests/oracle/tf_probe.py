"""What real TensorFlow makes of the machine it runs on: one JSON line on stdout.

Run by tests/oracle/differential.py in the target interpreter on a fake machine
(tests/fakegpu/run.py): the physical GPUs, their details, and a matmul placed on GPU:0.
"""

import json
import sys

import tensorflow as tf

out = {"gpus": [], "details": [], "matmul": None}
try:
    gpus = tf.config.list_physical_devices("GPU")
    out["gpus"] = [g.name for g in gpus]
    for gpu in gpus:
        details = tf.config.experimental.get_device_details(gpu)
        cc = details.get("compute_capability")
        out["details"].append({"name": details.get("device_name"),
                               "cc": f"{cc[0]}.{cc[1]}" if cc else None})
except Exception as exc:  # noqa: BLE001  (TF's own error is the answer)
    out["error"] = f"{type(exc).__name__}: {exc}"
# Creating the logical devices is where TF drops the GPUs it cannot use ("Ignoring visible gpu
# device ...", then "Adding visible gpu devices: 0, 1"); on the stub driver it then fails in
# cudart, whose private driver interface no stub provides.
try:
    out["logical"] = len(tf.config.list_logical_devices("GPU"))
except Exception as exc:  # noqa: BLE001
    out["logical_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
if "--matmul" in sys.argv and out["gpus"]:
    try:
        with tf.device("/GPU:0"):
            a = tf.ones((8, 8))
            b = tf.matmul(a, a)
        out["matmul"] = {"device": b.device, "sum": float(tf.reduce_sum(b))}
    except Exception as exc:  # noqa: BLE001
        out["matmul"] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
sys.stdout.flush()
print("TFPROBE " + json.dumps(out), flush=True)
