# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.preflight_facts: the host facts the preflight's cross-flag rules read.

The rule lives in plugin_utils/server_launch.py; documentation: preflight_facts.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import preflight_facts as _preflight_facts


def preflight_facts(gpu_facts: Any, service_user: Any) -> Dict[str, Any]:
    """``gpu_tuning_gpu_facts | default(none) | gpufleet.sglang.preflight_facts(sglang_server_user)``."""
    if gpu_facts is not None and not isinstance(gpu_facts, dict):
        raise AnsibleFilterError("preflight_facts: the input is gpu_tuning_gpu_facts (a dict) or none, not %s" % type(gpu_facts).__name__)
    return _preflight_facts(gpu_facts, service_user)


class FilterModule:
    """Jinja filters of gpufleet.sglang for the preflight."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"preflight_facts": preflight_facts}
