"""MIG: the MIG device TensorFlow gets, said by gpu-mig-enabled and counted by usable_gpu_count.

The rule is the MIG user guide's: one CUDA process enumerates one MIG device, the one
CUDA_VISIBLE_DEVICES=MIG-<uuid> names, else the first (tests/oracle pins real TensorFlow on it).
"""

from __future__ import annotations

import pytest
from helpers import change, gpu, healthy, judge
from tfdoctor.checks.usable import usable_gpu_count
from tfdoctor.facts import MigDeviceFacts
from tfdoctor.findings import Severity

A = "MIG-aaaaaaaa-1111-5222-8333-444444444444"
B = "MIG-bbbbbbbb-1111-5222-8333-444444444444"
MIGS = (MigDeviceFacts(0, A, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 40448),
        MigDeviceFacts(1, B, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 40448))


def machine(mig_devices: tuple[MigDeviceFacts, ...] | None = MIGS, cvd: str | None = None):
    env = {} if cvd is None else {"CUDA_VISIBLE_DEVICES": cvd}
    return change(healthy(), driver={"gpus": (gpu(0, mig_mode=True, mig_devices=mig_devices),)}, env=env)


def mig_finding(facts):
    return next(f for f in judge(facts).findings if f.id == "gpu-mig-enabled")


@pytest.mark.parametrize(("cvd", "selected"), [(None, A), (B, B), ("MIG-bbbb", B)])
def test_the_first_or_the_named_mig_device(cvd, selected):
    """Unset: the first MIG device; a MIG- UUID (or a unique prefix of it): that one. One GPU."""
    facts = machine(cvd=cvd)
    found = mig_finding(facts)
    assert found.severity is Severity.WARNING
    assert f"sees one MIG device of the 2 on this machine: {selected}" in found.message
    assert A in (found.hint or "") and B in (found.hint or "")
    assert usable_gpu_count(facts)[0] == 1


@pytest.mark.parametrize("cvd", ["MIG-cccc", "0", "GPU-00000000"])
def test_cuda_visible_devices_naming_no_mig_device(cvd):
    """An unknown MIG- UUID, or an entry CUDA does not document for MIG: no GPU for TensorFlow."""
    facts = machine(cvd=cvd)
    found = mig_finding(facts)
    assert found.severity is Severity.ERROR and "TensorFlow gets none" in found.message
    assert usable_gpu_count(facts)[0] == 0


def test_mig_mode_without_mig_devices_is_an_error():
    """MIG on, no GPU instance created: CUDA has nothing to enumerate on this GPU."""
    facts = machine(mig_devices=())
    found = mig_finding(facts)
    assert found.severity is Severity.ERROR and "no MIG device" in found.message
    assert "-cgi" in (found.hint or "")
    assert usable_gpu_count(facts)[0] == 0


def test_mig_devices_not_listed_keep_the_old_judgement():
    """A saved report from before mig_devices (or NVML without the MIG calls): one MIG device
    is assumed usable, the finding stays a warning."""
    facts = machine(mig_devices=None)
    assert mig_finding(facts).severity is Severity.WARNING
    assert usable_gpu_count(facts)[0] == 1

