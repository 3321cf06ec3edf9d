"""An issue template's "expected behavior" section is the user's wish, not program output: what
TensorFlow should print there ([PhysicalDevice(... device_type='GPU')]) is not read as what it
printed (googlecolab/colabtools#4235), and the TensorFlow release it names as a wish is not the one
in hand (google-ai-edge/mediapipe#6013). Output pasted under it without being announced, and the
sections after it, are still read."""

from __future__ import annotations

from helpers import triage_json
from tfdoctor.triage import _without_wishes

COLAB_4235 = """\
**Describe the current behavior**

I am using a library that depends on `tensorflow<=2.10.0`. On Colab `pip install tensorflow==2.10.0`
results in the GPU becoming invisible to tensorflow.

```
!pip install tensorflow==2.10.0
import tensorflow as tf
print(tf.config.list_physical_devices())
```

**Describe the expected behavior**

The GPU should be found by tensorflow regardless of version. The output should look something like this:

```
TensorFlow Version: 2.xx.0
GPU device: /device:GPU:0
[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU'),
 PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')]
```

**What web browser you are using**

Firefox
"""


def test_the_wished_gpu_list_is_not_what_tensorflow_printed() -> None:
    report = triage_json(COLAB_4235)
    assert report["facts"]["smoke"] is None  # no device list was read from the wish
    assert [f["id"] for f in report["findings"]] == ["hosted-runtime-tf-replaced"]
    # the same output outside the section is read as TensorFlow's
    listed = triage_json(COLAB_4235.replace("**Describe the expected behavior**", "**Output**"))
    assert listed["facts"]["smoke"]["devices"]


def test_a_wished_release_is_not_the_one_in_hand() -> None:
    ticket = ("### Python Version\n3.12.3\n### Describe the expected behaviour\nThe package instead requires "
              "tensorflow 2.16 (the earliest available version) or later.\n### Standalone code\nI tried the "
              "wheels for tensorflow 2.15.1 from pypi.org\n")
    report = triage_json(ticket)
    assert report["facts"]["tensorflow"]["version"] == "2.15.1"
    assert report["findings"][0]["id"] == "tf-python-unsupported"


def test_what_is_not_a_wish_is_kept_and_every_line_keeps_its_place() -> None:
    lines = ["**Describe the expected behavior**", "Tensorflow should start up and train.", "```",
             "| NVIDIA-SMI 455.38       Driver Version: 455.38       CUDA Version: 11.1     |", "```"]
    kept = _without_wishes(lines)
    assert kept == [lines[0], "", *lines[2:]]  # an unannounced block (nvidia-smi) ends the section
    inline = ["Expected Behavior: TensorFlow should detect and list available GPUs.",
              "Actual Behavior: TensorFlow returns an empty list: `[]`.", "Error Logs:", "```",
              "W tensorflow/core/common_runtime/gpu/gpu_device.cc:2341] Cannot dlopen some GPU libraries."]
    assert _without_wishes(inline) == inline  # an inline label is a wish of its own line only
    section = ["## Expected output", "It should print:", "```", "[GPU:0]", "```", "## Logs", "[]"]
    assert _without_wishes(section) == ["## Expected output", "", "", "", "", "## Logs", "[]"]
