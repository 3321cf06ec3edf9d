"""Host state outside the driver: the kernel log's GPU lines (/dev/kmsg) and nvidia-prime's profile.

Both are plain reads under host.root, never a command: /dev/kmsg is opened non-blocking and read
to its end (each read returns one record; EAGAIN means no more), so a quiet log cannot hang the
probe. A user who may not read it (kernel.dmesg_restrict=1, most containers) gets
kernel_log_read=False, which the host-kernel-log check reports as not checked rather than clean.
"""

from __future__ import annotations

import errno
import os

from tfdoctor.facts import HostFacts
from tfdoctor.host import Host
from tfdoctor.triage.recognisers.kernel_log import NOTABLE

MAX_BYTES = 4 << 20
"""The most of the kernel ring buffer read (its default size is 128 KiB to a few MiB)."""
MAX_LINES = 20

# /etc/prime-discrete as canonical/nvidia-prime's prime-select writes it ("on" for the nvidia
# profile, "off" for intel, "on-demand"); prime-select query prints the profile names.
PRIME_PROFILES = {"on": "nvidia", "off": "intel", "on-demand": "on-demand"}


def probe_host(host: Host) -> HostFacts:
    lines, readable = read_kmsg(host)
    return HostFacts(kernel_log=lines, kernel_log_read=readable, prime_profile=prime_profile(host))


def prime_profile(host: Host) -> str | None:
    text = host.read_text("/etc/prime-discrete")
    if text is None:
        return None
    return PRIME_PROFILES.get(text.strip(), "intel")  # prime-select reads anything but "on" as intel


def read_kmsg(host: Host) -> tuple[tuple[str, ...], bool]:
    """The notable GPU lines of the kernel log, and whether it could be read at all."""
    try:
        fd = os.open(host.path("/dev/kmsg"), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return (), False
    kept: list[str] = []
    total = 0
    try:
        while total < MAX_BYTES:
            try:
                record = os.read(fd, 8192)
            except BlockingIOError:
                break  # the end of the buffer
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # a record was overwritten while reading: go on
                    continue
                if total == 0:
                    return (), False  # EPERM on the first read: not readable by this user
                break
            if not record:
                break  # a regular file (tests) ends
            total += len(record)
            for raw in record.decode("utf-8", "replace").splitlines():
                message = raw.split(";", 1)[1] if ";" in raw[:40] else raw
                if message.startswith(" ") or not any(text in message for text in NOTABLE):
                    continue  # continuation lines (" SUBSYSTEM=...") and everything unrelated
                if len(kept) < MAX_LINES:
                    kept.append(message.strip()[:500])
    finally:
        os.close(fd)
    return tuple(kept), True
