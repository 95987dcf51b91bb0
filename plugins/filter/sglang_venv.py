# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.sglang_venv: where the sglang_install role puts a release's venv.

The formula lives in plugin_utils/sglang_venv.py; documentation: sglang_venv.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.sglang_venv import sglang_venv as _sglang_venv


def sglang_venv(root: Any, source: Any, version: Any) -> str:
    """``sglang_install_root | gpufleet.sglang.sglang_venv(sglang_install_source, sglang_install_version)``."""
    return _sglang_venv(root, source, version)


class FilterModule:
    """Jinja filters of gpufleet.sglang for the install's paths."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"sglang_venv": sglang_venv}
