"""Ticket text in the encodings Windows tools save it in, through `tfdoctor triage`.

Issue 21: UTF-16 without a BOM (what some Windows tools save as "Unicode", and what a BOM-less
`[IO.File]::WriteAllText(..., [Text.Encoding]::Unicode)` gives) was refused as binary because it
holds NUL bytes. It is accepted when one byte of each pair is mostly NUL and it decodes strictly
to text; binary with NULs is still refused.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from tfdoctor.cli import cli

# Lines of a real report (tensorflow/tensorflow#45200, TF 2.4): cuDNN not on the loader path.
TICKET = (
    "2020-11-26 10:23:22.978050: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
    "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared "
    "object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda-11.1/lib64\r\n"
    "2020-11-26 10:23:22.978098: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1757] Cannot "
    "dlopen some GPU libraries. Please make sure the missing libraries mentioned above are "
    "installed properly if you would like to use GPU.\r\n"
    "Répertoire: C:\\Users\\user — TensorFlow 2.4\r\n"
)


def triage(data: bytes) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["triage", "--json", "-"], input=data)
    return result.exit_code, result.stdout, result.stderr


def finding_ids(stdout: str) -> list[str]:
    return [f["id"] for f in json.loads(stdout)["findings"]]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-16"])  # utf-16: with a BOM
def test_utf16_reads_as_the_same_ticket_in_utf8(codec):
    """The same ticket in UTF-16 (either byte order, with or without a BOM) gives the findings
    it gives in UTF-8."""
    code, out, _ = triage(TICKET.encode("utf-8"))
    assert finding_ids(out)[0] == "tf-log-library-not-loaded"  # libcudnn.so.8, as the log says
    code16, out16, err16 = triage(TICKET.encode(codec))
    assert (code16, finding_ids(out16)) == (code, finding_ids(out)), err16
    assert "libcudnn.so.8" in out16


@pytest.mark.parametrize("data", [
    b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8,  # a shared library's start
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(4096),  # a screenshot
    bytes(4096),  # NULs only
    "a\x00b\x01c".encode("utf-16-le") * 100,  # UTF-16 shape, control characters inside
    b"A\x00" * 1000 + b"\x00",  # odd length: no UTF-16
], ids=["elf", "png", "nuls", "controls", "odd-length"])
def test_binary_is_still_refused(data):
    """Binary input (a library, a screenshot, zeros, UTF-16-shaped control bytes) is refused with
    one line and exit 2, never triaged as text."""
    code, out, err = triage(data)
    assert code == 2 and out == "", out
    assert "binary" in err and err.count("\n") == 1
