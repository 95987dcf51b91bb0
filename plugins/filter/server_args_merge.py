# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpufleet.sglang.server_args_merge: an instance's SGLang arguments, every level in its documented order.

The precedence lives in plugin_utils/server_launch.py; documentation: server_args_merge.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import ServerLaunchError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_launch import server_args_merge as _server_args_merge


def server_args_merge(base: Any, tuning_args: Any = None, instance_args: Any = None, extra_args: Any = None,
                      model_path: Any = None, served_model_name: Any = None) -> Dict[str, Any]:
    """``__sglang_server_base_args | gpufleet.sglang.server_args_merge(tuning_args=..., instance_args=..., ...)``."""
    try:
        return _server_args_merge(base, tuning_args=tuning_args, instance_args=instance_args, extra_args=extra_args,
                                  model_path=model_path, served_model_name=served_model_name)
    except ServerLaunchError as exc:
        raise AnsibleFilterError("server_args_merge: %s" % exc) from exc


class FilterModule:
    """Jinja filters of gpufleet.sglang for an instance's arguments."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"server_args_merge": server_args_merge}
