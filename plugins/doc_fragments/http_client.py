# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Documentation fragment for the collection's modules that talk to a server over HTTP and write no file."""

from __future__ import annotations


class ModuleDocFragment:  # pylint: disable=too-few-public-methods
    """Attributes of an HTTP client module: nothing on disk to diff, any POSIX host that reaches the server."""

    DOCUMENTATION = r"""
attributes:
  diff_mode:
    support: none
  platform:
    support: full
    platforms: posix
"""
