# -*- coding: utf-8 -*-
# Copyright: gpufleet.sglang contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of serving groups (one SGLang instance over several hosts): thin adapters over
plugin_utils/serving_group.py; errors become filter errors through plugin_utils/filter_adapter.py. Each filter's
documentation is the ``<filter name>.yml`` file beside this one."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from ansible_collections.gpufleet.sglang.plugins.plugin_utils.filter_adapter import filter_errors
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import ServingGroupError
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import serving_group as _serving_group
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import members_from_hostvars as _members
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import serving_group_mismatches as _mismatches
from ansible_collections.gpufleet.sglang.plugins.plugin_utils.serving_group import serving_group_verdict as _verdict


@filter_errors("serving_group", ServingGroupError)
def serving_group(members: Any, group: Any, port: Any, args: Any) -> Dict[str, Dict[str, Any]]:
    """``members | gpufleet.sglang.serving_group(sglang_server_serving_group, sglang_server_serving_group_port,
    sglang_server_args)``: host -> its nnodes, node_rank, dist_init_addr and socket interface."""
    return _serving_group(group, members, port, args)


def serving_group_mismatches(settings: Any) -> List[str]:
    """``{host: {release, args}} | gpufleet.sglang.serving_group_mismatches``: one message per difference."""
    return _mismatches(settings)


def serving_group_members(hosts: Any, hostvars: Any) -> Dict[str, Dict[str, Any]]:
    """``groups[sglang_server_serving_group] | gpufleet.sglang.serving_group_members(hostvars)``: each host's facts,
    rank and address settings, release and args, as the two filters above read them."""
    return _members(hosts, hostvars)


def serving_group_verdict(members: Any, group: Any, hostvars: Any, key: str = "__sglang_server_launch") -> Dict[str, Any]:
    """``members | gpufleet.sglang.serving_group_verdict(group, hostvars)``: every node's launch result (the fact
    ``key`` of each host) as the group's one verdict."""
    results = {str(host): hostvars[host].get(key) for host in members or []}
    return _verdict(members, group, results)


class FilterModule:  # pylint: disable=too-few-public-methods
    """The serving group filters."""

    def filters(self) -> Dict[str, Callable[..., Any]]:
        """The filter map."""
        return {"serving_group": serving_group, "serving_group_mismatches": serving_group_mismatches,
                "serving_group_members": serving_group_members, "serving_group_verdict": serving_group_verdict}
