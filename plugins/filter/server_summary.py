# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.server_summary: one line per SGLang instance from ``sglang_server_results``.

The wording lives in plugin_utils/deploy_summary.py; documentation: server_summary.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.deploy_summary import server_summary as _server_summary


def server_summary(results: Any, nccl_env: Optional[Dict[str, Any]] = None) -> List[str]:
    """``sglang_server_results | gpufleet.sglang.server_summary(gpu_tuning_env)``."""
    if results is not None and not isinstance(results, dict):
        raise AnsibleFilterError("server_summary: the input is sglang_server_results (a dict per instance), not %s" % type(results).__name__)
    if nccl_env is not None and not isinstance(nccl_env, dict):
        raise AnsibleFilterError("server_summary: nccl_env is gpu_tuning_env (a dict), not %s" % type(nccl_env).__name__)
    return _server_summary(results, nccl_env)


class FilterModule:
    """Jinja filters of gpufleet.sglang for play summaries."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"server_summary": server_summary}
