# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sizes and disk space: is there room for what is missing, with a margin, before a download starts.

Runs on the target's Python (>= 3.9), standard library only.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional


# ---------------------------------------------------------------------------------------------------------------
# Sizes and disk space
# ---------------------------------------------------------------------------------------------------------------

_UNITS = {"": 1, "B": 1, "K": 1000, "KB": 1000, "M": 1000 ** 2, "MB": 1000 ** 2, "G": 1000 ** 3, "GB": 1000 ** 3,
          "T": 1000 ** 4, "TB": 1000 ** 4, "KIB": 1024, "MIB": 1024 ** 2, "GIB": 1024 ** 3, "TIB": 1024 ** 4}


def parse_size(value: Any) -> int:
    """Bytes from 123, '123', '55GB', '55 GiB', '1.5T'. Decimal units are powers of 1000, *iB of 1024."""
    if isinstance(value, bool):
        raise ValueError("not a size: %r" % (value,))
    if isinstance(value, (int, float)):
        return int(value)
    match = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$", str(value))
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError("not a size: %r (use bytes, or a number with B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)" % (value,))
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def margin_bytes(margin: Any, needed: int) -> int:
    """Free space to keep beyond the model: '10%' of what is fetched, or an absolute size ('20GiB', 0)."""
    text = str(margin).strip()
    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError as exc:
            raise ValueError("not a margin: %r" % (margin,)) from exc
        if percent < 0:
            raise ValueError("not a margin: %r" % (margin,))
        return int(needed * percent / 100.0)
    return parse_size(margin)


def human_bytes(count: float) -> str:
    """1234567 -> '1.2 MB' (decimal units, as disk vendors and the hub's web pages print them)."""
    count = float(count)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(count) < 1000 or unit == "TB":
            return ("%d %s" % (count, unit)) if unit == "B" else ("%.1f %s" % (count, unit))
        count /= 1000.0
    return "%.1f TB" % count  # pragma: no cover (the loop returns)


def existing_ancestor(path: str) -> str:
    """The nearest folder that exists at or above path: where free space is measured before anything is made."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def free_bytes(path: str) -> int:
    """Bytes an unprivileged writer may still use on the file system holding path (statvfs f_bavail)."""
    stat = os.statvfs(existing_ancestor(path))
    return stat.f_bavail * stat.f_frsize


def check_space(needed: int, free: int, margin: Any, where: str, what: str = "the model") -> Optional[str]:
    """None when needed + margin fits in free; else a message with both numbers in bytes and in GB."""
    extra = margin_bytes(margin, needed)
    if needed <= 0 or needed + extra <= free:
        return None
    return ("not enough disk space in %s for %s: it needs %s (%d bytes) plus a margin of %s (%s), %s (%d bytes) "
            "in all, but only %s (%d bytes) are free. Free some space, point model_cache_dir at a bigger file "
            "system, or lower model_cache_min_free_margin."
            % (where, what, human_bytes(needed), needed, human_bytes(extra), margin, human_bytes(needed + extra),
               needed + extra, human_bytes(free), free))
