"""What the rollout benchmarks share: the batch sizes a rolling play gives (not a benchmark itself)."""

import math
from typing import List


def batches(hosts: int, canary: int = 1, batch_pct: int = 25) -> List[int]:
    """The batch sizes Ansible's serial [canary, 'pct%'] gives for this many hosts."""
    sizes, left = [], hosts
    if canary and left:
        sizes.append(min(canary, left))
        left -= sizes[-1]
    step = max(1, int(math.floor(hosts * batch_pct / 100.0)))
    while left > 0:
        sizes.append(min(step, left))
        left -= sizes[-1]
    return sizes
