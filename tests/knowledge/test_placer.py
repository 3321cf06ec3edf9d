"""TensorFlow's placer, as real TensorFlow prints it: work pinned to a GPU the process has not
registered ("... was explicitly assigned to /device:GPU:0 but available devices are [ ...CPU:0 ]",
colocation_graph.cc) is a finding of its own (issue 20, item 5: such a ticket had none), and the
sentence a build without CUDA adds ("The requested device appears to be a GPU, but CUDA is not
enabled.") is TensorFlow saying it is a CPU-only build."""

from __future__ import annotations

import subprocess

from helpers import triage_json

PIN_TO_GPU = """\
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
with tf.device('/device:GPU:0'):
    tf.compat.v1.get_variable("XSeg/conv01/conv/weight", shape=[3, 3],
                              initializer=tf.compat.v1.zeros_initializer())
config = tf.compat.v1.ConfigProto(allow_soft_placement=False)
with tf.compat.v1.Session(config=config) as session:
    try:
        session.run(tf.compat.v1.global_variables_initializer())
    except tf.errors.InvalidArgumentError as e:
        print(e)
"""


def test_real_tensorflows_placer_error_is_read(tf_cpu_python: str) -> None:
    out = subprocess.run([tf_cpu_python, "-c", PIN_TO_GPU], capture_output=True, text=True, timeout=300,
                         env={"TF_CPP_MIN_LOG_LEVEL": "2", "PATH": "/usr/bin:/bin"}).stdout
    assert "was explicitly assigned to /device:GPU:0 but available devices are" in out, out
    report = triage_json(out + "\nI have an RTX 3080 and want TensorFlow to use it.\n")
    found = {f["id"]: f for f in report["findings"]}
    assert found["tf-log-device-not-registered"]["evidence"]["subject"] == "/device:GPU:0"
    assert report["facts"]["tensorflow"]["is_cuda_build"] is False
    # the build is the reason the GPU is not registered
    assert report["findings"][0]["id"] == "tf-cpu-only-build"
    assert found["tf-log-device-not-registered"]["caused_by"] == "tf-cpu-only-build"


def test_a_cuda_builds_placer_error_names_no_build() -> None:
    """A CUDA build says no more than that the GPU is missing: the finding stays, the build unknown."""
    line = ("Cannot assign a device for operation conv/weight: node conv/weight (defined at model.py:76)  "
            "was explicitly assigned to /device:GPU:0 but available devices are [ "
            "/job:localhost/replica:0/task:0/device:CPU:0 ]. Make sure the device specification refers "
            "to a valid device.")
    report = triage_json(line + "\n")
    assert [f["id"] for f in report["findings"]
            if f["severity"] != "info"] == ["tf-log-device-not-registered"]
    assert report["facts"]["tensorflow"] is None or report["facts"]["tensorflow"]["is_cuda_build"] is None
    # a device the process has is no finding
    placed = triage_json("... placed on /job:localhost/replica:0/task:0/device:GPU:0\n")
    assert not [f for f in placed["findings"] if f["id"] == "tf-log-device-not-registered"]
