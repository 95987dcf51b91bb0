# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.failure_summary: what went wrong, from ``ansible_failed_result``, for rollout.yml and tune.yml.

The classification lives in plugin_utils/failure_summary.py; documentation: failure_summary.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.failure_summary import failure_summary as _failure_summary


def failure_summary(result: Any) -> Dict[str, Any]:
    """``ansible_failed_result | gpufleet.sglang.failure_summary``."""
    if not isinstance(result, dict):
        raise AnsibleFilterError("failure_summary: the input is ansible_failed_result (a dict), not %s" % type(result).__name__)
    return _failure_summary(result)


class FilterModule:
    """Jinja filters of gpufleet.sglang for failed tasks."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"failure_summary": failure_summary}
