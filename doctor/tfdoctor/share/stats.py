"""Robust outlier detection for fleet figures: the median absolute deviation (MAD).

Iglewicz and Hoaglin, "How to Detect and Handle Outliers" (ASQC, 1993): the modified z-score
M = 0.6745 (x - median) / MAD flags |M| > 3.5. A few slow nodes cannot drag the median or the
MAD along, as they would a mean and a standard deviation.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

THRESHOLD = 3.5
MIN_PEERS = 5
"""Fewer comparable nodes than this and nothing is called an outlier."""
MIN_DROP = 0.10
"""And never a node within 10 % of the median: a very even fleet has a tiny MAD."""


@dataclass(frozen=True, slots=True)
class Outlier:
    """A value well below its peers."""

    name: str
    value: float
    median: float
    robust_z: float


def low_outliers(values: dict[str, float]) -> list[Outlier]:
    """The names whose value is far below the others' (slow nodes; fast ones are not a problem)."""
    if len(values) < MIN_PEERS:
        return []
    mid = median(values.values())
    deviations = [abs(v - mid) for v in values.values()]
    mad = median(deviations)
    # MAD is 0 when over half the values are identical; then fall back to the mean absolute
    # deviation, scaled to the same normal-consistent units (1.2533 = sqrt(pi/2) vs 1.4826).
    scale = 1.4826 * mad if mad > 0 else 1.2533 * sum(deviations) / len(deviations)
    if scale <= 0:
        return []
    out = []
    for name, v in values.items():
        z = (v - mid) / scale
        if z < -THRESHOLD and v < mid * (1 - MIN_DROP):
            out.append(Outlier(name, v, mid, round(z, 2)))
    return sorted(out, key=lambda o: o.robust_z)
