# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters gpufleet.sglang.server_instances and server_instances_check: the instances a host runs, and one message
per problem in their settings.

The rules live in plugin_utils/server_instances.py; documentation: server_instances.yml and
server_instances_check.yml beside this file.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import ServerInstancesError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import server_instances as _server_instances
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.server_instances import server_instances_check as _server_instances_check


def server_instances(instances: Any, name: Any, args: Any, env: Any, api_key: Any) -> List[Any]:
    """``sglang_server_instances | gpufleet.sglang.server_instances(sglang_server_instance, sglang_server_args,
    sglang_server_env, sglang_server_api_key)``."""
    try:
        return _server_instances(instances, name, args, env, api_key)
    except ServerInstancesError as exc:
        raise AnsibleFilterError("server_instances: %s" % exc) from exc


def server_instances_check(instances: Any, name: Any, args: Any, env: Any) -> List[str]:
    """``sglang_server_instances | gpufleet.sglang.server_instances_check(sglang_server_instance, sglang_server_args,
    sglang_server_env)``: [] when usable."""
    return _server_instances_check(instances, name, args, env)


class FilterModule:
    """Jinja filters of gpufleet.sglang for the sglang_server role's instances."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"server_instances": server_instances, "server_instances_check": server_instances_check}
