"""What a ticket picks up between the terminal and tfdoctor, through `tfdoctor triage`.

Text pasted through a browser, a word processor, a chat or mail client, or taken from a web page's
source, carries no-break spaces, typographic quotes, zero-width characters and HTML entities that
no program printed; a mail client or a PDF wraps it at a width, a terminal cuts it there. Each
form gives the findings and facts of the plain text, with the line numbers of the ticket as it
came (benchmarks/field_forms.py measures the same over the field corpus).
"""

from __future__ import annotations

import html
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import triage_json
from tfdoctor.triage.lines import plain, ticket_lines, unwrap

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "field"))
from corpus import load_cases  # noqa: E402

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


# The same ticket with a traceback, as GitHub shows it: its frames' long lines must stay lines
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/anaconda3/envs/test-tf/lib/python3.8/site-packages/tensorflow/python/keras/engine/'
    'training.py", '
    "line 1100, in fit\n"
    "    tmp_logs = self.train_function(iterator)\n"
    "tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is "
    "probably because cuDNN failed to initialize, so try looking to see if a warning log message was "
    "printed above.\n"
)


def _mail(text: str, width: int) -> str:
    """What a mail client or a PDF makes of it: wrapped at spaces, a word longer than a line broken."""
    return "\n".join(part for line in text.splitlines()
                     for part in textwrap.wrap(line, width, break_on_hyphens=False) or [""])


def _terminal(text: str, width: int) -> str:
    """What copying from a terminal that wraps at `width` gives: every line cut at exactly it."""
    return "\n".join(line[i : i + width] for line in text.splitlines()
                     for i in range(0, max(len(line), 1), width))


@pytest.mark.parametrize(("wrap", "width"), [(_mail, 72), (_mail, 80), (_mail, 120), (_terminal, 80),
                                             (_terminal, 120)])
def test_a_wrapped_ticket_reads_as_the_ticket(wrap, width):
    """The findings and facts of the unwrapped ticket; where each fact was read is the first line of
    its wrapped line, counted in the ticket as it came."""
    ticket = TICKET + TRACEBACK
    wrapped = wrap(ticket, width)
    assert len(wrapped.splitlines()) > len(ticket.splitlines())
    want, got = triage_json(ticket), triage_json(wrapped)
    assert [f["id"] for f in got["findings"]] == [f["id"] for f in want["findings"]]
    assert got["facts"]["tensorflow"] == want["facts"]["tensorflow"]
    lines = wrapped.splitlines()
    key = next(n for n, line in enumerate(lines, 1) if "'cuda_version'" in line)
    where = got["facts"]["provenance"]["tensorflow.cuda_version"]
    assert where.startswith("build info, line ")
    assert key - 2 <= int(where.rsplit(" ", 1)[1]) <= key  # the line its wrapped line starts on


def test_a_traceback_and_a_table_are_not_joined():
    """Lines as GitHub shows them: a frame and its source line, nvidia-smi's rows, pip's lines, a
    prompt and what it printed, an env dump, a command, a message's indented part."""
    lines = (TRACEBACK + "+-----------------------------------------------------------------------------+\n"
             "| NVIDIA-SMI 460.32.03    Driver Version: 460.32.03    CUDA Version: 11.2     |\n"
             "|-------------------------------+----------------------+----------------------+\n"
             "Requirement already satisfied: absl-py in /usr/local/lib/python3.10/dist-packages (1.4.0)\n"
             "Requirement already satisfied: numpy in /usr/local/lib/python3.10/dist-packages (1.23.5)\n"
             "user@host:~$ echo $LD_LIBRARY_PATH\n"
             "/usr/local/cuda-11.2/lib64:/usr/local/cuda-11.2/extras/CUPTI/lib64:"
             "/opt/conda/envs/tf/lib/python3.9\n"
             'TF_CONFIG={"cluster": {"worker": ["worker0.example:2222", "worker1.example:2222"]}, '
             '"task": {"type": "worker", "index": 0}}\n'
             "LD_LIBRARY_PATH=/usr/local/cuda-11.2/lib64:/usr/local/cuda-11.2/extras/CUPTI/lib64\n"
             # a command, then a label (spatialvla#19); a message, then its indented part
             # (tensorflow#48502)
             "conda install pytorch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 pytorch-cuda=12.1 "
             "-c pytorch\n"
             "CUDA 12.4\n"
             "while/NcclAllReduce_271: unsupported op: No registered 'NcclAllReduce' OpKernel for "
             "XLA_GPU_JIT\n"
             "        Stacktrace:\n"
             ).splitlines()
    assert unwrap(lines) == (lines, None)


def test_no_ticket_of_the_field_corpus_is_taken_for_wrapped():
    """Every field case is pasted as its report shows it, none wrapped: unwrap joins nothing."""
    joined = [c.name for c in load_cases() if unwrap(ticket_lines([c.ticket]).lines)[1] is not None]
    assert joined == []
