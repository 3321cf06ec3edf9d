"""What a ticket picks up between the terminal and tfdoctor, through `tfdoctor triage`.

Text pasted through a browser, a word processor, a chat or mail client, or taken from a web page's
source, carries no-break spaces, typographic quotes, zero-width characters and HTML entities that
no program printed. Each form gives the findings, facts and line numbers of the plain text
(benchmarks/field_forms.py measures the same over the field corpus).
"""

from __future__ import annotations

import html

import pytest
from helpers import triage_json
from tfdoctor.triage.lines import plain, ticket_lines

# Lines of a real report (tensorflow/tensorflow#45200, TF 2.4): cuDNN not on the loader path.
LOG = (
    "2020-11-26 10:23:22.978050: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
    "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared "
    "object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda-11.1/lib64\n"
    "2020-11-26 10:23:22.978098: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1757] Cannot "
    "dlopen some GPU libraries. Please make sure the missing libraries mentioned above are "
    "installed properly if you would like to use GPU.\n"
)
# tf.sysconfig.get_build_info() of the 2.4.0 wheel: read only where its quotes are ASCII
BUILD = ("{'cpu_compiler': '/usr/bin/gcc-5', 'cuda_compute_capabilities': ['sm_35', 'sm_50', 'sm_60', "
         "'sm_70', 'sm_75', 'compute_80'], 'cuda_version': '11.0', 'cudnn_version': '8', "
         "'is_cuda_build': True, 'is_rocm_build': False, 'is_tensorrt_build': True}\n")
TICKET = "- TensorFlow version: 2.4.0\n- Python version: 3.8.5\n\n" + BUILD + LOG

FORMS = {
    "no-break spaces": lambda t: t.replace(" ", "\u00a0"),
    "narrow and thin spaces": lambda t: t.replace(" ", "\u202f", 3).replace(" ", "\u2009"),
    "typographic quotes": lambda t: t.replace("'", "\u2019").replace('"', "\u201d"),
    "zero-width spaces": lambda t: t.replace("_version", "_\u200bversion"),
    "HTML entities": html.escape,
}


def _seen(report: dict) -> tuple:
    facts = report["facts"]
    return ([(f["id"], f["severity"]) for f in report["findings"]], facts["tensorflow"]["version"],
            facts["python"]["version"], sorted(facts["provenance"].items()))


def test_the_plain_ticket_is_diagnosed():
    """The baseline the forms are held to: cuDNN not loaded, TF 2.4.0 built for CUDA 11.0 (its build
    info, line 4), Python 3.8."""
    findings, tf, py, provenance = _seen(triage_json(TICKET))
    assert findings[0][0] == "tf-log-library-not-loaded"
    assert (tf, py) == ("2.4.0", "3.8.5")
    assert ("tensorflow.version", "build info, line 1") in provenance
    assert ("tensorflow.cuda_version", "build info, line 4") in provenance


@pytest.mark.parametrize("form", list(FORMS))
def test_each_form_reads_as_the_plain_ticket(form):
    assert _seen(triage_json(FORMS[form](TICKET))) == _seen(triage_json(TICKET))


def test_plain_keeps_every_line_and_undoes_one_level_of_entities():
    text = "a\u00a0b\r\n\u201cc\u201d\n&amp;lt;\u2028x"
    assert plain(text) == 'a b\r\n"c"\n&lt;\u2028x'
    assert len(ticket_lines([text]).lines) == len(text.splitlines())
    assert plain("no typography here") == "no typography here"
