# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation fragment for the collection's modules that only read the host."""

from __future__ import annotations


class ModuleDocFragment:  # pylint: disable=too-few-public-methods
    """Attributes of a read-only module: full check mode, no diff, POSIX hosts."""

    DOCUMENTATION = r"""
attributes:
  check_mode:
    support: full
    details: Read-only.
  diff_mode:
    support: none
  platform:
    platforms: posix
"""
